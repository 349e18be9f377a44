// boo: the pipe protocol between boo-driver and its executor child processes.
//
// parent -> child, one line per command:   RUN <index> <word>\x1f<word>\x1f...\n
// child -> parent: the command's printed output, verbatim, then one line
//   \x1eDONE <index> <outcome> <stay|exit> <phase>=<seconds>,... <csv field>\x1f<csv field>...\n
//   ("exit": the child leaves after this command, its GPU context being
//   unusable, so the parent waits for it and starts a fresh one)
// \x1e (record separator) and \x1f (unit separator) never occur in commands
// or output, so framing needs no escaping; tabs and newlines inside fields
// are escaped as \t and \n.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace boo::bench {

/// Fields joined by \x1f on one line (escaped), and split back: the
/// framing of RUN and DONE records, also used by trace part files.
std::string encode_fields(const std::vector<std::string>& fields);
std::vector<std::string> decode_fields(const std::string& line);

std::string encode_run(int index, const std::vector<std::string>& words);
/// The index and words of a RUN line, or nullopt for anything else.
std::optional<std::pair<int, std::vector<std::string>>> decode_run(const std::string& line);

struct DoneRecord {
  int index = 0;
  std::string outcome;             ///< "ok", "failed", "unsupported"
  std::vector<std::string> row;    ///< the command's CSV row; empty when it has none (`<op> --help`)
  bool executor_exits = false;     ///< the child leaves after this command
  std::map<std::string, double> seconds;  ///< where the command's time went, by phase name
};

std::string encode_done(const DoneRecord& done);
/// The record of a DONE line, or nullopt when `line` is ordinary output.
std::optional<DoneRecord> decode_done(const std::string& line);

}  // namespace boo::bench
