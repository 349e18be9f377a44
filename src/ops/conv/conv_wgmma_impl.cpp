// boo: gpu:conv:wgmma_sm90 — host side: which convs the Hopper kernel takes,
// its tile (the typed config) and the launch plan.
#include "ops/conv/conv_wgmma_impl.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include "boo/conv.hpp"
#include "ops/common/generated_source.hpp"
#include "ops/conv/conv_problem.hpp"
#include "ops/conv/device/conv_igemm_params.cuh"

namespace boo::ops::conv {
namespace {

// conv_wgmma.cuh's fixed shape: 128-row tiles, 64-wide k-blocks (one tap's 64
// channels), one producer and two consumer warpgroups.
constexpr long long kTileRows = 128, kBlockK = 64;
constexpr uint32_t kThreads = 384;
// Below these the GEMM is too small to fill the GPU with 128 x 128 tiles, or
// too narrow for the wgmma tile (gpu:conv:implicit_gemm's smaller tiles do better).
constexpr long long kMinPixels = 4096, kMinOutputChannels = 128;
// Shared memory beyond the stages and the epilogue's staging: the barriers and
// the slack for aligning the start to 1024 bytes.
constexpr long long kSharedOverhead = 1024 + 256;

struct WgmmaConfig final : Config {
  int bn = 256;     // output channels per CTA tile (the wgmma N): 128, 192 or 256
  int stages = 4;   // depth of the shared-memory ring

  std::string text() const override {
    return "tile " + std::to_string(kTileRows) + "x" + std::to_string(bn) + "x" + std::to_string(kBlockK) +
           " stages " + std::to_string(stages) + " warpgroups 1 producer + 2 consumers, persistent";
  }
  long long stage_bytes() const { return (kTileRows + bn) * kBlockK * 2; }
  /// conv_wgmma.cuh's Layout: two consumers' 32 output rows at a time, rows padded by 16 bytes.
  long long staging_bytes() const { return 2 * 32 * (bn + 8) * 2; }
  long long shared_bytes() const { return stages * stage_bytes() + staging_bytes() + kSharedOverhead; }
};

Status decline(const std::string& why) { return unimplemented("gpu:conv:wgmma_sm90 runs " + why); }

// Whether a channels-last tensor's channels are contiguous and every other
// stride keeps 16-byte vectors aligned.
bool vector_aligned(const Strides5& s) {
  if (s[1] != 1) return false;
  for (int d : {0, 2, 3, 4})
    if (s[d] % 8 != 0) return false;
  return true;
}

class WgmmaSm90Conv final : public Tier<ConvProblem, WgmmaConfig> {
 public:
  std::string_view name() const override { return "gpu:conv:wgmma_sm90"; }

  Status accepts_problem(const ConvProblem& problem, const ArchSpec& arch) const override {
    const ConvSignature& sig = problem.conv();
    const Relation& r = problem.relation;
    if (arch.target != "sm_90a") return decline("on sm_90a only (wgmma), the device is " + arch.target);
    if (sig.dtype != DType::kBF16 && sig.dtype != DType::kF16)
      return decline("bf16 and fp16 only, not " + std::string(dtype_name(sig.dtype)));
    if (sig.transposed || problem.tasks.size() != 1 || problem.tasks[0].face != kForwardFace ||
        problem.bias_gradient)
      return decline("the forward direction of a regular conv only (-F 1, -m conv)");
    if (r.groups != 1) return decline("groups = 1 only, not " + std::to_string(r.groups));
    if (r.a_size[0] != 1 || r.f_size[0] != 1) return decline("1-D and 2-D convs only");
    if (r.ca % kBlockK != 0)
      return decline("input channels that are a multiple of 64 (one tap per k-block), not " + std::to_string(r.ca));
    if (r.cb % 8 != 0) return decline("output channels that are a multiple of 8, not " + std::to_string(r.cb));
    if (!vector_aligned(r.a_strides) || !vector_aligned(r.w_strides) || !vector_aligned(r.b_strides))
      return decline("x, w and y channels-last (NHWC, KRSC) with 16-byte aligned strides only");
    const long long pixels = r.batch * r.pix_b();
    if (pixels < kMinPixels || r.cb < kMinOutputChannels)
      return decline("at least " + std::to_string(kMinPixels) + " output pixels and " +
                     std::to_string(kMinOutputChannels) + " output channels, not " + std::to_string(pixels) +
                     " and " + std::to_string(r.cb));
    // The kernel keeps a receptive field's first input row and column in 16 bits.
    const long long kMaxExtent = 1LL << 14;
    if (r.a_size[1] + r.pad[1] >= kMaxExtent || r.a_size[2] + r.pad[2] >= kMaxExtent)
      return decline("inputs below " + std::to_string(kMaxExtent) + " pixels high and wide (with padding) only");
    // Offsets are 32-bit in the kernel.
    const long long limit = (1LL << 31) - 1;
    if (sig.x_spec().storage_elems() > limit || sig.w_spec().storage_elems() > limit ||
        sig.y_spec().storage_elems() > limit)
      return decline("tensors of fewer than 2^31 elements only");
    return ok_status();
  }

