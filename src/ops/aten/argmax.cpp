// boo: aten::argmax(self, dim=None, keepdim=False) (ops/aten/arg_reduce.hpp).
#include "ops/aten/aten_op.hpp"
#include "ops/aten/arg_reduce.hpp"

namespace boo::ops::aten {
namespace {

Result<std::unique_ptr<OpSignature>> make(const AtenCall& call) { return make_arg_reduce(call, true, kArgmax.schema); }

}  // namespace

const AtenOp kArgmax{"aten::argmax", "argmax(Tensor self, int? dim=None, bool keepdim=False)", &make};

}  // namespace boo::ops::aten
