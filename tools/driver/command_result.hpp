// boo-driver: what one command produced, before anything is printed.
//
// The runner (command_runner.hpp) computes a CommandResult per command; the
// report (command_report.hpp) renders it as the BOO-style text on stdout and
// as one CSV row. Neither knows about the other.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bench/backend.hpp"
#include "bench/verdict.hpp"
#include "boo/registry.hpp"

namespace boo::driver {

enum class Outcome { kOk, kFailed, kUnsupported };

/// "ok", "failed", "unsupported" (the executor protocol's words).
const char* outcome_name(Outcome outcome);
Outcome outcome_of(const std::string& name);

/// One backend's part of a command.
struct BackendResult {
  std::string backend;                   ///< the --backend name as given
  std::optional<bench::BackendRun> run;  ///< set when it ran
  std::string not_run;                   ///< otherwise why: the baseline does not implement the signature
};

/// The numerics verdict of one judged (non-vendor) backend.
struct NumericsResult {
  std::string backend;
  bench::NumericsVerdict verdict;
};

/// Where one command's wall time went, in seconds.
struct PhaseSeconds {
  double compile = 0;        ///< boo's kernels: NVRTC compiles and cache loads
  double vendor_tuning = 0;  ///< choosing vendor plans (cuDNN's engine search)
  double timing = 0;         ///< warm-up and timed launches
  double inputs = 0;         ///< seeded inputs made: the command's, and its numerics check's
  double numerics = 0;       ///< --verify-numerics apart from its inputs: the next three and the rest
  double numerics_runs = 0;  ///<   the backends run again on the check's inputs
  double reference = 0;      ///<   the float64 reference
  double checks = 0;         ///<   comparisons and statistics on the host
  double total = 0;          ///< the whole command

  PhaseSeconds& operator+=(const PhaseSeconds& other);
};

struct CommandResult {
  int index = 0;             ///< 1-based position in the run
  std::string text;          ///< the command as written
  int line_number = 0;       ///< its line in the commands file (0: the command line)
  Outcome outcome = Outcome::kOk;
  /// Why the command failed or is unsupported (a numerics failure is told by
  /// `numerics` instead). Everything computed before the failure is kept.
  std::string error;
  /// `<op> --help`: the op's flag table (or why there is none). Such a
  /// command is not a benchmark and has no CSV row.
  std::optional<std::string> help;
  std::optional<ParsedCommand> parsed;
  bool dry_run = false;
  /// In backend order; a failing backend ends the list.
  std::vector<BackendResult> backends;
  bool all_backends_ran = false;  ///< every backend returned (ratios are meaningful)
  /// --verify-numerics, in backend order; empty when every backend is the vendor.
  std::optional<std::vector<NumericsResult>> numerics;
  std::vector<std::string> warnings;  ///< for stderr: trouble that did not fail the command
  PhaseSeconds seconds;

  const OpSignature* signature() const { return parsed ? parsed->signature.get() : nullptr; }
  /// Whether every numerics verdict passed (true without --verify-numerics).
  bool numerics_pass() const;
};

}  // namespace boo::driver
