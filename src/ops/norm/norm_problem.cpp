// boo: NormProblem from a norm signature.
#include "ops/norm/norm_problem.hpp"

namespace boo::ops::norm {

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
      contiguous(!sig.permuted()) {}

Result<std::unique_ptr<OpProblem>> make_norm_problem(const OpSignature& sig, NormKind kind) {
  const auto* norm = dynamic_cast<const NormSignature*>(&sig);
  if (!norm || norm->kind() != kind)
    return internal_error(std::string(kind == NormKind::kLayer ? "layernorm" : "rmsnorm") +
                          " was given another op's signature");
  return std::unique_ptr<OpProblem>(std::make_unique<NormProblem>(*norm));
}

}  // namespace boo::ops::norm
