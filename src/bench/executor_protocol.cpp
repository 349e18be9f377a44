// boo: executor pipe protocol.
#include "bench/executor_protocol.hpp"

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
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t end = s.find(kUnit, start);
    out.push_back(unescape(s.substr(start, end == std::string::npos ? std::string::npos : end - start)));
    if (end == std::string::npos) break;
    start = end + 1;
  }
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
  return std::string(1, kRecord) + "DONE " + std::to_string(done.index) + " " + done.outcome + " " +
         (done.executor_exits ? "exit" : "stay") + " " + encode_fields(done.row) + "\n";
}

std::optional<DoneRecord> decode_done(const std::string& line_in) {
  std::string line = line_in;
  if (!line.empty() && line.back() == '\n') line.pop_back();
  if (line.size() < 6 || line[0] != kRecord || line.compare(1, 5, "DONE ") != 0) return std::nullopt;
  // Tokens: index, outcome, stay|exit, then the row.
  DoneRecord d;
  const size_t a = line.find(' ', 6);
  if (a == std::string::npos) return std::nullopt;
  const size_t b = line.find(' ', a + 1);
  if (b == std::string::npos) return std::nullopt;
  const size_t c = line.find(' ', b + 1);
  try {
    d.index = std::stoi(line.substr(6, a - 6));
  } catch (...) {
    return std::nullopt;
  }
  d.outcome = line.substr(a + 1, b - a - 1);
  const std::string exits = line.substr(b + 1, c == std::string::npos ? std::string::npos : c - b - 1);
  if (exits != "stay" && exits != "exit") return std::nullopt;
  d.executor_exits = exits == "exit";
  // No row at all (a command that is not a benchmark) decodes as none, not as one empty field.
  if (c != std::string::npos && c + 1 < line.size()) d.row = decode_fields(line.substr(c + 1));
  return d;
}

}  // namespace boo::bench
