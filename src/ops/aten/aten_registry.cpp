// boo: the ATen ops boo replays, one line each, and the ATen line's parser.
#include "base/strings.hpp"
#include "ops/aten/aten_op.hpp"
#include "ops/command_parse.hpp"
#include "ops/flag_table.hpp"

namespace boo::ops::aten {
namespace {

constexpr std::string_view kPrefix = "aten::";

std::string replayed_list() {
  std::string out;
  for (const AtenOp* op : aten_ops()) out += (out.empty() ? "" : ", ") + std::string(op->name);
  return out;
}

}  // namespace

std::span<const AtenOp* const> aten_ops() {
  static const AtenOp* const kOps[] = {
      &kMm,          &kBmm,      &kAddmm,  &kLinear, &kBaddbmm, &kArgmax, &kArgmin, &kConvolution,
      &kConvolutionUnderscore, &kCudnnConvolution, &kNativeLayerNorm, &kNativeBatchNorm,
      &kScaledDotProductAttention, &kSdpaFlash, &kSdpaEfficient, &kSdpaCudnn,
      &kSdpaFlashBackward, &kSdpaEfficientBackward, &kSdpaCudnnBackward,
  };
  return kOps;
}

const AtenOp* find_aten_op(std::string_view name) {
  for (const AtenOp* op : aten_ops())
    if (op->name == name) return op;
  return nullptr;
}

bool is_aten_token(std::string_view token) { return base::starts_with(token, kPrefix); }

Result<ParsedCommand> parse_aten_command(std::span<const std::string> words) {
  const std::string& token = words.front();
  const AtenOp* op = find_aten_op(token);
  if (!op)
    return unimplemented("unsupported op '" + token + "': boo does not replay this ATen op yet (replayed: " +
                         replayed_list() + ")");
  // The four lists, then the run flags every op shares (--iter, -t, ...).
  const size_t lists = std::min<size_t>(4, words.size() - 1);
  for (size_t i = 1; i <= lists; ++i) {
    if (base::starts_with(words[i], "-"))
      return invalid_argument(token + " takes four quoted lists (shapes, dtypes, strides, concrete inputs) before "
                              "any flag; found '" + words[i] + "' as list " + std::to_string(i));
  }
  BOO_ASSIGN_OR_RETURN(AtenCall call, parse_aten_call(token, words.subspan(1, lists)));
  BOO_ASSIGN_OR_RETURN(ParsedFlags flags, parse_flags(common_run_flags(), words.subspan(1 + lists), token));
  if (flags.given("help"))
    return invalid_argument(std::string(op->name) + " \"<shapes>\" \"<dtypes>\" \"<strides>\" \"<concrete inputs>\": " +
                            std::string(op->schema) + "\n" + format_flag_help(common_run_flags(), token));
  ParsedCommand parsed;
  BOO_ASSIGN_OR_RETURN(parsed.run, read_run_options(flags));
  BOO_ASSIGN_OR_RETURN(parsed.signature, op->make_signature(call));
  parsed.ignored_flags = flags.given_without_effect();
  return parsed;
}

}  // namespace boo::ops::aten
