// boo: executor pipe protocol.
#include "bench/executor_protocol.hpp"

#include <cstdio>
#include <cstdlib>

namespace boo::bench {
namespace {

constexpr char kRecord = '\x1e';
constexpr char kUnit = '\x1f';

std::string escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '\\') out += "\\\\";
    else if (ch == '\n') out += "\\n";
    else if (ch == '\t') out += "\\t";
    else if (ch == kRecord || ch == kUnit) out += ' ';
    else out += ch;
  }
  return out;
}

std::string unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      const char next = s[++i];
      out += next == 'n' ? '\n' : next == 't' ? '\t' : next;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<std::string> split_on(const std::string& s, char separator) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t end = s.find(separator, start);
    out.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

}  // namespace

std::string encode_fields(const std::vector<std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) out += kUnit;
    out += escape(fields[i]);
  }
  return out;
}

std::vector<std::string> decode_fields(const std::string& s) {
  std::vector<std::string> out = split_on(s, kUnit);
  for (std::string& field : out) field = unescape(field);
  return out;
}

std::string encode_run(int index, const std::vector<std::string>& words) {
  return "RUN " + std::to_string(index) + " " + encode_fields(words) + "\n";
}

std::optional<std::pair<int, std::vector<std::string>>> decode_run(const std::string& line) {
  if (line.rfind("RUN ", 0) != 0) return std::nullopt;
  const size_t space = line.find(' ', 4);
  if (space == std::string::npos) return std::nullopt;
  int index = 0;
  try {
    index = std::stoi(line.substr(4, space - 4));
  } catch (...) {
    return std::nullopt;
  }
  std::string rest = line.substr(space + 1);
  if (!rest.empty() && rest.back() == '\n') rest.pop_back();
  std::vector<std::string> words = rest.empty() ? std::vector<std::string>{} : decode_fields(rest);
  return std::make_pair(index, words);
}

std::string encode_done(const DoneRecord& done) {
  // The phases as one word: "compile=0.25,timing=1.5", or "-" for none.
  std::string phases;
  for (const auto& [name, seconds] : done.seconds) {
    char value[32];
    std::snprintf(value, sizeof value, "%.9g", seconds);
    phases += (phases.empty() ? "" : ",") + name + "=" + value;
  }
  return std::string(1, kRecord) + "DONE " + std::to_string(done.index) + " " + done.outcome + " " +
         (done.executor_exits ? "exit" : "stay") + " " + (phases.empty() ? "-" : phases) + " " +
         encode_fields(done.row) + "\n";
}

std::optional<DoneRecord> decode_done(const std::string& line_in) {
  std::string line = line_in;
  if (!line.empty() && line.back() == '\n') line.pop_back();
  if (line.size() < 6 || line[0] != kRecord || line.compare(1, 5, "DONE ") != 0) return std::nullopt;
  // Tokens: index, outcome, stay|exit, the phases, then the row.
  std::vector<std::string> tokens;
  size_t start = 6;
  while (tokens.size() < 4) {
    const size_t space = line.find(' ', start);
    if (space == std::string::npos) return std::nullopt;
    tokens.push_back(line.substr(start, space - start));
    start = space + 1;
  }
  DoneRecord d;
  try {
    d.index = std::stoi(tokens[0]);
  } catch (...) {
    return std::nullopt;
  }
  d.outcome = tokens[1];
  if (tokens[2] != "stay" && tokens[2] != "exit") return std::nullopt;
  d.executor_exits = tokens[2] == "exit";
  if (tokens[3] != "-") {
    for (const std::string& phase : split_on(tokens[3], ',')) {
      const size_t equals = phase.find('=');
      if (equals == std::string::npos) return std::nullopt;
      char* end = nullptr;
      const double seconds = std::strtod(phase.c_str() + equals + 1, &end);
      if (end == phase.c_str() + equals + 1 || *end != '\0') return std::nullopt;
      d.seconds[phase.substr(0, equals)] = seconds;
    }
  }
  // No row at all (a command that is not a benchmark) decodes as none, not as one empty field.
  if (start < line.size()) d.row = decode_fields(line.substr(start));
  return d;
}

}  // namespace boo::bench
