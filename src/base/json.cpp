// boo: minimal flat JSON objects.
#include "base/json.hpp"

#include <cctype>
#include <charconv>
#include <cstdio>

#include "base/strings.hpp"

namespace boo::base {

std::string json_quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char ch : s) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (ch < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", ch);
          out += buf;
        } else {
          out += static_cast<char>(ch);
        }
    }
  }
  return out + "\"";
}

namespace {

// Reads a JSON string starting at text[i] == '"'; advances i past it.
Result<std::string> read_string(const std::string& text, size_t& i) {
  std::string out;
  for (++i; i < text.size(); ++i) {
    char ch = text[i];
    if (ch == '"') {
      ++i;
      return out;
    }
    if (ch == '\\') {
      if (++i >= text.size()) break;
      switch (text[i]) {
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          // Exactly four hex digits (std::stoi would throw on others), written as UTF-8.
          unsigned code = 0;
          const char* digits = text.data() + i + 1;
          if (i + 4 >= text.size() || std::from_chars(digits, digits + 4, code, 16).ptr != digits + 4)
            return data_loss("bad \\u escape in JSON");
          if (code < 0x80) {
            out += static_cast<char>(code);
          } else if (code < 0x800) {
            out += static_cast<char>(0xc0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3f));
          } else {
            out += static_cast<char>(0xe0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3f));
            out += static_cast<char>(0x80 | (code & 0x3f));
          }
          i += 4;
          break;
        }
        default: out += text[i];
      }
    } else {
      out += ch;
    }
  }
  return data_loss("unterminated string in JSON");
}

void skip_space(const std::string& text, size_t& i) {
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
}

}  // namespace

void JsonObject::put(const std::string& key, std::string value, bool is_string) {
  for (Entry& e : entries_) {
    if (e.key == key) {
      e.value = std::move(value);
      e.is_string = is_string;
      return;
    }
  }
  entries_.push_back(Entry{key, std::move(value), is_string});
}

JsonObject& JsonObject::set(const std::string& key, const std::string& value) {
  put(key, value, true);
  return *this;
}

JsonObject& JsonObject::set_number(const std::string& key, double value) {
  put(key, format_double(value), false);
  return *this;
}

JsonObject& JsonObject::set_bool(const std::string& key, bool value) {
  put(key, value ? "true" : "false", false);
  return *this;
}

const std::string* JsonObject::get(const std::string& key) const {
  for (const Entry& e : entries_)
    if (e.key == key) return &e.value;
  return nullptr;
}

Result<double> JsonObject::number(const std::string& key) const {
  const std::string* v = get(key);
  if (!v) return not_found("JSON key '" + key + "' is missing");
  return parse_double(*v);
}

std::string JsonObject::dump() const {
  std::string out = "{\n";
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    out += "  " + json_quote(e.key) + ": " + (e.is_string ? json_quote(e.value) : e.value);
    out += i + 1 < entries_.size() ? ",\n" : "\n";
  }
  return out + "}\n";
}

Result<JsonObject> JsonObject::parse(const std::string& text) {
  size_t i = 0;
  return parse_at(text, i);
}

std::string JsonObject::dump_array(const std::vector<JsonObject>& objects) {
  std::string out = "[\n";
  for (size_t i = 0; i < objects.size(); ++i) {
    std::string o = objects[i].dump();
    o.pop_back();  // the object's newline: the separator follows it
    out += o + (i + 1 < objects.size() ? ",\n" : "\n");
  }
  return out + "]\n";
}

Result<std::vector<JsonObject>> JsonObject::parse_array(const std::string& text) {
  std::vector<JsonObject> out;
  size_t i = 0;
  skip_space(text, i);
  if (i >= text.size() || text[i] != '[') return data_loss("JSON array expected");
  ++i;
  skip_space(text, i);
  if (i < text.size() && text[i] == ']') {
    ++i;
  } else {
    while (true) {
      skip_space(text, i);
      Result<JsonObject> o = parse_at(text, i);
      if (!o.ok()) return std::move(o).take_status().annotate("array element " + std::to_string(out.size()));
      out.push_back(std::move(*o));
      skip_space(text, i);
      if (i < text.size() && text[i] == ',') {
        ++i;
        continue;
      }
      if (i < text.size() && text[i] == ']') {
        ++i;
        break;
      }
      return data_loss("',' or ']' expected after array element " + std::to_string(out.size() - 1));
    }
  }
  skip_space(text, i);
  if (i != text.size()) return data_loss("text after the JSON array");
  return out;
}

Result<JsonObject> JsonObject::parse_at(const std::string& text, size_t& i) {
  JsonObject obj;
  skip_space(text, i);
  if (i >= text.size() || text[i] != '{') return data_loss("JSON object expected");
  ++i;
  skip_space(text, i);
  if (i < text.size() && text[i] == '}') {
    ++i;
    return obj;
  }
  while (i < text.size()) {
    skip_space(text, i);
    if (i >= text.size() || text[i] != '"') return data_loss("JSON key expected");
    BOO_ASSIGN_OR_RETURN(std::string key, read_string(text, i));
    skip_space(text, i);
    if (i >= text.size() || text[i] != ':') return data_loss("':' expected in JSON");
    ++i;
    skip_space(text, i);
    if (i >= text.size()) return data_loss("truncated JSON");
    if (text[i] == '"') {
      BOO_ASSIGN_OR_RETURN(std::string value, read_string(text, i));
      obj.entries_.push_back(Entry{key, value, true});
    } else {
      size_t end = text.find_first_of(",}", i);
      if (end == std::string::npos) return data_loss("truncated JSON");
      obj.entries_.push_back(Entry{key, std::string(trim(text.substr(i, end - i))), false});
      i = end;
    }
    skip_space(text, i);
    if (i < text.size() && text[i] == ',') {
      ++i;
      continue;
    }
    if (i < text.size() && text[i] == '}') {
      ++i;
      return obj;
    }
    return data_loss("',' or '}' expected in JSON");
  }
  return data_loss("truncated JSON");
}

}  // namespace boo::base
