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

PreloadReport preload(const std::vector<const OpSignature*>& signatures, const DeviceInfo& device,
                      const cache::ArtifactCache& cache, int jobs, const std::string& implementation,
                      const std::string& save_temps_dir, const PreloadProgress& progress) {
  PreloadReport report;
  // One module per distinct cache key; remember one signature that needs it.
  std::map<std::string, std::pair<ModuleRequest, const OpSignature*>> modules;
  for (const OpSignature* sig : signatures) {
    Result<ModuleRequest> request = [&]() -> Result<ModuleRequest> {
      BOO_ASSIGN_OR_RETURN(Dispatch d, choose_gpu_implementation(*sig, device, implementation));
      BOO_ASSIGN_OR_RETURN(ops::Plan plan, plan_chosen(d));
      return describe_module(d.chosen->name(), *d.config, std::move(plan.source), device.arch());
    }();
    if (!request.ok()) {
      report.failures.push_back({sig->command(), request.status()});
      ++report.failed;
      continue;
    }
    modules.try_emplace(request->key.digest(), std::move(*request), sig);
  }
  report.modules = static_cast<int64_t>(modules.size());

  std::vector<const std::pair<ModuleRequest, const OpSignature*>*> work;
  for (const auto& [key, entry] : modules) work.push_back(&entry);
  std::atomic<size_t> next{0};
  std::mutex mutex;
  int64_t done = 0;
  auto worker = [&] {
    for (size_t i = next.fetch_add(1); i < work.size(); i = next.fetch_add(1)) {
      const auto& [request, sig] = *work[i];
      Result<BuiltModule> built = build_module(request, *sig, cache, BuildOptions{save_temps_dir, ""});
      std::lock_guard<std::mutex> lock(mutex);
      if (!built.ok()) {
        ++report.failed;
        report.failures.push_back({sig->command(), built.status()});
      } else if (!built->stored.ok()) {
        ++report.failed;
        report.failures.push_back({sig->command(), Status(built->stored).annotate("compiled, but not cached")});
      } else if (built->from_cache) {
        ++report.cached;
      } else {
        ++report.compiled;
        report.compile_ms.push_back(built->compile_ms);
      }
      ++done;
      if (progress) progress(done, static_cast<int64_t>(work.size()), report);
    }
  };
  const int threads = std::max(1, std::min<int>(jobs, static_cast<int>(work.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  return report;
}

}  // namespace boo::runtime
