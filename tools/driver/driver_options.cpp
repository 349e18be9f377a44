// boo-driver: the driver-level option table, its parser and its help.
#include "driver_options.hpp"

#include <algorithm>

#include "base/checked_int.hpp"
#include "base/strings.hpp"
#include "bench/fault_backend.hpp"

namespace boo::driver {
namespace {

// Value readers for the table's apply functions: each error names the option
// and what it accepts.
Result<int64_t> integer_at_least(const char* option, const std::string& v, int64_t least, const char* expected) {
  Result<int64_t> n = base::parse_int(v);
  if (!n.ok() || *n < least) return invalid_argument(std::string(option) + ": expected " + expected + ", got '" + v + "'");
  return n;
}

Result<double> non_negative(const char* option, const std::string& v) {
  Result<double> d = base::parse_double(v);
  if (!d.ok() || *d < 0) return invalid_argument(std::string(option) + ": expected a non-negative number, got '" + v + "'");
  return d;
}

Status add_backends(DriverOptions& o, const std::string& v) {
  for (const std::string& b : base::split(v, ',')) {
    if (canonical_backend(b).empty())
      return invalid_argument("--backend " + b + ": unknown backend; accepted: boo (GPU), cudnn (cuDNN 9; GEMMs on "
                              "cuBLASLt), cublaslt (cuBLASLt, GEMMs only), cpu (float64 "
                              "reference), and BOO's names iree_boo, iree_boo_experimental, iree_boo_legacy, "
                              "iree_boo_inductor (run as boo), torch, inductor (run as cudnn), faulty:<fault> (a deliberately "
                              "wrong CPU reference; faults: shift, permute, missing-bias, unwritten-tail, scale, outlier, nan)");
    if (std::find(o.backends.begin(), o.backends.end(), b) == o.backends.end()) o.backends.push_back(b);
  }
  return ok_status();
}

using enum OptionScope;

// The options, in --help order. Defaults are applied from here, so the help
// cannot disagree with what runs.
constexpr DriverOptionSpec kOptions[] = {
    {"commands-file", 0, "FILE", "",
     "one command per line (.txt: shell words; .tsv: tab-separated);\n'#' comments and blank lines are skipped",
     kDriver, [](DriverOptions& o, const std::string& v) { o.commands_file = v; return ok_status(); }},
    {"backend", 0, "NAME", "",
     "boo (boo's GPU kernels; the default with a GPU), cudnn (the vendor baseline:\n"
     "cuDNN 9's fastest engine per signature, GEMMs on cuBLASLt's fastest\n"
     "algorithm), cublaslt (cuBLASLt alone, GEMMs only) or cpu (the float64\n"
     "reference; the default without a GPU); repeatable to compare backends\n"
     "(ratios to the vendor, cudnn or cublaslt, are printed).\n"
     "BOO's names work too: iree_boo* run as boo, torch and inductor as cudnn;\n"
     "faulty:<fault> is the CPU reference made deliberately wrong, for testing\n"
     "--verify-numerics (faults: shift, permute, missing-bias, unwritten-tail,\n"
     "scale, outlier, nan; BOO_TEST_FAULT=<fault> puts one on the boo backend)",
     kDriver, add_backends},
    {"impl", 0, "NAME", "", "run only this GPU implementation (boo explain lists them)", kRun,
     [](DriverOptions& o, const std::string& v) { o.implementation = v; return ok_status(); }},
    {"gpu-id", 0, "N", "0",
     "the GPU to run on; -1 runs the commands across every GPU\nin parallel (one executor each), results in input order",
     kDriver,
     [](DriverOptions& o, const std::string& v) -> Status {
       BOO_ASSIGN_OR_RETURN(int64_t g, integer_at_least("--gpu-id", v, -1, "a GPU ordinal or -1 (all GPUs)"));
       const std::optional<int> id = base::narrow<int>(g);
       if (!id) return invalid_argument("--gpu-id: " + v + " is not a GPU ordinal");
       o.gpu_id = *id;
       return ok_status();
     }},
    {"command-timeout", 0, "S", "600", "kill and report a command still running after S seconds", kDriver,
     [](DriverOptions& o, const std::string& v) -> Status {
       Result<double> t = base::parse_double(v);
       if (!t.ok() || *t <= 0) return invalid_argument("--command-timeout: expected seconds > 0, got '" + v + "'");
       o.command_timeout_s = *t;
       return ok_status();
     }},
    {"compile-jobs", 0, "N", "",
     "compile the kernels of a commands file's commands on N threads into the\n"
     "cache before running them (default: the hardware threads; 0 or 1: off)",
     kDriver,
     [](DriverOptions& o, const std::string& v) -> Status {
       BOO_ASSIGN_OR_RETURN(int64_t n, integer_at_least("--compile-jobs", v, 0, "a thread count >= 0"));
       o.compile_jobs = static_cast<int>(std::min<int64_t>(n, 4096));
       return ok_status();
     }},
    {"no-isolation", 0, "", "",
     "run commands in this process (default: in executor child processes,\n"
     "so a kernel fault or hang costs only its command)",
     kDriver, [](DriverOptions& o, const std::string&) { o.isolation = false; return ok_status(); }},
    {"cache-dir", 0, "DIR", "", "the kernel cache folder (default BOO_CACHE_DIR or ~/.cache/boo)", kRun,
     [](DriverOptions& o, const std::string& v) { o.cache_dir = v; return ok_status(); }},
    {"verify-numerics", 0, "", "",
     "BOO's statistical verdict against the float64 reference (--reference), with cuDNN's\n"
     "spread as the bar when it runs the signature, plus boo's per-element\n"
     "tolerance and the structured test (docs/tolerances.md)",
     kRun, [](DriverOptions& o, const std::string&) { o.verify_numerics = true; return ok_status(); }},
    {"numerics-verbose", 0, "", "", "the full statistics block instead of one line", kRun,
     [](DriverOptions& o, const std::string&) { o.numerics.verbose = true; return ok_status(); }},
    {"numerics-min-samples", 0, "N", "1000", "compare at least N sampled elements", kRun,
     [](DriverOptions& o, const std::string& v) -> Status {
       BOO_ASSIGN_OR_RETURN(o.numerics.min_samples,
                            integer_at_least("--numerics-min-samples", v, 1, "a positive integer"));
       return ok_status();
     }},
    {"numerics-stddev-rtol", 0, "X", "1.2", "the error spread's allowance relative to cuDNN's", kRun,
     [](DriverOptions& o, const std::string& v) -> Status {
       BOO_ASSIGN_OR_RETURN(o.numerics.stddev_rtol, non_negative("--numerics-stddev-rtol", v));
       return ok_status();
     }},
    {"numerics-stddev-atol", 0, "X", "1e-5", "the error spread's absolute allowance", kRun,
     [](DriverOptions& o, const std::string& v) -> Status {
       BOO_ASSIGN_OR_RETURN(o.numerics.stddev_atol, non_negative("--numerics-stddev-atol", v));
       return ok_status();
     }},
    {"numerics-mean-rtol", 0, "X", "0.2", "the mean error's allowance relative to the spread", kRun,
     [](DriverOptions& o, const std::string& v) -> Status {
       BOO_ASSIGN_OR_RETURN(o.numerics.mean_rtol, non_negative("--numerics-mean-rtol", v));
       return ok_status();
     }},
    {"numerics-mean-atol", 0, "X", "1e-5", "the mean error's absolute allowance", kRun,
     [](DriverOptions& o, const std::string& v) -> Status {
       BOO_ASSIGN_OR_RETURN(o.numerics.mean_atol, non_negative("--numerics-mean-atol", v));
       return ok_status();
     }},
    {"numerics-reference-dtype", 0, "float64|float32", "float64", "the precision of the CPU reference", kRun,
     [](DriverOptions& o, const std::string& v) -> Status {
       if (v != "float64" && v != "float32")
         return invalid_argument("--numerics-reference-dtype: expected float64 or float32, got '" + v + "'");
       o.numerics.reference_float32 = v == "float32";
       return ok_status();
     }},
    {"reference", 0, "auto|cpu|gpu", "auto",
     "where --verify-numerics computes the float64 reference: gpu (the same sums\n"
     "as the CPU's, in milliseconds; ops without a GPU reference use the CPU's),\n"
     "cpu, or auto (the GPU's when the driver has a GPU for boo or cudnn)",
     kRun,
     [](DriverOptions& o, const std::string& v) -> Status {
       BOO_ASSIGN_OR_RETURN(o.reference, bench::parse_reference_choice(v));
       return ok_status();
     }},
    {"skip-structured-tests", 0, "", "", "skip the structured test (zeros with a block of ones)", kRun,
     [](DriverOptions& o, const std::string&) { o.numerics.structured_tests = false; return ok_status(); }},
    {"numerics-vendor", 0, "cudnn|none", "cudnn",
     "none: no cuDNN spread; the spread is bounded by boo's documented tolerance\n"
     "(saves cuDNN's per-signature plan build on long matrices)",
     kRun,
     [](DriverOptions& o, const std::string& v) -> Status {
       if (v != "cudnn" && v != "none")
         return invalid_argument("--numerics-vendor: expected cudnn or none, got '" + v + "'");
       o.numerics.vendor = v == "cudnn";
       return ok_status();
     }},
    {"timer", 0, "cupti|events", "cupti",
     "how launches are timed: CUPTI activity records time every\n"
     "kernel of every launch, attributed by correlation id (per kernel name and\n"
     "per launch); CUDA events time each launch as a whole (the fallback when\n"
     "CUPTI is unavailable)",
     kRun,
     [](DriverOptions& o, const std::string& v) -> Status {
       if (v != "cupti" && v != "events") return invalid_argument("--timer: expected cupti or events, got '" + v + "'");
       o.timing.prefer_cupti = v == "cupti";
       return ok_status();
     }},
    {"min-time", 0, "S", "",
     "size the launches by their duration: about S/4 seconds of warm-up, then\n"
     "about S seconds of timed launches (3 to 10000), for every command that\n"
     "gives no --iter (default: --iter launches, 100 unless given)",
     kRun,
     [](DriverOptions& o, const std::string& v) -> Status {
       Result<double> t = base::parse_double(v);
       if (!t.ok() || *t <= 0) return invalid_argument("--min-time: expected seconds > 0, got '" + v + "'");
       o.min_time_s = *t;
       return ok_status();
     }},
    {"vendor-tune", 0, "", "",
     "search cuDNN's engine configurations afresh for every signature (default: the\n"
     "plan chosen by an earlier run with this cuDNN on this device is reused; plans\n"
     "are remembered in the cache folder unless BOO_CACHE_ON=0)",
     kRun, [](DriverOptions& o, const std::string&) { o.timing.vendor_retune = true; return ok_status(); }},
    {"flush-l2", 0, "", "",
     "overwrite L2 before every timed launch (default: rotate the inputs over\n"
     "enough copies to span twice the L2, so no launch reads a cached input)",
     kRun, [](DriverOptions& o, const std::string&) { o.timing.flush_l2 = true; return ok_status(); }},
    {"trace", 0, "FILE", "",
     "write a Perfetto / chrome://tracing JSON trace: one track per GPU stream\n"
     "with every timed kernel, linked to its command (needs CUPTI); NVTX ranges\n"
     "name every command and backend run for Nsight Systems",
     kDriver, [](DriverOptions& o, const std::string& v) { o.trace_path = v; return ok_status(); }},
    {"csv", 0, "PATH", "",
     "write one row per command, failed ones included, in exactly BOO's columns\n"
     "(cuDNN's numerics in BOO's pytorch_* columns); '<op> --help' lines print\n"
     "the op's flags and get no row (they run nothing)",
     kDriver,
     [](DriverOptions& o, const std::string& v) { o.csv_path = v; return ok_status(); }},
    {"boo-defaults", 0, "", "",
     "conv lines without -F run BOO's default -F 1 (forward only) instead of\n"
     "MIOpenDriver's -F 0 (forward and both backward passes), and without --backend\n"
     "boo's GPU kernels are named BOO's default backend, iree_boo_experimental\n"
     "(so --csv writes BOO's default header byte for byte)",
     kDriver, [](DriverOptions& o, const std::string&) { o.boo_defaults = true; return ok_status(); }},
    {"csv-extra", 0, "", "",
     "boo's columns too: the numerics columns named cudnn_* instead of pytorch_*,\n"
     "then flop_count, min_bytes and error (why a command failed)",
     kRun, [](DriverOptions& o, const std::string&) { o.csv_extra = true; return ok_status(); }},
    {"dry-run", 0, "", "", "parse and validate only; print each canonical command and function name", kDriver,
     [](DriverOptions& o, const std::string&) { o.dry_run = true; return ok_status(); }},
    {"dump", 0, "DIR", "", "write every command's inputs and results as .npy files (see README)", kRun,
     [](DriverOptions& o, const std::string& v) { o.dump_dir = v; return ok_status(); }},
    {"dump-append", 0, "", "", "let --dump add to a folder that is not empty (default: refuse it)", kDriver,
     [](DriverOptions& o, const std::string&) { o.dump_append = true; return ok_status(); }},
    {"splat-input-value", 0, "V", "", "every input element = V instead of seeded random values", kRun,
     [](DriverOptions& o, const std::string& v) -> Status {
       Result<double> d = base::parse_double(v);
       if (!d.ok()) return invalid_argument("--splat-input-value: " + d.status().message());
       o.splat = *d;
       return ok_status();
     }},
    {"seed", 0, "N", "10",
     "seed of the random inputs and of the positions --verify-numerics samples\n"
     "in large results (corners and edges are always checked)",
     kRun,
     [](DriverOptions& o, const std::string& v) -> Status {
       BOO_ASSIGN_OR_RETURN(int64_t s, integer_at_least("--seed", v, 0, "a non-negative integer"));
       o.seed = static_cast<uint64_t>(s);
       return ok_status();
     }},
    {"cpu-iterations", 0, "N", "1", "at most N timed launches of the CPU reference", kRun,
     [](DriverOptions& o, const std::string& v) -> Status {
       BOO_ASSIGN_OR_RETURN(o.cpu_iterations, integer_at_least("--cpu-iterations", v, 1, "a positive integer"));
       return ok_status();
     }},
    {"verbose", 0, "", "", "print results and timings (the default unless --csv)", kRun,
     [](DriverOptions& o, const std::string&) { o.verbose = true; return ok_status(); }},
    {"no-verbose", 0, "", "", "print only each command, its ratios, failures and numerics verdicts", kRun,
     [](DriverOptions& o, const std::string&) { o.verbose = false; return ok_status(); }},
    {"fail-on-unsupported", 0, "", "", "exit non-zero when a command uses an op boo does not implement", kDriver,
     [](DriverOptions& o, const std::string&) { o.fail_on_unsupported = true; return ok_status(); }},
    {"quiet", 0, "", "", "no progress line (one status line on stderr, drawn when it is a terminal)", kDriver,
     [](DriverOptions& o, const std::string&) { o.quiet = true; return ok_status(); }},
    {"help", 'h', "", "", "this text; '<op> --help' lists an op's flags", kDriver,
     [](DriverOptions& o, const std::string&) { o.help = true; return ok_status(); }},
    {"version", 0, "", "", "print boo's version and the git commit it was built from", kDriver,
     [](DriverOptions& o, const std::string&) { o.version = true; return ok_status(); }},
    {"trace-part", 0, "FILE", "", "the part of the --trace file this executor appends to", kInternal,
     [](DriverOptions& o, const std::string& v) { o.trace_part = v; return ok_status(); }},
    {"executor-child", 0, "", "", "run commands read from stdin, as an executor of a driver", kInternal,
     [](DriverOptions& o, const std::string&) {
       o.executor_child = true;
       o.isolation = false;
       return ok_status();
     }},
};

const DriverOptionSpec* find_option(std::string_view word) {
  for (const DriverOptionSpec& spec : kOptions) {
    if (word.size() == spec.long_name.size() + 2 && word.substr(0, 2) == "--" && word.substr(2) == spec.long_name)
      return &spec;
    if (spec.short_name && word.size() == 2 && word[0] == '-' && word[1] == spec.short_name) return &spec;
  }
  return nullptr;
}

// "  --name ARG" padded to the help column, or on a line of its own when longer.
std::string format_option_help(const DriverOptionSpec& spec) {
  constexpr size_t kHelpColumn = 27;
  std::string head = "  --";
  head += spec.long_name;
  if (spec.short_name) {
    head += ", -";
    head += spec.short_name;
  }
  if (!spec.argument.empty()) {
    head += ' ';
    head += spec.argument;
  }
  std::string help(spec.help);
  if (!spec.default_value.empty()) {
    help += " (default ";
    help += spec.default_value;
    help += ')';
  }
  std::string out = head;
  const std::string indent(kHelpColumn, ' ');
  if (head.size() + 2 > kHelpColumn) out += "\n" + indent;
  else out += std::string(kHelpColumn - head.size(), ' ');
  for (char ch : help) out += ch == '\n' ? "\n" + indent : std::string(1, ch);
  return out + "\n";
}

}  // namespace

std::span<const DriverOptionSpec> driver_option_table() { return kOptions; }

std::vector<std::string> executor_child_arguments(const DriverOptions& o, const std::vector<std::string>& backends,
                                                  int gpu_id, const std::string& trace_part) {
  std::vector<std::string> a{"--executor-child", "--gpu-id", std::to_string(gpu_id)};
  for (const std::string& b : backends) a.insert(a.end(), {"--backend", b});
  a.insert(a.end(), o.run_option_words.begin(), o.run_option_words.end());
  // Results go to the driver's CSV, so the children print what the driver would.
  if (!o.verbose && !o.csv_path.empty()) a.push_back("--no-verbose");
  if (!trace_part.empty()) a.insert(a.end(), {"--trace-part", trace_part});
  return a;
}

std::string default_gpu_backend(const DriverOptions& opts) { return opts.boo_defaults ? "iree_boo_experimental" : "boo"; }

std::string canonical_backend(const std::string& name) {
  // BOO's backend names run as their boo counterparts: its own kernels as boo,
  // PyTorch's (cuDNN on NVIDIA GPUs) as cudnn. The CSV keeps the name given.
  static const std::pair<const char*, const char*> kNames[] = {
      {"boo", "boo"},         {"cudnn", "cudnn"},           {"cpu", "cpu"},       {"cublaslt", "cublaslt"},
      {"iree_boo", "boo"},    {"iree_boo_experimental", "boo"}, {"iree_boo_legacy", "boo"},
      {"iree_boo_inductor", "boo"}, {"torch", "cudnn"},        {"inductor", "cudnn"}};
  for (const auto& [given, canonical] : kNames)
    if (name == given) return canonical;
  if (bench::is_faulty_backend_name(name)) return "faulty";
  return "";
}

std::string driver_usage() {
  std::string out = R"(usage: boo-driver [driver options] <MIOpenDriver command>
       boo-driver [driver options] --commands-file FILE [words appended to every command]

Runs MIOpenDriver-style commands (conv*, layernorm*, addlayernorm*, t5layernorm*, bnorm*, groupnorm*,
gemm*) and ATen ops from PyTorch profiler traces (aten::mm "[shapes]" "[dtypes]" "[strides]" "[args]"),
and prints BOO-style results and timings. '<op> --help' prints an op's flags.

driver options (--name VALUE or --name=VALUE):
)";
  for (const DriverOptionSpec& spec : kOptions)
    if (spec.scope != OptionScope::kInternal) out += format_option_help(spec);
  out += R"(
exit status: 0 when every command ran, 1 when any failed (parse error, invalid signature, run error,
numerics failure), 2 for a bad driver option or an output (--csv, --trace, --dump) that cannot be
written: those are checked before any command runs; --csv and --trace never write through a symbolic
link or over the --commands-file, and say which existing file they replace.
)";
  return out;
}

