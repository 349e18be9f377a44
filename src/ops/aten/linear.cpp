// boo: aten::linear(input, weight, bias=None) = input @ weight^T + bias, over
// input's leading dims: rows of one matrix where their strides collapse (any
// contiguous input), else a batch of matrices sharing the weight (a 3-D input).
#include "ops/aten/aten_gemm.hpp"
#include "ops/aten/aten_op.hpp"

namespace boo::ops::aten {
namespace {

// The stride of the one row index that walks input's leading dims, or -1
// when their strides do not collapse (sizes of 1 fit any stride).
int64_t collapsed_row_stride(const TensorSpec& input) {
  int64_t stride = -1, extent = 0;  // the innermost non-trivial leading dim seen so far
  for (int d = input.rank() - 2; d >= 0; --d) {
    const int64_t size = input.shape[static_cast<size_t>(d)], s = input.strides[static_cast<size_t>(d)];
    if (size == 1) continue;
    if (stride < 0) {
      stride = s;
      extent = size * s;
    } else if (s != extent) {
      return -1;
    } else {
      extent = size * s;
    }
  }
  return stride < 0 ? 0 : stride;
}

Result<std::unique_ptr<OpSignature>> make(const AtenCall& call) {
  BOO_RETURN_IF_ERROR(call.expect_arity(2, 3, kLinear.schema));
  BOO_ASSIGN_OR_RETURN(TensorSpec input, call.tensor(0, "input"));
  BOO_ASSIGN_OR_RETURN(TensorSpec weight, call.tensor(1, "weight"));
  BOO_RETURN_IF_ERROR(expect_rank(weight, 2, call));
  if (input.rank() < 1 || input.shape.back() != weight.shape[1])
    return invalid_argument(call.op + ": input " + format_dims(input.shape) + " and weight " + format_dims(weight.shape) +
                            " disagree (input [..., in], weight [out, in])");
  gemm::GemmDesc d;
  d.dtype = input.dtype;
  d.k = weight.shape[1];
  d.n = weight.shape[0];
  d.b = {"weight", {0, weight.strides[1], weight.strides[0]}};  // B[p, j] = weight[j, p]
  const int64_t in_stride = input.strides.back();
  const int64_t row_stride = collapsed_row_stride(input);
  if (row_stride >= 0) {
    d.m = 1;
    for (int dim = 0; dim + 1 < input.rank(); ++dim) d.m *= input.shape[static_cast<size_t>(dim)];
    d.a = {"input", {0, row_stride, in_stride}};
  } else if (input.rank() == 3) {
    d.batch = input.shape[0];
    d.m = input.shape[1];
    d.a = {"input", {input.strides[0], input.strides[1], in_stride}};
  } else {
    return unimplemented(call.op + ": input " + format_dims(input.shape) + " with strides " + format_dims(input.strides) +
                         ": leading dims whose strides do not collapse into rows are taken only for 3-D inputs");
  }
  std::vector<int64_t> out_shape(input.shape.begin(), input.shape.end() - 1);
  out_shape.push_back(d.n);
  d.out = {"out", {d.m * d.n, d.n, 1}};
  std::vector<TensorSpec> inputs{input, weight};
  if (!call.is_none(2)) {
    BOO_ASSIGN_OR_RETURN(TensorSpec bias, call.tensor(2, "bias"));
    BOO_ASSIGN_OR_RETURN(const auto strides, broadcast_strides(bias, d.batch, d.m, d.n, "bias of " + call.op));
    d.bias = gemm::MatrixView{"bias", strides};
    inputs.push_back(bias);
  }
  TensorSpec out{"out", out_shape, contiguous_strides(out_shape), d.dtype, ""};
  return finish(AtenGemmSignature(call, std::move(d), std::move(inputs), std::move(out)));
}

}  // namespace

const AtenOp kLinear{"aten::linear", "linear(Tensor input [..., in], Tensor weight [out, in], Tensor? bias [out])",
                     &make};

}  // namespace boo::ops::aten
