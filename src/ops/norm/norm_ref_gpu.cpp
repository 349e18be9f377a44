// boo: gpu:<op>:reference for layer and RMS norm — host side: kernel source and launch plan.
#include "ops/norm/norm_ref_gpu.hpp"

#include <algorithm>

#include "ops/common/reference_plan.hpp"
#include "ops/norm/device/norm_ref_params.cuh"
#include "ops/norm/norm_problem.hpp"

namespace boo::ops::norm {
namespace {

class NormGpuReference final : public GpuReference {
 public:
  NormGpuReference(NormKind kind, std::string name) : kind_(kind), name_(std::move(name)) {}

  std::string_view name() const override { return name_; }

  Status accepts(const OpProblem& op_problem) const override {
    const auto* problem = dynamic_cast<const NormProblem*>(&op_problem);
    if (!problem || problem->kind != kind_) return internal_error(name_ + " was given another op's problem");
    if (problem->x.rank() > kNormRefMaxRank)
      return unimplemented(name_ + ": x has rank " + std::to_string(problem->x.rank()) + ", the kernels index at most " +
                           std::to_string(kNormRefMaxRank) + " dims");
    // The kernels index y, dy and dx as dense row-major tensors (x may have any strides): a layout that
    // stores them otherwise (layernorm --layout NHWC) runs on the CPU reference.
    const OpSignature& sig = problem->signature();
    std::vector<TensorSpec> specs = sig.arguments();
    for (TensorSpec& t : sig.results()) specs.push_back(std::move(t));
    for (const TensorSpec& t : specs)
      if ((t.name == "y" || t.name == "dy" || t.name == "dx") && t.strides != contiguous_strides(t.shape))
        return unimplemented(name_ + ": " + t.name + " is not stored row-major (its layout); the CPU reference runs it");
    return ok_status();
  }

  // A whole norm costs a few passes over x: samples are picked from it.
  bool samples() const override { return false; }

  Result<Plan> plan(const OpProblem& op_problem, const ReferenceRequest& request, const ArchSpec& arch) const override {
    BOO_RETURN_IF_ERROR(accepts(op_problem));
    if (request.sampled_result) return internal_error(name_ + " computes whole results only (samples() is false)");
    const auto& problem = static_cast<const NormProblem&>(op_problem);
    const OpSignature& sig = problem.signature();
    const TensorRoles roles(sig);
    const std::string t = device_type(problem.dtype), rms = problem.rms() ? "true" : "false";

    // Threads' work items: rows, elements or columns.
    ReferenceKernels kernels("boo_norm_reference_");
    const long long elements = problem.rows * problem.cols;
    kernels.add("stats",
                "boo::norm_reference_stats<" + t + ", " + rms + ", " + (problem.forward ? "true" : "false") + ">(p)",
                problem.rows);
    if (problem.forward) kernels.add("y", "boo::norm_reference_y<" + t + ">(p)", elements);
    if (problem.dx) {
      kernels.add("dx_terms", "boo::norm_reference_dx_terms<" + t + ", " + rms + ">(p)", problem.rows);
      kernels.add("dx", "boo::norm_reference_dx<" + t + ">(p)", elements);
    }
    if (problem.param_grads())
      kernels.add("param_grads", "boo::norm_reference_param_grads<" + t + ">(p)", problem.cols);

    Plan plan;
    plan.source = generated_source("norm_reference.cu", name_, "boo/norm/norm_ref.cuh", "boo::NormRefParams",
                                   kernels.entries());
    plan.tensor_alignment = static_cast<uint32_t>(dtype_size_bytes(problem.dtype));
    plan.workspace_bytes = static_cast<size_t>(4 * problem.rows) * sizeof(double);
    plan.steps = kernels.steps<NormRefParams>(roles, arch, [&](ReferenceStep<NormRefParams>& step) {
      NormRefParams& p = step.params;
      p.rows = problem.rows;
      p.cols = problem.cols;
      p.eps = problem.eps;
      p.x_rank = problem.x.rank();
      std::copy(problem.x.shape.begin(), problem.x.shape.end(), p.x_shape);
      std::copy(problem.x.strides.begin(), problem.x.strides.end(), p.x_strides);
      // Every tensor the signature has, as the argument or result it is.
      step.bind_argument(p.x, "x");
      step.bind_argument(p.x2, "x2");
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
  NormKind kind_;
  std::string name_;
};

}  // namespace

std::unique_ptr<GpuReference> make_gpu_reference(NormKind kind, std::string name) {
  return std::make_unique<NormGpuReference>(kind, std::move(name));
}

}  // namespace boo::ops::norm
