// boo-driver: the driver-level options (everything that is not the op command).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/backend.hpp"
#include "bench/verdict.hpp"
#include "boo/status.hpp"

namespace boo::driver {

struct DriverOptions {
  std::string commands_file;          ///< --commands-file F
  std::vector<std::string> backends;  ///< --backend B (repeatable); empty = the default
  std::string csv_path;               ///< --csv PATH
  bool dry_run = false;               ///< --dry-run
  std::string dump_dir;               ///< --dump DIR
  std::optional<double> splat;        ///< --splat-input-value V
  uint64_t seed = 10;                 ///< --seed N (BOO's driver uses 10)
  std::optional<bool> verbose;        ///< --verbose / --no-verbose (default: verbose unless --csv)
  int64_t cpu_iterations = 1;         ///< --cpu-iterations N: cap on timed CPU-reference launches
  bool fail_on_unsupported = false;   ///< --fail-on-unsupported
  bool verify_numerics = false;       ///< --verify-numerics: BOO's statistical verdict vs the float64 reference
  bench::NumericsOptions numerics;    ///< --numerics-* options
  std::string implementation;         ///< --impl NAME: only this GPU implementation
  std::string cache_dir;              ///< --cache-dir DIR (enables the cache there)
  int gpu_id = 0;                     ///< --gpu-id N (-1: every GPU, one executor each)
  bool isolation = true;              ///< commands run in executor child processes (--no-isolation: in-process)
  double command_timeout_s = 600;     ///< --command-timeout S: watchdog per command
  bench::TimingOptions timing;        ///< --flush-l2, --timer cupti|events
  std::string trace_path;             ///< --trace FILE: Perfetto/Chrome trace of every timed kernel
  std::string trace_part;             ///< internal: the part file this process appends to (--trace-part)
  bool executor_child = false;        ///< internal: this process is an executor (--executor-child)
  bool help = false;                  ///< --help with no op command
  /// The op command, or with --commands-file the words appended to every line.
  std::vector<std::string> command;
};

Result<DriverOptions> parse_driver_options(const std::vector<std::string>& argv);

/// The arguments an executor child is started with: every option that
/// affects how a command runs (not the commands, the CSV or the GPU list),
/// and the trace part it appends to (empty: no trace).
std::vector<std::string> executor_child_arguments(const DriverOptions& opts, const std::vector<std::string>& backends,
                                                  int gpu_id, const std::string& trace_part);

/// The backend a --backend name runs: "boo", "cudnn" or "cpu" ("" for an
/// unknown name). BOO's names are accepted: iree_boo* -> boo, torch and
/// inductor -> cudnn.
std::string canonical_backend(const std::string& name);

/// The usage text.
std::string driver_usage();

}  // namespace boo::driver
