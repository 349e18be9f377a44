// boo-driver: compiling a commands file's kernels in parallel before running it.
//
// Commands run one after another (per GPU), and each one's first launch
// compiles its kernels with NVRTC: on a long file with an empty cache that
// is most of the wall time. Before the first command, the driver plans every
// module the commands will load (boo's dispatch, the GPU input generator,
// the float64 GPU reference of --verify-numerics) and builds the missing
// ones into the kernel cache on --compile-jobs threads (runtime::build_modules);
// the commands then load them from the cache. A module that fails here is
// left alone: its command fails with its own error, as without the stage.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/commands_file.hpp"
#include "driver_options.hpp"
#include "runtime/preload.hpp"

namespace boo::driver {

struct PrecompileSummary {
  int threads = 0;
  double seconds = 0;
  runtime::PreloadReport report;
};

/// The threads the precompile stage runs on: --compile-jobs, else the hardware threads.
int precompile_threads(const DriverOptions& opts);

/// Builds the modules `commands` need on the backends `backends` (resolved:
/// never empty) into the cache. nullopt, doing nothing, when there is nothing
/// to gain: a command given on the command line, --dry-run, --compile-jobs 0
/// or 1, no cache (BOO_CACHE_ON=0, BOO_SAVE_TEMPS), no GPU, or no backend
/// or check that runs boo's kernels.
std::optional<PrecompileSummary> precompile(const DriverOptions& opts, const std::vector<tools::CommandLine>& commands,
                                            const std::vector<std::string>& backends);

/// "precompile 3.1 s on 16 threads (93 modules: 90 compiled, 3 cached, 0 failed)".
std::string format_precompile(const PrecompileSummary& summary);

}  // namespace boo::driver
