// boo: gpu:conv:fp32_bf16x6 — host side: the sextupled bf16 conv, the split
// copies around it and the plan (see conv_fp32_split_impl.hpp and
// device/conv_fp32_split.cuh).
#include "ops/conv/conv_fp32_split_impl.hpp"

#include <algorithm>
#include <array>
#include <memory>

#include "boo/conv.hpp"
#include "ops/common/generated_source.hpp"
#include "ops/conv/conv_problem.hpp"
#include "ops/conv/conv_staging.hpp"
#include "ops/conv/conv_wgmma_impl.hpp"
#include "ops/conv/device/conv_fp32_split_params.cuh"

namespace boo::ops::conv {
namespace {

constexpr long long kSegments = 6;
// The parts (0 hi, 1 mid, 2 lo) of the six segments, 2 bits each: the reduction's A operand
// holds (hi, hi, mid, mid, hi, lo), its B operand (hi, mid, hi, mid, lo, hi), so that the
// segments pair into the six products hi*hi, hi*mid, mid*hi, mid*mid, hi*lo, lo*hi.
constexpr int pattern(std::array<int, kSegments> parts) {
  int bits = 0;
  for (int s = 0; s < kSegments; ++s) bits |= parts[static_cast<size_t>(s)] << (2 * s);
  return bits;
}
constexpr int kPatternA = pattern({0, 0, 1, 1, 0, 2}), kPatternB = pattern({0, 1, 0, 1, 2, 0});
// The model's rates, fitted on an H100 (2026-11-26, docs/perf/2026-11-26-session3-h200x4.md) to the 86
// nchw-models fp32 lines the tier took, timed with it and on FFMA: the choice it makes costs 1.1% over
// the faster of the two (geomean), against 4.8% with the estimates before the fit. Shares of ArchSpec's
// rates: boo's FFMA (gpu:conv:implicit_gemm, its staging copies included) on the forward and data
// faces, and on the weight face (two-level sums); the bf16 conv with promoted sums on 128-wide tiles;
// the split and sums copies (2-byte stores of six segments, transposes).
constexpr double kFfmaEfficiency = 0.6, kFfmaWeightEfficiency = 0.35;
constexpr double kWgmmaEfficiency = 0.6, kCopyEfficiency = 0.66;
// The split runs where its model beats FFMA's by this factor.
constexpr double kMinModelledSpeedup = 1.1;
// A launch's cost beyond its work; the plan has at least four (two splits, the conv, the copy out).
constexpr double kLaunchUs = 5.0;
constexpr uint32_t kThreads = 256;

long long round8(long long v) { return (v + 7) / 8 * 8; }
// gpu:conv:wgmma_sm90's tiles are 128 output channels wide at the narrowest (its floor): the bf16
// conv's result channels are padded to at least that many (zero columns; fewer are a BN = 64 tile's
// work, which the tier lacks).
constexpr long long kMinResultChannels = 128;

Status decline(const std::string& why) { return unimplemented("gpu:conv:fp32_bf16x6 runs " + why); }

// The bf16 conv's problem: fp32 sums left for the copy out, promoted per k-block (the six
// products' chain is six times a bf16 conv's; ConvProblem::promote_sums says why).
ConvProblem bf16_problem(const ConvSignature& sig) { return ConvProblem(sig, /*fp32_result=*/true, /*promote_sums=*/true); }

// One fp32 operand's six bf16 segments in the workspace: the signature tensor `tensor` read as
// (outer, channel, pixels), written per ConvSplitParams.
struct Segments {
  std::string tensor;
  long long outer = 0, rows = 0;  // the tensor's rows and the buffer's (zero rows past `outer`)
  Dims3 size{};                   // pixels or taps
  long long channels = 0, padded = 0;
  bool along_outer = false;  // segments outermost ([6][rows][pixels][padded]), else per pixel ([rows][pixels][6][padded])
  int pattern = 0;
  size_t offset = 0;  // bytes into the workspace

