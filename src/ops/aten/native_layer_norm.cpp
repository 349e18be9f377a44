// boo: aten::native_layer_norm(input, normalized_shape, weight, bias, eps) ->
// (out, mean, rstd) as boo's LayerNormSignature (forward; float32 statistics,
// as ATen's CUDA kernel keeps them). A strided input is a memory order of its
// dims (BOO's --input-permutation) when its strides are dense.
#include <algorithm>
#include <numeric>
#include <tuple>

#include "boo/norm.hpp"
#include "ops/aten/aten_op.hpp"

namespace boo::ops::aten {
namespace {

// The memory order of `t`'s dims (outermost first) when its strides are a
// dense permutation; empty for contiguous.
Result<std::vector<int>> memory_order(const TensorSpec& t, const AtenCall& call) {
  std::vector<int> order(static_cast<size_t>(t.rank()));
  std::iota(order.begin(), order.end(), 0);
  // Larger strides outside; a size-1 dim keeps its logical place among equal strides.
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const int64_t sa = t.shape[static_cast<size_t>(a)] == 1 ? 0 : t.strides[static_cast<size_t>(a)];
    const int64_t sb = t.shape[static_cast<size_t>(b)] == 1 ? 0 : t.strides[static_cast<size_t>(b)];
    return sa > sb;
  });
  if (!stored_in_order(t, order))
    return unimplemented(call.op + ": input " + format_dims(t.shape) + " has strides " + format_dims(t.strides) +
                         ", which are no dense order of its dims; boo's layer norm takes dense inputs only");
  if (std::is_sorted(order.begin(), order.end())) return std::vector<int>{};
  return order;
}

Result<std::unique_ptr<OpSignature>> make(const AtenCall& call) {
  BOO_RETURN_IF_ERROR(call.expect_arity(5, 5, kNativeLayerNorm.schema));
  BOO_ASSIGN_OR_RETURN(TensorSpec input, call.tensor(0, "input"));
  if (input.dtype == DType::kF64)
    return unimplemented(call.op + " in double: boo's layer norm computes in float, c10::Half and c10::BFloat16");
  BOO_ASSIGN_OR_RETURN(std::vector<int64_t> normalized, call.int_list(1));
  const int rank = input.rank();
  const int kept = rank - static_cast<int>(normalized.size());
  if (normalized.empty() || kept < 0 ||
      !std::equal(normalized.begin(), normalized.end(), input.shape.begin() + std::max(kept, 0)))
    return invalid_argument(call.op + ": normalized_shape " + format_dims(normalized) + " must be the trailing dims of input " +
                            format_dims(input.shape));
  auto sig = std::make_unique<LayerNormSignature>();
  sig->dtype = input.dtype;
  sig->input_shape = input.shape;
  sig->normalized_dim = kept;
  sig->directions = kNormForward;
  BOO_ASSIGN_OR_RETURN(sig->eps, call.number(4));
  BOO_ASSIGN_OR_RETURN(sig->input_permutation, memory_order(input, call));
  for (const auto& [index, name, present] : {std::tuple{size_t{2}, "weight", &sig->weight}, {size_t{3}, "bias", &sig->bias}}) {
    if (call.is_none(index)) continue;
    BOO_ASSIGN_OR_RETURN(TensorSpec t, call.tensor(index, name));
    if (t.shape != normalized || t.strides != contiguous_strides(normalized) || t.dtype != input.dtype)
      return unimplemented(call.op + ": " + name + " " + format_dims(t.shape) + " " + std::string(dtype_name(t.dtype)) +
                           " with strides " + format_dims(t.strides) + "; boo's layer norm takes a contiguous " +
                           std::string(dtype_name(input.dtype)) + " " + name + " of the normalized shape " +
                           format_dims(normalized));
    *present = true;
  }
  if (sig->bias && !sig->weight)
    return unimplemented(call.op + ": a bias without a weight; boo's layer norm adds a bias only after a weight");
  BOO_RETURN_IF_ERROR(sig->validate());
  return std::unique_ptr<OpSignature>(std::move(sig));
}

}  // namespace

const AtenOp kNativeLayerNorm{"aten::native_layer_norm",
                              "native_layer_norm(Tensor input, int[] normalized_shape, Tensor? weight, Tensor? bias, "
                              "float eps) -> (out, mean, rstd)",
                              &make};

}  // namespace boo::ops::aten
