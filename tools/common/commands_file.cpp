// boo-driver: reading command files.
#include "common/commands_file.hpp"

#include <sstream>

#include "base/file_util.hpp"
#include "base/strings.hpp"

namespace boo::tools {

Result<std::vector<CommandLine>> load_commands(const std::string& path, const std::vector<std::string>& extra) {
  Result<std::string> text = base::read_file(path);
  if (!text.ok()) return Status(text.status()).annotate("reading --commands-file");
  const bool tsv = path.size() >= 4 && path.compare(path.size() - 4, 4, ".tsv") == 0;
  return commands_from_text(*text, tsv, extra);
}

std::vector<CommandLine> commands_from_text(std::string_view text, bool tsv, const std::vector<std::string>& extra) {
  std::vector<CommandLine> commands;
  std::istringstream in{std::string(text)};
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    std::string_view trimmed = base::trim(line);
    if (trimmed.empty() || trimmed.front() == '#') continue;
    CommandLine cmd;
    cmd.line_number = number;
    if (tsv) {
      cmd.words = base::split(trimmed, '\t');
    } else {
      Result<std::vector<std::string>> words = base::shell_split(trimmed);
      if (words.ok()) cmd.words = std::move(*words);
      else cmd.split_status = words.status();
    }
    cmd.words.insert(cmd.words.end(), extra.begin(), extra.end());
    // BOO's driver names a command by its words shell-joined (the CSV's 'arguments', the '>>>' line):
    // a .tsv line's tabs and a .txt line's double quotes come out as shlex.join writes them.
    // A line that cannot be split keeps its text.
    cmd.text = cmd.split_status.ok() ? base::shell_join(cmd.words)
                                     : std::string(trimmed) + (extra.empty() ? "" : " " + base::shell_join(extra));
    commands.push_back(std::move(cmd));
  }
  return commands;
}

}  // namespace boo::tools
