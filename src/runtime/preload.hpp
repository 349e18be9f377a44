// boo: compiling every kernel a workload needs, in parallel, into the cache.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "boo/device.hpp"
#include "boo/runtime.hpp"
#include "boo/signature.hpp"
#include "cache/artifact_cache.hpp"
#include "cache/shipped_tunings.hpp"
#include "cache/tuning_db.hpp"
#include "runtime/kernel_builder.hpp"

namespace boo::runtime {

struct PreloadFailure {
  std::string what;  ///< the command (or module) that failed
  Status reason;
};

struct PreloadReport {
  int64_t modules = 0;   ///< distinct kernel modules the signatures need
  int64_t compiled = 0;  ///< compiled now with NVRTC
  int64_t cached = 0;    ///< already in the cache
  int64_t failed = 0;
  std::vector<PreloadFailure> failures;
  /// Signatures no GPU implementation takes (UNIMPLEMENTED: float64, which runs
  /// on the CPU reference, or a shape every tier declines): nothing to compile.
  std::vector<PreloadFailure> skipped;
  std::vector<double> compile_ms;  ///< one entry per compiled module
};

/// (done, total, report so far): called after each module, from worker threads, serialized.
using PreloadProgress = std::function<void(int64_t, int64_t, const PreloadReport&)>;

/// A module to build and the signature it is built for (kept alive by the caller).
struct ModuleJob {
  ModuleRequest request;
  const OpSignature* sig = nullptr;
};

/// Builds `jobs`' modules into `cache` on `threads` threads, each distinct
/// cache key once (the first job naming it); failures are reported, not fatal.
/// `report.modules` counts the distinct keys.
PreloadReport build_modules(std::vector<ModuleJob> jobs, const cache::ArtifactCache& cache, int threads,
                            const std::string& save_temps_dir, const PreloadProgress& progress);

/// Dispatches each signature for `device` (with the tuning database's
/// configs where `tuning` has them, else the shipped tunings'), deduplicates the modules by cache key
/// and builds the missing ones on `jobs` threads. Signature-level failures
/// (no implementation accepts) are reported, not fatal.
PreloadReport preload(const std::vector<const OpSignature*>& signatures, const DeviceInfo& device,
                      const cache::ArtifactCache& cache, int jobs, const std::string& implementation,
                      const cache::TuningDb* tuning, const cache::ShippedTunings* shipped,
                      const std::string& save_temps_dir, const PreloadProgress& progress);

/// Makes the launchables of `signatures` on `runtime` on `threads` threads
/// (Runtime::get_launchable: each compiles its kernels with NVRTC, or loads
/// them from the cache, and loads the module; equal signatures are made once),
/// so that the runtime's later asks for them find them made. What one
/// signature's failure costs is its own: it is returned, with its command, and
/// the others proceed. Works with the disk cache off: the launchables live in
/// the runtime.
std::vector<PreloadFailure> make_launchables(Runtime& runtime, const std::vector<const OpSignature*>& signatures,
                                             int threads);

}  // namespace boo::runtime
