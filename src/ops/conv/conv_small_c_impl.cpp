// boo: gpu:conv:small_c_data — host side: which problems it takes, its tile
// (the typed config) and the launch plan (device/conv_small_c.cuh).
#include "ops/conv/conv_small_c_impl.hpp"

#include <algorithm>

#include "boo/conv.hpp"
#include "ops/common/generated_source.hpp"
#include "ops/conv/conv_bias_gradient.hpp"
#include "ops/conv/conv_problem.hpp"
#include "ops/conv/device/conv_direct_params.cuh"
#include "ops/conv/device/conv_small_c_params.cuh"

namespace boo::ops::conv {
namespace {

constexpr long long kMaxChannels = 4;
// Phase pixels a thread owns along a row, and strips of them a phase row holds (a tile of 32 columns).
constexpr long long kPixels = 8, kStrips = 4;
// Taps of one stride phase along a dimension: the registers of a thread's B row segment.
constexpr long long kMaxPhaseTaps = 7;
constexpr long long kMaxPhases = 16;
constexpr long long kSharedBudget = 48 * 1024;
constexpr long long kInt32Max = (1LL << 31) - 1;

// The taps of stride phase `ph` along one dimension (conv_small_c.cuh's phase_taps).
struct PhaseTaps {
  long long r0, tn, q;
};
PhaseTaps phase_taps(long long ph, long long stride, long long pad, long long filter) {
  const long long r0 = (ph + pad) % stride;
  return {r0, r0 < filter ? ceil_div(filter - r0, stride) : 0, (ph + pad - r0) / stride};
}

// Along one dimension: the most taps of a phase and the B window of a tile of `tile` phase pixels,
// from o = u0 + lo to u0 + lo + extent - 1.
struct WindowDim {
  long long taps = 0, lo = 0, extent = 0;
};
WindowDim window_dim(long long stride, long long pad, long long filter, long long tile) {
  WindowDim d;
  for (long long ph = 0; ph < stride; ++ph) d.taps = std::max(d.taps, phase_taps(ph, stride, pad, filter).tn);
  long long lo = 0, hi = 0;
  for (long long ph = 0; ph < stride; ++ph) {
    const PhaseTaps t = phase_taps(ph, stride, pad, filter);
    lo = ph == 0 ? t.q - d.taps + 1 : std::min(lo, t.q - d.taps + 1);
    hi = ph == 0 ? t.q : std::max(hi, t.q);
  }
  d.lo = lo;
  d.extent = tile + hi - lo;
  return d;
}

struct SmallCConfig final : Config {
  long long tile_u = 8, tile_v = kPixels * kStrips;  // phase rows and columns of a block's tile
  long long threads = 256;
  long long chunk = 8;  // B channels per shared-memory stage
  WindowDim rows, cols;
  long long pitch = 1, channels_padded = 4, blocks = 0;

  long long shared_bytes(const Relation& r) const {
    return 2 * chunk * (rows.extent * pitch + r.f_size[1] * r.f_size[2] * channels_padded) * 4;
  }
  std::string text() const override {
    return "dx small C: tile " + std::to_string(tile_u) + "x" + std::to_string(tile_v) + " phase pixels threads " +
           std::to_string(threads) + " pixels/thread " + std::to_string(kPixels) + " chunk " + std::to_string(chunk) +
           " window " + std::to_string(rows.extent) + "x" + std::to_string(cols.extent) + " blocks " +
           std::to_string(blocks);
  }
};

std::string constant(const char* name, long long value) {
  return "  static constexpr int " + std::string(name) + " = " + std::to_string(value) + ";\n";
}

std::string array_fn(const char* name, const Strides5& v) {
  std::string body;
  for (size_t i = 0; i < v.size(); ++i) body += (i ? ", " : "") + std::to_string(v[i]) + "LL";
  return "  __host__ __device__ static constexpr long long " + std::string(name) +
         "(int i) { constexpr long long v[] = {" + body + "}; return v[i]; }\n";
}

class SmallCDataConv final : public Tier<ConvProblem, SmallCConfig> {
 public:
  std::string_view name() const override { return "gpu:conv:small_c_data"; }

