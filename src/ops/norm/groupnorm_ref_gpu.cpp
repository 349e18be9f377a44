// boo: gpu:groupnorm:reference — host side: kernel source and launch plan.
#include "ops/norm/groupnorm_ref_gpu.hpp"

#include <algorithm>

#include "ops/common/reference_plan.hpp"
#include "ops/norm/device/group_norm_ref_params.cuh"
#include "ops/norm/norm_problem.hpp"

namespace boo::ops::norm {
namespace {

class GroupNormGpuReference final : public GpuReference {
 public:
  explicit GroupNormGpuReference(std::string name) : name_(std::move(name)) {}

  std::string_view name() const override { return name_; }

  Status accepts(const OpProblem& op_problem) const override {
    const auto* problem = dynamic_cast<const NormProblem*>(&op_problem);
    if (!problem || problem->kind != NormKind::kGroup) return internal_error(name_ + " was given another op's problem");
    return ok_status();
  }

  // A whole group norm costs a few passes over x: samples are picked from it.
  bool samples() const override { return false; }

  Result<Plan> plan(const OpProblem& op_problem, const ReferenceRequest& request, const ArchSpec& arch) const override {
    BOO_RETURN_IF_ERROR(accepts(op_problem));
    if (request.sampled_result) return internal_error(name_ + " computes whole results only (samples() is false)");
    const auto& problem = static_cast<const NormProblem&>(op_problem);
    const TensorRoles roles(problem.signature());
    const std::string t = device_type(problem.dtype);

    ReferenceKernels kernels("boo_group_norm_reference_");  // threads' work items: rows, elements or channels
    const long long elements = problem.rows * problem.cols;
    kernels.add("stats",
                "boo::group_norm_reference_stats<" + t + ", " + (problem.forward ? "true" : "false") + ">(p)",
                problem.rows);
    if (problem.forward) kernels.add("y", "boo::group_norm_reference_y<" + t + ">(p)", elements);
    if (problem.dx) {
      kernels.add("dx_terms", "boo::group_norm_reference_dx_terms<" + t + ">(p)", problem.rows);
      kernels.add("dx", "boo::group_norm_reference_dx<" + t + ">(p)", elements);
    }
    if (problem.param_grads())
      kernels.add("param_grads", "boo::group_norm_reference_param_grads<" + t + ">(p)", problem.channels);

    Plan plan;
    plan.source = generated_source("group_norm_reference.cu", name_, "boo/norm/group_norm_ref.cuh",
                                   "boo::GroupNormRefParams", kernels.entries());
    plan.tensor_alignment = static_cast<uint32_t>(dtype_size_bytes(problem.dtype));
    plan.workspace_bytes = static_cast<size_t>(4 * problem.rows) * sizeof(double);
    plan.steps = kernels.steps<GroupNormRefParams>(roles, arch, [&](ReferenceStep<GroupNormRefParams>& step) {
      GroupNormRefParams& p = step.params;
      p.rows = problem.rows;
      p.cols = problem.cols;
      p.samples = problem.outer;
      p.channels = problem.channels;
      p.groups = problem.groups;
      p.spatial = problem.inner;
      p.eps = problem.eps;
      p.rank = problem.x.rank();
      std::copy(problem.x.shape.begin(), problem.x.shape.end(), p.shape);
      std::copy(problem.x.strides.begin(), problem.x.strides.end(), p.strides);
      step.bind_argument(p.x, "x");
      step.bind_argument(p.dy, "dy");
      step.bind_argument(p.weight, "weight");
      step.bind_argument(p.bias, "bias");
      step.bind_argument(p.mean_in, "mean");
      step.bind_argument(p.rstd_in, "rstd");
      step.bind_result(p.y, "y");
      step.bind_result(p.mean_out, "mean");
      step.bind_result(p.rstd_out, "rstd");
      step.bind_result(p.dx, "dx");
      step.bind_result(p.dweight, "dweight");
      step.bind_result(p.dbias, "dbias");
      step.bind(p.row_terms, TensorBinding::workspace(0));
    });
    return plan;
  }

 private:
  std::string name_;
};

}  // namespace

std::unique_ptr<GpuReference> make_group_norm_gpu_reference(std::string name) {
  return std::make_unique<GroupNormGpuReference>(std::move(name));
}

}  // namespace boo::ops::norm
