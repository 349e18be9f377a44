// boo: gpu:conv:reference — host side: kernel source and launch plan.
#include "ops/conv/conv_ref_gpu.hpp"

#include <algorithm>

#include "boo/conv.hpp"
#include "ops/common/reference_plan.hpp"
#include "ops/conv/conv_problem.hpp"
#include "ops/conv/device/conv_ref_params.cuh"

namespace boo::ops::conv {
namespace {

// The faces as device/conv_ref.cuh numbers them: ConvProblem's, then the bias gradient.
constexpr int kBiasGradientFace = 3;

void copy3(const Dims3& from, long long to[3]) { std::copy(from.begin(), from.end(), to); }
void copy5(const Strides5& from, long long to[5]) { std::copy(from.begin(), from.end(), to); }

// One result's kernel: its face, the face's operands and whether the forward epilogue applies.
struct RefKernel {
  size_t result = 0;  // index in sig.results()
  int face = kForwardFace;
  std::optional<FaceTask> task;  // unset for db
};

class ConvGpuReference final : public GpuReference {
 public:
  std::string_view name() const override { return "gpu:conv:reference"; }
  Status accepts(const OpProblem& problem) const override {
    if (!dynamic_cast<const ConvProblem*>(&problem)) return internal_error("gpu:conv:reference was given another op's problem");
    return ok_status();
  }
  bool samples() const override { return true; }

  Result<Plan> plan(const OpProblem& op_problem, const ReferenceRequest& request, const ArchSpec& arch) const override {
    const auto* problem = dynamic_cast<const ConvProblem*>(&op_problem);
    if (!problem) return internal_error("gpu:conv:reference was given another op's problem");
    const ConvSignature& sig = problem->conv();
    const Relation& r = problem->relation;
    const std::vector<TensorSpec> args = sig.arguments(), results = sig.results();
    const TensorRoles roles(sig);

    std::vector<RefKernel> kernels;
    for (size_t i = 0; i < results.size(); ++i) {
      if (request.sampled_result && *request.sampled_result != i) continue;
      RefKernel k{i, kBiasGradientFace, std::nullopt};
      for (const FaceTask& t : problem->tasks)
        if (t.result == results[i].name) {
          k.face = t.face;
          k.task = t;
        }
      if (!k.task && results[i].name != "db")
        return internal_error("gpu:conv:reference: no face computes result '" + results[i].name + "'");
      kernels.push_back(k);
    }

    const std::string type = device_type(sig.dtype);
    std::vector<KernelEntry> entries;
    for (const RefKernel& k : kernels) {
      const bool epilogue = k.task && k.task->epilogue;
      const std::string act = epilogue ? std::to_string(static_cast<int>(sig.activation.kind)) : "0";
      const std::string bias = epilogue && sig.bias ? "true" : "false";
      const std::string residual = epilogue && sig.residual ? "true" : "false";
      entries.push_back({"boo_conv_reference_" + results[k.result].name,
                         "boo::conv_reference<" + type + ", " + std::to_string(k.face) + ", " + act + ", " + bias +
                             ", " + residual + ">(p)",
                         static_cast<int>(kReferenceThreads)});
    }
    Plan plan;
    plan.source = generated_source("conv_reference.cu", std::string(name()), "boo/conv/conv_ref.cuh",
                                   "boo::ConvRefParams", entries);
    plan.tensor_alignment = static_cast<uint32_t>(problem->elem_bytes);
    const TensorBinding positions{TensorBinding::Source::kArgument, static_cast<uint32_t>(args.size()), 0};

    // Binds argument `name` to `field`, with its strides.
    auto bind = [&](StepBuilder<ConvRefParams>& step, unsigned long long& field, long long strides[5],
                    const std::string& name) -> Status {
      BOO_ASSIGN_OR_RETURN(TensorBinding t, roles.argument(name));
      step.bind(field, t);
      copy5(strides5(args[t.index]), strides);
      return ok_status();
    };
    for (size_t e = 0; e < kernels.size(); ++e) {
      const RefKernel& k = kernels[e];
      const TensorSpec& out = results[k.result];
      StepBuilder<ConvRefParams> step(entries[e].name, {1, 1, 1}, {kReferenceThreads, 1, 1});
      ConvRefParams& p = step.params;
      p.n = r.batch;
      p.ca = r.ca;
      p.cb = r.cb;
      p.groups = r.groups;
      copy3(r.a_size, p.a_size);
      copy3(r.b_size, p.b_size);
      copy3(r.f_size, p.f_size);
      copy3(r.stride, p.stride);
      copy3(r.pad, p.pad);
      copy3(r.dil, p.dil);
      p.act_alpha = sig.activation.alpha;
      p.act_lo = sig.activation.lo;
      p.act_hi = sig.activation.hi;
      if (k.task) {
        // The face reads the two operands that are not its result.
        const FaceTask& t = *k.task;
        if (t.a != t.result) BOO_RETURN_IF_ERROR(bind(step, p.a, p.a_strides, t.a));
        if (t.b != t.result) BOO_RETURN_IF_ERROR(bind(step, p.b, p.b_strides, t.b));
        if (t.w != t.result) BOO_RETURN_IF_ERROR(bind(step, p.w, p.w_strides, t.w));
        if (t.epilogue && sig.bias) {
          BOO_ASSIGN_OR_RETURN(TensorBinding bias, roles.argument("b"));
          step.bind(p.bias, bias);
        }
        if (t.epilogue && sig.residual) BOO_RETURN_IF_ERROR(bind(step, p.residual, p.residual_strides, "z"));
        copy5(strides5(out), p.out_strides);
        p.out_extent[0] = out.shape[0];
        p.out_extent[1] = out.shape[1];
        const Dims3 size = pad3(std::vector<int64_t>(out.shape.begin() + 2, out.shape.end()), 1);
        std::copy(size.begin(), size.end(), p.out_extent + 2);
      } else {
        // db sums dy over everything but its channels: dy bound as B, with its own shape.
        BOO_RETURN_IF_ERROR(bind(step, p.b, p.b_strides, "dy"));
        BOO_ASSIGN_OR_RETURN(TensorBinding dy, roles.argument("dy"));
        const TensorSpec& dy_spec = args[dy.index];
        p.n = dy_spec.shape[0];
        copy3(pad3(std::vector<int64_t>(dy_spec.shape.begin() + 2, dy_spec.shape.end()), 1), p.b_size);
        const long long extent[5] = {1, out.shape[0], 1, 1, 1}, strides[5] = {0, out.strides[0], 0, 0, 0};
        std::copy(extent, extent + 5, p.out_extent);
        std::copy(strides, strides + 5, p.out_strides);
      }
      p.count = request.sampled_result ? request.samples : out.numel();
      if (request.sampled_result) step.bind(p.positions, positions);
      step.bind(p.out, TensorBinding{TensorBinding::Source::kResult,
                                     static_cast<uint32_t>(request.sampled_result ? 0 : k.result), 0});
      LaunchStep launch = std::move(step).finish();
      launch.grid.x = grid_stride_blocks(p.count, kReferenceThreads, arch);
      plan.steps.push_back(std::move(launch));
    }
    return plan;
  }
};

}  // namespace

const GpuReference& gpu_reference() {
  static const ConvGpuReference reference;
  return reference;
}

}  // namespace boo::ops::conv