  Status accepts_problem(const ConvProblem& problem, const ArchSpec& arch) const override {
    const Relation& r = problem.relation;
    if (problem.tasks.size() != 1 || problem.tasks[0].face != kDataFace || problem.fp32_result)
      return unimplemented("gpu:conv:small_c_data computes the data face alone (backward-data, or a transposed "
                           "conv's forward; with db)");
    if (problem.dtype != DType::kF32)
      return unimplemented("gpu:conv:small_c_data runs float32 (16-bit dtypes keep the tensor-core tiers)");
    if (r.groups != 1 || r.ca > kMaxChannels)
      return unimplemented(std::to_string(r.ca) + " result channels in " + std::to_string(r.groups) +
                           " groups: gpu:conv:small_c_data takes up to " + std::to_string(kMaxChannels) +
                           " in one group");
    if (r.a_size[0] != 1 || r.f_size[0] != 1 || r.a_size[1] == 1)
      return unimplemented("gpu:conv:small_c_data takes 2-D convs");
    if (r.dil[1] != 1 || r.dil[2] != 1) return unimplemented("gpu:conv:small_c_data takes dilation 1");
    if (r.a_strides[4] != 1 || r.b_strides[4] != 1)
      return unimplemented("layouts " + problem.conv().input_layout + " -> " + problem.conv().output_layout +
                           ": gpu:conv:small_c_data needs rows contiguous (NCHW-like)");
    if (r.stride[1] * r.stride[2] > kMaxPhases)
      return unimplemented("stride " + std::to_string(r.stride[1]) + "x" + std::to_string(r.stride[2]) +
                           ": gpu:conv:small_c_data takes up to " + std::to_string(kMaxPhases) + " phases");
    if (ceil_div(r.f_size[1], r.stride[1]) > kMaxPhaseTaps || ceil_div(r.f_size[2], r.stride[2]) > kMaxPhaseTaps)
      return unimplemented("a stride phase of more than " + std::to_string(kMaxPhaseTaps) +
                           " taps a dimension: gpu:conv:small_c_data holds a phase's taps in registers");
    const SmallCConfig c = tiling(problem, 1);
    if (c.shared_bytes(r) > std::min<long long>(kSharedBudget, arch.max_shared_bytes_per_block))
      return unimplemented("a B channel's window needs more than " + std::to_string(kSharedBudget) +
                           " bytes of shared memory");
    for (long long v : {r.batch, r.cb, r.a_size[1], r.a_size[2], r.b_size[1], r.b_size[2]})
      if (v > kInt32Max / 4) return unimplemented("a dimension of " + std::to_string(v) + " exceeds 32-bit tile math");
    return ok_status();
  }

  Result<SmallCConfig> configure_problem(const ConvProblem& problem, const ArchSpec& arch) const override {
    const Relation& r = problem.relation;
    const long long budget = std::min<long long>(kSharedBudget, arch.max_shared_bytes_per_block);
    // The most B channels a stage holds, up to 8: fewer barriers per FFMA.
    for (long long chunk : {8LL, 4LL, 2LL, 1LL}) {
      SmallCConfig c = tiling(problem, chunk);
      if (c.shared_bytes(r) > budget) continue;
      if (c.blocks > kInt32Max) return unimplemented("dx needs " + std::to_string(c.blocks) + " blocks");
      return c;
    }
    return unimplemented("a B channel's window needs more than " + std::to_string(budget) +
                         " bytes of shared memory");
  }

