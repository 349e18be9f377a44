// boo: gpu:conv:direct — host side: kernel source and launch plan.
#include "ops/conv/conv_direct_impl.hpp"

#include <algorithm>

#include "boo/conv.hpp"
#include "ops/common/generated_source.hpp"
#include "ops/conv/device/conv_direct_params.cuh"

namespace boo::ops::conv {
namespace {

constexpr uint32_t kThreads = 256;

// The kernels a signature needs, in launch order: name suffix and device call.
struct Face {
  const char* entry;
  std::string call;
};

std::vector<Face> faces(const ConvSignature& sig) {
  const std::string t = device_type(sig.dtype);
  const std::string act = std::to_string(static_cast<int>(sig.activation.kind));
  const std::string bias = sig.bias ? "true" : "false";
  std::vector<Face> out;
  if (sig.directions & kConvForward) {
    const char* face = sig.transposed ? "conv_data_face" : "conv_forward_face";
    out.push_back({"boo_conv_direct_y", std::string("boo::") + face + "<" + t + ", " + act + ", " + bias + ">(p)"});
  }
  if (sig.directions & kConvBackwardData) {
    const char* face = sig.transposed ? "conv_forward_face" : "conv_data_face";
    out.push_back({"boo_conv_direct_dx", std::string("boo::") + face + "<" + t + ", 0, false>(p)"});
  }
  if (sig.directions & kConvBackwardWeight) out.push_back({"boo_conv_direct_dw", "boo::conv_weight_face<" + t + ">(p)"});
  if (sig.directions & kConvBackwardBias) out.push_back({"boo_conv_direct_db", "boo::conv_bias_gradient<" + t + ">(p)"});
  return out;
}

// Per-dimension values padded to (D, H, W) with `fill` for the missing leading
// dims, and strides of a (N|F0, C|F1, spatial...) tensor padded to 5 entries
// with 0s for the missing spatial dims.
void pad3(const std::vector<int64_t>& v, long long fill, long long out[3]) {
  for (int i = 0; i < 3; ++i) out[i] = fill;
  for (size_t i = 0; i < v.size(); ++i) out[3 - v.size() + i] = v[i];
}

void pad_strides(const TensorSpec& spec, long long out[5]) {
  const size_t spatial = spec.strides.size() - 2;
  out[0] = spec.strides[0];
  out[1] = spec.strides[1];
  for (int i = 0; i < 3; ++i) out[2 + i] = 0;
  for (size_t i = 0; i < spatial; ++i) out[2 + 3 - spatial + i] = spec.strides[2 + i];
}

class DirectConv final : public GpuImplementation {
 public:
  std::string_view name() const override { return "gpu:conv:direct"; }

  Status accepts(const OpSignature& sig, const DeviceInfo&) const override {
    if (!dynamic_cast<const ConvSignature*>(&sig)) return invalid_argument("not a conv signature");
    return ok_status();
  }

  std::string compile_params(const OpSignature& sig, const DeviceInfo&) const override {
    const auto& conv = dynamic_cast<const ConvSignature&>(sig);
    std::string record = "dtype=" + std::string(dtype_name(conv.dtype));
    for (const Face& f : faces(conv)) record += ";" + std::string(f.entry) + "=" + f.call;
    return record;
  }

  Result<base::KernelSource> source(const OpSignature& sig, const DeviceInfo&) const override {
    std::vector<KernelEntry> kernels;
    for (const Face& f : faces(dynamic_cast<const ConvSignature&>(sig)))
      kernels.push_back({f.entry, f.call, static_cast<int>(kThreads)});
    return generated_source("conv_direct.cu", std::string(name()), "boo/conv/conv_direct.cuh", "boo::ConvFaceParams",
                            kernels);
  }

