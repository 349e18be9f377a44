// boo: BatchNormSignature — validation, shapes, canonical command and name.
#include "base/strings.hpp"
#include "boo/batchnorm.hpp"
#include "ops/norm/norm_layout.hpp"

namespace boo {
namespace {

std::string token_of(const BatchNormSignature& s) {
  const std::string data = s.dtype == DType::kF16 ? "fp16" : s.dtype == DType::kBF16 ? "bfp16" : "";
  return "bnorm" + data + (s.mixed() ? "fp32" : "");
}

}  // namespace

std::vector<int64_t> BatchNormSignature::param_shape() const {
  std::vector<int64_t> shape = input_shape;
  if (shape.empty()) return shape;
  shape[0] = 1;
  if (spatial())
    for (size_t d = 2; d < shape.size(); ++d) shape[d] = 1;
  return shape;
}

int64_t BatchNormSignature::reduction_size() const {
  int64_t n = input_shape.empty() ? 0 : input_shape[0];
  if (spatial())
    for (size_t d = 2; d < input_shape.size(); ++d) n *= input_shape[d];
  return n;
}

TensorSpec BatchNormSignature::x_spec(std::string name, DType t) const {
  return TensorSpec{std::move(name), input_shape, ops::norm::layout_strides(input_shape, layout), t, layout};
}

TensorSpec BatchNormSignature::param_spec(std::string name, DType t) const {
  const std::vector<int64_t> shape = param_shape();
  return TensorSpec{std::move(name), shape, ops::norm::layout_strides(shape, layout), t, layout};
}

std::string_view BatchNormSignature::op_name() const { return mixed() ? "batchnorm_mixed" : "batchnorm"; }

// MIOpenDriver's argument order of each pass; the running statistics a
// training pass updates are read as running_*_in and written anew.
std::vector<TensorSpec> BatchNormSignature::arguments() const {
  std::vector<TensorSpec> args{x_spec("x", dtype)};
  if (pass == BatchNormPass::kBackward) {
    args.push_back(x_spec("dy", grad_dtype));
    args.push_back(param_spec("scale", param_dtype));
    if (save) {
      args.push_back(param_spec("saved_mean", DType::kF32));
      args.push_back(param_spec("saved_inv_variance", DType::kF32));
    }
    return args;
  }
  args.push_back(param_spec("scale", param_dtype));
  args.push_back(param_spec("bias", param_dtype));
  if (running && pass == BatchNormPass::kTraining) {
    args.push_back(param_spec("running_mean_in", DType::kF32));
    args.push_back(param_spec("running_variance_in", DType::kF32));
  }
  if (running && pass == BatchNormPass::kInference) {
    args.push_back(param_spec("estimated_mean", DType::kF32));
    args.push_back(param_spec("estimated_variance", DType::kF32));
  }
  return args;
}

std::vector<TensorSpec> BatchNormSignature::results() const {
  if (pass == BatchNormPass::kBackward)
    return {x_spec("dx", grad_dtype), param_spec("dscale", DType::kF32), param_spec("dbias", DType::kF32)};
  std::vector<TensorSpec> out{x_spec("y", dtype)};
  if (pass == BatchNormPass::kTraining && save) {
    out.push_back(param_spec("saved_mean", DType::kF32));
    out.push_back(param_spec("saved_inv_variance", DType::kF32));
  }
  if (pass == BatchNormPass::kTraining && running) {
    out.push_back(param_spec("running_mean", DType::kF32));
    out.push_back(param_spec("running_variance", DType::kF32));
  }
  return out;
}

// Per element: training's mean, variance and normalize (~8); inference's
// normalize (~4); the backward's two sums and dx (~10).
double BatchNormSignature::flop_count() const {
  double elems = 1;
  for (int64_t d : input_shape) elems *= static_cast<double>(d);
  switch (pass) {
    case BatchNormPass::kTraining: return 8 * elems;
    case BatchNormPass::kInference: return 4 * elems;
    case BatchNormPass::kBackward: return 10 * elems;
  }
  return 0;
}

Status BatchNormSignature::validate() const {
  const std::string token = token_of(*this);
  const size_t rank = input_shape.size();
  if (rank != 4 && rank != 5)
    return invalid_argument(token + ": the input is [N, C, H, W] or [N, C, D, H, W], got rank " + std::to_string(rank));
  const char* names[] = {"--batchsize/-n", "--in_channels/-c", "--in_d/-D", "--in_h/-H", "--in_w/-W"};
  for (size_t d = 0; d < rank; ++d) {
    const char* name = names[rank == 5 || d < 2 ? d : d + 1];
    if (input_shape[d] < 1)
      return invalid_argument(token + " " + name + " must be positive, got " + std::to_string(input_shape[d]));
  }
  BOO_RETURN_IF_ERROR(ops::norm::layout_order(layout, static_cast<int>(rank), token + " --layout/-L").status());
  if (!(eps > 0)) return invalid_argument(token + " --eps must be positive, got " + base::format_double(eps));
  if (!(momentum >= 0 && momentum <= 1))
    return invalid_argument(token + " --momentum must be in [0, 1], got " + base::format_double(momentum));
  // MIOpen's combinations of element types (MIOpenDriver's dm_bnorm.cpp).
  const bool plain = dtype == param_dtype && dtype == grad_dtype && dtype == DType::kF32;
  const bool half_data = dtype != DType::kF32 && dtype != DType::kF64 && param_dtype == DType::kF32 &&
                         grad_dtype == dtype;
  const bool half_params = dtype != DType::kF32 && dtype != DType::kF64 && param_dtype == dtype &&
                           grad_dtype == DType::kF32;
  if (!plain && !half_data && !half_params)
    return invalid_argument("bnorm element types " + std::string(dtype_name(dtype)) + " data, " +
                            std::string(dtype_name(param_dtype)) + " scale/bias, " +
                            std::string(dtype_name(grad_dtype)) +
                            " gradients are not MIOpen's: float32 throughout (bnorm), 16-bit data and gradients "
                            "with float32 scale/bias (bnormfp16, bnormbfp16), or 16-bit data and scale/bias with "
                            "float32 gradients (bnormfp16fp32, bnormbfp16fp32)");
  // One element per statistic has no variance to normalize by (MIOpen's unbiased running variance divides by n - 1).
  if (reduction_size() < 2 && (pass != BatchNormPass::kInference || !running))
    return invalid_argument(token + ": the statistics of each " + std::string(spatial() ? "channel" : "activation") +
                            " summarize " + std::to_string(reduction_size()) +
                            " element; batch statistics need at least 2 (a larger --batchsize/-n" +
                            std::string(spatial() ? " or spatial size)" : ", or -m 1)"));
  return ok_status();
}

std::string BatchNormSignature::command() const {
  const bool d5 = input_shape.size() == 5;
  std::vector<std::string> w{token_of(*this), "-n", std::to_string(input_shape[0]), "-c",
                             std::to_string(input_shape[1])};
  if (d5) w.insert(w.end(), {"-D", std::to_string(input_shape[2])});
  w.insert(w.end(), {"-H", std::to_string(input_shape[d5 ? 3 : 2]), "-W", std::to_string(input_shape[d5 ? 4 : 3]),
                     "-m", spatial() ? "1" : "0"});
  if (pass == BatchNormPass::kBackward) w.insert(w.end(), {"--forw", "0", "-b", "1"});
  else w.insert(w.end(), {"--forw", pass == BatchNormPass::kTraining ? "1" : "2", "-b", "0"});
  w.insert(w.end(), {"-s", save ? "1" : "0", "-r", running ? "1" : "0", "--layout", layout});
  if (eps != 1e-3) w.insert(w.end(), {"--eps", base::format_double(eps)});
  if (momentum != 1.0) w.insert(w.end(), {"--momentum", base::format_double(momentum)});
  return base::shell_join(w);
}

// boo's name, in the form of BOO's: batch_norm_{2d|3d}_{data}_{params}_{grads}_
// {spatial|per_activation}_{training|inference|backward}_{shape}_{layout}[_save][_run].
std::string BatchNormSignature::func_name() const {
  const char* pass_name = pass == BatchNormPass::kTraining    ? "training"
                          : pass == BatchNormPass::kInference ? "inference"
                                                              : "backward";
  std::string name = "batch_norm_" + std::to_string(input_shape.size() - 2) + "d_" + std::string(dtype_name(dtype)) +
                     "_" + std::string(dtype_name(param_dtype)) + "_" + std::string(dtype_name(grad_dtype)) + "_" +
                     (spatial() ? "spatial" : "per_activation") + "_" + pass_name + "_" +
                     base::join_ints(input_shape, "x") + "_" + base::to_lower(layout);
  if (save) name += "_save";
  if (running) name += "_run";
  return name;
}

std::unique_ptr<OpSignature> BatchNormSignature::clone() const { return std::make_unique<BatchNormSignature>(*this); }

bool BatchNormSignature::operator==(const BatchNormSignature& o) const {
  return dtype == o.dtype && param_dtype == o.param_dtype && grad_dtype == o.grad_dtype &&
         input_shape == o.input_shape && layout == o.layout && mode == o.mode && pass == o.pass && save == o.save &&
         running == o.running && eps == o.eps && momentum == o.momentum;
}

bool BatchNormSignature::equals(const OpSignature& other) const {
  const auto* o = dynamic_cast<const BatchNormSignature*>(&other);
  return o && *o == *this;
}

}  // namespace boo
