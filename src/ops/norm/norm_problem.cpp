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
      forward(sig.directions & kNormForward),
      dx(sig.directions & kNormBackwardData),
      dweight(sig.directions & kNormBackwardWeight),
      dbias(sig.directions & kNormBackwardBias),
      x(sig.x_spec()),
      contiguous(row_major(x)),
      strided_like_x(!contiguous && !sig.layout.empty()) {}

Result<std::unique_ptr<OpProblem>> make_norm_problem(const OpSignature& sig, NormKind kind) {
  const auto* norm = dynamic_cast<const NormSignature*>(&sig);
  if (!norm || norm->kind() != kind)
    return internal_error(std::string(kind == NormKind::kLayer ? "layernorm" : "rmsnorm") +
                          " was given another op's signature");
  return std::unique_ptr<OpProblem>(std::make_unique<NormProblem>(*norm));
}

}  // namespace boo::ops::norm
