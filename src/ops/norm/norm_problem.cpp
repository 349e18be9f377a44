// boo: NormProblem from a norm signature.
#include "ops/norm/norm_problem.hpp"

namespace boo::ops::norm {

Result<NormProblem> norm_problem(const OpSignature& sig) {
  const auto* s = dynamic_cast<const NormSignature*>(&sig);
  if (!s) return invalid_argument("not a norm signature: " + std::string(sig.op_name()));
  NormProblem p;
  p.kind = s->kind();
  p.dtype = s->dtype;
  p.rows = s->rows();
  p.cols = s->row_length();
  p.eps = s->eps;
  p.weight = s->weight;
  p.bias = s->bias;
  p.forward = s->directions & kNormForward;
  p.dx = s->directions & kNormBackwardData;
  p.dweight = s->directions & kNormBackwardWeight;
  p.dbias = s->directions & kNormBackwardBias;
  p.x = s->x_spec();
  p.contiguous = !s->permuted();
  return p;
}

Result<NormProblem> norm_problem(const OpSignature& sig, NormKind kind) {
  const auto* s = dynamic_cast<const NormSignature*>(&sig);
  if (!s || s->kind() != kind)
    return invalid_argument(kind == NormKind::kLayer ? "not a layernorm signature" : "not an rmsnorm signature");
  return norm_problem(sig);
}

}  // namespace boo::ops::norm
