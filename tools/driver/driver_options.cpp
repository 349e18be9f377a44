// boo-driver: driver-level options.
#include "driver_options.hpp"

#include <algorithm>

#include "base/strings.hpp"
#include "bench/fault_backend.hpp"

namespace boo::driver {

std::vector<std::string> executor_child_arguments(const DriverOptions& o, const std::vector<std::string>& backends,
                                                  int gpu_id, const std::string& trace_part) {
  std::vector<std::string> a{"--executor-child", "--gpu-id", std::to_string(gpu_id), "--seed", std::to_string(o.seed),
                             "--cpu-iterations", std::to_string(o.cpu_iterations)};
  for (const std::string& b : backends) a.insert(a.end(), {"--backend", b});
  if (o.splat) a.insert(a.end(), {"--splat-input-value", base::format_double(*o.splat)});
  if (!o.dump_dir.empty()) a.insert(a.end(), {"--dump", o.dump_dir});
  if (!o.implementation.empty()) a.insert(a.end(), {"--impl", o.implementation});
  if (!o.cache_dir.empty()) a.insert(a.end(), {"--cache-dir", o.cache_dir});
  if (o.timing.flush_l2) a.push_back("--flush-l2");
  if (!o.timing.prefer_cupti) a.insert(a.end(), {"--timer", "events"});
  if (!trace_part.empty()) a.insert(a.end(), {"--trace-part", trace_part});
  if (o.verbose) a.push_back(*o.verbose ? "--verbose" : "--no-verbose");
  else if (!o.csv_path.empty()) a.push_back("--no-verbose");  // the parent's default
  if (o.verify_numerics) {
    const bench::NumericsOptions& n = o.numerics;
    a.insert(a.end(), {"--verify-numerics", "--numerics-min-samples", std::to_string(n.min_samples),
                       "--numerics-stddev-rtol", base::format_double(n.stddev_rtol), "--numerics-stddev-atol",
                       base::format_double(n.stddev_atol), "--numerics-mean-rtol", base::format_double(n.mean_rtol),
                       "--numerics-mean-atol", base::format_double(n.mean_atol), "--numerics-reference-dtype",
                       n.reference_float32 ? "float32" : "float64"});
    if (n.verbose) a.push_back("--numerics-verbose");
    if (!n.structured_tests) a.push_back("--skip-structured-tests");
    if (!n.vendor) a.insert(a.end(), {"--numerics-vendor", "none"});
  }
  return a;
}

std::string canonical_backend(const std::string& name) {
  // BOO's backend names run as their boo counterparts: its own kernels as boo,
  // PyTorch's (cuDNN on NVIDIA GPUs) as cudnn. The CSV keeps the name given.
  static const std::pair<const char*, const char*> kNames[] = {
      {"boo", "boo"},         {"cudnn", "cudnn"},           {"cpu", "cpu"},
      {"iree_boo", "boo"},    {"iree_boo_experimental", "boo"}, {"iree_boo_legacy", "boo"},
      {"iree_boo_inductor", "boo"}, {"torch", "cudnn"},        {"inductor", "cudnn"}};
  for (const auto& [given, canonical] : kNames)
    if (name == given) return canonical;
  if (bench::is_faulty_backend_name(name)) return "faulty";
  return "";
}

std::string driver_usage() {
  return R"(usage: boo-driver [driver options] <MIOpenDriver command>
       boo-driver [driver options] --commands-file FILE [words appended to every command]

Runs MIOpenDriver-style commands (conv, convfp16, convbfp16, layernorm, layernormfp16,
layernormbfp16) and prints BOO-style results and timings.

driver options:
  --commands-file FILE     one command per line (.txt: shell words; .tsv: tab-separated);
                           '#' comments and blank lines are skipped
  --backend NAME           boo (boo's GPU kernels; the default with a GPU), cudnn (cuDNN 9, its fastest
                           engine per signature) or cpu (the float64 reference; the default without
                           a GPU); repeatable to compare backends (ratios to cudnn are printed).
                           BOO's names work too: iree_boo* run as boo, torch and inductor as cudnn;
                           faulty:<fault> is the CPU reference made deliberately wrong, for testing
                           --verify-numerics (faults: shift, permute, missing-bias, unwritten-tail,
                           scale, outlier, nan; BOO_TEST_FAULT=<fault> puts one on the boo backend)
  --impl NAME              run only this GPU implementation (boo explain lists them)
  --gpu-id N               the GPU to run on (default 0); -1 runs the commands across every GPU
                           in parallel (one executor each), results in input order
  --command-timeout S      kill and report a command still running after S seconds (default 600)
  --no-isolation           run commands in this process (default: in executor child processes,
                           so a kernel fault or hang costs only its command)
  --cache-dir DIR          the kernel cache folder (default BOO_CACHE_DIR or ~/.cache/boo)
  --verify-numerics        BOO's statistical verdict against the float64 CPU reference, with cuDNN's
                           spread as the bar when it runs the signature, plus boo's per-element
                           tolerance and the structured test (docs/tolerances.md)
  --numerics-verbose       the full statistics block instead of one line
  --numerics-min-samples N (1000)   --numerics-stddev-rtol X (1.2)   --numerics-stddev-atol X (1e-5)
  --numerics-mean-rtol X (0.2)      --numerics-mean-atol X (1e-5)
  --numerics-reference-dtype float64|float32 (float64)   --skip-structured-tests
  --numerics-vendor cudnn|none (cudnn)   none: no cuDNN spread; the spread is bounded by boo's
                           documented tolerance (saves cuDNN's per-signature plan build on long matrices)
  --timer cupti|events     how launches are timed (default cupti): CUPTI activity records time every
                           kernel of every launch, attributed by correlation id (per kernel name and
                           per launch); CUDA events time each launch as a whole (the fallback when
                           CUPTI is unavailable)
  --flush-l2               overwrite L2 before every timed launch (default: rotate the inputs over
                           enough copies to span twice the L2, so no launch reads a cached input)
  --trace FILE             write a Perfetto / chrome://tracing JSON trace: one track per GPU stream
                           with every timed kernel, linked to its command (needs CUPTI); NVTX ranges
                           name every command and backend run for Nsight Systems
  --csv PATH               write one row per command (BOO's columns, plus an error column)
  --dry-run                parse and validate only; print each canonical command and function name
  --dump DIR               write every command's inputs and results as .npy files (see README)
  --splat-input-value V    every input element = V instead of seeded random values
  --seed N                 seed of the random inputs and of the positions --verify-numerics samples
                           in large results (default 10; corners and edges are always checked)
  --cpu-iterations N       at most N timed launches of the CPU reference (default 1)
  --verbose / --no-verbose print results and timings (default: verbose unless --csv)
  --fail-on-unsupported    exit non-zero when a command uses an op boo does not implement
  --help                   this text; '<op> --help' lists an op's flags

exit status: 0 when every command ran, 1 when any failed (parse error, invalid signature, run error,
numerics failure), 2 for a bad driver option.
)";
}

Result<DriverOptions> parse_driver_options(const std::vector<std::string>& argv) {
  DriverOptions opts;
  auto value = [&](size_t& i) -> Result<std::string> {
    if (i + 1 >= argv.size()) return invalid_argument("driver option '" + argv[i] + "' needs a value");
    return argv[++i];
  };
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& word = argv[i];
    std::string name = word, inline_value;
    bool has_inline = false;
    if (base::starts_with(word, "--") && word.find('=') != std::string::npos) {
      name = word.substr(0, word.find('='));
      inline_value = word.substr(word.find('=') + 1);
      has_inline = true;
    }
    auto take = [&]() -> Result<std::string> {
      if (has_inline) return inline_value;
      return value(i);
    };
    if (name == "--commands-file") {
      BOO_ASSIGN_OR_RETURN(opts.commands_file, take());
    } else if (name == "--backend") {
      BOO_ASSIGN_OR_RETURN(std::string b, take());
      for (const std::string& part : base::split(b, ',')) opts.backends.push_back(part);
    } else if (name == "--csv") {
      BOO_ASSIGN_OR_RETURN(opts.csv_path, take());
    } else if (name == "--dry-run") {
      opts.dry_run = true;
    } else if (name == "--dump") {
      BOO_ASSIGN_OR_RETURN(opts.dump_dir, take());
    } else if (name == "--splat-input-value") {
      BOO_ASSIGN_OR_RETURN(std::string v, take());
      Result<double> d = base::parse_double(v);
      if (!d.ok()) return invalid_argument("--splat-input-value: " + d.status().message());
      opts.splat = *d;
    } else if (name == "--seed") {
      BOO_ASSIGN_OR_RETURN(std::string v, take());
      Result<int64_t> s = base::parse_int(v);
      if (!s.ok() || *s < 0) return invalid_argument("--seed: expected a non-negative integer, got '" + v + "'");
      opts.seed = static_cast<uint64_t>(*s);
    } else if (name == "--cpu-iterations") {
      BOO_ASSIGN_OR_RETURN(std::string v, take());
      Result<int64_t> n = base::parse_int(v);
      if (!n.ok() || *n < 1) return invalid_argument("--cpu-iterations: expected a positive integer, got '" + v + "'");
      opts.cpu_iterations = *n;
    } else if (name == "--verbose") {
      opts.verbose = true;
    } else if (name == "--no-verbose") {
      opts.verbose = false;
    } else if (name == "--fail-on-unsupported") {
      opts.fail_on_unsupported = true;
    } else if (name == "--verify-numerics") {
      opts.verify_numerics = true;
    } else if (name == "--numerics-verbose") {
      opts.numerics.verbose = true;
    } else if (name == "--skip-structured-tests") {
      opts.numerics.structured_tests = false;
    } else if (name == "--numerics-reference-dtype") {
      BOO_ASSIGN_OR_RETURN(std::string v, take());
      if (v != "float64" && v != "float32")
        return invalid_argument("--numerics-reference-dtype: expected float64 or float32, got '" + v + "'");
      opts.numerics.reference_float32 = v == "float32";
    } else if (name == "--numerics-vendor") {
      BOO_ASSIGN_OR_RETURN(std::string v, take());
      if (v != "cudnn" && v != "none")
        return invalid_argument("--numerics-vendor: expected cudnn or none, got '" + v + "'");
      opts.numerics.vendor = v == "cudnn";
    } else if (name == "--numerics-min-samples") {
      BOO_ASSIGN_OR_RETURN(std::string v, take());
      Result<int64_t> n = base::parse_int(v);
      if (!n.ok() || *n < 1) return invalid_argument("--numerics-min-samples: expected a positive integer, got '" + v + "'");
      opts.numerics.min_samples = *n;
    } else if (name == "--numerics-stddev-rtol" || name == "--numerics-stddev-atol" || name == "--numerics-mean-rtol" ||
               name == "--numerics-mean-atol") {
      BOO_ASSIGN_OR_RETURN(std::string v, take());
      Result<double> d = base::parse_double(v);
      if (!d.ok() || *d < 0) return invalid_argument(name + ": expected a non-negative number, got '" + v + "'");
      (name == "--numerics-stddev-rtol"   ? opts.numerics.stddev_rtol
       : name == "--numerics-stddev-atol" ? opts.numerics.stddev_atol
       : name == "--numerics-mean-rtol"   ? opts.numerics.mean_rtol
                                          : opts.numerics.mean_atol) = *d;
    } else if (name == "--impl") {
      BOO_ASSIGN_OR_RETURN(opts.implementation, take());
    } else if (name == "--cache-dir") {
      BOO_ASSIGN_OR_RETURN(opts.cache_dir, take());
    } else if (name == "--gpu-id") {
      BOO_ASSIGN_OR_RETURN(std::string v, take());
      Result<int64_t> g = base::parse_int(v);
      if (!g.ok() || *g < -1) return invalid_argument("--gpu-id: expected a GPU ordinal or -1 (all GPUs), got '" + v + "'");
      opts.gpu_id = static_cast<int>(*g);
    } else if (name == "--command-timeout") {
      BOO_ASSIGN_OR_RETURN(std::string v, take());
      Result<double> t = base::parse_double(v);
      if (!t.ok() || *t <= 0) return invalid_argument("--command-timeout: expected seconds > 0, got '" + v + "'");
      opts.command_timeout_s = *t;
    } else if (name == "--flush-l2") {
      opts.timing.flush_l2 = true;
    } else if (name == "--timer") {
      BOO_ASSIGN_OR_RETURN(std::string v, take());
      if (v != "cupti" && v != "events") return invalid_argument("--timer: expected cupti or events, got '" + v + "'");
      opts.timing.prefer_cupti = v == "cupti";
    } else if (name == "--trace") {
      BOO_ASSIGN_OR_RETURN(opts.trace_path, take());
    } else if (name == "--trace-part") {
      BOO_ASSIGN_OR_RETURN(opts.trace_part, take());
    } else if (name == "--no-isolation") {
      opts.isolation = false;
    } else if (name == "--executor-child") {
      opts.executor_child = true;
      opts.isolation = false;
    } else if ((name == "--help" || name == "-h") && opts.command.empty()) {
      opts.help = true;
    } else {
      opts.command.push_back(word);
    }
  }
  std::vector<std::string> unique;
  for (const std::string& b : opts.backends) {
    if (canonical_backend(b).empty())
      return invalid_argument("--backend " + b + ": unknown backend; accepted: boo (GPU), cudnn (cuDNN 9), cpu (float64 "
                              "reference), and BOO's names iree_boo, iree_boo_experimental, iree_boo_legacy, "
                              "iree_boo_inductor (run as boo), torch, inductor (run as cudnn), faulty:<fault> (a deliberately wrong "
                              "CPU reference; faults: shift, permute, missing-bias, unwritten-tail, scale, outlier, nan)");
    if (std::find(unique.begin(), unique.end(), b) == unique.end()) unique.push_back(b);
  }
  opts.backends = std::move(unique);
  return opts;
}

}  // namespace boo::driver