  Result<Plan> plan_problem(const ConvProblem& problem, const SmallCConfig& config, const ArchSpec&) const override {
    const ConvSignature& conv = problem.conv();
    const Relation& r = problem.relation;
    const FaceTask& task = problem.tasks[0];
    const TensorRoles roles(conv);
    Plan plan;
    plan.source.name = "conv_small_c.cu";
    plan.source.text = "// Generated by boo: gpu:conv:small_c_data.\n#include \"boo/conv/conv_small_c.cuh\"\n";
    if (problem.bias_gradient) plan.source.text += "#include \"boo/conv/conv_direct.cuh\"\n";
    const bool idx32 = conv.x_spec().storage_elems() < kInt32Max && conv.y_spec().storage_elems() < kInt32Max;
    std::string cfg = "\nstruct Cfg {\n";
    cfg += "  static constexpr bool kIdx32 = " + std::string(idx32 ? "true" : "false") + ";\n";
    cfg += "  static constexpr bool kBias = " + std::string(task.epilogue && conv.bias ? "true" : "false") + ";\n";
    cfg += constant("kAct", task.epilogue ? static_cast<int>(conv.activation.kind) : 0);
    cfg += constant("kThreads", config.threads) + constant("kTU", config.tile_u) + constant("kTV", config.tile_v) +
           constant("kJ", kPixels) + constant("kKC", config.chunk) + constant("kCA", r.ca) +
           constant("kCPad", config.channels_padded) + constant("kCB", r.cb) + constant("kTnH", config.rows.taps) +
           constant("kTnW", config.cols.taps) + constant("kQLoH", config.rows.lo) + constant("kQLoW", config.cols.lo) +
           constant("kWinH", config.rows.extent) + constant("kWinW", config.cols.extent) +
           constant("kPitch", config.pitch);
    cfg += constant("kAH", r.a_size[1]) + constant("kAW", r.a_size[2]) + constant("kBH", r.b_size[1]) +
           constant("kBW", r.b_size[2]) + constant("kFH", r.f_size[1]) + constant("kFW", r.f_size[2]) +
           constant("kSH", r.stride[1]) + constant("kSW", r.stride[2]) + constant("kPH", r.pad[1]) +
           constant("kPW", r.pad[2]);
    cfg += array_fn("AStr", r.a_strides) + array_fn("BStr", r.b_strides) + array_fn("WStr", r.w_strides) + "};\n";
    plan.source.text += cfg;
    auto add_entry = [&](const std::string& entry, const std::string& params, const std::string& call,
                         long long threads, long long min_blocks) {
      plan.source.text += "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(threads) + ", " +
                          std::to_string(min_blocks) + ") " + entry +
                          "(const boo::" + params + " p) { " + call + "; }\n";
      plan.source.entries.push_back(entry);
    };
    auto bind = [&](const std::string& name) -> Result<TensorBinding> {
      return roles.has_argument(name) ? roles.argument(name) : roles.result(name);
    };
    const std::string entry = "boo_small_c_" + task.result;
    // Three blocks of 256 threads per SM (85 registers a thread): 64 for four spill the 3-channel lines' 24 sums.
    add_entry(entry, "ConvSmallCParams", "boo::small_c::data_face<Cfg>(p)", config.threads,
              std::max(1LL, 768 / config.threads));
    BOO_ASSIGN_OR_RETURN(uint32_t blocks, grid_extent(config.blocks, kInt32Max, "x"));
    StepBuilder<ConvSmallCParams> step(entry, {blocks, 1, 1}, {static_cast<uint32_t>(config.threads), 1, 1},
                                       static_cast<uint32_t>(config.shared_bytes(r)));
    step.params.act_alpha = static_cast<float>(conv.activation.alpha);
    step.params.act_lo = static_cast<float>(conv.activation.lo);
    step.params.act_hi = static_cast<float>(conv.activation.hi);
    BOO_ASSIGN_OR_RETURN(TensorBinding a, bind(task.a));
    BOO_ASSIGN_OR_RETURN(TensorBinding b, bind(task.b));
    BOO_ASSIGN_OR_RETURN(TensorBinding w, bind(task.w));
    step.bind(step.params.a, a);
    step.bind(step.params.b, b);
    step.bind(step.params.w, w);
    if (task.epilogue && conv.bias) {
      BOO_ASSIGN_OR_RETURN(TensorBinding bias, roles.argument("b"));
      step.bind(step.params.bias, bias);
    }
    plan.steps.push_back(std::move(step).finish());
    if (problem.bias_gradient) {
      add_entry("boo_conv_db", "ConvFaceParams", "boo::conv_bias_gradient<float>(p)", 256, 1);
      BOO_ASSIGN_OR_RETURN(LaunchStep db, bias_gradient_step(problem, roles, 256));
      plan.steps.push_back(std::move(db));
    }
    plan.tensor_alignment = static_cast<uint32_t>(problem.elem_bytes);  // 4-byte copies
    return plan;
  }

 private:
  // The tile for stages of `chunk` B channels: 8 phase rows a warp (4 strips of 8 pixels), as many
  // rows as make 256 threads over the phases (at least 8 each).
  static SmallCConfig tiling(const ConvProblem& problem, long long chunk) {
    const Relation& r = problem.relation;
    SmallCConfig c;
    const long long phases = r.stride[1] * r.stride[2];
    c.tile_u = 8 * std::max(1LL, 8 / phases);
    c.tile_v = kPixels * kStrips;
    c.threads = phases * c.tile_u * kStrips;
    c.chunk = chunk;
    c.rows = window_dim(r.stride[1], r.pad[1], r.f_size[1], c.tile_u);
    c.cols = window_dim(r.stride[2], r.pad[2], r.f_size[2], c.tile_v);
    c.pitch = c.cols.extent | 1;  // odd: a warp's 8 rows x 4 strips fall on distinct banks
    c.channels_padded = r.ca <= 1 ? 1 : r.ca <= 2 ? 2 : 4;
    const long long phase_rows = ceil_div(r.a_size[1], r.stride[1]), phase_cols = ceil_div(r.a_size[2], r.stride[2]);
    c.blocks = r.batch * ceil_div(phase_rows, c.tile_u) * ceil_div(phase_cols, c.tile_v);
    return c;
  }
};

}  // namespace

const GpuImplementation& small_c_data_implementation() {
  static const SmallCDataConv impl;
  return impl;
}

}  // namespace boo::ops::conv
