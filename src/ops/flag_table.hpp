// boo: a table-driven parser for MIOpenDriver-style flags.
//
// Each op declares one table of {long, short, default, help} rows (MIOpen's
// InputFlags::AddInputFlag); the same table drives parsing, defaults and --help.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "boo/status.hpp"

namespace boo::ops {

struct FlagSpec {
  std::string_view long_name;      ///< "batchsize" (given as --batchsize)
  char short_name;                 ///< 'n' (given as -n), or 0 for long-only flags
  std::string_view default_value;  ///< used when the flag is absent
  std::string_view help;
  /// 1: exactly one value. 0: one or more values (all following tokens that
  /// are not flags), as argparse's nargs='+'.
  int values = 1;
  /// Accepted for MIOpenDriver compatibility but without effect in boo
  /// (e.g. -S solution); reported when given.
  bool no_effect = false;
};

/// The values of one parsed command, by long name.
class ParsedFlags {
 public:
  /// True when the user gave the flag (not just its default).
  bool given(std::string_view long_name) const;
  const std::string& text(std::string_view long_name) const;
  const std::vector<std::string>& list(std::string_view long_name) const;
  /// Strict numeric accessors; errors name the flag and the value.
  Result<int64_t> integer(std::string_view long_name) const;
  Result<double> number(std::string_view long_name) const;
  /// Long names of given flags whose spec says no_effect.
  std::vector<std::string> given_without_effect() const;
  /// "--batchsize/-n" for messages.
  std::string display(std::string_view long_name) const;

 private:
  friend Result<ParsedFlags> parse_flags(std::span<const FlagSpec>, std::span<const std::string>,
                                         std::string_view);
  std::span<const FlagSpec> table_;
  std::map<std::string, std::vector<std::string>, std::less<>> values_;
  std::map<std::string, bool, std::less<>> given_;
};

/// Parses `words` (everything after the op token) against `table`.
/// `-X value`, `--long value` and `--long=value` are accepted; unknown flags,
/// missing values and stray words are errors that name the word.
Result<ParsedFlags> parse_flags(std::span<const FlagSpec> table, std::span<const std::string> words,
                                std::string_view op_token);

/// The table formatted as help text.
std::string format_flag_help(std::span<const FlagSpec> table, std::string_view op_token);

}  // namespace boo::ops
