// boo-driver: compiling a commands file's kernels in parallel before running it.
#include "precompile.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include "bench/reference.hpp"
#include "boo/registry.hpp"
#include "boo/runtime.hpp"
#include "ops/op_registry.hpp"
#include "runtime/dispatch.hpp"

namespace boo::driver {

int precompile_threads(const DriverOptions& opts) {
  if (opts.compile_jobs) return *opts.compile_jobs;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::optional<PrecompileSummary> precompile(const DriverOptions& opts, const std::vector<tools::CommandLine>& commands,
                                            const std::vector<std::string>& backends) {
  const int threads = precompile_threads(opts);
  if (opts.commands_file.empty() || opts.dry_run || threads <= 1) return std::nullopt;
  auto wants = [&](const char* name) {
    return std::any_of(backends.begin(), backends.end(), [&](const std::string& b) { return canonical_backend(b) == name; });
  };
  // What the command runner builds on the GPU (CommandRunner::open_backends and make_arguments).
  const bool boo = wants("boo");
  const bool gpu = boo || wants("cudnn") || (opts.verify_numerics && opts.reference == bench::ReferenceChoice::kGpu);
  const bool reference = gpu && opts.verify_numerics && opts.reference != bench::ReferenceChoice::kCpu;
  if (!gpu) return std::nullopt;
  RuntimeOptions ro = RuntimeOptions::from_environment();
  if (!opts.cache_dir.empty()) {
    ro.cache_dir = opts.cache_dir;
    ro.cache_enabled = true;
  }
  // Without a cache the commands could not load what is built here; BOO_SAVE_TEMPS compiles every load afresh.
  if (!ro.cache_enabled || !ro.save_temps_dir.empty()) return std::nullopt;
  const auto start = std::chrono::steady_clock::now();
  DeviceInfo device;
  {
    // The device the commands run on (--gpu-id -1: every executor's GPU is taken to be the first's).
    RuntimeOptions probe_options;
    probe_options.device = std::max(opts.gpu_id, 0);
    probe_options.cache_enabled = false;
    Result<std::unique_ptr<Runtime>> probe = Runtime::create(probe_options);
    if (!probe.ok()) return std::nullopt;
    device = (*probe)->device();
  }
  // The configs the commands' runtimes will choose: the tuning database's where it has them, else the
  // shipped tunings'.
  const std::unique_ptr<cache::TuningDb> tuning = runtime::open_tuning_db(ro.tuning_db);
  const std::shared_ptr<const cache::ShippedTunings> shipped = cache::ShippedTunings::shared(ro.shipped_tuning);
  std::vector<std::unique_ptr<OpSignature>> signatures;
  std::vector<runtime::ModuleJob> jobs;
  for (const tools::CommandLine& cmd : commands) {
    if (!cmd.split_status.ok()) continue;
    Result<ParsedCommand> parsed = parse_command(cmd.words);
    if (!parsed.ok()) continue;  // the command says why when it runs
    signatures.push_back(std::move(parsed->signature));
    const OpSignature& sig = *signatures.back();
    const ops::OpDefinition* op = ops::find_op(sig.op_name());
    if (!op) continue;
    // Each module that cannot be planned here is left to its command, which reports why.
    if (boo) {
      Result<runtime::ModuleRequest> request = [&]() -> Result<runtime::ModuleRequest> {
        BOO_ASSIGN_OR_RETURN(runtime::Dispatch d, runtime::choose_gpu_implementation(sig, device, opts.implementation, tuning.get(),
                                                                                     shipped.get()));
        BOO_ASSIGN_OR_RETURN(ops::Plan plan, runtime::plan_chosen(d));
        return runtime::describe_module(d.chosen->name(), *d.config, std::move(plan.source), device.arch());
      }();
      if (request.ok()) jobs.push_back(runtime::ModuleJob{std::move(*request), &sig});
    }
    const ops::InputOptions input_options{opts.seed, opts.splat};
    if (Result<runtime::ModuleRequest> inputs = bench::gpu_inputs_module(sig, input_options, device); inputs.ok())
      jobs.push_back(runtime::ModuleJob{std::move(*inputs), &sig});
    if (reference) {
      Result<std::vector<runtime::ModuleRequest>> modules = bench::gpu_reference_modules(sig, device);
      if (modules.ok())
        for (runtime::ModuleRequest& m : *modules) jobs.push_back(runtime::ModuleJob{std::move(m), &sig});
    }
  }
  const cache::ArtifactCache cache(cache::CacheConfig{ro.cache_dir, true});
  PrecompileSummary summary;
  summary.threads = threads;
  summary.report = runtime::build_modules(std::move(jobs), cache, threads, "", nullptr);
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

std::string format_precompile(const PrecompileSummary& s) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f s", s.seconds);
  const runtime::PreloadReport& r = s.report;
  return "precompile " + std::string(seconds) + " on " + std::to_string(s.threads) + " threads (" +
         std::to_string(r.modules) + " modules: " + std::to_string(r.compiled) + " compiled, " +
         std::to_string(r.cached) + " cached, " + std::to_string(r.failed) + " failed)";
}

}  // namespace boo::driver
