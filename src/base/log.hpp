// boo: minimal leveled logging to stderr.
#pragma once

#include <string_view>

namespace boo::base {

enum class LogLevel { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3 };

/// Messages above this level are dropped (default kWarning). Thread-safe.
void set_log_level(LogLevel level);
LogLevel log_level();
/// Writes "boo: <level>: <message>" to stderr, one line, atomically.
void log(LogLevel level, std::string_view message);

inline void log_warning(std::string_view m) { log(LogLevel::kWarning, m); }
inline void log_info(std::string_view m) { log(LogLevel::kInfo, m); }
inline void log_debug(std::string_view m) { log(LogLevel::kDebug, m); }

}  // namespace boo::base
