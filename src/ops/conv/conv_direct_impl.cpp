// boo: gpu:conv:direct — host side: kernel source and launch plan.
#include "ops/conv/conv_direct_impl.hpp"

#include <algorithm>

#include "boo/conv.hpp"
#include "ops/common/generated_source.hpp"
#include "ops/conv/conv_problem.hpp"
#include "ops/conv/device/conv_direct_params.cuh"

namespace boo::ops::conv {
namespace {

constexpr uint32_t kThreads = 256;

// One kernel of the plan: the task it computes (none for db and for the sum of the weight face's partials) and
// its device call.
struct DirectKernel {
  std::string entry;
  std::string call;
  std::optional<FaceTask> task;
  long long partial_splits = 0;  // conv_weight_face's partials: the blocks a weight (grid y); 0 for dw itself
  bool sums_partials = false;    // conv_weight_partials_sum: dw from the workspace's partials
};

// The weight face of a filter of few weights splits the positions over this many blocks a weight (block y of
// the grid), so that about two blocks run per SM, each thread keeping at least 4 positions: 4 blocks of 256
// threads, one per weight of a 2 -> 2-channel 1x1 filter, walked 6144 positions each, 24 dependent load pairs a
// thread (12.7 us against cuDNN's 6.2, H100). 1: no split.
long long weight_splits(const Relation& r, const ArchSpec& arch) {
  const long long weights = r.cb * r.ag() * r.taps(), positions = r.batch * r.pix_b();
  const long long wanted = ceil_div(2LL * arch.sm_count, weights);
  return std::clamp<long long>(std::min(wanted, positions / (4 * kThreads)), 1, 64);
}

// The configuration: the kernels, in launch order. Everything else is
// passed at launch, so the text names each kernel's template instance.
struct DirectConfig final : Config {
  std::vector<DirectKernel> kernels;
  DType dtype = DType::kF32;

  std::string text() const override {
    std::string record = "dtype=" + std::string(dtype_name(dtype));
    for (const DirectKernel& k : kernels) record += ";" + k.entry + "=" + k.call;
    return record;
  }
};

void copy3(const Dims3& from, long long to[3]) { std::copy(from.begin(), from.end(), to); }
void copy5(const Strides5& from, long long to[5]) { std::copy(from.begin(), from.end(), to); }

class DirectConv final : public Tier<ConvProblem, DirectConfig> {
 public:
  std::string_view name() const override { return "gpu:conv:direct"; }

  Status accepts_problem(const ConvProblem& problem, const ArchSpec&) const override {
    return problem.fp32_result_supported(name());
  }

  Result<DirectConfig> configure_problem(const ConvProblem& problem, const ArchSpec& arch) const override {
    const ConvSignature& sig = problem.conv();
    const std::string t = device_type(sig.dtype);
    DirectConfig config;
    config.dtype = sig.dtype;
    // The faces' index arithmetic in 32 bits where every tensor's elements (so every offset and loop
    // count) stay below 2^31 (conv_direct.cuh).
    const long long limit = (1LL << 31) - 1;
    const bool narrow = sig.x_spec().storage_elems() <= limit && sig.w_spec().storage_elems() <= limit &&
                        sig.y_spec().storage_elems() <= limit;
    const std::string tt = std::string(narrow ? "int" : "long long") + ", " + t;
    for (const FaceTask& task : problem.tasks) {
      const std::string act = task.epilogue ? std::to_string(static_cast<int>(sig.activation.kind)) : "0";
      const std::string bias = task.epilogue && sig.bias ? "true" : "false";
      // The residual's template argument only where it is on: the other kernels' texts (and cache keys) stay.
      const std::string residual = task.epilogue && sig.residual ? ", true" : "";
      const long long splits =
          task.face == kWeightFace && !problem.fp32_result ? weight_splits(problem.relation, arch) : 1;
      if (splits > 1) {
        // The partials, then their sum into dw.
        config.kernels.push_back(
            {"boo_conv_direct_dw_partials", "boo::conv_weight_face<" + tt + ", true>(p)", task, splits});
        config.kernels.push_back({"boo_conv_direct_dw",
                                  "boo::conv_weight_partials_sum<" + tt + ", " + std::to_string(splits) + ">(p)",
                                  task, 0, true});
        continue;
      }
      std::string call = task.face == kWeightFace ? "boo::conv_weight_face<" + tt + ">(p)"
                         : task.face == kDataFace
                             ? "boo::conv_data_face<" + tt + ", " + act + ", " + bias + residual + ">(p)"
                         : problem.fp32_result ? "boo::conv_forward_face<" + tt + ", 0, false, true>(p)"
                                               : "boo::conv_forward_face<" + tt + ", " + act + ", " + bias +
                                                     (residual.empty() ? "" : ", false" + residual) + ">(p)";
      config.kernels.push_back({"boo_conv_direct_" + task.result, std::move(call), task});
    }
    if (problem.bias_gradient)
      config.kernels.push_back({"boo_conv_direct_db", "boo::conv_bias_gradient<" + t + ">(p)", std::nullopt});
    return config;
  }

