// boo: MIOpenDriver-style flag parsing.
#include "ops/flag_table.hpp"

#include <cctype>

#include "base/strings.hpp"

namespace boo::ops {
namespace {

const FlagSpec* find_long(std::span<const FlagSpec> table, std::string_view name) {
  for (const FlagSpec& f : table)
    if (f.long_name == name) return &f;
  return nullptr;
}

const FlagSpec* find_short(std::span<const FlagSpec> table, char name) {
  for (const FlagSpec& f : table)
    if (f.short_name != 0 && f.short_name == name) return &f;
  return nullptr;
}

bool looks_like_flag(const std::string& word) {
  // "-1" or "-0.5" are values, not flags.
  if (word.size() < 2 || word[0] != '-') return false;
  return !(std::isdigit(static_cast<unsigned char>(word[1])) || word[1] == '.');
}

}  // namespace

bool ParsedFlags::given(std::string_view long_name) const {
  auto it = given_.find(long_name);
  return it != given_.end() && it->second;
}

const std::string& ParsedFlags::text(std::string_view long_name) const {
  return list(long_name).front();
}

const std::vector<std::string>& ParsedFlags::list(std::string_view long_name) const {
  static const std::vector<std::string> kEmpty{""};
  auto it = values_.find(long_name);
  return it == values_.end() || it->second.empty() ? kEmpty : it->second;
}

std::vector<std::string> ParsedFlags::given_without_effect() const {
  std::vector<std::string> out;
  for (const FlagSpec& f : table_)
    if (f.no_effect && given(f.long_name)) out.push_back(display(f.long_name) + " " + text(f.long_name));
  return out;
}

std::string ParsedFlags::display(std::string_view long_name) const {
  const FlagSpec* f = find_long(table_, long_name);
  std::string out = "--" + std::string(long_name);
  if (f && f->short_name) out += std::string("/-") + f->short_name;
  return out;
}

Result<int64_t> ParsedFlags::integer(std::string_view long_name) const {
  Result<int64_t> v = base::parse_int(text(long_name));
  if (!v.ok()) return invalid_argument(display(long_name) + ": " + v.status().message());
  return v;
}

Result<double> ParsedFlags::number(std::string_view long_name) const {
  Result<double> v = base::parse_double(text(long_name));
  if (!v.ok()) return invalid_argument(display(long_name) + ": " + v.status().message());
  return v;
}

Result<ParsedFlags> parse_flags(std::span<const FlagSpec> table, std::span<const std::string> words,
                                std::string_view op_token) {
  ParsedFlags parsed;
  parsed.table_ = table;
  for (const FlagSpec& f : table) {
    parsed.values_[std::string(f.long_name)] = {std::string(f.default_value)};
    parsed.given_[std::string(f.long_name)] = false;
  }
  const std::string help_hint = " (boo-driver " + std::string(op_token) + " --help lists the flags)";
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    const FlagSpec* spec = nullptr;
    std::string inline_value;
    bool has_inline_value = false;
    if (base::starts_with(word, "--")) {
      std::string name = word.substr(2);
      if (size_t eq = name.find('='); eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        name.resize(eq);
        has_inline_value = true;
      }
      spec = find_long(table, name);
      if (!spec)
        return invalid_argument("unknown flag '" + base::echo_word(word) + "' for " + std::string(op_token) + help_hint);
    } else if (word.size() == 2 && word[0] == '-') {
      spec = find_short(table, word[1]);
      if (!spec)
        return invalid_argument("unknown flag '" + base::echo_word(word) + "' for " + std::string(op_token) + help_hint);
    } else if (word.size() > 2 && word[0] == '-' && word[1] != '-' && word[2] == '=') {
      // BOO's driver (argparse) accepts -F=1 as well as -F 1.
      spec = find_short(table, word[1]);
      if (!spec)
        return invalid_argument("unknown flag '" + base::echo_word(word.substr(0, 2)) + "' for " + std::string(op_token) +
                                help_hint);
      inline_value = word.substr(3);
      has_inline_value = true;
    } else if (word.size() > 2 && word[0] == '-' && word[1] != '-' && find_short(table, word[1]) &&
               find_short(table, word[1])->values == 1) {
      // BOO's driver (argparse) also reads a short flag's value written against it: -F1 is -F 1.
      spec = find_short(table, word[1]);
      inline_value = word.substr(2);
      has_inline_value = true;
    } else {
      return invalid_argument("unexpected word '" + base::echo_word(word) + "' for " + std::string(op_token) +
                              ": expected a flag such as -n or --batchsize" + help_hint);
    }
    std::vector<std::string> values;
    if (has_inline_value) {
      values.push_back(inline_value);
    } else if (spec->values == 1) {
      if (i + 1 >= words.size())
        return invalid_argument("flag '" + base::echo_word(word) + "' needs a value" + help_hint);
      values.push_back(words[++i]);
    } else {
      while (i + 1 < words.size() && !looks_like_flag(words[i + 1])) values.push_back(words[++i]);
      if (values.empty()) return invalid_argument("flag '" + base::echo_word(word) + "' needs one or more values");
    }
    parsed.values_[std::string(spec->long_name)] = std::move(values);
    parsed.given_[std::string(spec->long_name)] = true;
  }
  return parsed;
}

std::string format_flag_help(std::span<const FlagSpec> table, std::string_view op_token) {
  std::string out = "Flags of " + std::string(op_token) + ":\n";
  for (const FlagSpec& f : table) {
    std::string line = "  --";
    line += f.long_name;
    if (f.short_name) line += std::string(" / -") + f.short_name;
    if (line.size() < 34) line.append(34 - line.size(), ' ');
    line += ' ';
    line += f.help;
    if (!f.default_value.empty()) {
      line += " (default ";
      line += f.default_value;
      line += ')';
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace boo::ops
