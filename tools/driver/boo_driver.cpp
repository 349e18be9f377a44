// boo-driver: runs MIOpenDriver-style commands on boo's backends and prints
// BOO-style results, timings, CSV rows and .npy dumps.
#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "base/file_util.hpp"
#include "base/npy.hpp"
#include "base/strings.hpp"
#include "bench/backend.hpp"
#include "bench/csv_writer.hpp"
#include "bench/fault_backend.hpp"
#include "bench/numerics.hpp"
#include "bench/numerics_check.hpp"
#include "boo/runtime.hpp"
#include "bench/statistics.hpp"
#include "bench/trace.hpp"
#include "boo/registry.hpp"
#include "common/commands_file.hpp"
#include "driver_options.hpp"
#include "executor.hpp"
#include "bench/executor_protocol.hpp"
#include "cuda/driver_api.hpp"
#include "ops/op_registry.hpp"

#include <nvtx3/nvToolsExt.h>

namespace boo::driver {
namespace {

using tools::CommandLine;
using tools::load_commands;

enum class Outcome { kOk, kFailed, kUnsupported };

// An NVTX range for Nsight Systems: pushed on construction, popped on scope exit.
class NvtxRange {
 public:
  explicit NvtxRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

const char* outcome_name(Outcome o) {
  return o == Outcome::kOk ? "ok" : o == Outcome::kUnsupported ? "unsupported" : "failed";
}

Outcome outcome_of(const std::string& name) {
  return name == "ok" ? Outcome::kOk : name == "unsupported" ? Outcome::kUnsupported : Outcome::kFailed;
}

std::string format_us(double us) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2fus", us);
  return buf;
}

std::string format_fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// The five CSV cells of one backend (BOO's rules for one or several kernels).
std::vector<std::string> csv_stats(const bench::BackendRun& run) {
  if (run.kernels.empty()) return {"untimed", "untimed", "untimed", "untimed", "untimed"};
  if (run.kernels.size() == 1) {
    const bench::SampleStats s = bench::summarize(run.kernels[0].samples_us);
    return {format_fixed(s.min, 3), format_fixed(s.max, 3), format_fixed(s.mean, 3), format_fixed(s.stddev, 3),
            std::to_string(s.count)};
  }
  double total_us = 0;
  int64_t dispatches = 0;
  for (const bench::KernelTiming& k : run.kernels) {
    for (double v : k.samples_us) total_us += v;
    dispatches += static_cast<int64_t>(k.samples_us.size());
  }
  const std::string na = "unsupported stat calculation";
  return {na, na, format_fixed(total_us / static_cast<double>(run.timed_launches), 3), na, std::to_string(dispatches)};
}

double per_launch_mean_us(const bench::BackendRun& run) {
  double total = 0;
  for (const bench::KernelTiming& k : run.kernels)
    for (double v : k.samples_us) total += v;
  return run.timed_launches ? total / static_cast<double>(run.timed_launches) : 0.0;
}

void print_run(const OpSignature& sig, const std::string& backend, const bench::BackendRun& run) {
  const std::vector<TensorSpec> specs = sig.results();
  for (size_t i = 0; i < run.results.size(); ++i) {
    const TensorSpec& t = run.results[i].spec();
    std::cout << ">>>\tresult #" << i << " (" << specs[i].name << ") shape: " << format_dims(t.shape)
              << "; stride: " << format_dims(t.strides);
    if (!t.layout.empty()) std::cout << "; layout: " << t.layout;
    std::cout << "; dtype: " << dtype_name(t.dtype) << "; device: " << run.device << "\n";
  }
  if (run.kernels.empty()) {
    std::cout << ">>>\tuntimed (-t 0) on " << backend << "\n";
    return;
  }
  if (!run.timer.empty()) {
    std::cout << ">>>\ttimed by " << run.timer << " over " << run.timed_launches << " launches";
    if (run.input_sets > 1) std::cout << ", inputs rotated over " << run.input_sets << " copies";
    std::cout << "\n";
  }
  int64_t dispatches = 0;
  for (const bench::KernelTiming& k : run.kernels) {
    const bench::SampleStats s = bench::summarize(k.samples_us);
    dispatches += s.count;
    std::cout << ">>>\t" << k.name << "\n>>>\t\tmin=" << format_us(s.min) << " max=" << format_us(s.max)
              << " mean=" << format_us(s.mean) << " stddev=" << format_us(s.stddev)
              << " num_dispatches=" << s.count << "\n";
  }
  const bool gpu = run.device != "cpu";
  const double mean_us = per_launch_mean_us(run);
  std::cout << ">>>\tPer-launch # " << (gpu ? "GPU kernel" : "CPU") << " dispatches (" << backend
            << "): " << format_fixed(static_cast<double>(dispatches) / static_cast<double>(run.timed_launches), 1)
            << "\n";
  std::cout << ">>>\tPer-launch " << (gpu ? "GPU" : "CPU") << " mean time (" << backend << "): " << format_us(mean_us)
            << "\n";
  if (mean_us > 0) {
    const double seconds = mean_us * 1e-6;
    std::cout << ">>>\tThroughput (" << backend << "): " << format_fixed(sig.flop_count() / seconds * 1e-9, 2)
              << " GFLOP/s, " << format_fixed(sig.min_bytes_moved() / seconds * 1e-9, 2) << " GB/s\n";
  }
}

// Writes the inputs and every backend's results of one command as .npy files.
Status dump_command(const std::string& dir, int index, const OpSignature& sig,
                    const std::vector<base::HostTensor>& args,
                    const std::vector<std::pair<std::string, bench::BackendRun>>& runs) {
  char prefix[16];
  std::snprintf(prefix, sizeof prefix, "%04d_", index);
  const std::string cmd_dir = dir + "/" + prefix + sig.func_name();
  BOO_RETURN_IF_ERROR(base::make_directories(cmd_dir));
  std::string manifest = "command: " + sig.command() + "\nfunc_name: " + sig.func_name() + "\n";
  auto describe = [](const std::string& file, const TensorSpec& spec) {
    std::string line = file + ": logical shape " + format_dims(spec.shape) + ", dtype " +
                       std::string(dtype_name(spec.dtype));
    if (!spec.layout.empty()) line += ", memory layout " + spec.layout;
    return line + "\n";
  };
  const std::vector<TensorSpec> arg_specs = sig.arguments();
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string file = "input_" + std::to_string(i) + "_" + arg_specs[i].name + ".npy";
    BOO_RETURN_IF_ERROR(base::write_npy(cmd_dir + "/" + file, args[i]));
    manifest += describe(file, args[i].spec());
  }
  const std::vector<TensorSpec> result_specs = sig.results();
  for (const auto& [backend, run] : runs) {
    for (size_t i = 0; i < run.results.size(); ++i) {
      const std::string file = backend + "_result_" + std::to_string(i) + "_" + result_specs[i].name + ".npy";
      BOO_RETURN_IF_ERROR(base::write_npy(cmd_dir + "/" + file, run.results[i]));
      manifest += describe(file, run.results[i].spec());
    }
  }
  manifest += "Arrays are C-contiguous in the logical shape (N, C, [D,] H, W for conv activations);\n"
              "bfloat16 tensors are stored as float32 (exactly).\n";
  return base::write_file_atomic(cmd_dir + "/manifest.txt", manifest);
}

class DriverRun {
 public:
  explicit DriverRun(DriverOptions opts) : opts_(std::move(opts)) {
    verbose_ = opts_.verbose.value_or(opts_.csv_path.empty());
  }

