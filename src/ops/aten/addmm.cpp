// boo: aten::addmm(self, mat1, mat2, beta=1, alpha=1) = beta * self + alpha * mat1 @ mat2,
// self broadcast to [m, n] (a bias row [n] in nn.Linear's traces).
#include "ops/aten/aten_gemm.hpp"
#include "ops/aten/aten_op.hpp"

namespace boo::ops::aten {
namespace {

Result<std::unique_ptr<OpSignature>> make(const AtenCall& call) {
  BOO_RETURN_IF_ERROR(call.expect_arity(3, 5, kAddmm.schema));
  BOO_ASSIGN_OR_RETURN(TensorSpec self, call.tensor(0, "self"));
  BOO_ASSIGN_OR_RETURN(TensorSpec mat1, call.tensor(1, "mat1"));
  BOO_ASSIGN_OR_RETURN(TensorSpec mat2, call.tensor(2, "mat2"));
  BOO_ASSIGN_OR_RETURN(Product p, product(call, mat1, mat2, 2));
  gemm::GemmDesc& d = p.desc;
  if (call.args.size() > 3) {
    BOO_ASSIGN_OR_RETURN(d.beta, call.number(3));
  }
  if (call.args.size() > 4) {
    BOO_ASSIGN_OR_RETURN(d.alpha, call.number(4));
  }
  BOO_ASSIGN_OR_RETURN(const auto strides, broadcast_strides(self, 1, d.m, d.n, "self of " + call.op));
  // beta = 0 ignores self altogether (ATen's rule: even its NaNs), so it is no operand then.
  if (d.beta != 0.0) d.c = gemm::MatrixView{"self", strides};
  return finish(AtenGemmSignature(call, std::move(d), {self, mat1, mat2}, std::move(p.out)));
}

}  // namespace

const AtenOp kAddmm{"aten::addmm",
                    "addmm(Tensor self [broadcast to m, n], Tensor mat1 [m, k], Tensor mat2 [k, n], Scalar beta=1, "
                    "Scalar alpha=1)",
                    &make};

}  // namespace boo::ops::aten
