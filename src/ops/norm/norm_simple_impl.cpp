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
  std::vector<Entry> out;
  if (p.forward)
    out.push_back(entry("forward", ", " + std::string(flag(p.weight)) + (p.rms() ? "" : ", " + std::string(flag(p.bias))),
                        false));
  if (p.dx) out.push_back(entry("backward_data", ", " + std::string(flag(p.weight)), false));
  if (p.rms() && p.dweight) out.push_back(entry("backward_weight", "", true));
  if (!p.rms() && p.param_grads())
    out.push_back(entry("backward_params", ", " + std::string(flag(p.dweight)) + ", " + flag(p.dbias), true));
  return out;
}

// The parameter block of a launch (both kinds' blocks have these fields).
template <typename Params>
Params shared_params(const NormProblem& p, std::span<const DeviceTensor> args, std::span<const DeviceTensor> results) {
  Params params{};
  bind_tensors(params, args, results);
  params.rows = p.rows;
  params.cols = p.cols;
  params.eps = static_cast<float>(p.eps);
  return params;
}

// Layer norm's adds x's shape and strides.
LayerNormParams layer_norm_params(const NormProblem& p, std::span<const DeviceTensor> args,
                                  std::span<const DeviceTensor> results) {
  LayerNormParams params = shared_params<LayerNormParams>(p, args, results);
  params.rank = p.x.rank();
  for (int d = 0; d < params.rank; ++d) {
    params.shape[d] = p.x.shape[static_cast<size_t>(d)];
    params.x_strides[d] = p.x.strides[static_cast<size_t>(d)];
  }
  return params;
}

class SimpleNorm final : public NormImplementation {
 public:
  using NormImplementation::NormImplementation;

  Status accepts(const OpSignature& sig, const DeviceInfo&) const override {
    BOO_ASSIGN_OR_RETURN(const NormProblem p, kind_problem(sig));
    // Only layer norm's x is strided (LayerNormParams' shape and strides).
    if (!p.rms() && p.x.rank() > kMaxRank)
      return unimplemented("rank " + std::to_string(p.x.rank()) + " > " + std::to_string(kMaxRank));
    return ok_status();
  }

  std::string compile_params(const OpSignature& sig, const DeviceInfo&) const override {
    Result<NormProblem> p = kind_problem(sig);
    if (!p.ok()) return "declined";
    std::string record = "dtype=" + std::string(dtype_name(p->dtype));
    for (const Entry& e : entries(*p)) record += ";" + e.name + "=" + e.call;
    return record;
  }

  Result<base::KernelSource> source(const OpSignature& sig, const DeviceInfo&) const override {
    BOO_ASSIGN_OR_RETURN(const NormProblem p, kind_problem(sig));
    std::vector<KernelEntry> kernels;
    for (const Entry& e : entries(p)) kernels.push_back({e.name, e.call, static_cast<int>(kThreads)});
    return generated_source(p.rms() ? "rmsnorm_simple.cu" : "layernorm_simple.cu", std::string(name()),
                            "boo/norm/norm_simple.cuh", p.rms() ? "boo::RmsNormParams" : "boo::LayerNormParams",
                            kernels);
  }

  Result<std::vector<KernelLaunch>> plan(const OpSignature& sig, const DeviceInfo& device,
                                         std::span<const DeviceTensor> args,
                                         std::span<const DeviceTensor> results, uint64_t) const override {
    BOO_ASSIGN_OR_RETURN(const NormProblem p, kind_problem(sig));
    KernelLaunch prototype;
    prototype.block[0] = kThreads;
    if (p.rms()) prototype.set_params(shared_params<RmsNormParams>(p, args, results));
    else prototype.set_params(layer_norm_params(p, args, results));
    const uint32_t row_blocks =
        static_cast<uint32_t>(std::clamp<long long>(p.rows, 1, int64_t{device.sm_count > 0 ? device.sm_count : 132} * 16));
    const uint32_t col_blocks = static_cast<uint32_t>(std::max<long long>(1, (p.cols + kThreads - 1) / kThreads));
    std::vector<KernelLaunch> launches;
    const std::vector<Entry> es = entries(p);
    for (size_t i = 0; i < es.size(); ++i) {
      KernelLaunch l = prototype;
      l.entry = i;
      l.grid[0] = es[i].per_column ? col_blocks : row_blocks;
      launches.push_back(std::move(l));
    }
    return launches;
  }
};

}  // namespace

std::unique_ptr<GpuImplementation> make_simple_implementation(NormKind kind, std::string name) {
  return std::make_unique<SimpleNorm>(kind, std::move(name));
}

}  // namespace boo::ops::norm
