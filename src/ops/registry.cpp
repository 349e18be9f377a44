// boo: the op registry, one line per op.
#include "ops/op_registry.hpp"

#include <cstdlib>

#include "ops/aten/aten_gemm.hpp"
#include "ops/aten/arg_reduce.hpp"
#include "ops/aten/sdpa.hpp"
#include "ops/conv/conv_op.hpp"
#include "ops/gemm/gemm_op.hpp"
#include "ops/norm/batchnorm_op.hpp"
#include "ops/norm/groupnorm_op.hpp"
#include "ops/norm/norm_op.hpp"
#include "ops/testing/test_op.hpp"

namespace boo::ops {

std::span<const OpDefinition* const> all_ops() {
  static const OpDefinition* const kOps[] = {
      &conv::definition(),
      &norm::layer_norm_definition(),
      &norm::rms_norm_definition(),
      &norm::add_layer_norm_definition(),
      &gemm::definition(),
      &norm::batch_norm_definition(),
      &norm::mixed_batch_norm_definition(),
      &aten::gemm_definition(),        // ATen's matrix products (ops/aten/aten_op.hpp)
      &aten::arg_reduce_definition(),  // aten::argmax, aten::argmin
      &aten::sdpa_definition(),        // aten::scaled_dot_product_attention and its backends' forms
      &aten::sdpa_backward_definition(),  // the backends' backward forms
      &norm::group_norm_definition(),
      &testing::definition(),  // only with BOO_ENABLE_TEST_OPS=1 (below)
  };
  // The test ops (faulting and hanging kernels for the executor's tests) are
  // registered only when asked for.
  static const bool test_ops = [] {
    const char* v = std::getenv("BOO_ENABLE_TEST_OPS");
    return v && std::string_view(v) == "1";
  }();
  return std::span<const OpDefinition* const>(kOps, std::size(kOps) - (test_ops ? 0 : 1));
}

const OpDefinition* find_op(std::string_view name) {
  for (const OpDefinition* op : all_ops())
    if (op->name() == name) return op;
  return nullptr;
}

}  // namespace boo::ops
