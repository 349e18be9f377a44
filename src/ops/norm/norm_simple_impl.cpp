// boo: the simple norm kernels' host side — kernel source and launch plan.
#include "ops/norm/norm_simple_impl.hpp"

#include <algorithm>

#include "ops/common/generated_source.hpp"
#include "ops/norm/device/norm_simple_params.cuh"
#include "ops/norm/norm_implementation.hpp"

namespace boo::ops::norm {
namespace {

constexpr uint32_t kThreads = 256;
constexpr int kMaxRank = 8;  // LayerNormParams::shape

const char* flag(bool v) { return v ? "true" : "false"; }

struct Entry {
  std::string name, call;
  bool per_column;  ///< one thread per column (else a block per row)
};

// The kernels of a problem, in launch order (the forward first: with RMS
// norm's -F 0 the backward reads the rstd it writes). Each kind has its own
// kernel templates: boo::layernorm_* (strided x, bias) and boo::rmsnorm_*.
std::vector<Entry> entries(const NormProblem& p) {
  const std::string kernel_prefix = p.rms() ? "rmsnorm_" : "layernorm_", t = device_type(p.dtype);
  auto entry = [&](const std::string& kernel, const std::string& flags, bool per_column) {
    return Entry{"boo_" + kernel_prefix + kernel, "boo::" + kernel_prefix + kernel + "<" + t + flags + ">(p)",
                 per_column};
  };
  // Layer norm's kernels first take kLikeX: y, dy and dx strided like x.
  const std::string like_x = p.rms() ? "" : ", " + std::string(flag(p.strided_like_x));
  std::vector<Entry> out;
  if (p.forward)
    out.push_back(entry("forward",
                        like_x + ", " + flag(p.weight) + (p.rms() ? "" : ", " + std::string(flag(p.bias))), false));
  if (p.dx) out.push_back(entry("backward_data", like_x + ", " + flag(p.weight), false));
  if (p.rms() && p.dweight) out.push_back(entry("backward_weight", "", true));
  if (!p.rms() && p.param_grads())
    out.push_back(entry("backward_params", like_x + ", " + flag(p.dweight) + ", " + flag(p.dbias), true));
  return out;
}

// The configuration: the element type and the kernels, in launch order.
struct SimpleConfig final : Config {
  DType dtype = DType::kF32;
  std::vector<Entry> entries;

  std::string text() const override {
    std::string record = "dtype=" + std::string(dtype_name(dtype));
    for (const Entry& e : entries) record += ";" + e.name + "=" + e.call;
    return record;
  }
};

// The launch of `entry`: both kinds' parameter blocks have the tensors, the
// row count, length and eps; layer norm's also x's shape and strides.
template <typename Params>
LaunchStep launch(const NormProblem& p, const Entry& entry, const TensorRoles& roles, Dim3 grid, Dim3 block) {
  StepBuilder<Params> step(entry.name, grid, block);
  bind_tensors(step, roles);
  Params& params = step.params;
  params.rows = p.rows;
  params.cols = p.cols;
  params.eps = static_cast<float>(p.eps);
  if constexpr (requires { params.x_strides; }) {
    params.rank = p.x.rank();
    for (int d = 0; d < params.rank; ++d) {
      params.shape[d] = p.x.shape[static_cast<size_t>(d)];
      params.x_strides[d] = p.x.strides[static_cast<size_t>(d)];
    }
  }
  return std::move(step).finish();
}

class SimpleNorm final : public NormTier<SimpleConfig> {
 public:
  using NormTier::NormTier;

  Status accepts_problem(const NormProblem& p, const ArchSpec&) const override {
    BOO_RETURN_IF_ERROR(check_kind(p));
    // Only layer norm's x is strided (LayerNormParams' shape and strides).
    if (!p.rms() && p.x.rank() > kMaxRank)
      return unimplemented("rank " + std::to_string(p.x.rank()) + " > " + std::to_string(kMaxRank));
    return ok_status();
  }

  Result<SimpleConfig> configure_problem(const NormProblem& p, const ArchSpec&) const override {
    SimpleConfig config;
    config.dtype = p.dtype;
    config.entries = entries(p);
    return config;
  }

  Result<Plan> plan_problem(const NormProblem& p, const SimpleConfig& config, const ArchSpec& arch) const override {
    Plan plan;
    std::vector<KernelEntry> kernels;
    for (const Entry& e : config.entries) kernels.push_back({e.name, e.call, static_cast<int>(kThreads)});
    plan.source = generated_source(p.rms() ? "rmsnorm_simple.cu" : "layernorm_simple.cu", std::string(name()),
                                   "boo/norm/norm_simple.cuh",
                                   p.rms() ? "boo::RmsNormParams" : "boo::LayerNormParams", kernels);
    plan.tensor_alignment = static_cast<uint32_t>(dtype_size_bytes(p.dtype));
    const TensorRoles roles(p.signature());
    const uint32_t row_blocks = static_cast<uint32_t>(std::clamp<long long>(p.rows, 1, arch.sm_count * 16LL));
    const uint32_t col_blocks = static_cast<uint32_t>(std::max<long long>(1, (p.cols + kThreads - 1) / kThreads));
    for (const Entry& e : config.entries) {
      const Dim3 grid{e.per_column ? col_blocks : row_blocks, 1, 1}, block{kThreads, 1, 1};
      plan.steps.push_back(p.rms() ? launch<RmsNormParams>(p, e, roles, grid, block)
                                   : launch<LayerNormParams>(p, e, roles, grid, block));
    }
    return plan;
  }
};

}  // namespace

std::unique_ptr<GpuImplementation> make_simple_implementation(NormKind kind, std::string name) {
  return std::make_unique<SimpleNorm>(kind, std::move(name));
}

}  // namespace boo::ops::norm