  long long pixels() const { return size[0] * size[1] * size[2]; }
  long long elements() const { return kSegments * rows * pixels() * padded; }
  std::string text() const {
    return tensor + " " + std::to_string(channels) + "->6x" + std::to_string(padded) +
           (along_outer ? " along rows" : " along channels");
  }
};

// The bf16 conv the six products are, for the problem's one task (a regular conv, groups 1):
//   forward: y[n, k] = sum x'[n, (s, c)] w'[k, (s, c)]: the channels sextupled (A = x, B = w);
//   data:    dx[n, c] = sum dy'[n, (s, k)] w'[(s, k), c]: the output channels sextupled (A = dy, B = w);
//   weight:  dw[k, c] = sum dy'[(s, n), k] x'[(s, n), c]: the batch sextupled (A = dy, B = x).
// Channels are padded to multiples of 8 (zeros); every operand channels-last, the sums fp32.
struct Sextupled {
  ConvSignature sig;
  Segments a, b;
  StagedCopy out;  // the fp32 sums into the result's layout
};

Sextupled sextupled(const ConvProblem& problem) {
  const ConvSignature& sig = problem.conv();
  const Relation& r = problem.relation;
  const FaceTask& task = problem.tasks[0];
  // Padded channels: A's (C) and B's (K); the result's at least kMinResultChannels.
  const long long cs = std::max(round8(r.ca), task.face == kDataFace ? kMinResultChannels : 0),
                  ks = std::max(round8(r.cb), task.face == kDataFace ? 0 : kMinResultChannels);
  Sextupled s;
  ConvSignature& d = s.sig;
  d.spatial_dims = sig.spatial_dims;
  d.dtype = DType::kBF16;
  d.input_size = sig.input_size;
  d.filter_size = sig.filter_size;
  d.stride = sig.stride;
  d.padding = sig.padding;
  d.dilation = sig.dilation;
  d.output_padding = sig.output_padding;
  d.input_layout = d.filter_layout = d.output_layout = sig.spatial_dims == 1 ? "NHC" : "NHWC";
  d.n = r.batch;
  d.c = cs;
  d.k = ks;
  auto segments = [](std::string tensor, long long outer, long long rows, const Dims3& size, long long channels,
                     long long padded, bool along_outer, int pattern) {
    Segments g;
    g.tensor = std::move(tensor);
    g.outer = outer;
    g.rows = rows;
    g.size = size;
    g.channels = channels;
    g.padded = padded;
    g.along_outer = along_outer;
    g.pattern = pattern;
    return g;
  };
  if (task.face == kForwardFace) {
    d.directions = kConvForward;
    d.c = kSegments * cs;
    s.a = segments("x", r.batch, r.batch, r.a_size, r.ca, cs, false, kPatternA);
    s.b = segments("w", r.cb, ks, r.f_size, r.ca, cs, false, kPatternB);
    s.out = layout_copy(problem, "y", r.batch, r.batch, r.b_size, r.cb, ks, false);
  } else if (task.face == kDataFace) {
    d.directions = kConvBackwardData;
    d.k = kSegments * ks;
    s.a = segments("dy", r.batch, r.batch, r.b_size, r.cb, ks, false, kPatternA);
    s.b = segments("w", r.cb, ks, r.f_size, r.ca, cs, true, kPatternB);
    s.out = layout_copy(problem, "dx", r.batch, r.batch, r.a_size, r.ca, cs, false);
  } else {
    d.directions = kConvBackwardWeight;
    d.n = kSegments * r.batch;
    s.a = segments("dy", r.batch, r.batch, r.b_size, r.cb, ks, true, kPatternA);
    s.b = segments("x", r.batch, r.batch, r.a_size, r.ca, cs, true, kPatternB);
    s.out = layout_copy(problem, "dw", r.cb, r.cb, r.f_size, r.ca, cs, false);
  }
  s.out.offset = 0;  // the bf16 conv leaves its sums at the workspace's start
  return s;
}

// Modelled times (us): the six products on the wgmma tier plus the split copies' and the sums'
// traffic at the copy rate, against FFMA on gpu:conv:implicit_gemm.
struct Model {
  double split_us = 0, ffma_us = 0;
};
Model model(const ConvProblem& problem, const Sextupled& s, const ArchSpec& arch) {
  const Relation& r = problem.relation;
  const double macs = static_cast<double>(r.batch) * r.pix_b() * r.cb * r.taps() * r.ca;
  const double padded_macs = macs / (r.cb * r.ca) * static_cast<double>(s.sig.c * s.sig.k) *
                             (s.sig.n / r.batch);  // the bf16 conv's: the six segments included
  const double split_bytes = 4.0 * (static_cast<double>(s.a.outer) * s.a.pixels() * s.a.channels +
                                    static_cast<double>(s.b.outer) * s.b.pixels() * s.b.channels) +
                             2.0 * static_cast<double>(s.a.elements() + s.b.elements());
  const double sums_bytes = 12.0 * static_cast<double>(s.out.elements());  // written, read, written out
  Model m;
  m.split_us = (padded_macs / (arch.wgmma_macs_per_s * kWgmmaEfficiency) +
                (split_bytes + sums_bytes) / (arch.copy_bytes_per_s * kCopyEfficiency)) * 1e6 +
               4 * kLaunchUs;
  const bool weight = problem.tasks[0].face == kWeightFace;
  m.ffma_us = macs / (arch.ffma_macs_per_s * (weight ? kFfmaWeightEfficiency : kFfmaEfficiency)) * 1e6;
  return m;
}

struct Fp32SplitConfig final : Config {
  Sextupled conv;
  std::shared_ptr<const Config> inner;  // gpu:conv:wgmma_sm90's config of conv.sig
  size_t workspace_bytes = 0;