  // Creates the backends. Without --backend: boo when a GPU is usable, else cpu.
  Status open_backends() {
    RuntimeOptions ro = RuntimeOptions::from_environment();
    ro.device = opts_.gpu_id;
    ro.implementation = opts_.implementation;
    if (!opts_.cache_dir.empty()) {
      ro.cache_dir = opts_.cache_dir;
      ro.cache_enabled = true;
    }
    backend_names_ = opts_.backends;
    auto wants = [&](const char* name) {
      return std::any_of(backend_names_.begin(), backend_names_.end(),
                         [&](const std::string& b) { return canonical_backend(b) == name; });
    };
    const bool want_gpu = backend_names_.empty() || wants("boo") || wants("cudnn");
    if (want_gpu && !opts_.dry_run) {
      Result<std::unique_ptr<Runtime>> rt = Runtime::create(ro);
      if (rt.ok()) {
        runtime_ = std::move(*rt);
      } else if (!backend_names_.empty()) {
        Status st = rt.status();
        return std::move(st).annotate("--backend boo/cudnn need a usable GPU");
      } else {
        std::cout << ">>> no GPU backend (" << rt.status().message() << "); running on the CPU reference\n";
      }
    }
    if (backend_names_.empty()) backend_names_ = {runtime_ || opts_.dry_run ? "boo" : "cpu"};
    if (opts_.dry_run) return ok_status();
    for (const std::string& name : backend_names_) {
      const std::string kind = canonical_backend(name);
      if (kind == "cpu") {
        backends_.push_back(bench::make_cpu_backend(opts_.cpu_iterations));
      } else if (kind == "faulty") {
        BOO_ASSIGN_OR_RETURN(std::unique_ptr<bench::Backend> faulty, bench::make_faulty_backend(name, opts_.cpu_iterations));
        backends_.push_back(std::move(faulty));
      } else if (kind == "cudnn") {
        BOO_ASSIGN_OR_RETURN(std::unique_ptr<bench::Backend> cudnn,
                             bench::make_cudnn_backend(*runtime_, opts_.timing));
        backends_.push_back(std::move(cudnn));
      } else if (runtime_) {
        BOO_ASSIGN_OR_RETURN(std::unique_ptr<bench::Backend> boo,
                             bench::with_test_fault_from_environment(bench::make_boo_backend(*runtime_, opts_.timing)));
        backends_.push_back(std::move(boo));
      }
    }
    if (!opts_.trace_part.empty()) {
      BOO_ASSIGN_OR_RETURN(bench::TracePart part, bench::TracePart::open(opts_.trace_part));
      trace_.emplace(std::move(part));
    }
    return ok_status();
  }

