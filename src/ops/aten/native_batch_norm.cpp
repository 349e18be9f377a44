// boo: aten::native_batch_norm(input, weight, bias, running_mean, running_var,
// training, momentum, eps) -> (out, save_mean, save_invstd) as boo's
// BatchNormSignature in spatial mode (PyTorch's BatchNorm1d/2d/3d): training
// saves the batch's mean and inverse standard deviation and, with running
// statistics, updates them by `momentum` (MIOpen's factor, PyTorch's meaning);
// inference normalizes by the running statistics. [N, C] and [N, C, L] inputs
// run as [N, C, 1, 1] and [N, C, 1, L]; the input's strides pick NCHW or the
// channels-last layout.
#include <string>
#include <vector>

#include "boo/batchnorm.hpp"
#include "ops/aten/aten_op.hpp"
#include "ops/norm/norm_layout.hpp"

namespace boo::ops::aten {
namespace {

// `t` as the [N, C, [D,] H, W] tensor boo's batch norm takes: a size-1 H (and W) inserted where
// ATen's tensor has fewer dims, with the strides that keep its memory order.
TensorSpec as_image(TensorSpec t) {
  if (t.rank() == 2) {  // [N, C] -> [N, C, 1, 1]
    t.shape.insert(t.shape.end(), {1, 1});
    t.strides.insert(t.strides.end(), {1, 1});
  } else if (t.rank() == 3) {  // [N, C, L] -> [N, C, 1, L]
    t.shape.insert(t.shape.begin() + 2, 1);
    t.strides.insert(t.strides.begin() + 2, t.strides[2] * t.shape[3]);
  }
  return t;
}

// The batch norm layout (NCHW, NHWC; NCDHW, NDHWC at rank 5) whose dense strides are `t`'s.
Result<std::string> layout_of(const TensorSpec& t, const AtenCall& call) {
  const bool d5 = t.rank() == 5;
  for (const char* layout : {d5 ? "NCDHW" : "NCHW", d5 ? "NDHWC" : "NHWC"}) {
    BOO_ASSIGN_OR_RETURN(std::vector<int> order, norm::layout_order(layout, t.rank(), call.op));
    if (stored_in_order(t, order)) return std::string(layout);
  }
  return unimplemented(call.op + ": input " + format_dims(t.shape) + " has strides " + format_dims(t.strides) +
                       "; boo's batch norm takes contiguous or channels-last inputs");
}

Result<std::unique_ptr<OpSignature>> make(const AtenCall& call) {
  BOO_RETURN_IF_ERROR(call.expect_arity(8, 8, kNativeBatchNorm.schema));
  BOO_ASSIGN_OR_RETURN(TensorSpec input, call.tensor(0, "input"));
  if (input.dtype == DType::kF64)
    return unimplemented(call.op + " in double: boo's batch norm computes in float, c10::Half and c10::BFloat16");
  if (input.rank() < 2 || input.rank() > 5)
    return invalid_argument(call.op + ": input " + format_dims(input.shape) + " must be [N, C, *] of 2 to 5 dims");
  const int64_t channels = input.shape[1];
  auto sig = std::make_unique<BatchNormSignature>();
  sig->mode = BatchNormMode::kSpatial;
  sig->dtype = input.dtype;
  const TensorSpec image = as_image(input);
  sig->input_shape = image.shape;
  BOO_ASSIGN_OR_RETURN(sig->layout, layout_of(image, call));
  // weight and bias: MIOpen's batch norm always scales and shifts.
  DType param_dtype = DType::kF32;
  for (size_t index : {size_t{1}, size_t{2}}) {
    const char* name = index == 1 ? "weight" : "bias";
    if (call.is_none(index))
      return unimplemented(call.op + " without a " + std::string(name) +
                           " (affine=False): boo's batch norm always has a weight and a bias, as MIOpen's");
    BOO_ASSIGN_OR_RETURN(TensorSpec t, call.tensor(index, name));
    if (t.shape != std::vector<int64_t>{channels})
      return invalid_argument(call.op + ": " + name + " " + format_dims(t.shape) + " must be [" +
                              std::to_string(channels) + "], one per channel of input " + format_dims(input.shape));
    if (t.dtype != DType::kF32 && t.dtype != input.dtype)
      return unimplemented(call.op + ": a " + std::string(dtype_name(t.dtype)) + " " + name + " beside a " +
                           std::string(dtype_name(input.dtype)) + " input; boo's batch norm takes float32 parameters " +
                           "or the input's type");
    param_dtype = t.dtype;
  }
  // 16-bit parameters are MIOpen's bnormfp16fp32 / bnormbfp16fp32, whose gradients are float32.
  sig->param_dtype = param_dtype;
  sig->grad_dtype = param_dtype == input.dtype && input.dtype != DType::kF32 ? DType::kF32 : input.dtype;
  const bool has_running = !call.is_none(3);
  if (has_running == call.is_none(4))
    return invalid_argument(call.op + ": running_mean and running_var come together or not at all");
  if (has_running) {
    for (size_t index : {size_t{3}, size_t{4}}) {
      BOO_ASSIGN_OR_RETURN(TensorSpec t, call.tensor(index, index == 3 ? "running_mean" : "running_var"));
      if (t.shape != std::vector<int64_t>{channels} || t.dtype != DType::kF32)
        return unimplemented(call.op + ": " + t.name + " " + format_dims(t.shape) + " " +
                             std::string(dtype_name(t.dtype)) + "; boo's batch norm keeps float32 running statistics, " +
                             "one per channel (" + std::to_string(channels) + ")");
    }
  }
  BOO_ASSIGN_OR_RETURN(const bool training, call.boolean(5));
  if (!training && !has_running)
    return invalid_argument(call.op + ": evaluation (training False) normalizes by the running statistics, "
                            "and running_mean and running_var are None");
  BOO_ASSIGN_OR_RETURN(sig->momentum, call.number(6));
  BOO_ASSIGN_OR_RETURN(sig->eps, call.number(7));
  sig->pass = training ? BatchNormPass::kTraining : BatchNormPass::kInference;
  sig->save = training;  // ATen returns the saved statistics of a training pass
  sig->running = has_running;
  BOO_RETURN_IF_ERROR(sig->validate());
  return std::unique_ptr<OpSignature>(std::move(sig));
}

}  // namespace

const AtenOp kNativeBatchNorm{"aten::native_batch_norm",
                              "native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
                              "Tensor? running_var, bool training, float momentum, float eps) -> "
                              "(out, save_mean, save_invstd)",
                              &make};

}  // namespace boo::ops::aten
