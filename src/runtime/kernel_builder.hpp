// boo: from a plan's source to a cubin — through the artifact cache, NVRTC on
// a miss, and BOO_SAVE_TEMPS dumps.
#pragma once

#include <string>

#include "base/json.hpp"
#include "base/kernel_source.hpp"
#include "boo/device.hpp"
#include "boo/signature.hpp"
#include "cache/artifact_cache.hpp"
#include "ops/gpu_implementation.hpp"

namespace boo::runtime {

/// Everything that identifies a module before it is compiled.
struct ModuleRequest {
  std::string implementation;  ///< "gpu:conv:implicit_gemm"
  base::KernelSource source;
  cache::KeyRecord key;
  std::string arch;
};

/// The complete cache key of `source`, planned by `implementation` with
/// `config`, compiled for `arch` ("sm_90a").
Result<ModuleRequest> describe_module(std::string_view implementation, const ops::Config& config,
                                      base::KernelSource source, const std::string& arch);

struct BuiltModule {
  std::string cubin;
  std::string key;        ///< the cache key (hex)
  bool from_cache = false;
  double compile_ms = 0;  ///< 0 when loaded from the cache
  base::JsonObject metadata;
  /// Why a compiled module is not in the cache (read-only or foreign folder), or OK.
  /// Kernels run without it; boo preload, whose work is filling the cache, fails.
  Status stored;
};

struct BuildOptions {
  std::string save_temps_dir;  ///< BOO_SAVE_TEMPS: dump every intermediate artifact here
  std::string driver_version;  ///< recorded in the metadata when a driver is present
};

/// Loads the module from `cache`, or compiles and stores it. A failed store
/// (read-only cache) is logged once and the compiled module is returned.
/// With save_temps_dir, the module is always compiled so every artifact can be written.
Result<BuiltModule> build_module(const ModuleRequest& request, const OpSignature& sig,
                                 const cache::ArtifactCache& cache, const BuildOptions& options);

}  // namespace boo::runtime
