// boo: signatures built from typed fields (see signature_fields.hpp).
#include "ops/signature_fields.hpp"

#include <algorithm>

#include "base/strings.hpp"
#include "ops/command_parse.hpp"
#include "ops/conv/conv_layout.hpp"
#include "ops/norm/norm_layout.hpp"

namespace boo::ops {
namespace {

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string text = "(";  // appended, not "(" + ...: GCC 12 warns (-Wrestrict) on that temporary
  text += base::join_ints(dims, ", ");
  text += ")";
  return text;
}

Status check_dtype(DType dtype, const char* op) {
  if (dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16) return ok_status();
  return invalid_argument(std::string(op) + ": dtype " + std::string(dtype_name(dtype)) +
                          " is not supported; boo takes float32, float16 and bfloat16");
}

// One value per spatial dimension from `given` (one per dimension, or one for all; empty: `fallback`).
Result<std::vector<int64_t>> per_dimension(const std::vector<int64_t>& given, size_t spatial, int64_t fallback,
                                           const char* name) {
  if (given.empty()) return std::vector<int64_t>(spatial, fallback);
  if (given.size() == 1) return std::vector<int64_t>(spatial, given[0]);
  if (given.size() != spatial)
    return invalid_argument(std::string("conv: ") + name + " " + dims_text(given) + " has " +
                            std::to_string(given.size()) + " entries for a " + std::to_string(spatial) +
                            "-D convolution; give one per spatial dimension, or one for all");
  return given;
}

Status check_positive_dims(const std::vector<int64_t>& shape, const char* op, const char* what) {
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 1)
      return invalid_argument(std::string(op) + ": " + what + " " + dims_text(shape) + " has dimension " +
                              std::to_string(i) + " = " + std::to_string(shape[i]) + "; every size must be positive");
  }
  return ok_status();
}

// The first normalized axis of a norm over the trailing `normalized_shape` of `input_shape`.
Result<int> first_normalized_axis(const std::vector<int64_t>& input_shape,
                                  const std::vector<int64_t>& normalized_shape, const char* op) {
  BOO_RETURN_IF_ERROR(check_positive_dims(input_shape, op, "input_shape"));
  if (input_shape.empty()) return invalid_argument(std::string(op) + ": input_shape needs at least one dimension");
  const size_t rank = input_shape.size(), normalized = normalized_shape.size();
  if (normalized == 0 || normalized > rank ||
      !std::equal(normalized_shape.begin(), normalized_shape.end(), input_shape.end() - static_cast<long>(normalized)))
    return invalid_argument(std::string(op) + ": normalized_shape " + dims_text(normalized_shape) +
                            " must be 1 to " + std::to_string(rank) + " trailing dimensions of input_shape " +
                            dims_text(input_shape));
  return static_cast<int>(rank - normalized);
}

}  // namespace