Result<DriverOptions> parse_driver_options(const std::vector<std::string>& argv_in) {
  DriverOptions opts;
  for (const DriverOptionSpec& spec : kOptions)
    if (!spec.default_value.empty()) BOO_RETURN_IF_ERROR(spec.apply(opts, std::string(spec.default_value)));
  // One argument may hold tab-separated words, pasted from a .tsv line
  // ($'convbfp16\t-F\t1'), as BOO's driver allows.
  std::vector<std::string> words;
  for (const std::string& arg : argv_in) {
    if (arg.find('\t') == std::string::npos) words.push_back(arg);
    else for (std::string& w : base::split(arg, '\t')) words.push_back(std::move(w));
  }
  const std::vector<std::string>& argv = words;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& word = argv[i];
    const size_t equals = base::starts_with(word, "--") ? word.find('=') : std::string::npos;
    const DriverOptionSpec* spec = find_option(word.substr(0, equals));
    // Anything else belongs to the op command, and so does --help after the
    // op token ('conv --help' lists conv's flags).
    if (!spec || (spec->long_name == "help" && !opts.command.empty())) {
      opts.command.push_back(word);
      continue;
    }
    const std::string name = word.substr(0, equals);
    std::string value;
    if (spec->argument.empty()) {
      if (equals != std::string::npos) return invalid_argument("driver option '" + name + "' takes no value");
    } else if (equals != std::string::npos) {
      value = word.substr(equals + 1);
    } else if (i + 1 < argv.size()) {
      value = argv[++i];
    } else {
      return invalid_argument("driver option '" + word + "' needs a value");
    }
    BOO_RETURN_IF_ERROR(spec->apply(opts, value));
    if (spec->scope == OptionScope::kRun)
      opts.run_option_words.push_back(spec->argument.empty() ? name : "--" + std::string(spec->long_name) + "=" + value);
  }
  return opts;
}

}  // namespace boo::driver
