// boo-driver: reading command files.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "boo/status.hpp"

namespace boo::tools {

/// One command of a workload: its words, or the reason its line could not be split.
struct CommandLine {
  int line_number = 0;  ///< 1-based line in the file (0 for a command-line command)
  std::string text;     ///< the words shell-joined (BOO's 'arguments'), or the line as written if it cannot be split
  std::vector<std::string> words;
  Status split_status;
};

/// Reads `path`: '#' comments and blank lines are skipped; a .tsv file is
/// split on tabs, anything else like a POSIX shell. `extra` is appended to
/// every command. A line that cannot be split is returned with its error.
Result<std::vector<CommandLine>> load_commands(const std::string& path, const std::vector<std::string>& extra);

/// The commands of a file's text (what load_commands reads), split on tabs when `tsv`.
std::vector<CommandLine> commands_from_text(std::string_view text, bool tsv, const std::vector<std::string>& extra);

}  // namespace boo::tools