  std::string text() const override {
    return "bf16x6: " + conv.a.text() + ", " + conv.b.text() + "; conv " + conv.sig.command() + "; " + inner->text() +
           "; sums out " + conv.out.text();
  }
};

class Fp32Bf16x6Conv final : public Tier<ConvProblem, Fp32SplitConfig> {
 public:
  std::string_view name() const override { return "gpu:conv:fp32_bf16x6"; }

  Status accepts_problem(const ConvProblem& problem, const ArchSpec& arch) const override {
    const ConvSignature& sig = problem.conv();
    if (sig.dtype != DType::kF32 || sig.fp32_tf32)
      return decline("full-precision fp32 only (--fp32-math tf32 runs on TF32 tensor cores)");
    if (problem.tasks.size() != 1 || problem.bias_gradient)
      return decline("one direction at a time (-F 1, -F 2 or -F 4), without a bias gradient");
    if (problem.fp32_result) return decline("its own sums only (no caller's epilogue)");
    if (sig.residual)
      return decline("convs without a residual (--residual 1 runs on gpu:conv:implicit_gemm): its epilogue kernel "
                     "reads the dense sums, not z's layout");
    if (sig.transposed || sig.groups != 1) return decline("regular convs of groups 1 only");
    if (sig.spatial_dims > 2) return decline("1-D and 2-D convs only (as gpu:conv:wgmma_sm90)");
    const Sextupled s = sextupled(problem);
    if (Status v = s.sig.validate(); !v.ok()) return decline("convs whose bf16 form is valid: " + v.message());
    const ConvProblem inner = bf16_problem(s.sig);
    if (Status t = wgmma_sm90_implementation().accepts(inner, arch); !t.ok())
      return decline("where the bf16 conv " + s.sig.command() + " runs on gpu:conv:wgmma_sm90: " + t.message());
    const Model m = model(problem, s, arch);
    if (m.split_us * kMinModelledSpeedup > m.ffma_us)
      return decline("where its cost model beats FFMA's (modelled " + std::to_string(m.split_us) + " us against " +
                     std::to_string(m.ffma_us) + " us)");
    return ok_status();
  }

  Result<Fp32SplitConfig> configure_problem(const ConvProblem& problem, const ArchSpec& arch) const override {
    Fp32SplitConfig config;
    config.conv = sextupled(problem);
    const ConvProblem inner = bf16_problem(config.conv.sig);
    BOO_ASSIGN_OR_RETURN(std::unique_ptr<const Config> chosen, wgmma_sm90_implementation().configure(inner, arch));
    config.inner = std::move(chosen);
    BOO_RETURN_IF_ERROR(place(config, inner, arch));
    return config;
  }

