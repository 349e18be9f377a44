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

class SimpleRmsNorm final : public GpuImplementation {
 public:
  std::string_view name() const override { return "gpu:rmsnorm:simple"; }

  Status accepts(const OpSignature& sig, const DeviceInfo&) const override {
    if (!dynamic_cast<const RmsNormSignature*>(&sig)) return invalid_argument("not an rmsnorm signature");
    return ok_status();
  }

  std::string compile_params(const OpSignature& sig, const DeviceInfo&) const override {
    const auto& rms = dynamic_cast<const RmsNormSignature&>(sig);
    std::string record = "dtype=" + std::string(dtype_name(rms.dtype));
    for (const Entry& e : entries(rms)) record += ";" + std::string(e.name) + "=" + e.call;
    return record;
  }

  Result<base::KernelSource> source(const OpSignature& sig, const DeviceInfo&) const override {
    std::vector<KernelEntry> kernels;
    for (const Entry& e : entries(dynamic_cast<const RmsNormSignature&>(sig)))
      kernels.push_back({e.name, e.call, static_cast<int>(kThreads)});
    return generated_source("rmsnorm_simple.cu", std::string(name()), "boo/rmsnorm/rmsnorm_simple.cuh",
                            "boo::RmsNormParams", kernels);
  }

  Result<std::vector<KernelLaunch>> plan(const OpSignature& sig, const DeviceInfo& device,
                                         std::span<const DeviceTensor> args,
                                         std::span<const DeviceTensor> results, uint64_t) const override {
    const auto& rms = dynamic_cast<const RmsNormSignature&>(sig);
    auto address = [&](std::string_view name) { return tensor_address(args, results, name); };
    RmsNormParams p{};
    p.rows = rms.rows();
    p.cols = rms.row_length();
    p.eps = static_cast<float>(rms.eps);
    p.x = address("x");
    p.weight = address("weight");
    p.y = address("y");
    p.rstd = address("rstd");  // a result with the forward, an argument without
    p.dy = address("dy");
    p.dx = address("dx");
    p.dweight = address("dweight");
    const uint32_t row_blocks = static_cast<uint32_t>(
        std::clamp<long long>(p.rows, 1, int64_t{device.sm_count > 0 ? device.sm_count : 132} * 16));
    const uint32_t col_blocks = static_cast<uint32_t>(std::max<long long>(1, (p.cols + kThreads - 1) / kThreads));
    std::vector<KernelLaunch> launches;
    const std::vector<Entry> es = entries(rms);
    for (size_t i = 0; i < es.size(); ++i) {
      KernelLaunch l;
      l.entry = i;
      l.grid[0] = es[i].per_column ? col_blocks : row_blocks;
      l.block[0] = kThreads;
      l.set_params(p);
      launches.push_back(std::move(l));
    }
    return launches;
  }
};

}  // namespace

const GpuImplementation& simple_implementation() {
  static const SimpleRmsNorm impl;
  return impl;
}

}  // namespace boo::ops::rmsnorm
