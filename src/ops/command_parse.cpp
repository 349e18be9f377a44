// boo: command lines (MIOpenDriver's language) to signatures: the op token, the
// op's flag table plus the run flags every op shares.
#include "ops/command_parse.hpp"

#include <algorithm>

#include "base/checked_int.hpp"
#include "base/strings.hpp"
#include "boo/registry.hpp"
#include "ops/aten/aten_op.hpp"
#include "ops/op_registry.hpp"

namespace boo::ops {
namespace {

// Op tokens of MIOpenDriver and BOO's driver that boo does not implement (yet).
// A registered op's tokens must match none of these (tests check).
constexpr std::string_view kKnownUnsupportedPrefixes[] = {
    "convint8", "convfp8", "convbfp8", "convfp32", "CBAInfer", "CAInfer", "pool", "lrn", "activ", "softmax",
    "rnn", "ctc", "dropout", "tensorop", "reduce", "sum", "cat",
    "adam", "ampadam", "adamw", "ampadamw", "transformersadamw", "transformersampadamw", "reduceextreme",
    "getitem", "reducecalculation", "rope", "prelu", "kthvalue", "glu", "softmarginloss", "multimarginloss",
    "aten::",
};

std::string supported_list() {
  std::string out;
  for (const std::string& t : supported_op_tokens()) out += (out.empty() ? "" : ", ") + t;
  return out;
}

}  // namespace

Result<RunOptions> read_run_options(const ParsedFlags& flags) {
  RunOptions run;
  BOO_ASSIGN_OR_RETURN(run.iterations, flags.integer("iter"));
  if (run.iterations < 1)
    return invalid_argument("--iter/-i must be at least 1, got " + std::to_string(run.iterations));
  BOO_ASSIGN_OR_RETURN(int64_t time, flags.integer("time"));
  run.time = time != 0;
  return run;
}

namespace {

// Drops what precedes the op token: logged commands start with the driver's
// path, sometimes after a log prefix
// ("MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver conv ...").
std::vector<std::string> without_driver_prefix(std::vector<std::string> words) {
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string_view word = words[i];
    const size_t slash = word.find_last_of('/');
    const std::string_view base_name = slash == std::string_view::npos ? word : word.substr(slash + 1);
    const bool driver = base_name == "MIOpenDriver" || base_name == "MIOpenDriver.exe";
    const bool ours = i == 0 && (base_name == "boo-driver" || base_name == "iree-boo-driver");
    if (driver || ours) {
      words.erase(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      break;
    }
  }
  return words;
}

// Moves the op token to the front when run flags precede it: BOO's driver
// reads --iter/--time wherever they stand ('--iter 1 conv -n 4').
std::vector<std::string> op_token_first(std::vector<std::string> words) {
  const size_t prefix = run_flag_prefix_length(words);
  if (prefix == 0 || prefix >= words.size()) return words;
  std::rotate(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(prefix),
              words.begin() + static_cast<std::ptrdiff_t>(prefix) + 1);
  return words;
}

}  // namespace

size_t run_flag_prefix_length(std::span<const std::string> words) {
  size_t i = 0;
  while (i < words.size()) {
    const std::string& word = words[i];
    if (!base::starts_with(word, "-") || word.size() < 2) break;
    const bool long_form = base::starts_with(word, "--");
    const size_t equals = word.find('=');
    const std::string_view name = std::string_view(word).substr(long_form ? 2 : 1, equals == std::string::npos
                                                                                    ? std::string::npos
                                                                                    : equals - (long_form ? 2 : 1));
    const FlagSpec* spec = nullptr;
    for (const FlagSpec& f : common_run_flags())
      if (long_form ? name == f.long_name : (name.size() == 1 && name[0] == f.short_name)) spec = &f;
    // --help before the op is the driver's; a run flag needs its value.
    if (!spec || spec->long_name == "help") break;
    i += equals == std::string::npos ? 2 : 1;
  }
  return std::min(i, words.size());
}

std::span<const std::string_view> known_unsupported_op_prefixes() { return kKnownUnsupportedPrefixes; }

Result<OpTokenMatch> op_for_token(std::string_view token) {
  for (const OpDefinition* op : all_ops())
    for (const OpToken& t : op->tokens())
      if (t.token == token) return OpTokenMatch{op, t.dtype};
  for (std::string_view prefix : kKnownUnsupportedPrefixes) {
    if (base::starts_with(token, prefix))
      return unimplemented("unsupported op '" + base::echo_word(token) + "': boo does not implement it yet (supported: " +
                           supported_list() + ")");
  }
  return invalid_argument("unknown op '" + base::echo_word(token) + "': expected one of " + supported_list());
}

std::span<const FlagSpec> common_run_flags() {
  static const FlagSpec kFlags[] = {
      {"iter", 'i', "100", "timed iterations (BOO's default 100)"},
      {"time", 't', "1", "1 = time the kernels, 0 = run untimed"},
      {"verify", 'V', "1", "MIOpenDriver's verification switch; boo verifies with --verify-numerics", 1, true},
      {"wall", 'w', "0", "MIOpenDriver's wall-clock timing; boo reports GPU kernel times", 1, true},
      {"help", 'h', "", "print this table", 1},
  };
  return kFlags;
}

}  // namespace boo::ops

