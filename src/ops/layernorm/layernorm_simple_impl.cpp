// boo: gpu:layernorm:simple — host side: kernel source and launch plan.
#include "ops/layernorm/layernorm_simple_impl.hpp"

#include <algorithm>

#include "boo/layernorm.hpp"
#include "ops/common/generated_source.hpp"
#include "ops/layernorm/device/layernorm_params.cuh"

namespace boo::ops::layernorm {
namespace {

constexpr uint32_t kThreads = 256;
constexpr int kMaxRank = 8;  // LayerNormParams::shape

struct Entry {
  const char* name;
  std::string call;
};

std::vector<Entry> entries(const LayerNormSignature& sig) {
  const std::string t = device_type(sig.dtype);
  auto b = [](bool v) { return v ? "true" : "false"; };
  std::vector<Entry> out;
  if (sig.directions & kLayerNormForward)
    out.push_back({"boo_layernorm_forward",
                   "boo::layernorm_forward<" + t + ", " + b(sig.weight) + ", " + b(sig.bias) + ">(p)"});
  if (sig.directions & kLayerNormBackwardData)
    out.push_back({"boo_layernorm_backward_data", "boo::layernorm_backward_data<" + t + ", " + b(sig.weight) + ">(p)"});
  const bool dw = sig.directions & kLayerNormBackwardWeight, db = sig.directions & kLayerNormBackwardBias;
  if (dw || db)
    out.push_back({"boo_layernorm_backward_params",
                   "boo::layernorm_backward_params<" + t + ", " + b(dw) + ", " + b(db) + ">(p)"});
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

class SimpleLayerNorm final : public Tier<LayerNormProblem, SimpleConfig> {
 public:
  std::string_view name() const override { return "gpu:layernorm:simple"; }

  Status accepts_problem(const LayerNormProblem& problem, const ArchSpec&) const override {
    const size_t rank = problem.typed().input_shape.size();
    if (rank > kMaxRank) return unimplemented("rank " + std::to_string(rank) + " > " + std::to_string(kMaxRank));
    return ok_status();
  }

  Result<SimpleConfig> configure_problem(const LayerNormProblem& problem, const ArchSpec&) const override {
    SimpleConfig config;
    config.entries = entries(problem.typed());
    config.dtype = problem.typed().dtype;
    return config;
  }

  Result<Plan> plan_problem(const LayerNormProblem& problem, const SimpleConfig& config,
                            const ArchSpec& arch) const override {
    const LayerNormSignature& sig = problem.typed();
    Plan plan;
    std::vector<KernelEntry> kernels;
    for (const Entry& e : config.entries) kernels.push_back({e.name, e.call, static_cast<int>(kThreads)});
    plan.source = generated_source("layernorm_simple.cu", std::string(name()), "boo/layernorm/layernorm_simple.cuh", "boo::LayerNormParams", kernels);
    plan.tensor_alignment = static_cast<uint32_t>(dtype_size_bytes(sig.dtype));
    const TensorRoles roles(sig);
    const uint32_t row_blocks = static_cast<uint32_t>(std::clamp<long long>(sig.rows(), 1, arch.sm_count * 16LL));
    const uint32_t col_blocks =
        static_cast<uint32_t>(std::max<long long>(1, (sig.row_length() + kThreads - 1) / kThreads));
    for (const Entry& e : config.entries) {
      StepBuilder<LayerNormParams> step(e.name, {std::string_view(e.name) == "boo_layernorm_backward_params" ? col_blocks : row_blocks, 1, 1}, {kThreads, 1, 1});
      LayerNormParams& p = step.params;
      p.rows = sig.rows();
      p.cols = sig.row_length();
      p.rank = static_cast<int>(sig.input_shape.size());
      p.eps = static_cast<float>(sig.eps);
      const TensorSpec x = sig.x_spec();
      for (int d = 0; d < p.rank; ++d) {
        p.shape[d] = x.shape[static_cast<size_t>(d)];
        p.x_strides[d] = x.strides[static_cast<size_t>(d)];
      }
      // Every kernel takes the same block; the tensors a signature lacks stay null.
      const std::pair<unsigned long long*, const char*> tensors[] = {{&p.x, "x"}, {&p.weight, "weight"}, {&p.bias, "bias"}, {&p.dy, "dy"}, {&p.mean, "mean"}, {&p.rstd, "rstd"},
          {&p.y, "y"}, {&p.dx, "dx"}, {&p.dweight, "dweight"}, {&p.dbias, "dbias"}};
      for (const auto& [field, tensor] : tensors)
        if (std::optional<TensorBinding> t = roles.find(tensor)) step.bind(*field, *t);
      plan.steps.push_back(std::move(step).finish());
    }
    return plan;
  }
};

}  // namespace

const GpuImplementation& simple_implementation() {
  static const SimpleLayerNorm impl;
  return impl;
}

}  // namespace boo::ops::layernorm