Result<std::unique_ptr<ConvSignature>> conv_signature_from_fields(const ConvFields& f) {
  BOO_RETURN_IF_ERROR(check_dtype(f.dtype, "conv"));
  const size_t rank = f.input_shape.size();
  if (rank < 3 || rank > 5)
    return invalid_argument("conv: input_shape " + dims_text(f.input_shape) +
                            " must have 3 to 5 dimensions: (N, C, spatial...) for a 1-D to 3-D convolution");
  if (f.weight_shape.size() != rank)
    return invalid_argument("conv: weight_shape " + dims_text(f.weight_shape) + " must have the rank of input_shape " +
                            dims_text(f.input_shape) + " (" + std::to_string(rank) + " dimensions)");
  BOO_RETURN_IF_ERROR(check_positive_dims(f.input_shape, "conv", "input_shape"));
  BOO_RETURN_IF_ERROR(check_positive_dims(f.weight_shape, "conv", "weight_shape"));
  if (f.groups < 1) return invalid_argument("conv: groups must be positive, got " + std::to_string(f.groups));
  const size_t spatial = rank - 2;

  auto sig = std::make_unique<ConvSignature>();
  sig->dtype = f.dtype;
  sig->spatial_dims = static_cast<int>(spatial);
  sig->n = f.input_shape[0];
  sig->c = f.input_shape[1];
  sig->groups = f.groups;
  sig->transposed = f.transposed;
  // The weight's first two dimensions: (K, C/groups), transposed (C, K/groups).
  const int64_t per_group_channels = f.transposed ? f.weight_shape[0] : f.weight_shape[1] * f.groups;
  if (per_group_channels != sig->c)
    return invalid_argument(
        "conv: weight_shape " + dims_text(f.weight_shape) + " does not fit input_shape " + dims_text(f.input_shape) +
        " with groups=" + std::to_string(f.groups) + ": " +
        (f.transposed ? "a transposed weight is (C, K/groups, filter...), so its first dimension must be C = "
                      : "the weight is (K, C/groups, filter...), so its second dimension times groups must be C = ") +
        std::to_string(sig->c));
  sig->k = f.transposed ? f.weight_shape[1] * f.groups : f.weight_shape[0];
  sig->input_size.assign(f.input_shape.begin() + 2, f.input_shape.end());
  sig->filter_size.assign(f.weight_shape.begin() + 2, f.weight_shape.end());
  BOO_ASSIGN_OR_RETURN(sig->stride, per_dimension(f.stride, spatial, 1, "stride"));
  BOO_ASSIGN_OR_RETURN(sig->padding, per_dimension(f.padding, spatial, 0, "padding"));
  BOO_ASSIGN_OR_RETURN(sig->dilation, per_dimension(f.dilation, spatial, 1, "dilation"));
  BOO_ASSIGN_OR_RETURN(sig->output_padding, per_dimension(f.output_padding, spatial, 0, "output_padding"));

  const std::string default_layout = default_conv_layout(sig->spatial_dims);
  sig->input_layout = f.input_layout.empty() ? default_layout : base::to_upper(f.input_layout);
  sig->filter_layout = f.weight_layout.empty() ? default_layout : base::to_upper(f.weight_layout);
  sig->output_layout = f.output_layout.empty() ? sig->input_layout : base::to_upper(f.output_layout);
  BOO_RETURN_IF_ERROR(conv::check_layout(sig->input_layout, sig->spatial_dims, "conv: input_layout"));
  BOO_RETURN_IF_ERROR(conv::check_layout(sig->filter_layout, sig->spatial_dims, "conv: weight_layout"));
  BOO_RETURN_IF_ERROR(conv::check_layout(sig->output_layout, sig->spatial_dims, "conv: output_layout"));

  sig->directions = f.directions;
  sig->bias = f.bias;
  const bool backward = f.directions & (kConvBackwardData | kConvBackwardWeight);
  if ((f.directions & kConvForward) && backward && f.bias != bool(f.directions & kConvBackwardBias))
    return invalid_argument(
        "conv: a signature with forward and backward directions has the bias in both or in neither: with bias, "
        "add the bias gradient (BACKWARD_BIAS) to the directions; without, leave it out");
  sig->residual = f.residual;
  sig->activation = f.activation;
  sig->fp32_tf32 = f.fp32_tf32;
  BOO_RETURN_IF_ERROR(sig->validate());
  BOO_RETURN_IF_ERROR(check_tensor_limits(*sig));
  return sig;
}

Result<std::unique_ptr<LayerNormSignature>> layer_norm_signature_from_fields(const LayerNormFields& f) {
  BOO_RETURN_IF_ERROR(check_dtype(f.dtype, "layer_norm"));
  BOO_ASSIGN_OR_RETURN(int normalized_dim, first_normalized_axis(f.input_shape, f.normalized_shape, "layer_norm"));
  if (f.bias && !f.weight)
    return invalid_argument("layer_norm: a bias needs a weight (boo's layer norm, as MIOpen's -m 1, pairs them)");
  auto sig = std::make_unique<LayerNormSignature>();
  sig->dtype = f.dtype;
  sig->input_shape = f.input_shape;
  sig->normalized_dim = normalized_dim;
  sig->eps = f.eps;
  sig->weight = f.weight;
  sig->bias = f.bias;
  sig->directions = f.directions;
  sig->input_permutation = f.input_permutation;
  sig->use_aten = f.use_aten;
  BOO_RETURN_IF_ERROR(sig->validate());
  BOO_RETURN_IF_ERROR(check_tensor_limits(*sig));
  if (!sig->permuted()) sig->input_permutation.clear();  // the identity is the default, as parsed
  return sig;
}

