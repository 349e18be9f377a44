// boo-driver: progress line and time summary.
#include "progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace boo::driver {
namespace {

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

// Columns of the terminal on stderr (80 when it does not say).
size_t terminal_width() {
  winsize ws{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

}  // namespace

PhaseSeconds& PhaseSeconds::operator+=(const PhaseSeconds& o) {
  compile += o.compile;
  vendor_tuning += o.vendor_tuning;
  timing += o.timing;
  inputs += o.inputs;
  numerics += o.numerics;
  numerics_runs += o.numerics_runs;
  reference += o.reference;
  checks += o.checks;
  total += o.total;
  return *this;
}

std::string format_time_summary(double wall_s, const PhaseSeconds& c, const std::string& precompile) {
  const double other = std::max(0.0, c.total - c.compile - c.vendor_tuning - c.timing - c.inputs - c.numerics);
  return "boo-driver: wall time " + seconds_text(wall_s) + (precompile.empty() ? "" : "; " + precompile) +
         "; command time " + seconds_text(c.total) +
         ": compile " + seconds_text(c.compile) + ", vendor tuning " + seconds_text(c.vendor_tuning) + ", timing " +
         seconds_text(c.timing) + ", inputs " + seconds_text(c.inputs) + ", numerics " + seconds_text(c.numerics) +
         " (backend runs " + seconds_text(c.numerics_runs) + ", reference " + seconds_text(c.reference) +
         ", checks " + seconds_text(c.checks) + "), other " + seconds_text(other) + "\n";
}

std::string format_duration(double seconds) {
  const int64_t s = std::llround(std::max(0.0, seconds));
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(s));
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  else std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(s / 3600), static_cast<long long>(s / 60 % 60));
  return buf;
}

std::string format_status_line(size_t done, size_t total, size_t failures, double elapsed_s,
                               const std::string& current, size_t width) {
  const std::string count = std::to_string(total);
  std::string done_text = std::to_string(done);
  done_text.insert(0, count.size() > done_text.size() ? count.size() - done_text.size() : 0, ' ');
  std::string line = "[" + done_text + "/" + count + "] " + std::to_string(failures) + " failed | ";
  if (done == 0) line += "time left unknown";
  else line += format_duration(elapsed_s / static_cast<double>(done) * static_cast<double>(total - done)) + " left";
  if (!current.empty()) line += " | " + current;
  if (line.size() > width) line.resize(width);
  return line;
}

Progress::Progress(size_t total, bool enabled) : total_(total), enabled_(enabled) {}

bool Progress::wanted(bool quiet) { return !quiet && isatty(STDERR_FILENO); }

void Progress::started(size_t index, const std::string& label) {
  std::lock_guard<std::mutex> lock(mutex_);
  running_[index] = label;
}

void Progress::finished(size_t index, Outcome outcome) {
  std::lock_guard<std::mutex> lock(mutex_);
  running_.erase(index);
  ++done_;
  if (outcome == Outcome::kFailed) ++failures_;
}

void Progress::draw() {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::string current = running_.empty() ? "" : running_.begin()->second;
  // One column short of the width: a line that fills it would wrap on some terminals.
  const std::string line = format_status_line(done_, total_, failures_, elapsed, current, terminal_width() - 1);
  std::fprintf(stderr, "\r%s\x1b[K", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void Progress::clear() {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!drawn_) return;
  std::fprintf(stderr, "\r\x1b[K");
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace boo::driver
