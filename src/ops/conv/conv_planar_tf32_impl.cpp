// boo: gpu:conv:planar_tf32 — host side: which convs it takes, its tile
// width (the typed config) and the launch plan (device/conv_planar_tf32.cuh).
#include "ops/conv/conv_planar_tf32_impl.hpp"

#include <algorithm>
#include <iterator>

#include "boo/conv.hpp"
#include "ops/conv/conv_problem.hpp"
#include "ops/conv/device/conv_igemm_params.cuh"

namespace boo::ops::conv {
namespace {

constexpr int kThreads = 384;  // the producer warpgroup and two consumers
constexpr long long kTileM = 128, kBlockK = 32, kAPitch = kTileM + 8;
// Output channels per tile, widest first (the WgmmaTf32 shapes): BN / 2 running and BN / 2 k-block sums per
// consumer thread fit its registers up to 128.
constexpr long long kWidths[] = {128, 96, 64, 32};
// Microseconds a CTA spends on one k-block of a tile at each width (kWidths' order), 3xTF32, measured on an
// H100 (2026-11-27, docs/perf/2026-11-27-session9.md): a consumer's k-block is a chain of 12 dependent
// wgmma, so narrow tiles cost nearly what wide ones do and pay only where they give idle SMs tiles.
constexpr double kKBlockUs[] = {1.7, 2.6, 2.2, 1.5};
constexpr int kMaxStages = 4;
constexpr long long kInt32Max = (1LL << 31) - 1;

Status decline(const std::string& why) { return unimplemented("gpu:conv:planar_tf32 takes " + why); }

struct PlanarTf32Config final : Config {
  long long bn = 128;
  int stages = kMaxStages;
  long long m = 0, n = 0, k = 0;

  long long stage_bytes() const { return 2 * bn * 128 + kBlockK * kAPitch * 4; }
  // The stages, their barriers and 1 KiB to align the dynamic shared memory's start.
  long long shared_bytes() const { return stages * stage_bytes() + 2 * stages * 8 + 1024; }
  std::string text() const override {
    return "y: planar 3xtf32 gemm " + std::to_string(m) + "x" +
           std::to_string(n) + "x" + std::to_string(k) + " tile 128x" + std::to_string(bn) + "x32 stages " +
           std::to_string(stages);
  }
};

// The configured width `bn` (or the model's choice where 0): the deepest ring that fits.
Result<PlanarTf32Config> tiled(const ConvProblem& problem, const ArchSpec& arch, long long bn) {
  const Relation& r = problem.relation;
  PlanarTf32Config c;
  c.m = r.batch * r.pix_b();
  c.n = r.cb;
  c.k = r.ca;
  if (bn == 0) {
    // The width whose busiest SM finishes first: its tiles (ceil over the SMs) x k-blocks x a k-block's time.
    double best = 0;
    for (size_t i = 0; i < std::size(kWidths); ++i) {
      const long long tiles = ceil_div(c.m, kTileM) * ceil_div(c.n, kWidths[i]);
      const double us = static_cast<double>(ceil_div(tiles, arch.sm_count) * ceil_div(c.k, kBlockK)) * kKBlockUs[i];
      if (bn == 0 || us < best) {
        bn = kWidths[i];
        best = us;
      }
    }
  }
  c.bn = bn;
  while (c.stages > 2 && c.shared_bytes() > arch.max_shared_bytes_per_block) --c.stages;
  if (c.shared_bytes() > arch.max_shared_bytes_per_block)
    return unimplemented("gpu:conv:planar_tf32's tiles need " + std::to_string(c.shared_bytes()) +
                         " bytes of shared memory, more than the " + std::to_string(arch.max_shared_bytes_per_block) +
                         " a block may have");
  return c;
}

class PlanarTf32Conv final : public Tier<ConvProblem, PlanarTf32Config> {
 public:
  std::string_view name() const override { return "gpu:conv:planar_tf32"; }

  Status accepts_problem(const ConvProblem& problem, const ArchSpec& arch) const override {
    const Relation& r = problem.relation;
    if (arch.target != "sm_90a") return decline("sm_90a only (TF32 wgmma), the device is " + arch.target);
    if (problem.dtype != DType::kF32) return decline("fp32 only, not " + std::string(dtype_name(problem.dtype)));
    // One TF32 product per k8 step leaves this kernel's fixed costs per k-block exposed: gpu:conv:implicit_gemm's
    // mma.sync TF32 ran these convs 0.8-0.9x its time on an H100 (docs/perf/2026-11-27-session9.md).
    if (problem.conv().fp32_tf32)
      return decline("full-precision fp32 only; --fp32-math tf32 runs on gpu:conv:implicit_gemm's TF32 mma.sync");
    if (problem.tasks.size() != 1 || problem.tasks[0].face != kForwardFace || problem.bias_gradient)
      return decline("the forward face alone (-F 1 of a regular conv), without a bias gradient");
    bool one_by_one = r.groups == 1;
    for (int d = 0; d < 3; ++d) one_by_one &= r.f_size[d] == 1 && r.pad[d] == 0;
    if (!one_by_one) return decline("1x1 convs without padding, of groups 1, only (any stride)");
    if (problem.fp32_result) return decline("no GEMM epilogue's fp32 sums");
    if (!planar_pixels(r.a_strides, r.a_size) || !planar_pixels(r.b_strides, r.b_size))
      return decline("activations whose channels' pixels are contiguous (NCHW, NCDHW) only; channels-last ones are "
                     "the GEMM tiers'");
    // w's rows of input channels read as 16-byte vectors.
    if (r.ca % 4 != 0) return decline("input channels that are a multiple of 4, not " + std::to_string(r.ca));
    if (r.w_strides[1] != 1 || r.w_strides[0] % 4 != 0)
      return decline("filters whose input channels are contiguous with 16-byte aligned rows (KCRS) only");
    if (r.batch * r.pix_b() > kInt32Max) return decline("at most 2^31 - 1 pixels over the batch");
    return ok_status();
  }