  // The bf16 conv's alternatives, in its order (what boo tune times).
  std::vector<Fp32SplitConfig> alternatives(const ConvProblem&, const ArchSpec& arch,
                                            const Fp32SplitConfig& chosen) const override {
    const ConvProblem inner = bf16_problem(chosen.conv.sig);
    Result<ConfigList> list = wgmma_sm90_implementation().candidates(inner, arch);
    std::vector<Fp32SplitConfig> out;
    if (!list.ok()) return out;
    for (size_t i = 1; i < list->size(); ++i) {
      Fp32SplitConfig c = chosen;
      c.inner = std::move((*list)[i]);
      if (place(c, inner, arch).ok()) out.push_back(std::move(c));
    }
    return out;
  }

  Result<Plan> plan_problem(const ConvProblem& problem, const Fp32SplitConfig& config,
                            const ArchSpec& arch) const override {
    const ConvSignature& sig = problem.conv();
    const Sextupled& s = config.conv;
    const ConvProblem inner_problem = bf16_problem(s.sig);
    BOO_ASSIGN_OR_RETURN(Plan inner, wgmma_sm90_implementation().plan(inner_problem, *config.inner, arch));
    const TensorRoles roles(sig);
    Plan plan;
    plan.source = inner.source;
    plan.source.text += "\n// gpu:conv:fp32_bf16x6's split copies and sums.\n#include \"boo/conv/conv_fp32_split.cuh\"\n";
    // The operands' segments first.
    for (const Segments* g : {&s.a, &s.b}) {
      BOO_ASSIGN_OR_RETURN(LaunchStep step, split_step(*g, problem, roles, plan.source));
      plan.steps.push_back(std::move(step));
    }
    // The bf16 conv with its arguments in the segments' buffers (by name: x, w, dy as its signature has them).
    std::vector<TensorBinding> args;
    for (const TensorSpec& t : s.sig.arguments()) {
      if (t.name == s.a.tensor) args.push_back(TensorBinding::workspace(s.a.offset));
      else if (t.name == s.b.tensor) args.push_back(TensorBinding::workspace(s.b.offset));
      else return internal_error("gpu:conv:fp32_bf16x6: the bf16 conv has an argument '" + t.name + "' it does not split");
    }
    for (LaunchStep step : inner.steps) {
      bool writes_result = false;
      step.rebind_tensors([&](TensorBinding& t) {
        if (t.source == TensorBinding::Source::kArgument) t = args.at(t.index);
        else if (t.source == TensorBinding::Source::kResult) writes_result = true;
      });
      if (writes_result)
        return internal_error("gpu:conv:fp32_bf16x6: the bf16 conv writes a result, not only its fp32 sums");
      plan.steps.push_back(std::move(step));
    }
    // The forward's bias and activation on the sums, then the sums into the result's layout.
    const bool bias = problem.tasks[0].epilogue && sig.bias;
    const int act = problem.tasks[0].epilogue ? static_cast<int>(sig.activation.kind) : 0;
    if (bias || act != 0) {
      const std::string entry = "boo_fp32_sums_epilogue";
      plan.source.text += "extern \"C\" __global__ void __launch_bounds__(256) " + entry +
                          "(const boo::ConvSumsEpilogueParams p) { boo::conv_sums_epilogue<" +
                          (bias ? "true" : "false") + ", " + std::to_string(act) + ">(p); }\n";
      plan.source.entries.push_back(entry);
      const long long elements = s.out.outer_rows * s.out.size[0] * s.out.size[1] * s.out.size[2] * s.out.padded;
      BOO_ASSIGN_OR_RETURN(uint32_t grid, grid_extent(std::clamp<long long>((elements + kThreads - 1) / kThreads, 1,
                                                                            16LL * arch.sm_count),
                                                      0x7fffffff, "x (sums)"));
      StepBuilder<ConvSumsEpilogueParams> step(entry, {grid, 1, 1}, {kThreads, 1, 1});
      step.bind(step.params.sums, TensorBinding::workspace(0));
      if (bias) {
        BOO_ASSIGN_OR_RETURN(TensorBinding b, roles.argument("b"));
        step.bind(step.params.bias, b);
      }
      step.params.elements = elements;
      step.params.channels_padded = s.out.padded;
      step.params.channels = s.out.channels;
      step.params.act_alpha = static_cast<float>(sig.activation.alpha);
      step.params.act_lo = static_cast<float>(sig.activation.lo);
      step.params.act_hi = static_cast<float>(sig.activation.hi);
      plan.steps.push_back(std::move(step).finish());
    }
    BOO_ASSIGN_OR_RETURN(LaunchStep out, staged_copy_step(s.out, DType::kF32, roles, arch, plan.source));
    plan.steps.push_back(std::move(out));
    plan.workspace_bytes = config.workspace_bytes;
    plan.tensor_alignment = std::max<uint32_t>(inner.tensor_alignment, 4);
    return plan;
  }