  Result<Plan> plan_problem(const ConvProblem& problem, const DirectConfig& config,
                            const ArchSpec& arch) const override {
    const ConvSignature& conv = problem.conv();
    const Relation& r = problem.relation;
    Plan plan;
    std::vector<KernelEntry> entries;
    for (const DirectKernel& k : config.kernels) entries.push_back({k.entry, k.call, static_cast<int>(kThreads)});
    plan.source = generated_source("conv_direct.cu", std::string(name()), "boo/conv/conv_direct.cuh",
                                   "boo::ConvFaceParams", entries);
    plan.tensor_alignment = static_cast<uint32_t>(problem.elem_bytes);
    const TensorRoles roles(conv);
    std::vector<TensorSpec> specs = conv.arguments();
    for (TensorSpec& s : conv.results()) specs.push_back(std::move(s));
    // Binds the signature tensor `name` (an argument, or the task's result) to `field`, with its strides.
    auto bind = [&](StepBuilder<ConvFaceParams>& step, unsigned long long& field, long long strides[5],
                    const std::string& name) -> Status {
      BOO_ASSIGN_OR_RETURN(TensorBinding t, roles.tensor(name));
      step.bind(field, t);
      for (const TensorSpec& s : specs)
        if (s.name == name) copy5(strides5(s), strides);
      return ok_status();
    };
    // Grid-stride loops beyond 64 blocks per SM.
    auto grid_for = [&](long long blocks) { return static_cast<uint32_t>(std::clamp<long long>(blocks, 1, arch.sm_count * 64LL)); };
    const long long a_total = r.batch * r.ca * r.pix_a(), b_total = r.batch * r.cb * r.pix_b();
    for (const DirectKernel& k : config.kernels) {
      StepBuilder<ConvFaceParams> step(k.entry, {1, 1, 1}, {kThreads, 1, 1});
      ConvFaceParams& p = step.params;
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
      p.act_alpha = static_cast<float>(conv.activation.alpha);
      p.act_lo = static_cast<float>(conv.activation.lo);
      p.act_hi = static_cast<float>(conv.activation.hi);
      LaunchStep launch;
      const long long weights = r.cb * r.ag() * r.taps();
      if (k.sums_partials) {
        // dw from the partials at the workspace's start (kSplits x weights fp32): a thread per weight.
        step.bind(p.a, TensorBinding::workspace(0));
        BOO_RETURN_IF_ERROR(bind(step, p.w, p.w_strides, k.task->w));
        launch = std::move(step).finish();
        launch.grid.x = grid_for(ceil_div(weights, kThreads));
      } else if (k.task) {
        const FaceTask& task = *k.task;
        const bool partials = k.partial_splits > 0;
        BOO_RETURN_IF_ERROR(bind(step, p.a, p.a_strides, task.a));
        if (problem.fp32_result)  // the sums, (groups, N x pixels, channels of a group) fp32, at the workspace's start
          step.bind(p.b, TensorBinding::workspace(0));
        else
          BOO_RETURN_IF_ERROR(bind(step, p.b, p.b_strides, task.b));
        if (partials)  // the weights' partials, split-major, at the workspace's start
          step.bind(p.w, TensorBinding::workspace(0));
        else
          BOO_RETURN_IF_ERROR(bind(step, p.w, p.w_strides, task.w));
        if (task.epilogue && conv.bias) {
          BOO_ASSIGN_OR_RETURN(TensorBinding bias, roles.argument("b"));
          step.bind(p.bias, bias);
        }
        if (task.epilogue && conv.residual) {
          BOO_ASSIGN_OR_RETURN(TensorBinding z, roles.argument("z"));
          step.bind(p.residual, z);
        }
        launch = std::move(step).finish();
        // A thread per output element; for the weight face a block per weight element (see conv_weight_face).
        const long long blocks = task.face == kWeightFace ? weights
                                 : task.face == kForwardFace ? ceil_div(b_total, kThreads)
                                                             : ceil_div(a_total, kThreads);
        launch.grid.x = grid_for(blocks);
        if (partials) {
          launch.grid.y = static_cast<uint32_t>(k.partial_splits);
          plan.workspace_bytes = static_cast<size_t>(launch.grid.y) * static_cast<size_t>(weights) * sizeof(float);
        }
      } else {
        // The bias gradient reduces dy, which has the y shape: bound as B with K channels.
        BOO_RETURN_IF_ERROR(bind(step, p.b, p.b_strides, "dy"));
        BOO_ASSIGN_OR_RETURN(TensorBinding db, roles.result("db"));
        step.bind(p.bias, db);
        p.cb = conv.k;
        copy3(pad3(conv.output_size(), 1), p.b_size);
        launch = std::move(step).finish();
        launch.grid.x = static_cast<uint32_t>(std::min<long long>(conv.k, 65535));
      }
      plan.steps.push_back(std::move(launch));
    }
    if (problem.fp32_result) plan.workspace_bytes = static_cast<size_t>(b_total) * sizeof(float);
    return plan;
  }
};

}  // namespace

const GpuImplementation& direct_implementation() {
  static const DirectConv impl;
  return impl;
}

}  // namespace boo::ops::conv