  Result<std::vector<KernelLaunch>> plan(const OpSignature& sig, const DeviceInfo& device,
                                         std::span<const DeviceTensor> args,
                                         std::span<const DeviceTensor> results, uint64_t) const override {
    const auto& conv = dynamic_cast<const ConvSignature&>(sig);
    auto find = [](std::span<const DeviceTensor> list, std::string_view name) { return find_tensor(list, name); };
    // Geometry of the regular relation: A is x (regular) or y (transposed).
    ConvFaceParams base{};
    base.n = conv.n;
    base.ca = conv.transposed ? conv.k : conv.c;
    base.cb = conv.transposed ? conv.c : conv.k;
    base.groups = conv.groups;
    pad3(conv.transposed ? conv.output_size() : conv.input_size, 1, base.a_size);
    pad3(conv.transposed ? conv.input_size : conv.output_size(), 1, base.b_size);
    pad3(conv.filter_size, 1, base.f_size);
    pad3(conv.stride, 1, base.stride);
    pad3(conv.dilation, 1, base.dil);
    pad3(conv.padding, 0, base.pad);
    base.act_alpha = static_cast<float>(conv.activation.alpha);
    base.act_lo = static_cast<float>(conv.activation.lo);
    base.act_hi = static_cast<float>(conv.activation.hi);

    // Binds a tensor to the A, B or W role.
    auto bind = [&](ConvFaceParams& p, char role, const DeviceTensor* t) -> Status {
      if (!t) return internal_error("gpu:conv:direct: a tensor of the plan is missing");
      if (role == 'a') {
        p.a = t->address;
        pad_strides(t->spec, p.a_strides);
      } else if (role == 'b') {
        p.b = t->address;
        pad_strides(t->spec, p.b_strides);
      } else {
        p.w = t->address;
        pad_strides(t->spec, p.w_strides);
      }
      return ok_status();
    };
    auto grid_for = [&](long long total) {
      const long long blocks = (total + kThreads - 1) / kThreads;
      return static_cast<uint32_t>(std::clamp<long long>(blocks, 1, int64_t{device.sm_count > 0 ? device.sm_count : 132} * 64));
    };
    std::vector<KernelLaunch> launches;
    size_t entry = 0;
    const char y_role = conv.transposed ? 'a' : 'b', x_role = conv.transposed ? 'b' : 'a';
    const long long a_total = base.n * base.ca * base.a_size[0] * base.a_size[1] * base.a_size[2];
    const long long b_total = base.n * base.cb * base.b_size[0] * base.b_size[1] * base.b_size[2];
    if (conv.directions & kConvForward) {
      ConvFaceParams p = base;
      BOO_RETURN_IF_ERROR(bind(p, x_role, find(args, "x")));
      BOO_RETURN_IF_ERROR(bind(p, 'w', find(args, "w")));
      BOO_RETURN_IF_ERROR(bind(p, y_role, find(results, "y")));
      if (conv.bias) p.bias = find(args, "b")->address;
      KernelLaunch l;
      l.entry = entry++;
      l.grid[0] = grid_for(conv.transposed ? a_total : b_total);
      l.block[0] = kThreads;
      l.set_params(p);
      launches.push_back(std::move(l));
    }
    if (conv.directions & kConvBackwardData) {
      ConvFaceParams p = base;
      BOO_RETURN_IF_ERROR(bind(p, y_role, find(args, "dy")));
      BOO_RETURN_IF_ERROR(bind(p, 'w', find(args, "w")));
      BOO_RETURN_IF_ERROR(bind(p, x_role, find(results, "dx")));
      KernelLaunch l;
      l.entry = entry++;
      l.grid[0] = grid_for(conv.transposed ? b_total : a_total);
      l.block[0] = kThreads;
      l.set_params(p);
      launches.push_back(std::move(l));
    }
    if (conv.directions & kConvBackwardWeight) {
      ConvFaceParams p = base;
      BOO_RETURN_IF_ERROR(bind(p, y_role, find(args, "dy")));
      BOO_RETURN_IF_ERROR(bind(p, x_role, find(args, "x")));
      BOO_RETURN_IF_ERROR(bind(p, 'w', find(results, "dw")));
      KernelLaunch l;
      l.entry = entry++;
      // A block per weight element (see conv_weight_face).
      const long long elements = base.cb * (base.ca / base.groups) * base.f_size[0] * base.f_size[1] * base.f_size[2];
      l.grid[0] = static_cast<uint32_t>(
          std::clamp<long long>(elements, 1, int64_t{device.sm_count > 0 ? device.sm_count : 132} * 64));
      l.block[0] = kThreads;
      l.set_params(p);
      launches.push_back(std::move(l));
    }
    if (conv.directions & kConvBackwardBias) {
      // The bias gradient reduces dy, which has the y shape: bind it as B with K channels.
      ConvFaceParams p = base;
      const DeviceTensor* dy = find(args, "dy");
      BOO_RETURN_IF_ERROR(bind(p, 'b', dy));
      p.cb = conv.k;
      pad3(conv.output_size(), 1, p.b_size);
      p.bias = find(results, "db")->address;
      KernelLaunch l;
      l.entry = entry++;
      l.grid[0] = static_cast<uint32_t>(std::min<long long>(conv.k, 65535));
      l.block[0] = kThreads;
      l.set_params(p);
      launches.push_back(std::move(l));
    }
    return launches;
  }
};

}  // namespace

const GpuImplementation& direct_implementation() {
  static const DirectConv impl;
  return impl;
}

}  // namespace boo::ops::conv