  /// Prints the device memory in use after a command (verbose runs on a GPU),
  /// so a long run shows whether memory stays flat.
  void report_memory() {
    if (!runtime_ || !verbose_) return;
    if (Result<int64_t> used = runtime_->device_memory_used(); used.ok())
      std::cout << ">>>	device memory in use: " << (*used >> 20) << " MiB (cuda:" << runtime_->device().ordinal
                << ")\n";
  }

  const std::vector<std::string>& last_row() const { return last_row_; }
  /// Closes this process's trace part (before the driver merges it).
  void close_trace() { trace_.reset(); }
  /// Why the GPU context is unusable (a sticky fault), or OK.
  Status context_health() { return runtime_ ? runtime_->context_health() : ok_status(); }
  const std::vector<std::string>& backend_names() const { return backend_names_; }

  /// The CSV row of a command that never produced one (its executor died).
  std::vector<std::string> failure_row(const std::string& shown, const std::string& reason) const {
    std::vector<std::string> row{shown};
    row.insert(row.end(), backend_names_.size() * 5, "N.A.");
    if (opts_.verify_numerics) row.insert(row.end(), bench::verdict_csv_header("cudnn").size(), "N.A.");
    row.insert(row.end(), {"", "", reason});
    return row;
  }
  void write_failure_row(const std::string& shown, const std::string& reason) {
    write_row(failure_row(shown, reason));
  }

  /// Names the backends without opening them (the parent of executors).
  void set_backend_names(std::vector<std::string> names) { backend_names_ = std::move(names); }

