// boo-driver: running one command.
#include "command_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <span>

#include "base/file_util.hpp"
#include "base/npy.hpp"
#include "base/strings.hpp"
#include "bench/fault_backend.hpp"
#include "bench/memory_check.hpp"
#include "bench/numerics_check.hpp"
#include "boo/registry.hpp"
#include "ops/command_parse.hpp"
#include "ops/flag_table.hpp"
#include "ops/op_registry.hpp"
#include "output_files.hpp"

#include <nvtx3/nvToolsExt.h>

namespace boo::driver {
namespace {

// An NVTX range for Nsight Systems: pushed on construction, popped on scope exit.
class NvtxRange {
 public:
  explicit NvtxRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

std::string format_fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool is_help_request(const std::vector<std::string>& words) {
  return !words.empty() && (words.back() == "--help" || words.back() == "-h");
}

// Whether a command says itself how many launches to time (--iter/-i), so
// that --min-time leaves its count alone. The op's flag table decides, so
// every spelling the op accepts counts. (RunOptions does not say whether
// --iter was given, only its value.)
bool iterations_given(const std::vector<std::string>& words, const ops::OpDefinition& op) {
  // The op token comes before its flags, after an optional driver path.
  for (size_t i = 0; i < words.size(); ++i) {
    const Result<ops::OpTokenMatch> token = ops::op_for_token(words[i]);
    if (!token.ok() || token->op != &op) continue;
    const std::span<const std::string> flag_words(words.data() + i + 1, words.size() - i - 1);
    Result<ops::ParsedFlags> flags = ops::parse_flags(op.flags(), flag_words, words[i]);
    return flags.ok() && flags->given("iter");
  }
  return false;
}

// Writes the inputs and every backend's results of one command as .npy files.
Status dump_command(const std::string& dir, int index, const OpSignature& sig,
                    const std::vector<base::HostTensor>& args, const std::vector<BackendResult>& backends) {
  char prefix[16];
  std::snprintf(prefix, sizeof prefix, "%04d_", index);
  const std::string cmd_dir = dir + "/" + prefix + sig.func_name();
  BOO_RETURN_IF_ERROR(check_dump_entry(cmd_dir));
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
  for (const BackendResult& b : backends) {
    if (!b.run) continue;
    for (size_t i = 0; i < b.run->results.size(); ++i) {
      const std::string file = b.backend + "_result_" + std::to_string(i) + "_" + result_specs[i].name + ".npy";
      BOO_RETURN_IF_ERROR(base::write_npy(cmd_dir + "/" + file, b.run->results[i]));
      manifest += describe(file, b.run->results[i].spec());
    }
  }
  manifest += "Arrays are C-contiguous in the logical shape (N, C, [D,] H, W for conv activations);\n"
              "bfloat16 tensors are stored as float32 (exactly).\n";
  return base::write_file_atomic(cmd_dir + "/manifest.txt", manifest);
}

// Marks `result` failed (or unsupported) with `status`.
void fail(CommandResult& result, const Status& status, Outcome outcome = Outcome::kFailed) {
  result.outcome = outcome;
  result.error = status.to_string();
}

// `result`, failed with `status`.
CommandResult failed(CommandResult&& result, const Status& status, Outcome outcome = Outcome::kFailed) {
  fail(result, status, outcome);
  return std::move(result);
}

}  // namespace

Status CommandRunner::open_backends(std::string& notice) {
  RuntimeOptions ro = RuntimeOptions::from_environment();
  ro.device = opts_.gpu_id;
  ro.implementation = opts_.implementation;
  if (!opts_.cache_dir.empty()) {
    ro.cache_dir = opts_.cache_dir;
    ro.cache_enabled = true;
  }
  // cuDNN's chosen plans are remembered next to the kernels (and not when the cache is off).
  opts_.timing.vendor_plan_dir = ro.cache_enabled ? ro.cache_dir : "";
  backend_names_ = opts_.backends;
  auto wants = [&](const char* name) {
    return std::any_of(backend_names_.begin(), backend_names_.end(),
                       [&](const std::string& b) { return canonical_backend(b) == name; });
  };
  const bool gpu_reference = opts_.verify_numerics && opts_.reference == bench::ReferenceChoice::kGpu;
  const bool want_gpu = backend_names_.empty() || wants("boo") || wants("cudnn") || wants("cublaslt") || gpu_reference;
  if (want_gpu && !opts_.dry_run) {
    Result<std::unique_ptr<Runtime>> rt = Runtime::create(ro);
    if (rt.ok()) {
      runtime_ = std::move(*rt);
    } else if (!backend_names_.empty() || gpu_reference) {
      Status st = rt.status();
      return std::move(st).annotate(gpu_reference ? "--reference gpu needs a usable GPU"
                                                  : "--backend boo/cudnn/cublaslt need a usable GPU");
    } else {
      notice = ">>> no GPU backend (" + rt.status().message() + "); running on the CPU reference\n";
    }
  }
  if (backend_names_.empty()) backend_names_ = {runtime_ || opts_.dry_run ? default_gpu_backend(opts_) : "cpu"};
  if (opts_.dry_run) return ok_status();
  // auto: the GPU's reference wherever this process has a GPU.
  if (opts_.verify_numerics && runtime_ && opts_.reference != bench::ReferenceChoice::kCpu)
    reference_ = bench::make_gpu_reference(*runtime_);
  for (const std::string& name : backend_names_) {
    const std::string kind = canonical_backend(name);
    if (kind == "cpu") {
      backends_.push_back(bench::make_cpu_backend(opts_.cpu_iterations));
    } else if (kind == "faulty") {
      BOO_ASSIGN_OR_RETURN(std::unique_ptr<bench::Backend> faulty, bench::make_faulty_backend(name, opts_.cpu_iterations));
      backends_.push_back(std::move(faulty));
    } else if (kind == "cudnn") {  // the vendor baseline: cuDNN, GEMMs on cuBLASLt
      backends_.push_back(bench::make_vendor_backend(*runtime_, opts_.timing));
    } else if (kind == "cublaslt") {
      BOO_ASSIGN_OR_RETURN(std::unique_ptr<bench::Backend> cublaslt, bench::make_cublaslt_backend(*runtime_, opts_.timing));
      backends_.push_back(std::move(cublaslt));
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

std::string CommandRunner::memory_report() {
  if (!runtime_) return "";
  Result<int64_t> used = runtime_->device_memory_used();
  if (!used.ok()) return "";
  return ">>>\tdevice memory in use: " + std::to_string(*used >> 20) + " MiB (cuda:" +
         std::to_string(runtime_->device().ordinal) + ")\n";
}

std::string CommandRunner::runtime_summary() const {
  if (!runtime_) return "";
  const RuntimeStats s = runtime_->stats();
  return "boo-driver: kernels compiled=" + std::to_string(s.compiled) + " (" + format_fixed(s.compile_ms, 0) +
         " ms) loaded_from_cache=" + std::to_string(s.disk_hits) + " (" + format_fixed(s.load_ms, 1) +
         " ms) reused_in_process=" + std::to_string(s.memory_hits) + "\n";
}

bench::Backend* CommandRunner::numerics_vendor() {
  if (!opts_.numerics.vendor) return nullptr;
  for (size_t b = 0; b < backends_.size(); ++b)
    if (canonical_backend(backend_names_[b]) == "cudnn") return backends_[b].get();
  // The vendor baseline opens cuDNN and cuBLASLt when a command first needs one.
  if (!numerics_cudnn_ && runtime_) numerics_cudnn_ = bench::make_vendor_backend(*runtime_, opts_.timing);
  return numerics_cudnn_.get();
}

CommandResult CommandRunner::run(const tools::CommandLine& cmd, int index) {
  const auto start = std::chrono::steady_clock::now();
  const double compile_before = compile_seconds();
  CommandResult result = run_steps(cmd, index);
  result.seconds.compile = compile_seconds() - compile_before;
  for (const BackendResult& b : result.backends) {
    if (!b.run) continue;
    result.seconds.vendor_tuning += b.run->vendor_tuning_s;
    result.seconds.timing += b.run->timing_s;
  }
  result.seconds.total = seconds_since(start);
  return result;
}

double CommandRunner::compile_seconds() const {
  if (!runtime_) return 0;
  const RuntimeStats s = runtime_->stats();
  return (s.compile_ms + s.load_ms) * 1e-3;
}

Result<std::vector<base::HostTensor>> CommandRunner::make_arguments(const ops::OpDefinition& op, const OpSignature& sig,
                                                                    const ops::InputOptions& options) {
  // The GPU hashes every element in a fraction of the CPU's time (and makes the same bytes).
  return bench::make_arguments(runtime_.get(), op, sig, options);
}

CommandResult CommandRunner::run_steps(const tools::CommandLine& cmd, int index) {
  CommandResult result;
  result.index = index;
  result.text = cmd.text;
  result.line_number = cmd.line_number;
  if (!cmd.split_status.ok()) return failed(std::move(result), cmd.split_status);
  if (is_help_request(cmd.words)) {
    Result<std::string> help = op_help(cmd.words.front());
    result.help = help.ok() ? *help : help.status().to_string();
    result.outcome = help.ok() ? Outcome::kOk : Outcome::kFailed;
    return result;
  }
  Result<ParsedCommand> parsed = parse_command(cmd.words);
  if (!parsed.ok()) {
    const bool unsupported = parsed.status().code() == StatusCode::kUnimplemented;
    return failed(std::move(result), parsed.status(), unsupported ? Outcome::kUnsupported : Outcome::kFailed);
  }
  result.parsed = std::move(*parsed);
  const OpSignature& sig = *result.parsed->signature;
  if (opts_.dry_run) {
    result.dry_run = true;
    return result;
  }
  // Refused before any allocation when the host cannot hold the command's tensors.
  const bool reference = opts_.verify_numerics || std::any_of(backend_names_.begin(), backend_names_.end(), [](const std::string& b) {
                           return canonical_backend(b) == "cpu" || canonical_backend(b) == "faulty";
                         });
  if (Status st = bench::check_host_memory(sig, static_cast<int64_t>(backends_.size()), reference); !st.ok())
    return failed(std::move(result), st);
  const ops::OpDefinition* op = ops::find_op(sig.op_name());
  const auto inputs_start = std::chrono::steady_clock::now();
  Result<std::vector<base::HostTensor>> args = make_arguments(*op, sig, ops::InputOptions{opts_.seed, opts_.splat});
  result.seconds.inputs = seconds_since(inputs_start);
  if (!args.ok()) return failed(std::move(result), args.status());

  RunOptions run = result.parsed->run;
  if (opts_.min_time_s > 0 && !iterations_given(cmd.words, *op)) run.min_time_s = opts_.min_time_s;
  NvtxRange command_range("#" + std::to_string(index) + " " + cmd.text);
  run_backends(sig, run, *args, result);
  if (!result.all_backends_ran) return result;
  if (!opts_.dump_dir.empty()) {
    Status st = dump_command(opts_.dump_dir, index, sig, *args, result.backends);
    if (!st.ok()) return failed(std::move(result), st.annotate("--dump"));
  }
  if (opts_.verify_numerics) {
    const auto start = std::chrono::steady_clock::now();
    const bench::NumericsSeconds spent = check_numerics(sig, *args, result);
    result.seconds.inputs += spent.inputs;
    result.seconds.numerics = seconds_since(start) - spent.inputs;
    result.seconds.numerics_runs = spent.runs;
    result.seconds.reference = spent.reference;
    result.seconds.checks = spent.checks;
  }
  return result;
}

void CommandRunner::run_backends(const OpSignature& sig, const RunOptions& run,
                                 const std::vector<base::HostTensor>& args, CommandResult& result) {
  for (size_t b = 0; b < backends_.size(); ++b) {
    const std::string& name = backend_names_[b];
    Result<bench::BackendRun> ran = [&] {
      NvtxRange backend_range(name);
      return backends_[b]->run(sig, args, run);
    }();
    const bool vendor = canonical_backend(name) == "cudnn" || canonical_backend(name) == "cublaslt";
    if (!ran.ok() && ran.status().code() == StatusCode::kUnimplemented && vendor && backends_.size() > 1) {
      // The baseline does not implement this signature: the other backends' results and times still count.
      result.backends.push_back(BackendResult{name, std::nullopt, ran.status().message()});
      continue;
    }
    if (!ran.ok()) {
      Status st = ran.status();
      fail(result, st.annotate("backend " + name));
      return;
    }
    if (trace_ && !ran->kernel_records.empty()) {
      if (Status st = trace_->add(result.index, result.text, name, ran->kernel_records); !st.ok())
        result.warnings.push_back("--trace: " + st.to_string());
    }
    result.backends.push_back(BackendResult{name, std::move(*ran), ""});
  }
  result.all_backends_ran = true;
}

bench::NumericsSeconds CommandRunner::check_numerics(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                                                     CommandResult& result) {
  // Every non-vendor backend is judged; cuDNN supplies the spread to beat. A baseline that
  // declined the signature (said under its name) is not judged: it has no results.
  bench::Backend* vendor = numerics_vendor();
  const ops::OpDefinition* op = ops::find_op(sig.op_name());
  std::vector<NumericsResult> verdicts;
  bench::NumericsSeconds spent;
  bench::CheckContext context;
  context.seconds = &spent;
  context.make_arguments = [&](const OpSignature& s, const ops::InputOptions& options) {
    return make_arguments(*op, s, options);
  };
  // The check's first batch is seeded with --seed, as the command's inputs are unless
  // --splat-input-value replaced them: then the timed run's first launch computed the
  // first batch's results already (every backend returns that launch's results).
  auto ran = [&](size_t b) -> const std::vector<base::HostTensor>* {
    return b < result.backends.size() && result.backends[b].run ? &result.backends[b].run->results : nullptr;
  };
  const std::vector<base::HostTensor>* vendor_results = nullptr;
  for (size_t b = 0; b < backends_.size(); ++b)
    if (backends_[b].get() == vendor) vendor_results = ran(b);
  for (size_t b = 0; b < backends_.size(); ++b) {
    if (backends_[b].get() == vendor) continue;
    if (b < result.backends.size() && !result.backends[b].run) continue;
    context.first_batch.reset();
    if (!opts_.splat && ran(b)) context.first_batch = bench::FirstBatch{&args, ran(b), vendor_results};
    verdicts.push_back(NumericsResult{backend_names_[b], bench::check_numerics(sig, *backends_[b], vendor, opts_.numerics,
                                                                               opts_.seed, reference_.get(), context)});
  }
  result.numerics = std::move(verdicts);
  if (!result.numerics_pass()) result.outcome = Outcome::kFailed;
  return spent;
}

}  // namespace boo::driver
