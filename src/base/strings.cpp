// boo: string helpers.
#include "base/strings.hpp"

#include <cctype>
#include <charconv>
#include <cmath>

namespace boo::base {

Result<std::vector<std::string>> shell_split(std::string_view line) {
  std::vector<std::string> words;
  std::string current;
  bool in_word = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char ch = line[i];
    if (std::isspace(static_cast<unsigned char>(ch))) {
      if (in_word) words.push_back(std::move(current));
      current.clear();
      in_word = false;
    } else if (ch == '\'') {
      size_t close = line.find('\'', i + 1);
      if (close == std::string_view::npos)
        return invalid_argument("unterminated single quote in command line");
      current.append(line.substr(i + 1, close - i - 1));
      i = close;
      in_word = true;
    } else if (ch == '"') {
      in_word = true;
      size_t j = i + 1;
      for (; j < line.size() && line[j] != '"'; ++j) {
        if (line[j] == '\\' && j + 1 < line.size() &&
            (line[j + 1] == '"' || line[j + 1] == '\\' || line[j + 1] == '$' || line[j + 1] == '`')) {
          ++j;
        }
        current.push_back(line[j]);
      }
      if (j >= line.size()) return invalid_argument("unterminated double quote in command line");
      i = j;
    } else if (ch == '\\' && i + 1 < line.size()) {
      current.push_back(line[++i]);
      in_word = true;
    } else {
      current.push_back(ch);
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(current));
  return words;
}

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(sep, start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view field = trim(text.substr(start, end - start));
    if (!field.empty()) out.emplace_back(field);
    start = end + 1;
  }
  return out;
}

std::string shell_join(const std::vector<std::string>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i) out += ' ';
    const std::string& w = words[i];
    bool plain = !w.empty();
    for (char ch : w) {
      if (!(std::isalnum(static_cast<unsigned char>(ch)) || std::string_view("-_.,:/=+@%").find(ch) != std::string_view::npos)) {
        plain = false;
        break;
      }
    }
    if (plain) {
      out += w;
    } else {
      out += '\'';
      for (char ch : w) {
        if (ch == '\'') out += "'\"'\"'";
        else out += ch;
      }
      out += '\'';
    }
  }
  return out;
}

std::string_view trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return out;
}

std::string to_upper(std::string_view s) {
  std::string out(s);
  for (char& ch : out) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string escape_control(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto byte = static_cast<unsigned char>(ch);
    if (byte < 0x20 || byte == 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    } else {
      out += ch;
    }
  }
  return out;
}

std::string echo_word(std::string_view word) {
  constexpr size_t kMaxEchoBytes = 64;
  if (word.size() <= kMaxEchoBytes) return escape_control(word);
  size_t cut = kMaxEchoBytes;
  while (cut > 0 && (static_cast<unsigned char>(word[cut]) & 0xc0) == 0x80) --cut;  // a UTF-8 continuation byte
  return escape_control(word.substr(0, cut)) + "... (" + std::to_string(word.size()) + " bytes)";
}

Result<int64_t> parse_int(std::string_view s) {
  s = trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size())
    return invalid_argument("expected an integer, got '" + echo_word(s) + "'");
  return v;
}

Result<double> parse_double(std::string_view s) {
  s = trim(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(v))
    return invalid_argument("expected a finite number, got '" + echo_word(s) + "'");
  return v;
}

std::string format_double(double v) {
  char buf[64];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, ec == std::errc() ? ptr : buf);
}

std::string join_ints(const std::vector<int64_t>& values, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += sep;
    out += std::to_string(values[i]);
  }
  return out;
}

}  // namespace boo::base