 private:
  // The bf16 conv's workspace first (its sums at byte 0), then the two operands' segments.
  static Status place(Fp32SplitConfig& config, const ConvProblem& inner, const ArchSpec& arch) {
    BOO_ASSIGN_OR_RETURN(Plan planned, wgmma_sm90_implementation().plan(inner, *config.inner, arch));
    auto align = [](size_t bytes) { return (bytes + 255) / 256 * 256; };
    size_t offset = align(planned.workspace_bytes);
    for (Segments* g : {&config.conv.a, &config.conv.b}) {
      g->offset = offset;
      offset += align(static_cast<size_t>(g->elements()) * 2);
    }
    config.workspace_bytes = offset;
    return ok_status();
  }

  // The kernel writing one operand's segments: tiles of 32 channels x 32 pixels per row, read
  // along pixels where the tensor's channels are not contiguous (NCHW, KCRS).
  static Result<LaunchStep> split_step(const Segments& g, const ConvProblem& problem, const TensorRoles& roles,
                                       base::KernelSource& source) {
    const Strides5 strides = signature_strides(problem, g.tensor);
    const bool pixels_fast = strides[1] != 1;
    const std::string entry = "boo_fp32_split_" + g.tensor;
    source.text += "extern \"C\" __global__ void __launch_bounds__(256) " + entry +
                   "(const boo::ConvSplitParams p) { boo::conv_split_fp32<" + (pixels_fast ? "true" : "false") +
                   ">(p); }\n";
    source.entries.push_back(entry);
    // Rows of one pixel each (a GEMM's matrices as 1x1 convs of 1-pixel images) are one row of
    // pixels instead, so that the 32-pixel tiles are full: the same elements at the same places
    // (a pixel's step in the buffer is then a row's), where no row is padding.
    const bool fold = g.pixels() == 1 && g.rows == g.outer;
    const long long rows = fold ? 1 : g.rows, pixels = fold ? g.rows : g.pixels();
    Dim3 grid;
    BOO_ASSIGN_OR_RETURN(grid.x, grid_extent((pixels + 31) / 32, 0x7fffffff, "x (pixel tiles)"));
    BOO_ASSIGN_OR_RETURN(grid.y, grid_extent((g.padded + 31) / 32, 65535, "y (channel tiles)"));
    grid.z = static_cast<uint32_t>(std::clamp<long long>(rows, 1, 65535));
    BOO_ASSIGN_OR_RETURN(TensorBinding tensor, roles.argument(g.tensor));
    StepBuilder<ConvSplitParams> step(entry, grid, {kThreads, 1, 1});
    step.bind(step.params.src, tensor);
    step.bind(step.params.dst, TensorBinding::workspace(g.offset));
    for (int i = 0; i < 5; ++i) step.params.strides[i] = strides[static_cast<size_t>(i)];
    step.params.sizes[0] = rows;
    for (int i = 0; i < 3; ++i) step.params.sizes[1 + i] = g.size[static_cast<size_t>(i)];
    step.params.outer = fold ? 1 : g.outer;
    if (fold) {  // the rows as pixels along x
      step.params.sizes[3] = pixels;
      step.params.strides[4] = strides[0];
    }
    step.params.channels = g.channels;
    step.params.padded = g.padded;
    const long long row = g.pixels() * g.padded;  // one segment of one row
    if (g.along_outer) {
      step.params.seg_stride = g.rows * row;
      step.params.outer_stride = row;
      step.params.pixel_stride = g.padded;
    } else {
      step.params.seg_stride = g.padded;
      step.params.outer_stride = kSegments * row;
      step.params.pixel_stride = kSegments * g.padded;
    }
    step.params.pattern = g.pattern;
    return std::move(step).finish();
  }
};

}  // namespace

const GpuImplementation& fp32_bf16x6_implementation() {
  static const Fp32Bf16x6Conv impl;
  return impl;
}

}  // namespace boo::ops::conv