  Result<WgmmaConfig> configure_problem(const ConvProblem& problem, const ArchSpec& arch) const override {
    const Relation& r = problem.relation;
    const long long m_tiles = ceil_div(r.batch * r.pix_b(), kTileRows);
    // Wider tiles load fewer bytes per MAC (N = 256: half the B bytes of
    // N = 128); narrower ones waste less where K is not a multiple of the
    // width (K = 576: three tiles of 192, not three of 256) and quantize into
    // waves more finely. Time ~ waves x width / efficiency, the efficiency per
    // MAC of 192 and 128 taken as 0.95 and 0.85 of 256's (estimates; 256 and
    // 192 measured on an H100 in docs/perf/2026-11-24-wgmma-h100.md).
    WgmmaConfig config;
    double best = 1e300;
    for (const auto& [bn, efficiency] : {std::pair{256, 1.0}, std::pair{192, 0.95}, std::pair{128, 0.85}}) {
      const long long waves = ceil_div(m_tiles * ceil_div(r.cb, bn), arch.sm_count);
      const double cost = static_cast<double>(waves) * bn / efficiency;
      if (cost < best) {
        best = cost;
        config.bn = bn;
      }
    }
    // As deep a ring as fits (at most 6; 3 at least: the producer announces a stage
    // STAGES - 2 k-blocks after its copies, keeping STAGES - 1 of them in flight).
    const long long fit =
        (arch.max_shared_bytes_per_block - kSharedOverhead - config.staging_bytes()) / config.stage_bytes();
    if (fit < 3)
      return unimplemented("gpu:conv:wgmma_sm90 needs 3 stages of " + std::to_string(config.stage_bytes()) +
                           " bytes of shared memory, the device allows " +
                           std::to_string(arch.max_shared_bytes_per_block) + " per block");
    config.stages = static_cast<int>(std::min<long long>(6, fit));
    return config;
  }

  Result<Plan> plan_problem(const ConvProblem& problem, const WgmmaConfig& config,
                            const ArchSpec& arch) const override {
    const ConvSignature& sig = problem.conv();
    const Relation& r = problem.relation;
    const long long m = r.batch * r.pix_b();
    auto constant = [](const char* name, long long v) {
      return "  static constexpr int " + std::string(name) + " = " + std::to_string(v) + ";\n";
    };
    std::string cfg = "struct Cfg {\n  using T = " + std::string(device_type(sig.dtype)) + ";\n";
    cfg += constant("kType", sig.dtype == DType::kF16 ? 1 : 0);  // sm90::WgmmaType
    cfg += constant("BN", config.bn) + constant("STAGES", config.stages);
    cfg += constant("kM", m) + constant("kN", r.cb) + constant("kC", r.ca);
    cfg += constant("H", r.a_size[1]) + constant("W", r.a_size[2]) + constant("P", r.b_size[1]) +
           constant("Q", r.b_size[2]) + constant("R", r.f_size[1]) + constant("S", r.f_size[2]);
    cfg += constant("SH", r.stride[1]) + constant("SW", r.stride[2]) + constant("PH", r.pad[1]) +
           constant("PW", r.pad[2]) + constant("DH", r.dil[1]) + constant("DW", r.dil[2]);
    // Strides in elements: x (n, h, w), w (k, r, s), y (n, p, q); channels are contiguous.
    cfg += constant("XN", r.a_strides[0]) + constant("XH", r.a_strides[3]) + constant("XW", r.a_strides[4]);
    cfg += constant("WK", r.w_strides[0]) + constant("WR", r.w_strides[3]) + constant("WS", r.w_strides[4]);
    cfg += constant("YN", r.b_strides[0]) + constant("YH", r.b_strides[3]) + constant("YW", r.b_strides[4]);
    cfg += constant("kAct", static_cast<int>(sig.activation.kind));
    cfg += "  static constexpr bool kBias = " + std::string(sig.bias ? "true" : "false") + ";\n};\n";

    Plan plan;
    const std::string entry = "boo_wgmma_y";
    plan.source.name = "conv_wgmma_sm90.cu";
    plan.source.text = "// Generated by boo: gpu:conv:wgmma_sm90.\n#include \"boo/conv/conv_wgmma.cuh\"\n\n" + cfg +
                       "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(kThreads) + ", 1) " + entry +
                       "(const boo::ConvIgemmParams p) { boo::wgmma_conv::conv_wgmma<Cfg>(p); }\n";
    plan.source.entries.push_back(entry);

    const TensorRoles roles(sig);
    // A persistent grid: one CTA per SM (its shared memory allows no second), each walking its tiles.
    const long long tiles = ceil_div(m, kTileRows) * ceil_div(r.cb, config.bn);
    BOO_ASSIGN_OR_RETURN(uint32_t ctas, grid_extent(std::min<long long>(tiles, arch.sm_count), 0x7fffffff, "x (CTAs)"));
    StepBuilder<ConvIgemmParams> step(entry, {ctas, 1, 1}, {kThreads, 1, 1},
                                      static_cast<uint32_t>(config.shared_bytes()));
    step.params.act_alpha = static_cast<float>(sig.activation.alpha);
    step.params.act_lo = static_cast<float>(sig.activation.lo);
    step.params.act_hi = static_cast<float>(sig.activation.hi);
    BOO_ASSIGN_OR_RETURN(TensorBinding x, roles.argument("x"));
    BOO_ASSIGN_OR_RETURN(TensorBinding w, roles.argument("w"));
    BOO_ASSIGN_OR_RETURN(TensorBinding y, roles.result("y"));
    step.bind(step.params.a, x);
    step.bind(step.params.w, w);
    step.bind(step.params.out, y);
    if (sig.bias) {
      BOO_ASSIGN_OR_RETURN(TensorBinding bias, roles.argument("b"));
      step.bind(step.params.bias, bias);
    }
    plan.steps.push_back(std::move(step).finish());
    plan.tensor_alignment = 16;  // 16-byte copies and stores
    return plan;
  }
};

}  // namespace

const GpuImplementation& wgmma_sm90_implementation() {
  static const WgmmaSm90Conv impl;
  return impl;
}

}  // namespace boo::ops::conv
