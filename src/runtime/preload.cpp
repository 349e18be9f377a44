// boo: parallel cache pre-population.
#include "runtime/preload.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "runtime/dispatch.hpp"
#include "runtime/kernel_builder.hpp"

namespace boo::runtime {
namespace {

// Calls work(i) for every i in [0, n) on up to `threads` threads (this one among them), each taking the
// next index when it finishes one: compile times differ tenfold between kernels, so fixed chunks would
// leave threads idle behind the slowest.
void for_each_on_threads(size_t n, int threads, const std::function<void(size_t)>& work) {
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) work(i);
  };
  const int count = std::max(1, std::min<int>(threads, static_cast<int>(n)));
  std::vector<std::thread> pool;
  for (int t = 1; t < count; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
}

}  // namespace

PreloadReport build_modules(std::vector<ModuleJob> jobs, const cache::ArtifactCache& cache, int threads,
                            const std::string& save_temps_dir, const PreloadProgress& progress) {
  PreloadReport report;
  // One build per distinct cache key.
  std::map<std::string, ModuleJob> modules;
  for (ModuleJob& job : jobs) {
    std::string key = job.request.key.digest();
    modules.try_emplace(std::move(key), std::move(job));
  }
  report.modules = static_cast<int64_t>(modules.size());

  std::vector<const ModuleJob*> work;
  for (const auto& [key, job] : modules) work.push_back(&job);
  std::mutex mutex;
  int64_t done = 0;
  for_each_on_threads(work.size(), threads, [&](size_t i) {
    const ModuleJob& job = *work[i];
    Result<BuiltModule> built = build_module(job.request, *job.sig, cache, BuildOptions{save_temps_dir, ""});
    std::lock_guard<std::mutex> lock(mutex);
    if (!built.ok()) {
      ++report.failed;
      report.failures.push_back({job.sig->command(), built.status()});
    } else if (!built->stored.ok()) {
      ++report.failed;
      report.failures.push_back({job.sig->command(), Status(built->stored).annotate("compiled, but not cached")});
    } else if (built->from_cache) {
      ++report.cached;
    } else {
      ++report.compiled;
      report.compile_ms.push_back(built->compile_ms);
    }
    ++done;
    if (progress) progress(done, static_cast<int64_t>(work.size()), report);
  });
  return report;
}

PreloadReport preload(const std::vector<const OpSignature*>& signatures, const DeviceInfo& device,
                      const cache::ArtifactCache& cache, int jobs, const std::string& implementation,
                      const cache::TuningDb* tuning, const cache::ShippedTunings* shipped,
                      const std::string& save_temps_dir, const PreloadProgress& progress) {
  std::vector<ModuleJob> work;
  std::vector<PreloadFailure> failures, skipped;
  for (const OpSignature* sig : signatures) {
    Result<ModuleRequest> request = [&]() -> Result<ModuleRequest> {
      BOO_ASSIGN_OR_RETURN(Dispatch d, choose_gpu_implementation(*sig, device, implementation, tuning, shipped));
      BOO_ASSIGN_OR_RETURN(ops::Plan plan, plan_chosen(d));
      return describe_module(d.chosen->name(), *d.config, std::move(plan.source), device.arch());
    }();
    if (!request.ok()) {
      (request.status().code() == StatusCode::kUnimplemented ? skipped : failures)
          .push_back({sig->command(), request.status()});
      continue;
    }
    work.push_back(ModuleJob{std::move(*request), sig});
  }
  PreloadReport report = build_modules(std::move(work), cache, jobs, save_temps_dir, progress);
  // Signature-level failures first, as they were found.
  report.failed += static_cast<int64_t>(failures.size());
  report.failures.insert(report.failures.begin(), failures.begin(), failures.end());
  report.skipped = std::move(skipped);
  return report;
}

std::vector<PreloadFailure> make_launchables(Runtime& runtime, const std::vector<const OpSignature*>& signatures,
                                             int threads) {
  // Each thread writes only its signatures' entries; the failures come back in the signatures' order.
  std::vector<Status> statuses(signatures.size());
  for_each_on_threads(signatures.size(), threads,
                      [&](size_t i) { statuses[i] = runtime.get_launchable(*signatures[i]).status(); });
  std::vector<PreloadFailure> failures;
  for (size_t i = 0; i < signatures.size(); ++i)
    if (!statuses[i].ok()) failures.push_back({signatures[i]->command(), statuses[i]});
  return failures;
}

}  // namespace boo::runtime