  /// The cudnn backend numerics compare against: the one the run has, else
  /// one made for numerics when a GPU and cuDNN are there; null otherwise
  /// (and with --numerics-vendor none).
  bench::Backend* numerics_vendor() {
    if (!opts_.numerics.vendor) return nullptr;
    for (size_t b = 0; b < backends_.size(); ++b)
      if (canonical_backend(backend_names_[b]) == "cudnn") return backends_[b].get();
    if (!numerics_cudnn_ && runtime_ && !numerics_cudnn_failed_) {
      Result<std::unique_ptr<bench::Backend>> cudnn = bench::make_cudnn_backend(*runtime_, opts_.timing);
      if (cudnn.ok()) numerics_cudnn_ = std::move(*cudnn);
      else numerics_cudnn_failed_ = true;
    }
    return numerics_cudnn_.get();
  }

  /// "kernels: compiled=2 loaded_from_cache=1 (...)" when the GPU backend ran.
  std::string runtime_summary() const {
    if (!runtime_) return "";
    const RuntimeStats s = runtime_->stats();
    return "boo-driver: kernels compiled=" + std::to_string(s.compiled) + " (" + format_fixed(s.compile_ms, 0) +
           " ms) loaded_from_cache=" + std::to_string(s.disk_hits) + " (" + format_fixed(s.load_ms, 1) +
           " ms) reused_in_process=" + std::to_string(s.memory_hits) + "\n";
  }

  Status open_csv() {
    if (opts_.csv_path.empty()) return ok_status();
    std::vector<std::string> header{"arguments"};
    for (const std::string& b : backend_names_)
      for (const char* stat : {" min", " max", " mean", " stddev", " num_dispatches"}) header.push_back(b + stat);
    if (opts_.verify_numerics) {
      const std::vector<std::string> numerics = bench::verdict_csv_header("cudnn");
      header.insert(header.end(), numerics.begin(), numerics.end());
    }
    header.insert(header.end(), {"flop_count", "min_bytes", "error"});
    BOO_ASSIGN_OR_RETURN(bench::CsvWriter w, bench::CsvWriter::open(opts_.csv_path, header));
    csv_.emplace(std::move(w));
    return ok_status();
  }

