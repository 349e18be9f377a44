// boo: string helpers (splitting command lines, strict number parsing, formatting).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "boo/status.hpp"

namespace boo::base {

/// Splits a command line like POSIX sh / Python's shlex.split: whitespace
/// separates words; single quotes, double quotes and backslashes quote.
Result<std::vector<std::string>> shell_split(std::string_view line);

/// Splits on `sep` (tab-separated command files); empty fields are dropped.
std::vector<std::string> split(std::string_view text, char sep);

/// Joins words with spaces, quoting the ones that need it for a shell.
std::string shell_join(const std::vector<std::string>& words);

std::string_view trim(std::string_view s);
std::string to_lower(std::string_view s);
std::string to_upper(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);

/// Strict parsers: the whole string must be a number.
Result<int64_t> parse_int(std::string_view s);
Result<double> parse_double(std::string_view s);

/// Shortest representation that parses back to the same double ("1e-05", "0.2").
std::string format_double(double v);

/// `text` with control bytes (and DEL) written as \xNN, so that a message
/// echoing user input cannot move a terminal's cursor or recolour it.
std::string escape_control(std::string_view text);

/// A word of user input as messages echo it: control bytes escaped, and cut
/// to its first 64 bytes (at a UTF-8 character boundary) plus "... (N bytes)"
/// when longer, so that a huge word cannot make a huge message.
std::string echo_word(std::string_view word);

/// Joins integers with a separator: {1, 2} and "x" give "1x2".
std::string join_ints(const std::vector<int64_t>& values, std::string_view sep);

}  // namespace boo::base
