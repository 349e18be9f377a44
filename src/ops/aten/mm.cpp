// boo: aten::mm(self, mat2) = self @ mat2.
#include "ops/aten/aten_gemm.hpp"
#include "ops/aten/aten_op.hpp"

namespace boo::ops::aten {
namespace {

Result<std::unique_ptr<OpSignature>> make(const AtenCall& call) {
  BOO_RETURN_IF_ERROR(call.expect_arity(2, 2, kMm.schema));
  BOO_ASSIGN_OR_RETURN(TensorSpec self, call.tensor(0, "self"));
  BOO_ASSIGN_OR_RETURN(TensorSpec mat2, call.tensor(1, "mat2"));
  BOO_ASSIGN_OR_RETURN(Product p, product(call, self, mat2, 2));
  return finish(AtenGemmSignature(call, std::move(p.desc), {self, mat2}, std::move(p.out)));
}

}  // namespace

const AtenOp kMm{"aten::mm", "mm(Tensor self [m, k], Tensor mat2 [k, n])", &make};

}  // namespace boo::ops::aten