  Outcome run_one(const CommandLine& cmd, int index) {
    const std::string shown = cmd.text;
    std::vector<std::string> row{shown};
    auto fail = [&](Outcome outcome, const Status& status) {
      const char* tag = outcome == Outcome::kUnsupported ? "UNSUPPORTED" : "FAILED";
      std::string where = cmd.line_number ? " (line " + std::to_string(cmd.line_number) + ")" : "";
      std::cout << ">>> " << tag << where << ": " << status.to_string() << "\n";
      row.resize(1);
      for (size_t i = 0; i < backend_names_.size() * 5; ++i) row.push_back("N.A.");
      if (opts_.verify_numerics) row.insert(row.end(), bench::verdict_csv_header("cudnn").size(), "N.A.");
      row.insert(row.end(), {"", ""});
      row.push_back(status.to_string());
      write_row(row);
      return outcome;
    };
    // Flushed before running: if the command takes the process down, its header is out.
    std::cout << "\n>>> " << shown << "\n\n" << std::flush;
    if (!cmd.split_status.ok()) return fail(Outcome::kFailed, cmd.split_status);
    if (!cmd.words.empty() && (cmd.words.back() == "--help" || cmd.words.back() == "-h")) {
      Result<std::string> help = op_help(cmd.words.front());
      std::cout << (help.ok() ? *help : help.status().to_string()) << "\n";
      return help.ok() ? Outcome::kOk : Outcome::kFailed;
    }
    Result<ParsedCommand> parsed = parse_command(cmd.words);
    if (!parsed.ok()) {
      const bool unsupported = parsed.status().code() == StatusCode::kUnimplemented;
      return fail(unsupported ? Outcome::kUnsupported : Outcome::kFailed, parsed.status());
    }
    const OpSignature& sig = *parsed->signature;
    if (!parsed->ignored_flags.empty()) {
      std::cout << ">>>\tnote: accepted without effect in boo:";
      for (const std::string& f : parsed->ignored_flags) std::cout << " " << f;
      std::cout << "\n";
    }
    if (opts_.dry_run) {
      std::cout << ">>>\tcanonical: " << sig.command() << "\n>>>\tfunc_name: " << sig.func_name() << "\n";
      for (size_t i = 0; i < backend_names_.size() * 5; ++i) row.push_back("dry-run");
      if (opts_.verify_numerics) row.insert(row.end(), bench::verdict_csv_header("cudnn").size(), "dry-run");
      row.insert(row.end(), {base::format_double(sig.flop_count()), base::format_double(sig.min_bytes_moved()), ""});
      write_row(row);
      return Outcome::kOk;
    }
    const ops::OpDefinition* op = ops::find_op(sig.op_name());
    Result<std::vector<base::HostTensor>> args =
        op->make_arguments(sig, ops::InputOptions{opts_.seed, opts_.splat});
    if (!args.ok()) return fail(Outcome::kFailed, args.status());

    NvtxRange command_range("#" + std::to_string(index) + " " + shown);
    std::vector<std::pair<std::string, bench::BackendRun>> runs;
    for (size_t b = 0; b < backends_.size(); ++b) {
      Result<bench::BackendRun> run = [&] {
        NvtxRange backend_range(backend_names_[b]);
        return backends_[b]->run(sig, *args, parsed->run);
      }();
      if (!run.ok() && run.status().code() == StatusCode::kUnimplemented && canonical_backend(backend_names_[b]) == "cudnn" &&
          backends_.size() > 1) {
        // The baseline does not implement this signature: boo's results and times still count.
        std::cout << ">>>\t" << backend_names_[b] << ": not run: " << run.status().message() << "\n";
        row.insert(row.end(), 5, "N.A.");
        continue;
      }
      if (!run.ok()) {
        Status st = run.status();
        return fail(Outcome::kFailed, st.annotate("backend " + backend_names_[b]));
      }
      if (trace_ && !run->kernel_records.empty()) {
        if (Status st = trace_->add(index, shown, backend_names_[b], run->kernel_records); !st.ok())
          std::cerr << "boo-driver: --trace: " << st.to_string() << "\n";
      }
      if (verbose_) print_run(sig, backend_names_[b], *run);
      std::vector<std::string> cells = csv_stats(*run);
      row.insert(row.end(), cells.begin(), cells.end());
      runs.emplace_back(backend_names_[b], std::move(*run));
    }
    // Ratios of per-launch GPU time against the baseline: cudnn when it ran, else the first backend.
    size_t base = 0;
    for (size_t b = 0; b < runs.size(); ++b)
      if (canonical_backend(runs[b].first) == "cudnn") base = b;
    if (runs.size() > 1 && !runs[base].second.kernels.empty()) {
      const double base_us = per_launch_mean_us(runs[base].second);
      for (size_t b = 0; b < runs.size(); ++b) {
        if (b == base || runs[b].second.kernels.empty()) continue;
        std::cout << ">>>\tRatio " << runs[b].first << "/" << runs[base].first << ": "
                  << format_fixed(per_launch_mean_us(runs[b].second) / base_us, 3) << " (time over time)\n";
      }
    }
    if (!opts_.dump_dir.empty()) {
      Status st = dump_command(opts_.dump_dir, index, sig, *args, runs);
      if (!st.ok()) return fail(Outcome::kFailed, st.annotate("--dump"));
    }
    if (opts_.verify_numerics) {
      // Every non-vendor backend is judged; cuDNN supplies the spread to beat.
      bench::Backend* vendor = numerics_vendor();
      bool pass = true;
      std::optional<bench::NumericsVerdict> first;
      for (size_t b = 0; b < backends_.size(); ++b) {
        if (backends_[b].get() == vendor) continue;
        bench::NumericsVerdict v = bench::check_numerics(sig, *backends_[b], vendor, opts_.numerics, opts_.seed);
        pass &= v.pass();
        if (opts_.numerics.verbose) {
          std::cout << bench::format_verdict_verbose(v, shown + " [" + backend_names_[b] + "]", "cuDNN GPU",
                                                     opts_.numerics.reference_float32 ? "float32" : "float64");
        } else if (!v.pass()) {
          for (const std::string& n : v.notes) std::cout << ">>>\tnote: " << n << "\n";
        }
        std::cout << ">>>\t" << backend_names_[b] << " " << bench::format_verdict_line(v) << "\n";
        if (!first) first = v;
      }
      if (!first) first = bench::NumericsVerdict{};
      std::cout << (pass ? "Numerics: PASS" : "Numerics: FAIL (" + first->failure_reasons() + ")") << "\n";
      const std::vector<std::string> cells = bench::verdict_csv_cells(*first);
      row.insert(row.end(), cells.begin(), cells.end());
      if (!pass) {
        row.insert(row.end(), {base::format_double(sig.flop_count()), base::format_double(sig.min_bytes_moved())});
        row.push_back("numerics: " + first->failure_reasons());
        write_row(row);
        return Outcome::kFailed;
      }
    }
    row.insert(row.end(), {base::format_double(sig.flop_count()), base::format_double(sig.min_bytes_moved()), ""});
    write_row(row);
    return Outcome::kOk;
  }

