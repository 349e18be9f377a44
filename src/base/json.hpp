// boo: a minimal JSON object writer and reader for flat metadata records
// (string, number and boolean values; no nesting), and arrays of them.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "boo/status.hpp"

namespace boo::base {

/// An ordered flat JSON object.
class JsonObject {
 public:
  JsonObject& set(const std::string& key, const std::string& value);
  JsonObject& set(const std::string& key, const char* value) { return set(key, std::string(value)); }
  JsonObject& set_number(const std::string& key, double value);
  JsonObject& set_bool(const std::string& key, bool value);

  /// The value's text (strings unescaped), or nullptr when absent.
  const std::string* get(const std::string& key) const;
  Result<double> number(const std::string& key) const;

  std::string dump() const;  ///< pretty-printed, one key per line
  static Result<JsonObject> parse(const std::string& text);
  /// A JSON array of flat objects (a tuning database's export), and its reader:
  /// anything but objects in one array is DATA_LOSS.
  static std::string dump_array(const std::vector<JsonObject>& objects);
  static Result<std::vector<JsonObject>> parse_array(const std::string& text);

  struct Entry {
    std::string key;
    std::string value;  ///< unescaped string, or the literal text of a number/boolean
    bool is_string;
  };
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  static Result<JsonObject> parse_at(const std::string& text, size_t& i);  ///< advances i past the '}'
  void put(const std::string& key, std::string value, bool is_string);
  std::vector<Entry> entries_;
};

std::string json_quote(const std::string& s);

}  // namespace boo::base
