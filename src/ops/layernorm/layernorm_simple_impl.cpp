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

class SimpleLayerNorm final : public GpuImplementation {
 public:
  std::string_view name() const override { return "gpu:layernorm:simple"; }

  Status accepts(const OpSignature& sig, const DeviceInfo&) const override {
    const auto* ln = dynamic_cast<const LayerNormSignature*>(&sig);
    if (!ln) return invalid_argument("not a layernorm signature");
    if (ln->input_shape.size() > kMaxRank)
      return unimplemented("rank " + std::to_string(ln->input_shape.size()) + " > " + std::to_string(kMaxRank));
    return ok_status();
  }

  std::string compile_params(const OpSignature& sig, const DeviceInfo&) const override {
    const auto& ln = dynamic_cast<const LayerNormSignature&>(sig);
    std::string record = "dtype=" + std::string(dtype_name(ln.dtype));
    for (const Entry& e : entries(ln)) record += ";" + std::string(e.name) + "=" + e.call;
    return record;
  }

  Result<base::KernelSource> source(const OpSignature& sig, const DeviceInfo&) const override {
    std::vector<KernelEntry> kernels;
    for (const Entry& e : entries(dynamic_cast<const LayerNormSignature&>(sig)))
      kernels.push_back({e.name, e.call, static_cast<int>(kThreads)});
    return generated_source("layernorm_simple.cu", std::string(name()), "boo/layernorm/layernorm_simple.cuh",
                            "boo::LayerNormParams", kernels);
  }

  Result<std::vector<KernelLaunch>> plan(const OpSignature& sig, const DeviceInfo& device,
                                         std::span<const DeviceTensor> args,
                                         std::span<const DeviceTensor> results, uint64_t) const override {
    const auto& ln = dynamic_cast<const LayerNormSignature&>(sig);
    auto address = [&](std::string_view name) { return tensor_address(args, results, name); };
    LayerNormParams p{};
    p.rows = ln.rows();
    p.cols = ln.row_length();
    p.rank = static_cast<int>(ln.input_shape.size());
    p.eps = static_cast<float>(ln.eps);
    const TensorSpec x = ln.x_spec();
    for (int d = 0; d < p.rank; ++d) {
      p.shape[d] = x.shape[static_cast<size_t>(d)];
      p.x_strides[d] = x.strides[static_cast<size_t>(d)];
    }
    p.x = address("x");
    p.weight = address("weight");
    p.bias = address("bias");
    p.dy = address("dy");
    p.mean = address("mean");  // a result with the forward, an argument without
    p.rstd = address("rstd");
    p.y = address("y");
    p.dx = address("dx");
    p.dweight = address("dweight");
    p.dbias = address("dbias");
    const uint32_t row_blocks =
        static_cast<uint32_t>(std::clamp<long long>(p.rows, 1, int64_t{device.sm_count > 0 ? device.sm_count : 132} * 16));
    const uint32_t col_blocks = static_cast<uint32_t>(std::max<long long>(1, (p.cols + kThreads - 1) / kThreads));
    std::vector<KernelLaunch> launches;
    const std::vector<Entry> es = entries(ln);
    for (size_t i = 0; i < es.size(); ++i) {
      KernelLaunch l;
      l.entry = i;
      l.grid[0] = std::string_view(es[i].name) == "boo_layernorm_backward_params" ? col_blocks : row_blocks;
      l.block[0] = kThreads;
      l.set_params(p);
      launches.push_back(std::move(l));
    }
    return launches;
  }
};

}  // namespace

const GpuImplementation& simple_implementation() {
  static const SimpleLayerNorm impl;
  return impl;
}

}  // namespace boo::ops::layernorm
