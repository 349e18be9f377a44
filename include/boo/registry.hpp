// boo: turning MIOpenDriver command lines into signatures.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "boo/signature.hpp"
#include "boo/status.hpp"

namespace boo {

/// Per-command run options that MIOpenDriver and BOO's driver put on the
/// command line next to the op flags.
struct RunOptions {
  int64_t iterations = 100;  ///< --iter / -i (BOO's default)
  bool time = true;          ///< -t / --time (BOO's default: timing on)
  /// > 0: the launches are sized by their duration instead of `iterations`:
  /// about a quarter of this many seconds of warm-up, then about this many
  /// seconds of timed launches (boo-driver's --min-time, for a command
  /// without --iter).
  double min_time_s = 0;
};

struct ParsedCommand {
  std::unique_ptr<OpSignature> signature;
  RunOptions run;
  /// Flags that were accepted but have no effect in boo (e.g. MIOpen's -S).
  std::vector<std::string> ignored_flags;
};

/// Parses one command: `[path/to/MIOpenDriver] <op token> [flags...]`.
/// Errors: kUnimplemented for an op token boo does not support (gemm, bnorm,
/// aten::*, int8, ...), kInvalidArgument for bad flags or an invalid signature.
Result<ParsedCommand> parse_command(const std::vector<std::string>& words);
/// Same, splitting `line` like a POSIX shell first.
Result<ParsedCommand> parse_command(std::string_view line);

/// The op tokens boo accepts, e.g. {"conv", "convfp16", ...}.
std::vector<std::string> supported_op_tokens();

/// The flag table of the op that `op_token` names, formatted for --help.
Result<std::string> op_help(std::string_view op_token);

}  // namespace boo
