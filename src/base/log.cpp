// boo: logging.
#include "base/log.hpp"

#include <atomic>
#include <cstdio>
#include <string>

namespace boo::base {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::kWarning)};
}

void set_log_level(LogLevel level) { g_level.store(static_cast<int>(level)); }
LogLevel log_level() { return static_cast<LogLevel>(g_level.load()); }

void log(LogLevel level, std::string_view message) {
  if (static_cast<int>(level) > g_level.load()) return;
  static const char* kNames[] = {"error", "warning", "info", "debug"};
  std::string line = "boo: " + std::string(kNames[static_cast<int>(level)]) + ": " + std::string(message) + "\n";
  std::fwrite(line.data(), 1, line.size(), stderr);  // one write per line: lines of threads do not interleave
}

}  // namespace boo::base
