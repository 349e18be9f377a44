// boo: aten::baddbmm(self, batch1, batch2, beta=1, alpha=1) = beta * self + alpha * batch1 @ batch2,
// self broadcast to [b, m, n].
#include "ops/aten/aten_gemm.hpp"
#include "ops/aten/aten_op.hpp"

namespace boo::ops::aten {
namespace {

Result<std::unique_ptr<OpSignature>> make(const AtenCall& call) {
  BOO_RETURN_IF_ERROR(call.expect_arity(3, 5, kBaddbmm.schema));
  BOO_ASSIGN_OR_RETURN(TensorSpec self, call.tensor(0, "self"));
  BOO_ASSIGN_OR_RETURN(TensorSpec batch1, call.tensor(1, "batch1"));
  BOO_ASSIGN_OR_RETURN(TensorSpec batch2, call.tensor(2, "batch2"));
  BOO_ASSIGN_OR_RETURN(Product p, product(call, batch1, batch2, 3));
  gemm::GemmDesc& d = p.desc;
  if (call.args.size() > 3) {
    BOO_ASSIGN_OR_RETURN(d.beta, call.number(3));
  }
  if (call.args.size() > 4) {
    BOO_ASSIGN_OR_RETURN(d.alpha, call.number(4));
  }
  BOO_ASSIGN_OR_RETURN(const auto strides, broadcast_strides(self, d.batch, d.m, d.n, "self of " + call.op));
  if (d.beta != 0.0) d.c = gemm::MatrixView{"self", strides};  // beta = 0 ignores self (ATen's rule)
  return finish(AtenGemmSignature(call, std::move(d), {self, batch1, batch2}, std::move(p.out)));
}

}  // namespace

const AtenOp kBaddbmm{"aten::baddbmm",
                      "baddbmm(Tensor self [broadcast to b, m, n], Tensor batch1 [b, m, k], Tensor batch2 [b, k, n], "
                      "Scalar beta=1, Scalar alpha=1)",
                      &make};

}  // namespace boo::ops::aten
