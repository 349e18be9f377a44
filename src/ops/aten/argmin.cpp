// boo: aten::argmin(self, dim=None, keepdim=False) (ops/aten/arg_reduce.hpp).
#include "ops/aten/aten_op.hpp"
#include "ops/aten/arg_reduce.hpp"

namespace boo::ops::aten {
namespace {

Result<std::unique_ptr<OpSignature>> make(const AtenCall& call) { return make_arg_reduce(call, false, kArgmin.schema); }

}  // namespace

const AtenOp kArgmin{"aten::argmin", "argmin(Tensor self, int? dim=None, bool keepdim=False)", &make};

}  // namespace boo::ops::aten