  void write_row(const std::vector<std::string>& row) {
    last_row_ = row;
    if (!csv_) return;
    Status st = csv_->write_row(row);
    if (!st.ok()) std::cerr << "boo-driver: " << st.to_string() << "\n";
  }

 private:
  DriverOptions opts_;
  bool verbose_ = true;
  std::vector<std::string> backend_names_;
  std::vector<std::string> last_row_;  // the row of the last command (executors send it to the parent)
  std::unique_ptr<Runtime> runtime_;  // declared before the backends that use it
  std::vector<std::unique_ptr<bench::Backend>> backends_;
  std::unique_ptr<bench::Backend> numerics_cudnn_;  // the vendor for --verify-numerics when not a --backend
  bool numerics_cudnn_failed_ = false;
  std::optional<bench::CsvWriter> csv_;
  std::optional<bench::TracePart> trace_;  // this process's part of the --trace file
};

// An executor child: commands arrive on stdin, output and DONE records go to stdout.
int run_executor_child(DriverOptions opts) {
  DriverRun driver(std::move(opts));
  if (Status st = driver.open_backends(); !st.ok()) {
    std::cerr << "boo-driver executor: " << st.to_string() << "\n";
    return 2;
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    std::optional<std::pair<int, std::vector<std::string>>> run = bench::decode_run(line);
    if (!run || run->second.size() < 2) continue;
    // Fields: the command as written, its line number, then its words.
    CommandLine cmd;
    cmd.text = run->second[0];
    cmd.line_number = std::atoi(run->second[1].c_str());
    cmd.words.assign(run->second.begin() + 2, run->second.end());
    const Outcome outcome = driver.run_one(cmd, run->first);
    // After a sticky fault every later CUDA call fails: the DONE record says
    // this executor leaves, and the parent starts a fresh one.
    Status health = outcome == Outcome::kFailed ? driver.context_health() : ok_status();
    if (health.ok()) driver.report_memory();
    std::cout << std::flush;
    std::cout << bench::encode_done(
                     bench::DoneRecord{run->first, outcome_name(outcome), driver.last_row(), !health.ok()})
              << std::flush;
    if (!health.ok()) {
      std::cerr << "boo-driver executor: leaving after a sticky CUDA error: " << health.to_string() << "\n";
      return 3;
    }
  }
  std::cout << driver.runtime_summary() << std::flush;
  return 0;
}

// The part file of executor `w` (or of the driver itself) for --trace PATH.
std::string trace_part_path(const std::string& trace_path, size_t w) {
  return trace_path + ".part" + std::to_string(w);
}

// Merges the parts into --trace PATH and removes them; prints what it wrote.
bool finish_trace(const std::string& trace_path, size_t parts) {
  if (trace_path.empty()) return true;
  std::vector<std::string> paths;
  for (size_t w = 0; w < parts; ++w) paths.push_back(trace_part_path(trace_path, w));
  Result<bench::TraceSummary> summary = bench::write_trace(paths, trace_path);
  for (const std::string& p : paths) std::remove(p.c_str());
  if (!summary.ok()) {
    std::cerr << "boo-driver: --trace: " << summary.status().to_string() << "\n";
    return false;
  }
  std::cout << "boo-driver: trace " << trace_path << ": " << summary->kernels << " kernels in "
            << summary->commands << " command spans";
  if (summary->kernels == 0) std::cout << " (no kernel records: timing was off, or CUPTI was unavailable)";
  std::cout << "\n";
  return true;
}

// The GPUs the executors run on: the one asked for, or every one for --gpu-id -1.
std::vector<int> executor_gpus(int gpu_id) {
  if (gpu_id >= 0) return {gpu_id};
  int count = 0;
  if (Result<const cuda::DriverApi*> api = cuda::driver_api(); api.ok()) (*api)->cuDeviceGetCount(&count);
  std::vector<int> gpus;
  for (int d = 0; d < std::max(count, 1); ++d) gpus.push_back(d);
  return gpus;
}

// The parent of executors: dispatches commands to one executor per GPU and
// prints results in input order.
int run_isolated(DriverOptions opts, const std::vector<CommandLine>& commands) {
  // The backends, resolved here so that every executor and the CSV agree.
  std::vector<std::string> backends = opts.backends;
  if (backends.empty()) {
    RuntimeOptions ro;
    ro.device = std::max(opts.gpu_id, 0);
    ro.cache_enabled = false;
    Result<std::unique_ptr<Runtime>> probe = Runtime::create(ro);
    if (!probe.ok()) std::cout << ">>> no GPU backend (" << probe.status().message() << "); running on the CPU reference\n";
    backends = {probe.ok() ? "boo" : "cpu"};
  }
  const std::vector<int> gpus = executor_gpus(opts.gpu_id);
  const bool fail_on_unsupported = opts.fail_on_unsupported;
  const double timeout_s = opts.command_timeout_s;
  DriverRun writer(opts);
  writer.set_backend_names(backends);
  if (Status st = writer.open_csv(); !st.ok()) {
    std::cerr << "boo-driver: " << st.to_string() << "\n";
    return 2;
  }
  for (size_t w = 0; w < gpus.size() && !opts.trace_path.empty(); ++w)
    std::remove(trace_part_path(opts.trace_path, w).c_str());  // a part left by an earlier run
  std::vector<std::optional<ExecutorResult>> results(commands.size());
  std::vector<std::string> summaries(gpus.size());
  std::mutex mutex;
  std::condition_variable ready;
  size_t next = 0;
  std::vector<std::thread> workers;
  for (size_t w = 0; w < gpus.size(); ++w) {
    workers.emplace_back([&, w] {
      const std::string part = opts.trace_path.empty() ? "" : trace_part_path(opts.trace_path, w);
      Executor executor(executor_child_arguments(opts, backends, gpus[w], part), timeout_s);
      while (true) {
        size_t i;
        {
          std::lock_guard<std::mutex> lock(mutex);
          if (next >= commands.size()) break;
          i = next++;
        }
        const CommandLine& cmd = commands[i];
        std::vector<std::string> fields{cmd.text, std::to_string(cmd.line_number)};
        fields.insert(fields.end(), cmd.words.begin(), cmd.words.end());
        ExecutorResult r;
        if (!cmd.split_status.ok()) {
          // Nothing to run: the line could not even be split into words.
          r.output = "\n>>> " + cmd.text + "\n\n";
          r.failure = cmd.split_status.to_string();
        } else {
          r = executor.run(static_cast<int>(i) + 1, fields);
        }
        std::lock_guard<std::mutex> lock(mutex);
        results[i] = std::move(r);
        ready.notify_all();
      }
      std::string summary = executor.finish();
      std::lock_guard<std::mutex> lock(mutex);
      summaries[w] = std::move(summary);
    });
  }
  std::map<Outcome, int> counts;
  for (size_t i = 0; i < commands.size(); ++i) {
    std::unique_lock<std::mutex> lock(mutex);
    ready.wait(lock, [&] { return results[i].has_value(); });
    ExecutorResult r = std::move(*results[i]);
    lock.unlock();
    std::cout << r.output;
    if (r.done) {
      ++counts[outcome_of(r.done->outcome)];
      writer.write_row(r.done->row);
    } else {
      const CommandLine& cmd = commands[i];
      const std::string where = cmd.line_number ? " (line " + std::to_string(cmd.line_number) + ")" : "";
      std::cout << ">>> FAILED" << where << ": " << r.failure << "\n";
      ++counts[Outcome::kFailed];
      writer.write_failure_row(cmd.text, r.failure);
    }
    std::cout << std::flush;
  }
  for (std::thread& t : workers) t.join();
  std::cout << "\n";
  for (const std::string& s : summaries) std::cout << s;
  const bool traced = finish_trace(opts.trace_path, gpus.size());
  std::cout << "boo-driver: " << commands.size() << " command(s): " << counts[Outcome::kOk] << " ok, "
            << counts[Outcome::kFailed] << " failed, " << counts[Outcome::kUnsupported] << " unsupported\n";
  const bool failed = counts[Outcome::kFailed] > 0 || (fail_on_unsupported && counts[Outcome::kUnsupported] > 0) ||
                      !traced;
  return failed ? 1 : 0;
}

int run_driver(const std::vector<std::string>& argv) {
  Result<DriverOptions> opts = parse_driver_options(argv);
  if (!opts.ok()) {
    std::cerr << "boo-driver: " << opts.status().to_string() << "\n";
    return 2;
  }
  if (opts->executor_child) return run_executor_child(std::move(*opts));
  if (opts->help || (opts->command.empty() && opts->commands_file.empty())) {
    std::cout << driver_usage();
    return opts->help ? 0 : 2;
  }
  std::vector<CommandLine> commands;
  if (!opts->commands_file.empty()) {
    Result<std::vector<CommandLine>> loaded = load_commands(opts->commands_file, opts->command);
    if (!loaded.ok()) {
      std::cerr << "boo-driver: " << loaded.status().to_string() << "\n";
      return 2;
    }
    commands = std::move(*loaded);
  } else {
    commands.push_back(CommandLine{0, base::shell_join(opts->command), opts->command, {}});
  }
  // Parsing alone needs no isolation; neither does --help of an op.
  const bool help = !opts->command.empty() && (opts->command.back() == "--help" || opts->command.back() == "-h");
  if (opts->isolation && !opts->dry_run && !help) return run_isolated(std::move(*opts), commands);
  if (opts->gpu_id < 0) {
    std::cerr << "boo-driver: --gpu-id -1 needs executor isolation (drop --no-isolation)\n";
    return 2;
  }
  const bool fail_on_unsupported = opts->fail_on_unsupported;
  const std::string trace_path = opts->trace_path;
  if (!trace_path.empty()) {
    opts->trace_part = trace_part_path(trace_path, 0);
    std::remove(opts->trace_part.c_str());
  }
  DriverRun driver(std::move(*opts));
  if (Status st = driver.open_backends(); !st.ok()) {
    std::cerr << "boo-driver: " << st.to_string() << "\n";
    return 2;
  }
  if (Status st = driver.open_csv(); !st.ok()) {
    std::cerr << "boo-driver: " << st.to_string() << "\n";
    return 2;
  }
  std::map<Outcome, int> counts;
  int index = 0;
  for (const CommandLine& cmd : commands) {
    ++counts[driver.run_one(cmd, ++index)];
    driver.report_memory();
  }
  std::cout << "\n" << driver.runtime_summary();
  driver.close_trace();
  const bool traced = finish_trace(trace_path, 1);
  std::cout << "boo-driver: " << commands.size() << " command(s): " << counts[Outcome::kOk] << " ok, "
            << counts[Outcome::kFailed] << " failed, " << counts[Outcome::kUnsupported] << " unsupported\n";
  const bool failed = counts[Outcome::kFailed] > 0 || (fail_on_unsupported && counts[Outcome::kUnsupported] > 0) ||
                      !traced;
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace boo::driver

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  std::vector<std::string> args(argv + 1, argv + argc);
  return boo::driver::run_driver(args);
}
