// boo-driver: the driver-level options (everything that is not the op command).
//
// Every option is one row of a table (driver_options.cpp): its long and short
// forms, its argument, its default, its help, and how its value is applied.
// The same table drives parsing, defaults, --help and what executor child
// processes are told, as the op flag tables do (ops/flag_table.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench/backend.hpp"
#include "bench/reference.hpp"
#include "bench/verdict.hpp"
#include "boo/status.hpp"

namespace boo::driver {

struct DriverOptions {
  std::string commands_file;          ///< --commands-file F
  std::vector<std::string> backends;  ///< --backend B (repeatable); empty = the default
  std::string csv_path;               ///< --csv PATH
  bool boo_defaults = false;          ///< --boo-defaults: conv lines without -F run -F 1, and the default backend
                                      ///< is named iree_boo_experimental, as BOO's driver
  bool csv_extra = false;             ///< --csv-extra: boo's columns after BOO's (flop_count, min_bytes, error)
  bool dry_run = false;               ///< --dry-run
  std::string dump_dir;               ///< --dump DIR
  bool dump_append = false;           ///< --dump-append: DIR may hold an earlier run's files
  std::optional<double> splat;        ///< --splat-input-value V
  uint64_t seed = 0;                  ///< --seed N
  std::optional<bool> verbose;        ///< --verbose / --no-verbose (default: verbose unless --csv)
  int64_t cpu_iterations = 0;         ///< --cpu-iterations N: cap on timed CPU-reference launches
  bool fail_on_unsupported = false;   ///< --fail-on-unsupported
  bool quiet = false;                 ///< --quiet: no progress line
  bool verify_numerics = false;       ///< --verify-numerics: BOO's statistical verdict vs the float64 reference
  bench::NumericsOptions numerics;    ///< --numerics-* options
  bench::ReferenceChoice reference = bench::ReferenceChoice::kAuto;  ///< --reference auto|cpu|gpu
  std::string implementation;         ///< --impl NAME: only this GPU implementation
  std::string cache_dir;              ///< --cache-dir DIR (enables the cache there)
  int gpu_id = 0;                     ///< --gpu-id N (-1: every GPU, one executor each)
  bool isolation = true;              ///< commands run in executor child processes (--no-isolation: in-process)
  double command_timeout_s = 0;       ///< --command-timeout S: watchdog per command
  std::optional<int> compile_jobs;    ///< --compile-jobs N: precompile threads (unset: the hardware threads; 0, 1: off)
  bench::TimingOptions timing;        ///< --flush-l2, --timer cupti|events
  double min_time_s = 0;              ///< --min-time S: launches sized by duration for commands without --iter
  std::string trace_path;             ///< --trace FILE: Perfetto/Chrome trace of every timed kernel
  std::string trace_part;             ///< internal: the part file this process appends to (--trace-part)
  bool executor_child = false;        ///< internal: this process is an executor (--executor-child)
  bool help = false;                  ///< --help with no op command
  bool version = false;               ///< --version
  /// The op command, or with --commands-file the words appended to every line.
  std::vector<std::string> command;
  /// The options given that change how a command runs, as "--name" or
  /// "--name=value" words, in the order given: passed on to executor children.
  std::vector<std::string> run_option_words;
};

/// Who an option concerns.
enum class OptionScope {
  kDriver,    ///< the driver process (which commands, where results go, the GPU list)
  kRun,       ///< how each command runs: executor children are given it too
  kInternal,  ///< between the driver and its executors; not listed by --help
};

/// One driver option.
struct DriverOptionSpec {
  std::string_view long_name;      ///< "commands-file" (given as --commands-file)
  char short_name;                 ///< 'h' (given as -h), or 0 for long-only options
  std::string_view argument;       ///< the value's placeholder in help ("FILE"); empty for a switch
  std::string_view default_value;  ///< applied before the given options; empty: none
  std::string_view help;           ///< one or more lines
  OptionScope scope;
  /// Applies a given value (a switch gets ""); errors say what is accepted.
  Status (*apply)(DriverOptions& options, const std::string& value);
};

/// Every driver option, in --help order.
std::span<const DriverOptionSpec> driver_option_table();

Result<DriverOptions> parse_driver_options(const std::vector<std::string>& argv);

/// The arguments an executor child is started with: the options that change
/// how a command runs (as given), the resolved backends, the GPU, the
/// verbosity the driver chose, and the trace part it appends to (empty: no trace).
std::vector<std::string> executor_child_arguments(const DriverOptions& opts, const std::vector<std::string>& backends,
                                                  int gpu_id, const std::string& trace_part);

/// The backend a --backend name runs: "boo", "cudnn" or "cpu" ("" for an
/// unknown name). BOO's names are accepted: iree_boo* -> boo, torch and
/// inductor -> cudnn.
std::string canonical_backend(const std::string& name);

/// What boo's GPU kernels are called when no --backend is given: "boo", or BOO's
/// default backend name "iree_boo_experimental" under --boo-defaults.
std::string default_gpu_backend(const DriverOptions& opts);

/// The usage text: a fixed preamble, then the option table.
std::string driver_usage();

}  // namespace boo::driver
