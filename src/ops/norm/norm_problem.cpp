// boo: NormProblem from a norm signature.
#include "ops/norm/norm_problem.hpp"

namespace boo::ops::norm {
namespace {

// Row-major in every dim longer than 1 (the strides of others never matter:
// NHWC with C = 1 is NCHW's order).
bool row_major(const TensorSpec& t) {
  const std::vector<int64_t> dense = contiguous_strides(t.shape);
  for (size_t d = 0; d < t.shape.size(); ++d)
    if (t.shape[d] > 1 && t.strides[d] != dense[d]) return false;
  return true;
}

}  // namespace

NormProblem::NormProblem(const NormSignature& sig)
    : OpProblem(sig),
      kind(sig.kind()),
      dtype(sig.dtype),
      rows(sig.rows()),
      cols(sig.row_length()),
      eps(sig.eps),
      weight(sig.weight),
      bias(sig.bias),
      fused_add(sig.fused_add),
      forward(sig.directions & kNormForward),
      dx(sig.directions & kNormBackwardData),
      dweight(sig.directions & kNormBackwardWeight),
      dbias(sig.directions & kNormBackwardBias),
      x(sig.x_spec()),
      contiguous(row_major(x)),
      strided_like_x(!contiguous && !sig.layout.empty()) {}

NormProblem::NormProblem(const BatchNormSignature& sig)
    : OpProblem(sig),
      kind(NormKind::kBatch),
      dtype(sig.dtype),
      eps(sig.eps),
      weight(true),
      bias(sig.pass != BatchNormPass::kBackward),
      forward(sig.pass != BatchNormPass::kBackward),
      dx(sig.pass == BatchNormPass::kBackward),
      dweight(dx),
      dbias(dx),
      x(sig.x_spec("x", sig.dtype)),
      contiguous(row_major(x)),
      pass(sig.pass),
      save(sig.save),
      running(sig.running),
      momentum(sig.momentum),
      param_dtype(sig.param_dtype),
      grad_dtype(sig.grad_dtype) {
  const int64_t n = sig.input_shape[0], c = sig.input_shape[1];
  int64_t spatial = 1;
  for (size_t d = 2; d < sig.input_shape.size(); ++d) spatial *= sig.input_shape[d];
  const bool channels_last = sig.layout.back() == 'C';
  if (!sig.spatial()) {
    outer = n, channels = c * spatial, inner = 1;
  } else if (channels_last) {
    outer = n * spatial, channels = c, inner = 1;
  } else {
    outer = n, channels = c, inner = spatial;
  }
  rows = outer;
  cols = channels * inner;
}

NormProblem::NormProblem(const GroupNormSignature& sig)
    : OpProblem(sig),
      kind(NormKind::kGroup),
      dtype(sig.dtype),
      rows(sig.input_shape[0] * sig.groups),
      cols(sig.group_size()),
      eps(sig.eps),
      weight(sig.affine),
      bias(sig.affine),
      forward(sig.directions & kNormForward),
      dx(sig.directions & kNormBackwardData),
      dweight(sig.directions & kNormBackwardWeight),
      dbias(sig.directions & kNormBackwardBias),
      x(sig.x_spec("x")),
      contiguous(row_major(x)),
      strided_like_x(true),
      outer(sig.input_shape[0]),
      channels(sig.input_shape[1]),
      inner(sig.spatial_size()),
      param_dtype(sig.dtype),
      grad_dtype(sig.dtype),
      groups(sig.groups),
      channels_last(inner == 1 || (channels > 1 && sig.layout.back() == 'C')) {}

Result<std::unique_ptr<OpProblem>> make_norm_problem(const OpSignature& sig, NormKind kind) {
  if (kind == NormKind::kBatch) {
    const auto* batch = dynamic_cast<const BatchNormSignature*>(&sig);
    if (!batch) return internal_error("batchnorm was given another op's signature");
    return std::unique_ptr<OpProblem>(std::make_unique<NormProblem>(*batch));
  }
  if (kind == NormKind::kGroup) {
    const auto* group = dynamic_cast<const GroupNormSignature*>(&sig);
    if (!group) return internal_error("groupnorm was given another op's signature");
    return std::unique_ptr<OpProblem>(std::make_unique<NormProblem>(*group));
  }
  const auto* norm = dynamic_cast<const NormSignature*>(&sig);
  if (!norm || norm->kind() != kind)
    return internal_error(std::string(kind == NormKind::kLayer ? "layernorm" : "rmsnorm") +
                          " was given another op's signature");
  return std::unique_ptr<OpProblem>(std::make_unique<NormProblem>(*norm));
}

}  // namespace boo::ops::norm