namespace boo {

std::vector<std::string> supported_op_tokens() {
  std::vector<std::string> out;
  for (const ops::OpDefinition* op : ops::all_ops())
    for (const ops::OpToken& t : op->tokens()) out.emplace_back(t.token);
  return out;
}

Result<std::string> op_help(std::string_view op_token) {
  BOO_ASSIGN_OR_RETURN(const ops::OpTokenMatch match, ops::op_for_token(op_token));
  return ops::format_flag_help(match.op->flags(), op_token);
}

Status ops::check_tensor_limits(const OpSignature& sig) {
  std::vector<TensorSpec> specs = sig.arguments();
  for (TensorSpec& t : sig.results()) specs.push_back(std::move(t));
  for (const TensorSpec& t : specs) {
    base::CheckedInt elements = 1, extent = 1;
    for (size_t d = 0; d < t.shape.size(); ++d) {
      elements *= t.shape[d];
      if (d < t.strides.size() && t.shape[d] > 0) extent += (base::CheckedInt(t.shape[d]) - 1) * t.strides[d];
    }
    if (!elements.ok() || elements.value() > base::kMaxTensorElements || !extent.ok() ||
        extent.value() > base::kMaxTensorElements)
      return invalid_argument(std::string(sig.op_name()) + ": tensor '" + t.name + "' of shape [" +
                              base::join_ints(t.shape, ", ") + "] would span more than " +
                              base::max_tensor_elements_text() + " elements, boo's limit per tensor");
  }
  return ok_status();
}

Result<ParsedCommand> parse_command(const std::vector<std::string>& words_in) {
  const std::vector<std::string> words = ops::op_token_first(ops::without_driver_prefix(words_in));
  if (words.empty()) return invalid_argument("empty command: expected an op such as conv or layernormbfp16");
  if (ops::run_flag_prefix_length(words) == words.size())
    return invalid_argument("no op in '" + base::echo_word(base::shell_join(words)) +
                            "': run flags (--iter, --time) need an op such as conv or layernormbfp16");
  const std::string& token = words.front();
  // ATen lines carry four positional lists, not flags (ops/aten/aten_op.hpp).
  if (ops::aten::is_aten_token(token)) {
    BOO_ASSIGN_OR_RETURN(ParsedCommand aten, ops::aten::parse_aten_command(words));
    BOO_RETURN_IF_ERROR(ops::check_tensor_limits(*aten.signature));
    return aten;
  }
  BOO_ASSIGN_OR_RETURN(const ops::OpTokenMatch match, ops::op_for_token(token));
  std::span<const std::string> flag_words(words.data() + 1, words.size() - 1);
  BOO_ASSIGN_OR_RETURN(ops::ParsedFlags flags, ops::parse_flags(match.op->flags(), flag_words, token));
  if (flags.given("help")) return invalid_argument(ops::format_flag_help(match.op->flags(), token));
  ParsedCommand parsed;
  BOO_ASSIGN_OR_RETURN(parsed.run, ops::read_run_options(flags));
  BOO_ASSIGN_OR_RETURN(parsed.signature, match.op->make_signature(match.dtype, flags));
  BOO_RETURN_IF_ERROR(ops::check_tensor_limits(*parsed.signature));
  parsed.ignored_flags = flags.given_without_effect();
  return parsed;
}

Result<ParsedCommand> parse_command(std::string_view line) {
  BOO_ASSIGN_OR_RETURN(std::vector<std::string> words, base::shell_split(line));
  return parse_command(words);
}

}  // namespace boo
