// boo: gpu:batchnorm:reference — host side: kernel source and launch plan.
#include "ops/norm/batchnorm_ref_gpu.hpp"

#include <algorithm>

#include "ops/common/reference_plan.hpp"
#include "ops/norm/device/batch_norm_ref_params.cuh"
#include "ops/norm/norm_problem.hpp"

namespace boo::ops::norm {
namespace {

class BatchNormGpuReference final : public GpuReference {
 public:
  explicit BatchNormGpuReference(std::string name) : name_(std::move(name)) {}

  std::string_view name() const override { return name_; }

  Status accepts(const OpProblem& op_problem) const override {
    const auto* problem = dynamic_cast<const NormProblem*>(&op_problem);
    if (!problem || problem->kind != NormKind::kBatch) return internal_error(name_ + " was given another op's problem");
    return ok_status();
  }

  // A whole batch norm costs a few passes over x: samples are picked from it.
  bool samples() const override { return false; }

  Result<Plan> plan(const OpProblem& op_problem, const ReferenceRequest& request, const ArchSpec& arch) const override {
    BOO_RETURN_IF_ERROR(accepts(op_problem));
    if (request.sampled_result) return internal_error(name_ + " computes whole results only (samples() is false)");
    const auto& problem = static_cast<const NormProblem&>(op_problem);
    const auto& sig = static_cast<const BatchNormSignature&>(problem.signature());
    const TensorRoles roles(sig);
    const std::string t = device_type(problem.dtype), g = device_type(problem.grad_dtype),
                      pt = device_type(problem.param_dtype);
    const TensorSpec x = sig.x_spec("x", sig.dtype), param = sig.param_spec("scale", sig.param_dtype);
    const long long total = x.numel(), stats = param.numel();

    // The CPU reference's sources of the statistics (batchnorm_ref.cpp).
    const bool training = sig.pass == BatchNormPass::kTraining;
    const int source = sig.pass == BatchNormPass::kInference && sig.running ? 1
                       : sig.pass == BatchNormPass::kBackward && sig.save  ? 2
                                                                           : 0;
    ReferenceKernels kernels("boo_batch_norm_reference_");  // threads' work items: statistics or elements
    auto flag = [](bool v) { return v ? "true" : "false"; };
    kernels.add("stats",
                "boo::batch_norm_reference_stats<" + t + ", " + std::to_string(source) + ", " +
                    flag(training && sig.save) + ", " + flag(training && sig.running) + ">(p)",
                stats);
    if (sig.pass != BatchNormPass::kBackward) {
      kernels.add("y", "boo::batch_norm_reference_y<" + t + ", " + pt + ">(p)", total);
    } else {
      kernels.add("grad_sums", "boo::batch_norm_reference_grad_sums<" + t + ", " + g + ">(p)", stats);
      kernels.add("dx", "boo::batch_norm_reference_dx<" + t + ", " + g + ", " + pt + ">(p)", total);
    }

    Plan plan;
    plan.source = generated_source("batch_norm_reference.cu", name_, "boo/norm/batch_norm_ref.cuh",
                                   "boo::BatchNormRefParams", kernels.entries());
    plan.tensor_alignment = static_cast<uint32_t>(
        std::min({dtype_size_bytes(problem.dtype), dtype_size_bytes(problem.grad_dtype), dtype_size_bytes(problem.param_dtype)}));
    plan.workspace_bytes = static_cast<size_t>(5 * stats) * sizeof(double);
    plan.steps = kernels.steps<BatchNormRefParams>(roles, arch, [&](ReferenceStep<BatchNormRefParams>& step) {
      BatchNormRefParams& p = step.params;
      p.total = total;
      p.stats = stats;
      p.channels = sig.input_shape[1];
      p.spatial = total / (sig.input_shape[0] * p.channels);
      p.eps = sig.eps;
      p.momentum = sig.momentum;
      p.rank = x.rank();
      p.spatial_mode = sig.spatial() ? 1 : 0;
      std::copy(x.shape.begin(), x.shape.end(), p.x_shape);
      std::copy(x.strides.begin(), x.strides.end(), p.x_strides);
      std::copy(param.shape.begin(), param.shape.end(), p.p_shape);
      std::copy(param.strides.begin(), param.strides.end(), p.p_strides);
      step.bind_argument(p.x, "x");
      step.bind_argument(p.dy, "dy");
      step.bind_argument(p.scale, "scale");
      step.bind_argument(p.bias, "bias");
      step.bind_argument(p.given_mean, "estimated_mean");
      step.bind_argument(p.given_variance, "estimated_variance");
      step.bind_argument(p.saved_mean_in, "saved_mean");
      step.bind_argument(p.saved_inv_in, "saved_inv_variance");
      step.bind_argument(p.running_mean_in, "running_mean_in");
      step.bind_argument(p.running_variance_in, "running_variance_in");
      step.bind_result(p.y, "y");
      step.bind_result(p.dx, "dx");
      step.bind_result(p.dscale, "dscale");
      step.bind_result(p.dbias, "dbias");
      step.bind_result(p.saved_mean, "saved_mean");
      step.bind_result(p.saved_inv, "saved_inv_variance");
      step.bind_result(p.running_mean, "running_mean");
      step.bind_result(p.running_variance, "running_variance");
      step.bind(p.stat_terms, TensorBinding::workspace(0));
    });
    return plan;
  }

 private:
  std::string name_;
};

}  // namespace

std::unique_ptr<GpuReference> make_batch_norm_gpu_reference(std::string name) {
  return std::make_unique<BatchNormGpuReference>(std::move(name));
}

}  // namespace boo::ops::norm
