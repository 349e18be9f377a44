// boo: the ATen ops boo replays, one file each (src/ops/aten/<op>.cpp).
//
// An ATen op reads an AtenCall (the profiler's four lists) into a signature:
// boo's own where one fits (aten::convolution is a ConvSignature,
// aten::native_layer_norm a LayerNormSignature), else an ATen signature of a
// registered op (aten_gemm for the mm family, aten_arg_reduce for
// argmax/argmin). Adding one: a file defining its AtenOp, its declaration
// below and one line in aten_registry.cpp's list. ATen ops that are not
// listed are refused by name (UNIMPLEMENTED), as the driver's skips are.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "boo/registry.hpp"
#include "ops/aten/aten_call.hpp"

namespace boo::ops::aten {

struct AtenOp {
  std::string_view name;    ///< "aten::mm"
  std::string_view schema;  ///< the arguments it reads, for messages: "mm(Tensor self, Tensor mat2)"
  /// The signature of `call` (call.op == name): INVALID_ARGUMENT for a call
  /// ATen itself would reject, UNIMPLEMENTED (naming what) for one boo does not run.
  Result<std::unique_ptr<OpSignature>> (*make_signature)(const AtenCall& call);
};

// One per file.
extern const AtenOp kMm, kBmm, kAddmm, kLinear, kBaddbmm;
extern const AtenOp kArgmax, kArgmin;
extern const AtenOp kConvolution, kConvolutionUnderscore, kCudnnConvolution;
extern const AtenOp kNativeLayerNorm, kNativeBatchNorm;
extern const AtenOp kScaledDotProductAttention, kSdpaFlash, kSdpaEfficient, kSdpaCudnn;
extern const AtenOp kSdpaFlashBackward, kSdpaEfficientBackward, kSdpaCudnnBackward;

/// Every ATen op boo replays.
std::span<const AtenOp* const> aten_ops();
const AtenOp* find_aten_op(std::string_view name);

/// Whether a command's first word is an ATen op ("aten::...").
bool is_aten_token(std::string_view token);

/// An ATen line's words (the op, its four lists, then run flags such as
/// --iter and -t): the signature its op makes, or UNIMPLEMENTED for an op
/// boo does not replay, naming it and the ones it does.
Result<ParsedCommand> parse_aten_command(std::span<const std::string> words);

}  // namespace boo::ops::aten
