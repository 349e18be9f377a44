// boo: aten::convolution, aten::_convolution and aten::cudnn_convolution as
// boo's ConvSignature (the conv op runs them: its tiers, reference and cuDNN
// baseline). Each tensor's strides must be a dense layout (a permutation of
// NC + spatial dims, which is how PyTorch's contiguous and channels_last
// tensors are stored); the output takes the input's layout (PyTorch's
// suggested memory format).
#include <algorithm>

#include "boo/conv.hpp"
#include "ops/aten/aten_op.hpp"
#include "ops/conv/conv_layout.hpp"

namespace boo::ops::aten {
namespace {

// The conv layout ("NCHW", "NHWC", ...) whose dense strides are `t`'s: the default first.
Result<std::string> layout_of(const TensorSpec& t, int spatial_dims, const AtenCall& call) {
  const std::string def = default_conv_layout(spatial_dims);
  std::string letters = def;
  std::sort(letters.begin(), letters.end());
  std::vector<std::string> candidates{def};
  do {
    if (letters != def) candidates.push_back(letters);
  } while (std::next_permutation(letters.begin(), letters.end()));
  for (const std::string& layout : candidates) {
    if (stored_in_order(t, conv::layout_order(layout))) return layout;
  }
  return unimplemented(call.op + ": " + t.name + " " + format_dims(t.shape) + " has strides " + format_dims(t.strides) +
                       ", which are no dense layout (a permutation of " + def +
                       "); boo's conv takes dense layouts only");
}

// Where each argument of a conv schema is.
struct ConvArgs {
  size_t bias;  // SIZE_MAX: the schema has none
  size_t stride, padding, dilation, transposed, output_padding, groups;
  size_t allow_tf32;  // SIZE_MAX: the schema has none
};

constexpr size_t kNone = static_cast<size_t>(-1);

Result<std::unique_ptr<OpSignature>> map(const AtenCall& call, const ConvArgs& at) {
  BOO_ASSIGN_OR_RETURN(TensorSpec input, call.tensor(0, "input"));
  BOO_ASSIGN_OR_RETURN(TensorSpec weight, call.tensor(1, "weight"));
  if (input.dtype == DType::kF64)
    return unimplemented(call.op + " in double: boo's conv computes in float, c10::Half and c10::BFloat16");
  if (input.rank() < 3 || input.rank() > 5 || weight.rank() != input.rank())
    return invalid_argument(call.op + ": input " + format_dims(input.shape) + " and weight " +
                            format_dims(weight.shape) + " must both be 3-D, 4-D or 5-D (1-3 spatial dims)");
  if (weight.dtype != input.dtype)
    return invalid_argument(call.op + ": input is " + std::string(dtype_name(input.dtype)) + ", weight " +
                            std::string(dtype_name(weight.dtype)) + " (one dtype)");
  const int spatial = input.rank() - 2;
  const size_t dims = static_cast<size_t>(spatial);
  auto auto_sig = std::make_unique<ConvSignature>();
  ConvSignature& sig = *auto_sig;
  sig.spatial_dims = spatial;
  sig.dtype = input.dtype;
  sig.n = input.shape[0];
  sig.c = input.shape[1];
  sig.input_size.assign(input.shape.begin() + 2, input.shape.end());
  sig.filter_size.assign(weight.shape.begin() + 2, weight.shape.end());
  BOO_ASSIGN_OR_RETURN(sig.stride, call.int_list(at.stride, dims));
  BOO_ASSIGN_OR_RETURN(sig.padding, call.int_list(at.padding, dims));
  BOO_ASSIGN_OR_RETURN(sig.dilation, call.int_list(at.dilation, dims));
  BOO_ASSIGN_OR_RETURN(sig.groups, call.integer(at.groups));
  sig.output_padding.assign(dims, 0);
  if (at.transposed != kNone) {
    BOO_ASSIGN_OR_RETURN(sig.transposed, call.boolean(at.transposed));
    BOO_ASSIGN_OR_RETURN(sig.output_padding, call.int_list(at.output_padding, dims));
  }
  for (const auto& [v, name] : {std::pair{&sig.stride, "stride"}, {&sig.padding, "padding"},
                                {&sig.dilation, "dilation"}, {&sig.output_padding, "output_padding"}}) {
    if (v->size() != dims)
      return invalid_argument(call.op + ": " + name + " " + format_dims(*v) + " needs " + std::to_string(dims) +
                              " entries (one per spatial dim)");
  }
  if (sig.groups < 1) return invalid_argument(call.op + ": groups " + std::to_string(sig.groups) + " must be positive");
  // Weight: [K, C/g, ...] regular, [C, K/g, ...] transposed.
  sig.k = sig.transposed ? weight.shape[1] * sig.groups : weight.shape[0];
  if (at.allow_tf32 != kNone && input.dtype == DType::kF32) {
    BOO_ASSIGN_OR_RETURN(sig.fp32_tf32, call.boolean(at.allow_tf32));
  }
  if (at.bias != kNone && !call.is_none(at.bias)) {
    BOO_ASSIGN_OR_RETURN(TensorSpec bias, call.tensor(at.bias, "bias"));
    if (bias.shape != std::vector<int64_t>{sig.k} || (sig.k > 1 && bias.strides[0] != 1))
      return unimplemented(call.op + ": bias " + format_dims(bias.shape) + " strides " + format_dims(bias.strides) +
                           "; boo's conv takes a contiguous bias of the " + std::to_string(sig.k) + " output channels");
    sig.bias = true;
  }
  BOO_ASSIGN_OR_RETURN(sig.input_layout, layout_of(input, spatial, call));
  BOO_ASSIGN_OR_RETURN(sig.filter_layout, layout_of(weight, spatial, call));
  sig.output_layout = sig.input_layout;
  BOO_RETURN_IF_ERROR(sig.validate());
  // The signature's tensors must be the call's (a weight whose channel count disagrees with groups, ...).
  for (const auto& [mine, theirs] : {std::pair{sig.x_spec(), &input}, {sig.w_spec(), &weight}}) {
    if (mine.shape != theirs->shape)
      return invalid_argument(call.op + ": " + theirs->name + " " + format_dims(theirs->shape) + " does not fit the conv (" +
                              sig.command() + " expects " + format_dims(mine.shape) + ")");
  }
  return std::unique_ptr<OpSignature>(std::move(auto_sig));
}

Result<std::unique_ptr<OpSignature>> make_convolution(const AtenCall& call) {
  BOO_RETURN_IF_ERROR(call.expect_arity(9, 9, kConvolution.schema));
  return map(call, {2, 3, 4, 5, 6, 7, 8, kNone});
}

Result<std::unique_ptr<OpSignature>> make_convolution_underscore(const AtenCall& call) {
  BOO_RETURN_IF_ERROR(call.expect_arity(12, 13, kConvolutionUnderscore.schema));
  return map(call, {2, 3, 4, 5, 6, 7, 8, call.args.size() == 13 ? size_t{12} : kNone});
}

Result<std::unique_ptr<OpSignature>> make_cudnn_convolution(const AtenCall& call) {
  BOO_RETURN_IF_ERROR(call.expect_arity(9, 9, kCudnnConvolution.schema));
  return map(call, {kNone, 3, 2, 4, kNone, kNone, 5, 8});
}

}  // namespace

const AtenOp kConvolution{"aten::convolution",
                          "convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, "
                          "int[] dilation, bool transposed, int[] output_padding, int groups)",
                          &make_convolution};
const AtenOp kConvolutionUnderscore{
    "aten::_convolution",
    "_convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, "
    "bool transposed, int[] output_padding, int groups, bool benchmark, bool deterministic, bool cudnn_enabled[, "
    "bool allow_tf32])",
    &make_convolution_underscore};
const AtenOp kCudnnConvolution{"aten::cudnn_convolution",
                               "cudnn_convolution(Tensor self, Tensor weight, int[] padding, int[] stride, "
                               "int[] dilation, int groups, bool benchmark, bool deterministic, bool allow_tf32)",
                               &make_cudnn_convolution};

}  // namespace boo::ops::aten
