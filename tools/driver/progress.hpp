// boo-driver: the progress line of a run and its closing summary.
//
// On a terminal, one status line on stderr, redrawn in place:
//   [ 57/413] 2 failed | 3m10s left | line 57: conv -n 128 -c 64 ...
// Nothing at all when stderr is not a terminal or with --quiet.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>

#include "command_result.hpp"

namespace boo::driver {

/// The closing line on where a run's time went, from its commands' phases summed:
/// "boo-driver: wall time 12.3 s; command time 11.9 s: compile 1.0 s, vendor
/// tuning 2.0 s, timing 3.0 s, inputs 0.5 s, numerics 4.0 s (backend runs 1.0 s,
/// reference 2.0 s, checks 0.8 s), other 1.4 s\n"; `precompile`,
/// where the run had that stage, follows the wall time ("; precompile 3.1 s on 16 threads (...)").
std::string format_time_summary(double wall_s, const PhaseSeconds& commands, const std::string& precompile = "");

/// "12s", "3m05s", "1h02m".
std::string format_duration(double seconds);

/// The status line for `done` of `total` commands after `elapsed_s`, cut to
/// `width` columns. The time left is the mean time per finished command
/// times the commands left (unknown before the first finishes).
std::string format_status_line(size_t done, size_t total, size_t failures, double elapsed_s,
                               const std::string& current, size_t width);

/// The progress of a run. Thread-safe: executor threads report commands
/// starting and finishing; the printing thread draws.
class Progress {
 public:
  /// `enabled`: draw at all (stderr is a terminal and no --quiet).
  Progress(size_t total, bool enabled);
  /// Whether the line should be drawn for this run: stderr is a terminal and no --quiet.
  static bool wanted(bool quiet);

  void started(size_t index, const std::string& label);
  void finished(size_t index, Outcome outcome);
  /// Redraws the line (stdout output must be written between clear() and draw()).
  void draw();
  /// Erases the line, so that what follows starts on a clean line.
  void clear();

 private:
  const size_t total_;
  const bool enabled_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::mutex mutex_;
  size_t done_ = 0, failures_ = 0;
  std::map<size_t, std::string> running_;  // by index: the oldest is shown
  bool drawn_ = false;
};

}  // namespace boo::driver
