// boo: gpu:<op>:reference for layer and RMS norm — host side: kernel source and launch plan.
#include "ops/norm/norm_ref_gpu.hpp"

#include <algorithm>

#include "ops/common/generated_source.hpp"
#include "ops/norm/device/norm_ref_params.cuh"
#include "ops/norm/norm_problem.hpp"

namespace boo::ops::norm {
namespace {

constexpr uint32_t kThreads = 256;

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

    std::vector<KernelEntry> entries;
    // (entry, threads' work items): rows, elements or columns.
    std::vector<long long> work;
    auto add = [&](const std::string& entry, const std::string& call, long long items) {
      entries.push_back({"boo_norm_reference_" + entry, call, static_cast<int>(kThreads)});
      work.push_back(items);
    };
    const long long elements = problem.rows * problem.cols;
    add("stats", "boo::norm_reference_stats<" + t + ", " + rms + ", " + (problem.forward ? "true" : "false") + ">(p)",
        problem.rows);
    if (problem.forward) add("y", "boo::norm_reference_y<" + t + ">(p)", elements);
    if (problem.dx) {
      add("dx_terms", "boo::norm_reference_dx_terms<" + t + ", " + rms + ">(p)", problem.rows);
      add("dx", "boo::norm_reference_dx<" + t + ">(p)", elements);
    }
    if (problem.param_grads()) add("param_grads", "boo::norm_reference_param_grads<" + t + ">(p)", problem.cols);

    Plan plan;
    plan.source = generated_source("norm_reference.cu", name_, "boo/norm/norm_ref.cuh", "boo::NormRefParams", entries);
    plan.tensor_alignment = static_cast<uint32_t>(dtype_size_bytes(problem.dtype));
    plan.workspace_bytes = static_cast<size_t>(4 * problem.rows) * sizeof(double);
    for (size_t e = 0; e < entries.size(); ++e) {
      StepBuilder<NormRefParams> step(entries[e].name, {1, 1, 1}, {kThreads, 1, 1});
      NormRefParams& p = step.params;
      p.rows = problem.rows;
      p.cols = problem.cols;
      p.eps = problem.eps;
      p.x_rank = problem.x.rank();
      std::copy(problem.x.shape.begin(), problem.x.shape.end(), p.x_shape);
      std::copy(problem.x.strides.begin(), problem.x.strides.end(), p.x_strides);
      // Every tensor the signature has, as the argument or result it is.
      auto bind_argument = [&](unsigned long long& field, const char* name) {
        if (roles.has_argument(name)) step.bind(field, *roles.find(name));
      };
      auto bind_result = [&](unsigned long long& field, const char* name) {
        if (std::optional<TensorBinding> b = roles.find(name); b && b->source == TensorBinding::Source::kResult)
          step.bind(field, *b);
      };
      bind_argument(p.x, "x");
      bind_argument(p.x2, "x2");
      bind_argument(p.dy, "dy");
      bind_argument(p.weight, "weight");
      bind_argument(p.bias, "bias");
      bind_argument(p.mean_in, "mean");
      bind_argument(p.rstd_in, "rstd");
      bind_result(p.y, "y");
      bind_result(p.mean_out, "mean");
      bind_result(p.rstd_out, "rstd");
      bind_result(p.dx, "dx");
      bind_result(p.dweight, "dweight");
      bind_result(p.dbias, "dbias");
      step.bind(p.row_terms, TensorBinding::workspace(0));
      LaunchStep launch = std::move(step).finish();
      launch.grid.x = static_cast<uint32_t>(
          std::clamp<long long>((work[e] + kThreads - 1) / kThreads, 1, static_cast<long long>(arch.sm_count) * 32));
      plan.steps.push_back(std::move(launch));
    }
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