Result<std::unique_ptr<RmsNormSignature>> rms_norm_signature_from_fields(const RmsNormFields& f) {
  BOO_RETURN_IF_ERROR(check_dtype(f.dtype, "rms_norm"));
  BOO_ASSIGN_OR_RETURN(int normalized_dim, first_normalized_axis(f.input_shape, f.normalized_shape, "rms_norm"));
  const uint8_t backward = f.weight ? (kRmsNormBackwardData | kRmsNormBackwardWeight) : kRmsNormBackwardData;
  const uint8_t asked_backward = f.directions & ~kRmsNormForward;
  if (f.directions == 0 || (f.directions & ~(kRmsNormForward | backward)) != 0 ||
      (asked_backward != 0 && asked_backward != backward))
    return invalid_argument(std::string("rms_norm: directions ") + std::to_string(f.directions) +
                            " are not a mode: FORWARD and/or the backward, which is " +
                            (f.weight ? "BACKWARD_DATA | BACKWARD_WEIGHT with a weight (one kernel computes both)"
                                      : "BACKWARD_DATA without a weight"));
  auto sig = std::make_unique<RmsNormSignature>();
  sig->dtype = f.dtype;
  sig->input_shape = f.input_shape;
  sig->normalized_dim = normalized_dim;
  sig->eps = f.eps;
  sig->weight = f.weight;
  sig->directions = f.directions;
  BOO_RETURN_IF_ERROR(sig->validate());
  BOO_RETURN_IF_ERROR(check_tensor_limits(*sig));
  return sig;
}

namespace {

// `layout` upper-cased, or the logical order of `rank` when empty; INVALID_ARGUMENT naming `what` where it is
// not a permutation of the rank's dims.
Result<std::string> norm_layout(const std::string& layout, size_t rank, const std::string& what) {
  const int r = static_cast<int>(rank);
  std::string out = layout.empty() ? std::string(norm::logical_layout(r)) : base::to_upper(layout);
  BOO_RETURN_IF_ERROR(norm::layout_order(out, r, what).status());
  return out;
}

}  // namespace

Result<std::unique_ptr<BatchNormSignature>> batch_norm_signature_from_fields(const BatchNormFields& f) {
  BOO_RETURN_IF_ERROR(check_dtype(f.dtype, "batch_norm"));
  const size_t rank = f.input_shape.size();
  if (rank != 4 && rank != 5)
    return invalid_argument("batch_norm: input_shape " + dims_text(f.input_shape) +
                            " must have 4 or 5 dimensions: (N, C, H, W) or (N, C, D, H, W)");
  BOO_RETURN_IF_ERROR(check_positive_dims(f.input_shape, "batch_norm", "input_shape"));
  if (f.mixed && f.dtype == DType::kF32)
    return invalid_argument("batch_norm: mixed (16-bit data and scale/bias with float32 gradients, MIOpen's "
                            "bnormfp16fp32 and bnormbfp16fp32) needs dtype float16 or bfloat16, not float32");
  auto sig = std::make_unique<BatchNormSignature>();
  sig->dtype = f.dtype;
  sig->param_dtype = f.mixed ? f.dtype : DType::kF32;
  sig->grad_dtype = f.mixed ? DType::kF32 : f.dtype;
  sig->input_shape = f.input_shape;
  BOO_ASSIGN_OR_RETURN(sig->layout, norm_layout(f.layout, rank, "batch_norm: layout"));
  sig->mode = f.mode;
  sig->pass = f.pass;
  sig->save = f.save;
  sig->running = f.running;
  sig->eps = f.eps;
  sig->momentum = f.momentum;
  BOO_RETURN_IF_ERROR(sig->validate());
  BOO_RETURN_IF_ERROR(check_tensor_limits(*sig));
  return sig;
}

Result<std::unique_ptr<GroupNormSignature>> group_norm_signature_from_fields(const GroupNormFields& f) {
  BOO_RETURN_IF_ERROR(check_dtype(f.dtype, "group_norm"));
  const size_t rank = f.input_shape.size();
  if (rank < 3 || rank > 5)
    return invalid_argument("group_norm: input_shape " + dims_text(f.input_shape) +
                            " must have 3 to 5 dimensions: (N, C, W), (N, C, H, W) or (N, C, D, H, W)");
  BOO_RETURN_IF_ERROR(check_positive_dims(f.input_shape, "group_norm", "input_shape"));
  if (f.groups < 1 || f.input_shape[1] % f.groups != 0)
    return invalid_argument("group_norm: groups " + std::to_string(f.groups) + " must be positive and divide the " +
                            std::to_string(f.input_shape[1]) + " channels of input_shape " +
                            dims_text(f.input_shape));
  auto sig = std::make_unique<GroupNormSignature>();
  sig->dtype = f.dtype;
  sig->input_shape = f.input_shape;
  sig->groups = f.groups;
  sig->eps = f.eps;
  sig->affine = f.affine;
  sig->directions = f.directions;
  BOO_ASSIGN_OR_RETURN(sig->layout, norm_layout(f.layout, rank, "group_norm: layout"));
  BOO_RETURN_IF_ERROR(sig->validate());
  BOO_RETURN_IF_ERROR(check_tensor_limits(*sig));
  return sig;
}

}  // namespace boo::ops
