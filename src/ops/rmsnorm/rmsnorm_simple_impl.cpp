// boo: gpu:rmsnorm:simple — host side: kernel source and launch plan.
#include "ops/rmsnorm/rmsnorm_simple_impl.hpp"

#include <algorithm>

#include "boo/rmsnorm.hpp"
#include "ops/common/generated_source.hpp"
#include "ops/rmsnorm/device/rmsnorm_params.cuh"

namespace boo::ops::rmsnorm {
namespace {

constexpr uint32_t kThreads = 256;

struct Entry {
  const char* name;
  std::string call;
  bool per_column;  ///< one thread per column (else a block per row)
};

// The kernels of a signature, in launch order (the forward first: with -F 0
// the backward reads the rstd it writes).
std::vector<Entry> entries(const RmsNormSignature& sig) {
  const std::string t = device_type(sig.dtype), w = sig.weight ? "true" : "false";
  std::vector<Entry> out;
  if (sig.directions & kRmsNormForward)
    out.push_back({"boo_rmsnorm_forward", "boo::rmsnorm_forward<" + t + ", " + w + ">(p)", false});
  if (sig.directions & kRmsNormBackwardData)
    out.push_back({"boo_rmsnorm_backward_data", "boo::rmsnorm_backward_data<" + t + ", " + w + ">(p)", false});
  if (sig.directions & kRmsNormBackwardWeight)
    out.push_back({"boo_rmsnorm_backward_weight", "boo::rmsnorm_backward_weight<" + t + ">(p)", true});
  return out;
}

// The configuration: the kernels, in launch order.
struct SimpleConfig final : Config {
  std::vector<Entry> entries;
  DType dtype = DType::kF32;

  std::string text() const override {
    std::string record = "dtype=" + std::string(dtype_name(dtype));
    for (const Entry& e : entries) record += ";" + std::string(e.name) + "=" + e.call;
    return record;
  }
};

class SimpleRmsNorm final : public Tier<RmsNormProblem, SimpleConfig> {
 public:
  std::string_view name() const override { return "gpu:rmsnorm:simple"; }

  Status accepts_problem(const RmsNormProblem&, const ArchSpec&) const override { return ok_status(); }

  Result<SimpleConfig> configure_problem(const RmsNormProblem& problem, const ArchSpec&) const override {
    SimpleConfig config;
    config.entries = entries(problem.typed());
    config.dtype = problem.typed().dtype;
    return config;
  }

  Result<Plan> plan_problem(const RmsNormProblem& problem, const SimpleConfig& config,
                            const ArchSpec& arch) const override {
    const RmsNormSignature& sig = problem.typed();
    Plan plan;
    std::vector<KernelEntry> kernels;
    for (const Entry& e : config.entries) kernels.push_back({e.name, e.call, static_cast<int>(kThreads)});
    plan.source = generated_source("rmsnorm_simple.cu", std::string(name()), "boo/rmsnorm/rmsnorm_simple.cuh", "boo::RmsNormParams", kernels);
    plan.tensor_alignment = static_cast<uint32_t>(dtype_size_bytes(sig.dtype));
    const TensorRoles roles(sig);
    const uint32_t row_blocks = static_cast<uint32_t>(std::clamp<long long>(sig.rows(), 1, arch.sm_count * 16LL));
    const uint32_t col_blocks =
        static_cast<uint32_t>(std::max<long long>(1, (sig.row_length() + kThreads - 1) / kThreads));
    for (const Entry& e : config.entries) {
      StepBuilder<RmsNormParams> step(e.name, {e.per_column ? col_blocks : row_blocks, 1, 1}, {kThreads, 1, 1});
      RmsNormParams& p = step.params;
      p.rows = sig.rows();
      p.cols = sig.row_length();
      p.eps = static_cast<float>(sig.eps);
      // Every kernel takes the same block; the tensors a signature lacks stay null.
      const std::pair<unsigned long long*, const char*> tensors[] = {{&p.x, "x"}, {&p.weight, "weight"}, {&p.y, "y"}, {&p.rstd, "rstd"}, {&p.dy, "dy"}, {&p.dx, "dx"},
          {&p.dweight, "dweight"}};
      for (const auto& [field, tensor] : tensors)
        if (std::optional<TensorBinding> t = roles.find(tensor)) step.bind(*field, *t);
      plan.steps.push_back(std::move(step).finish());
    }
    return plan;
  }
};

}  // namespace

const GpuImplementation& simple_implementation() {
  static const SimpleRmsNorm impl;
  return impl;
}

}  // namespace boo::ops::rmsnorm
