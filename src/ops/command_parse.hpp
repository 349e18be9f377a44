// boo: what parse_command (boo/registry.hpp) knows about op tokens.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "boo/registry.hpp"
#include "boo/status.hpp"
#include "boo/tensor.hpp"
#include "ops/op_definition.hpp"

namespace boo::ops {

/// The op a command's first word selects, and the element type it names.
struct OpTokenMatch {
  const OpDefinition* op = nullptr;  ///< never null in a returned match
  DType dtype = DType::kF32;
};

/// The op and element type of `token` ("convbfp16"). Errors list the supported
/// tokens: kUnimplemented for a token that starts with one of
/// known_unsupported_op_prefixes(), kInvalidArgument for any other unknown token.
Result<OpTokenMatch> op_for_token(std::string_view token);

/// --iter and --time of parsed flags (common_run_flags()).
Result<RunOptions> read_run_options(const ParsedFlags& flags);

/// Every tensor of `sig` (arguments and results) within boo's per-tensor limit
/// (base::kMaxTensorElements) in elements and in storage extent: one check for
/// every op, whatever its own validate() computes, so that no size, stride or
/// offset the references and kernels form can overflow.
Status check_tensor_limits(const OpSignature& sig);

/// How many leading words of a command are run flags (--iter 4, -i=4, --time 0:
/// common_run_flags() with their values) standing before the op token, as BOO's
/// driver allows ('--iter 1 conv'); 0 when the command starts with anything else.
size_t run_flag_prefix_length(std::span<const std::string> words);

/// Prefixes of MIOpenDriver's and BOO's op tokens that no registered op
/// implements ("gemm", "bnorm", "aten::", ...): a command with one is a skip
/// (kUnimplemented), not a parse error.
std::span<const std::string_view> known_unsupported_op_prefixes();

}  // namespace boo::ops
