// boo: reading and writing the profiler's four lists of an ATen call.
#include "ops/aten/aten_call.hpp"

#include <cctype>

#include "base/strings.hpp"

namespace boo::ops::aten {
namespace {

// A Python literal of the lists: a list, a quoted string or a bare word (an
// integer, None, True, 1.5).
struct Literal {
  enum class Kind { kList, kString, kWord } kind = Kind::kWord;
  std::vector<Literal> items;  // kList
  std::string text;            // kString (unquoted), kWord
};

// Recursive descent over one list's text; errors name the list and the position.
class LiteralParser {
 public:
  LiteralParser(std::string_view text, std::string what) : text_(text), what_(std::move(what)) {}

  Result<Literal> parse_all() {
    skip_space();
    if (at_end() || text_[pos_] != '[') return error("expected a list starting with '['");
    BOO_ASSIGN_OR_RETURN(Literal list, parse_value(0));
    skip_space();
    if (!at_end()) return error("unexpected text after the list's closing ']'");
    return list;
  }

 private:
  // Nesting beyond this is no profiler record (a list of tensor lists is 3 deep).
  static constexpr int kMaxDepth = 8;

  bool at_end() const { return pos_ >= text_.size(); }
  void skip_space() {
    while (!at_end() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  Status error(const std::string& why) const {
    return invalid_argument("the " + what_ + " list '" + std::string(text_) + "': " + why + " at character " +
                            std::to_string(pos_ + 1));
  }

  Result<Literal> parse_value(int depth) {
    skip_space();
    if (at_end()) return error("unexpected end (a ']' is missing)");
    const char ch = text_[pos_];
    if (ch == '[') return parse_list(depth);
    if (ch == '\'' || ch == '"') return parse_string(ch);
    if (ch == ']' || ch == ',') return error(std::string("expected a value before '") + ch + "'");
    Literal word;
    while (!at_end() && text_[pos_] != ',' && text_[pos_] != ']' && text_[pos_] != '[' &&
           !std::isspace(static_cast<unsigned char>(text_[pos_])) && text_[pos_] != '\'' && text_[pos_] != '"')
      word.text.push_back(text_[pos_++]);
    return word;
  }

  Result<Literal> parse_list(int depth) {
    if (depth >= kMaxDepth) return error("lists nested more than " + std::to_string(kMaxDepth) + " deep");
    ++pos_;  // '['
    Literal list;
    list.kind = Literal::Kind::kList;
    skip_space();
    if (!at_end() && text_[pos_] == ']') {
      ++pos_;
      return list;
    }
    while (true) {
      BOO_ASSIGN_OR_RETURN(Literal item, parse_value(depth + 1));
      list.items.push_back(std::move(item));
      skip_space();
      if (at_end()) return error("unexpected end (a ']' is missing)");
      if (text_[pos_] == ']') {
        ++pos_;
        return list;
      }
      if (text_[pos_] != ',') return error(std::string("expected ',' or ']', found '") + text_[pos_] + "'");
      ++pos_;
      skip_space();
      if (!at_end() && text_[pos_] == ']') {  // Python's trailing comma
        ++pos_;
        return list;
      }
    }
  }

  Result<Literal> parse_string(char quote) {
    Literal s;
    s.kind = Literal::Kind::kString;
    for (++pos_; !at_end(); ++pos_) {
      const char ch = text_[pos_];
      if (ch == quote) {
        ++pos_;
        return s;
      }
      // A backslash keeps the next character (Python's repr escapes quotes and backslashes).
      s.text.push_back(ch == '\\' && pos_ + 1 < text_.size() ? text_[++pos_] : ch);
    }
    return error(std::string("unterminated string (no closing ") + quote + ")");
  }

  std::string_view text_;
  std::string what_;
  size_t pos_ = 0;
};

// The integers of a shape or strides entry.
Result<std::vector<int64_t>> int_items(const Literal& l, const std::string& what) {
  if (l.kind != Literal::Kind::kList) return invalid_argument(what + " is '" + l.text + "', expected a list of integers");
  std::vector<int64_t> out;
  for (const Literal& item : l.items) {
    if (item.kind == Literal::Kind::kList)
      return unimplemented(what + " is a list of lists (a list of tensors); boo's ATen ops take single tensors");
    Result<int64_t> v = base::parse_int(item.text);
    if (item.kind != Literal::Kind::kWord || !v.ok())
      return invalid_argument(what + " holds '" + item.text + "', expected integers");
    out.push_back(*v);
  }
  return out;
}

// Python's repr of a string (single-quoted; quotes and backslashes escaped).
std::string repr(const std::string& s) {
  std::string out = "'";
  for (char ch : s) {
    if (ch == '\'' || ch == '\\') out.push_back('\\');
    out.push_back(ch);
  }
  return out + "'";
}

std::string repr(const std::vector<int64_t>& v) { return format_dims(v); }

// `text` inside double quotes for shell_split (base/strings.hpp): ", \, $ and ` escaped.
std::string double_quoted(const std::string& text) {
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"' || ch == '\\' || ch == '$' || ch == '`') out.push_back('\\');
    out.push_back(ch);
  }
  return out + "\"";
}

constexpr const char* kListNames[4] = {"shapes", "dtypes", "strides", "concrete inputs"};

}  // namespace

bool stored_in_order(const TensorSpec& t, const std::vector<int>& order) {
  const std::vector<int64_t> dense = permuted_strides(t.shape, order);
  for (size_t d = 0; d < t.shape.size(); ++d)
    if (t.shape[d] > 1 && dense[d] != t.strides[d]) return false;
  return true;
}

std::optional<DType> float_dtype(std::string_view name) {
  if (name == "float") return DType::kF32;
  if (name == "double") return DType::kF64;
  if (name == "c10::Half") return DType::kF16;
  if (name == "c10::BFloat16") return DType::kBF16;
  return std::nullopt;
}

std::string AtenCall::command() const {
  std::string lists[4];
  for (int l = 0; l < 4; ++l) lists[l] = "[";
  for (size_t i = 0; i < args.size(); ++i) {
    const char* sep = i ? ", " : "";
    lists[0] += sep + repr(args[i].shape);
    lists[1] += sep + repr(args[i].dtype);
    lists[2] += sep + repr(args[i].strides);
    lists[3] += sep + repr(args[i].value);
  }
  std::string out = op;
  for (std::string& l : lists) out += " " + double_quoted(l + "]");
  return out;
}

std::string AtenCall::where(size_t i) const { return "argument " + std::to_string(i) + " of " + op; }

Status AtenCall::expect_arity(size_t min, size_t max, std::string_view schema) const {
  if (args.size() >= min && args.size() <= max) return ok_status();
  const std::string expected = min == max ? std::to_string(min) : std::to_string(min) + " to " + std::to_string(max);
  return invalid_argument(op + " has " + std::to_string(args.size()) + " arguments, expected " + expected + ": " +
                          std::string(schema));
}

bool AtenCall::is_none(size_t i) const {
  return i >= args.size() || (args[i].dtype.empty() && (args[i].value.empty() || args[i].value == "None"));
}

bool AtenCall::is_tensor(size_t i) const {
  if (i >= args.size()) return false;
  const std::string& d = args[i].dtype;
  return !d.empty() && d != "Scalar" && d != "ScalarList" && d != "GenericList" && d != "TensorList" &&
         d != "Device" && d != "Layout" && d != "ScalarType" && d != "MemoryFormat" && d != "str";
}

Result<TensorSpec> AtenCall::tensor(size_t i, std::string name) const {
  if (i >= args.size() || !is_tensor(i))
    return invalid_argument(where(i) + " (" + name + ") must be a tensor, got " +
                            (i >= args.size() ? std::string("nothing") : "dtype '" + args[i].dtype + "'"));
  const AtenArg& a = args[i];
  const std::optional<DType> dtype = float_dtype(a.dtype);
  if (!dtype)
    return unimplemented(where(i) + " (" + name + ") is a " + a.dtype +
                         " tensor; boo computes in float, double, c10::Half and c10::BFloat16");
  if (a.strides.size() != a.shape.size())
    return invalid_argument(where(i) + " (" + name + ") has shape " + format_dims(a.shape) + " but strides " +
                            format_dims(a.strides) + " (one stride per dimension)");
  for (size_t d = 0; d < a.shape.size(); ++d) {
    if (a.shape[d] < 0) return invalid_argument(where(i) + " (" + name + ") has a negative size in " + format_dims(a.shape));
    if (a.strides[d] < 0)
      return unimplemented(where(i) + " (" + name + ") has a negative stride in " + format_dims(a.strides) +
                           "; boo takes non-negative strides");
  }
  return TensorSpec{std::move(name), a.shape, a.strides, *dtype, ""};
}

Result<int64_t> AtenCall::integer(size_t i) const {
  if (i >= args.size()) return invalid_argument(where(i) + " is missing (an integer)");
  Result<int64_t> v = base::parse_int(args[i].value);
  if (!v.ok()) return invalid_argument(where(i) + " is '" + args[i].value + "', expected an integer");
  return *v;
}

Result<double> AtenCall::number(size_t i) const {
  if (i >= args.size()) return invalid_argument(where(i) + " is missing (a number)");
  const std::string& v = args[i].value;
  if (v == "True" || v == "False") return v == "True" ? 1.0 : 0.0;  // Python's bool is a number
  Result<double> d = base::parse_double(v);
  if (!d.ok()) return invalid_argument(where(i) + " is '" + v + "', expected a number");
  return *d;
}

Result<bool> AtenCall::boolean(size_t i) const {
  if (i >= args.size()) return invalid_argument(where(i) + " is missing (True or False)");
  const std::string& v = args[i].value;
  if (v == "True" || v == "1") return true;
  if (v == "False" || v == "0") return false;
  return invalid_argument(where(i) + " is '" + v + "', expected True or False");
}

Result<std::vector<int64_t>> AtenCall::int_list(size_t i, size_t fill) const {
  if (i >= args.size()) return invalid_argument(where(i) + " is missing (a list of integers)");
  const std::string& v = args[i].value;
  if (fill > 0) {
    if (Result<int64_t> one = base::parse_int(v); one.ok()) return std::vector<int64_t>(fill, *one);
  }
  Result<Literal> list = LiteralParser(v, where(i)).parse_all();
  if (!list.ok()) return list.status();
  return int_items(*list, where(i));
}

Result<AtenCall> parse_aten_call(std::string op, std::span<const std::string> lists) {
  if (lists.size() != 4)
    return invalid_argument(op + " takes four quoted lists after the op (shapes, dtypes, strides, concrete inputs), got " +
                            std::to_string(lists.size()));
  std::vector<Literal> parsed;
  for (int l = 0; l < 4; ++l) {
    BOO_ASSIGN_OR_RETURN(Literal list, LiteralParser(lists[l], std::string(kListNames[l]) + " (list " +
                                                                    std::to_string(l + 1) + ")")
                                           .parse_all());
    parsed.push_back(std::move(list));
  }
  const size_t n = parsed[0].items.size();
  for (int l = 1; l < 4; ++l) {
    if (parsed[l].items.size() != n) {
      std::string sizes;
      for (int k = 0; k < 4; ++k)
        sizes += (k ? ", " : "") + std::string(kListNames[k]) + " " + std::to_string(parsed[k].items.size());
      return invalid_argument(op + ": the four lists must have one entry per argument, got " + sizes);
    }
  }
  AtenCall call;
  call.op = std::move(op);
  call.args.resize(n);
  for (size_t i = 0; i < n; ++i) {
    AtenArg& a = call.args[i];
    const std::string at = call.where(i);
    BOO_ASSIGN_OR_RETURN(a.shape, int_items(parsed[0].items[i], "the shape of " + at));
    BOO_ASSIGN_OR_RETURN(a.strides, int_items(parsed[2].items[i], "the strides of " + at));
    for (int l : {1, 3}) {
      const Literal& item = parsed[static_cast<size_t>(l)].items[i];
      if (item.kind != Literal::Kind::kString)
        return invalid_argument("the " + std::string(kListNames[l]) + " entry of " + at +
                                " must be a quoted string, got " +
                                (item.kind == Literal::Kind::kList ? std::string("a list") : "'" + item.text + "'"));
      (l == 1 ? a.dtype : a.value) = item.text;
    }
  }
  return call;
}

}  // namespace boo::ops::aten
