// boo: aten::bmm(self, mat2) = self @ mat2 per batch entry.
#include "ops/aten/aten_gemm.hpp"
#include "ops/aten/aten_op.hpp"

namespace boo::ops::aten {
namespace {

Result<std::unique_ptr<OpSignature>> make(const AtenCall& call) {
  BOO_RETURN_IF_ERROR(call.expect_arity(2, 2, kBmm.schema));
  BOO_ASSIGN_OR_RETURN(TensorSpec self, call.tensor(0, "self"));
  BOO_ASSIGN_OR_RETURN(TensorSpec mat2, call.tensor(1, "mat2"));
  BOO_ASSIGN_OR_RETURN(Product p, product(call, self, mat2, 3));
  return finish(AtenGemmSignature(call, std::move(p.desc), {self, mat2}, std::move(p.out)));
}

}  // namespace

const AtenOp kBmm{"aten::bmm", "bmm(Tensor self [b, m, k], Tensor mat2 [b, k, n])", &make};

}  // namespace boo::ops::aten