  Result<PlanarTf32Config> configure_problem(const ConvProblem& problem, const ArchSpec& arch) const override {
    return tiled(problem, arch, 0);
  }

  // boo tune times every other width.
  std::vector<PlanarTf32Config> alternatives(const ConvProblem& problem, const ArchSpec& arch,
                                             const PlanarTf32Config& chosen) const override {
    std::vector<PlanarTf32Config> out;
    for (long long w : kWidths)
      if (w != chosen.bn)
        if (Result<PlanarTf32Config> c = tiled(problem, arch, w); c.ok()) out.push_back(std::move(*c));
    return out;
  }

  Result<Plan> plan_problem(const ConvProblem& problem, const PlanarTf32Config& config,
                            const ArchSpec& arch) const override {
    const ConvSignature& sig = problem.conv();
    const Relation& r = problem.relation;
    const FaceTask& task = problem.tasks[0];
    const long long hw = r.pix_b();
    const Strides5& xs = r.a_strides;
    const Strides5& ys = r.b_strides;
    // 16-byte copies of 4 pixels where they are consecutive in x (stride 1) and no vector straddles a channel;
    // 8-byte stores of pixel pairs where y's (and z's, laid out as y) pairs are 8-byte aligned.
    const bool vec_x = r.pointwise() && hw % 4 == 0 && xs[1] % 4 == 0 && (r.batch == 1 || xs[0] % 4 == 0);
    const bool pairs = hw % 2 == 0 && ys[1] % 2 == 0 && (r.batch == 1 || ys[0] % 2 == 0);
    auto constant = [](const char* name, long long v) {
      return "  static constexpr " + std::string(v > kInt32Max ? "long long " : "int ") + name + " = " +
             std::to_string(v) + ";\n";
    };
    auto flag = [](const char* name, bool v) {
      return "  static constexpr bool " + std::string(name) + " = " + (v ? "true" : "false") + ";\n";
    };
    std::string cfg = "struct Cfg {\n";
    cfg += constant("kM", config.m) + constant("kN", config.n) + constant("kK", config.k) + constant("kHW", hw) +
           constant("kOHW", r.b_size[1] * r.b_size[2]) + constant("kOW", r.b_size[2]);
    cfg += constant("XN", xs[0]) + constant("XC", xs[1]) + constant("XD", xs[2] * r.stride[0]) +
           constant("XH", xs[3] * r.stride[1]) + constant("XW", xs[4] * r.stride[2]) + constant("YN", ys[0]) +
           constant("YC", ys[1]) + constant("WK", r.w_strides[0]);
    cfg += constant("BN", config.bn) + constant("STAGES", config.stages) + flag("kVecX", vec_x) + flag("kPairs", pairs);
    cfg += flag("kBias", task.epilogue && sig.bias) + flag("kResidual", task.epilogue && sig.residual) +
           constant("kAct", task.epilogue ? static_cast<int>(sig.activation.kind) : 0);
    cfg += "};\n";
    Plan plan;
    const std::string entry = "boo_planar_tf32_y";
    plan.source.name = "conv_planar_tf32.cu";
    plan.source.text = "// Generated by boo: gpu:conv:planar_tf32.\n#include \"boo/conv/conv_planar_tf32.cuh\"\n\n" +
                       cfg + "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(kThreads) + ", 1) " +
                       entry + "(const boo::ConvIgemmParams p) { boo::planar_tf32::forward<Cfg>(p); }\n";
    plan.source.entries.push_back(entry);
    // w is read as 16-byte vectors, x too with vec_x, y written as 8-byte pairs.
    plan.tensor_alignment = 16;
    const long long tiles = ceil_div(config.m, kTileM) * ceil_div(config.n, config.bn);
    BOO_ASSIGN_OR_RETURN(uint32_t ctas, grid_extent(std::min<long long>(tiles, arch.sm_count), kInt32Max, "x"));
    StepBuilder<ConvIgemmParams> step(entry, {ctas, 1, 1}, {kThreads, 1, 1}, static_cast<uint32_t>(config.shared_bytes()));
    step.params.act_alpha = static_cast<float>(sig.activation.alpha);
    step.params.act_lo = static_cast<float>(sig.activation.lo);
    step.params.act_hi = static_cast<float>(sig.activation.hi);
    const TensorRoles roles(sig);
    BOO_ASSIGN_OR_RETURN(TensorBinding x, roles.tensor(task.a));
    BOO_ASSIGN_OR_RETURN(TensorBinding y, roles.tensor(task.b));
    BOO_ASSIGN_OR_RETURN(TensorBinding w, roles.tensor(task.w));
    step.bind(step.params.a, x);
    step.bind(step.params.w, w);
    step.bind(step.params.out, y);
    if (task.epilogue && sig.bias) {
      BOO_ASSIGN_OR_RETURN(TensorBinding bias, roles.argument("b"));
      step.bind(step.params.bias, bias);
    }
    if (task.epilogue && sig.residual) {
      BOO_ASSIGN_OR_RETURN(TensorBinding z, roles.tensor("z"));
      step.bind(step.params.residual, z);
    }
    plan.steps.push_back(std::move(step).finish());
    return plan;
  }
};

}  // namespace

const GpuImplementation& planar_tf32_implementation() {
  static const PlanarTf32Conv impl;
  return impl;
}

}  // namespace boo::ops::conv
