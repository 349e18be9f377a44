// boo: gpu:conv:depthwise and gpu:conv:depthwise_planes — host side: which
// problems they take, their tiles (the typed configs) and launch plans.
#include "ops/conv/conv_depthwise_impl.hpp"

#include <algorithm>
#include <bit>
#include <optional>

#include "boo/conv.hpp"
#include "ops/common/generated_source.hpp"
#include "ops/conv/conv_bias_gradient.hpp"
#include "ops/conv/conv_problem.hpp"
#include "ops/conv/device/conv_depthwise_params.cuh"
#include "ops/conv/device/conv_direct_params.cuh"

namespace boo::ops::conv {
namespace {

constexpr int kThreads = 256;
// Output elements a block computes (per staged tile, for the weight face): 4
// per thread, enough that the staged window's halo is a small part of it.
constexpr long long kOutputsPerBlock = 1024;
// Channels of a channels-last tile: 64 bytes of 16-bit elements per pixel and load.
constexpr long long kChannelsLastTile = 32;
// The shared memory a block may use: 48 KiB (no opt-in) leaves an SM room for several blocks.
constexpr long long kSharedBudget = 48 * 1024;
// Filter taps a weight-gradient thread keeps in registers (7x7).
constexpr long long kMaxTaps = 49;
constexpr long long kMaxMultiplier = 8;
// The longest run of outputs down a column a forward or data face thread computes.
constexpr long long kMaxRun = 8;
// Weight-face taps reduced across the block per round (shared floats: kThreads each).
constexpr int kTapChunk = 8;
constexpr long long kInt32Max = (1LL << 31) - 1;

// The tiling of one face: A channels per block, the output tile (data face: A
// pixels, otherwise B pixels), the staged window of the input (A, or B for the
// data face), the weight face's slices, and the shared-memory layout in floats.
struct FaceTiling {
  FaceTask task;
  long long block_channels = 1, tile_h = 1, tile_w = 1, window_h = 1, window_w = 1;
  long long slices = 1;  // weight face: blocks per channel block over the N x tiles units
  long long run_y = 1;   // forward and stride-1 data faces: outputs a thread computes down a column
  int stage_vec_x = 1;   // run faces, planar: elements per load of the window's rows (stage_rows), else 1
  int a_vec = 1, b_vec = 1;  // elements per load of A and B where their channels are contiguous
  long long window_at = 0, tile_b_at = 0, reduce_at = 0, shared_floats = 0;
  long long blocks = 0;  // grid size (the weight face's first pass)

  long long shared_bytes() const { return shared_floats * 4; }
};

struct DepthwiseConfig final : Config {
  DType dtype = DType::kF32;
  bool channels_last = false;  // shared tiles [y][x][c], else [c][y][x]
  std::vector<FaceTiling> faces;

  std::string text() const override {
    std::string record = "dtype=" + std::string(dtype_name(dtype)) + " tile " +
                         (channels_last ? "[y][x][c]" : "[c][y][x]");
    for (const FaceTiling& f : faces) {
      record += "; " + f.task.result + ": face " + std::to_string(f.task.face) + " channels " +
                std::to_string(f.block_channels) + " tile " + std::to_string(f.tile_h) + "x" +
                std::to_string(f.tile_w) + " window " + std::to_string(f.window_h) + "x" + std::to_string(f.window_w) +
                " blocks " + std::to_string(f.blocks) + " vec A " + std::to_string(f.a_vec) + " B " +
                std::to_string(f.b_vec);
      if (f.task.face == kWeightFace) record += " slices " + std::to_string(f.slices);
      if (f.run_y > 1) record += " runs of " + std::to_string(f.run_y);
      if (f.stage_vec_x > 1) record += " rows by " + std::to_string(f.stage_vec_x);
    }
    return record;
  }
};

// The input rows a face's tile of `tile` outputs reads along one dimension.
long long window_extent(Face face, long long tile, long long filter, long long stride, long long dil) {
  if (face != kDataFace) return (tile - 1) * stride + (filter - 1) * dil + 1;
  // The data face gathers o = (i + pad - r*dil) / stride: floor((tile - 1 + (f - 1)*dil) / stride) + 1
  // positions, one more where the tile's first pixel is not on a stride boundary.
  return stride == 1 ? tile + (filter - 1) * dil : (tile - 1 + (filter - 1) * dil) / stride + 2;
}

// Elements per load of a tensor whose channels are contiguous (16, 8 or 4
// bytes): the width must divide its channel count, every other stride and the
// block's first channel (a multiple of `block_channels`). 1 otherwise.
int vector_width(const Strides5& s, long long channels, long long block_channels, long long elem_bytes) {
  if (s[1] != 1) return 1;
  for (long long bytes : {16LL, 8LL, 4LL}) {
    const long long v = bytes / elem_bytes;
    if (v <= 1) break;
    if (channels % v == 0 && block_channels % v == 0 && s[0] % v == 0 && s[2] % v == 0 && s[3] % v == 0 &&
        s[4] % v == 0)
      return static_cast<int>(v);
  }
  return 1;
}

// Elements per load of a planar window's rows (stage_rows): 4 (16 bytes of fp32, 8 of 16-bit elements,
// one 16-byte shared store each, conflict-free) where the rows are contiguous and the width and every
// other stride are multiples of 4; 1 otherwise.
int row_vector_width(const Strides5& s, long long width) {
  constexpr long long v = 4;
  return s[4] == 1 && width % v == 0 && s[0] % v == 0 && s[1] % v == 0 && s[3] % v == 0 ? static_cast<int>(v) : 1;
}

// The face's staged window and its shared-memory layout, in floats.
void lay_out_shared(FaceTiling& f, const Relation& r) {
  const long long m = r.bg(), taps = r.taps(), window_channels = f.block_channels * (f.task.face == kDataFace ? m : 1);
  f.window_h = window_extent(f.task.face, f.tile_h, r.f_size[1], r.stride[1], r.dil[1]);
  f.window_w = window_extent(f.task.face, f.tile_w, r.f_size[2], r.stride[2], r.dil[2]);
  f.window_at = f.task.face == kWeightFace ? 0 : f.block_channels * m * taps;  // the filter taps first
  if (f.stage_vec_x > 1) {
    // Rows of whole vectors from the window's first column moved down to a multiple (up to a vector
    // more), the window 16-byte aligned for the 4-float shared stores.
    f.window_w = ceil_div(f.window_w + f.stage_vec_x - 1, f.stage_vec_x) * f.stage_vec_x;
    f.window_at = ceil_div(f.window_at, 4) * 4;
  }
  f.tile_b_at = f.window_at + window_channels * f.window_h * f.window_w;
  f.reduce_at = f.tile_b_at + (f.task.face == kWeightFace ? f.block_channels * m * f.tile_h * f.tile_w : 0);
  f.shared_floats = f.reduce_at + (f.task.face == kWeightFace ? kThreads * kTapChunk : 0);
}

// The tile of one face: about `outputs_per_block` outputs (kOutputsPerBlock
// but for boo tune's alternatives), shrunk until its shared memory fits the
// budget; nullopt when even one pixel does not.
std::optional<FaceTiling> tile_face(const FaceTask& task, const ConvProblem& problem, bool channels_last,
                                    const ArchSpec& arch, long long outputs_per_block) {
  const Relation& r = problem.relation;
  FaceTiling f;
  f.task = task;
  const long long m = r.bg();
  const long long out_h = task.face == kDataFace ? r.a_size[1] : r.b_size[1];
  const long long out_w = task.face == kDataFace ? r.a_size[2] : r.b_size[2];
  // Outputs per A channel and pixel: the multiplier's B channels, or one A channel (data face).
  const long long per_channel = task.face == kDataFace ? 1 : m;
  // A thread of the weight face owns one B channel: at most kThreads of them per block.
  const long long max_channels = std::min(r.ca, kThreads / m);
  // The forward face and the data face at stride 1 give a thread a run of up to kMaxRun outputs down a
  // column, so that each window row is read from shared memory once for the run, not once per output:
  // a 3x3 at stride 1 reads 10 rows of 3 for 8 outputs instead of 9 values (and 9 taps) for each.
  const bool strided = r.stride[1] * r.stride[2] > 1;
  const bool runs = task.face == kForwardFace || (task.face == kDataFace && !strided);
  long long outputs = runs ? outputs_per_block / 4 * kMaxRun : outputs_per_block;
  // Strided planar tiles: boo tune's fastest were 1/4 the outputs for the forward face (whose window is
  // about stride^2 times the tile: more blocks an SM) and 4x for the data face's gather (whose window is
  // about 1/stride^2 of it: fewer halos) on 16 of nchw-models' 20 strided 3x3 lines of every dtype
  // (0.80-0.96x the time). On 14 other strided shapes the gather's rule held (1.006-1.21x faster), the
  // forward face's for 3x3 filters (1.06-1.12x, one tie) but not 5x5 (0.78-0.99x): larger filters keep
  // their tiles (docs/perf/2026-11-27-session15.md). Channels-last tiles were not measured.
  const bool small_filter = r.f_size[1] <= 3 && r.f_size[2] <= 3;
  if (strided && !channels_last && task.face == kForwardFace && small_filter)
    outputs = std::max(1LL, outputs / 4);
  if (strided && !channels_last && task.face == kDataFace) outputs *= 4;
  if (channels_last) {
    f.block_channels = std::min(max_channels, kChannelsLastTile);
    const long long pixels = std::max(1LL, outputs / (f.block_channels * per_channel));
    f.tile_w = std::min(out_w, 8LL);
    f.tile_h = std::clamp(pixels / f.tile_w, 1LL, out_h);
  } else {
    f.tile_w = out_w <= 8 ? 8 : out_w <= 16 ? 16 : 32;
    if (runs) f.tile_w = ceil_div(out_w, ceil_div(out_w, f.tile_w));  // tiles of equal width: 112 = 4 x 28
    f.tile_h = std::clamp(outputs / f.tile_w, 1LL, out_h);
  }
  if (runs) {
    // Tiles of equal height (112 = 2 x 56, not 64 + 48), a whole number of runs each: a run is kMaxRun
    // rows, or the power of two that covers a lower tile; rows past the plane are skipped.
    f.tile_h = ceil_div(out_h, ceil_div(out_h, f.tile_h));
    f.run_y = std::min(kMaxRun, static_cast<long long>(std::bit_ceil(static_cast<unsigned long long>(f.tile_h))));
    f.tile_h = ceil_div(f.tile_h, f.run_y) * f.run_y;
  }
  if (!channels_last)
    f.block_channels = std::clamp(outputs / (f.tile_h * f.tile_w * per_channel), 1LL, max_channels);
  if (runs && !channels_last) {
    const bool dy_window = task.face == kDataFace;  // the data face stages B, the forward face A
    f.stage_vec_x =
        row_vector_width(dy_window ? r.b_strides : r.a_strides, dy_window ? r.b_size[2] : r.a_size[2]);
  }
  const long long budget = std::min<long long>(kSharedBudget, arch.max_shared_bytes_per_block);
  for (lay_out_shared(f, r); f.shared_bytes() > budget; lay_out_shared(f, r)) {
    if (f.tile_h > 1) f.tile_h = (f.tile_h + 1) / 2;
    else if (f.tile_w > 1) f.tile_w = (f.tile_w + 1) / 2;
    else if (f.block_channels > 1) f.block_channels = (f.block_channels + 1) / 2;
    else return std::nullopt;
    if (f.tile_h % f.run_y != 0) f.run_y = 1;
  }
  f.a_vec = vector_width(r.a_strides, r.ca, f.block_channels, problem.elem_bytes);
  f.b_vec = vector_width(r.b_strides, r.cb, f.block_channels * m, problem.elem_bytes);
  const long long channel_blocks = ceil_div(r.ca, f.block_channels);
  const long long tiles = ceil_div(out_h, f.tile_h) * ceil_div(out_w, f.tile_w);
  if (task.face == kWeightFace) {
    // Enough blocks for 8 per SM; each reduces N x tiles / slices tiles.
    const long long units = r.batch * tiles;
    f.slices = std::clamp(ceil_div(8LL * arch.sm_count, channel_blocks), 1LL, std::min(units, 4096LL));
    f.blocks = channel_blocks * f.slices;
  } else {
    f.blocks = r.batch * channel_blocks * tiles;
  }
  return f;
}

std::string array_fn(const char* name, const Strides5& v) {
  std::string body;
  for (size_t i = 0; i < v.size(); ++i) body += (i ? ", " : "") + std::to_string(v[i]) + "LL";
  return "  __host__ __device__ static constexpr long long " + std::string(name) +
         "(int i) { constexpr long long v[] = {" + body + "}; return v[i]; }\n";
}

std::string constant(const char* name, long long value) {
  return "  static constexpr int " + std::string(name) + " = " + std::to_string(value) + ";\n";
}

// The Cfg struct of one face (every size a compile-time constant).
std::string cfg_source(const std::string& name, const FaceTiling& f, const DepthwiseConfig& config,
                       const ConvProblem& problem) {
  const Relation& r = problem.relation;
  const ConvSignature& sig = problem.conv();
  std::string s = "struct " + name + " {\n";
  s += "  using T = " + std::string(device_type(config.dtype)) + ";\n";
  const bool idx32 = sig.x_spec().storage_elems() < kInt32Max && sig.y_spec().storage_elems() < kInt32Max &&
                     sig.w_spec().storage_elems() < kInt32Max;
  s += "  static constexpr bool kIdx32 = " + std::string(idx32 ? "true" : "false") + ";\n";
  s += "  static constexpr bool kTileChannelsLast = " + std::string(config.channels_last ? "true" : "false") + ";\n";
  s += "  static constexpr long long kBatch = " + std::to_string(r.batch) + ", kCA = " + std::to_string(r.ca) +
       ", kCB = " + std::to_string(r.cb) + ";\n";
  s += constant("kThreads", kThreads) + constant("kMult", r.bg()) + constant("kBlockChannels", f.block_channels) +
       constant("kTileH", f.tile_h) + constant("kTileW", f.tile_w) + constant("kRunY", f.run_y) +
       constant("kStageVecX", f.stage_vec_x) + constant("kWinH", f.window_h) + constant("kWinW", f.window_w) +
       constant("kWindowAt", f.window_at) + constant("kTileBAt", f.tile_b_at) +
       constant("kReduceAt", f.reduce_at) + constant("kTapChunk", kTapChunk) + constant("kSlices", f.slices) +
       constant("kAVec", f.a_vec) + constant("kBVec", f.b_vec);
  s += constant("kAH", r.a_size[1]) + constant("kAW", r.a_size[2]) + constant("kBH", r.b_size[1]) +
       constant("kBW", r.b_size[2]) + constant("kFH", r.f_size[1]) + constant("kFW", r.f_size[2]) +
       constant("kSH", r.stride[1]) + constant("kSW", r.stride[2]) + constant("kPH", r.pad[1]) +
       constant("kPW", r.pad[2]) + constant("kDH", r.dil[1]) + constant("kDW", r.dil[2]);
  // The data face's shift: a multiple of the stride that keeps i + pad - r*dil + shift non-negative.
  s += constant("kShiftH", r.stride[1] * ceil_div((r.f_size[1] - 1) * r.dil[1], r.stride[1])) +
       constant("kShiftW", r.stride[2] * ceil_div((r.f_size[2] - 1) * r.dil[2], r.stride[2]));
  s += array_fn("AStr", r.a_strides) + array_fn("BStr", r.b_strides) + array_fn("WStr", r.w_strides);
  s += constant("kAct", f.task.epilogue ? static_cast<int>(sig.activation.kind) : 0);
  s += "  static constexpr bool kBias = " + std::string(f.task.epilogue && sig.bias ? "true" : "false") + ";\n";
  return s + "};\n";
}

// Every face tiled for about `outputs_per_block` outputs per block.
Result<DepthwiseConfig> tiled(const ConvProblem& problem, const ArchSpec& arch, long long outputs_per_block) {
  const Relation& r = problem.relation;
  DepthwiseConfig config;
  config.dtype = problem.dtype;
  // The staged tiles follow A's contiguous dimension (A is staged by the
  // forward and weight faces, and written by the data face).
  config.channels_last = r.a_strides[1] == 1 && r.ca > 1;
  for (const FaceTask& task : problem.tasks) {
    std::optional<FaceTiling> f = tile_face(task, problem, config.channels_last, arch, outputs_per_block);
    if (!f)
      return unimplemented("the " + task.result + " tile of one pixel needs more than " +
                           std::to_string(kSharedBudget) + " bytes of shared memory (large dilation or stride)");
    if (f->blocks > kInt32Max) return unimplemented(task.result + " needs " + std::to_string(f->blocks) + " blocks");
    config.faces.push_back(*f);
  }
  return config;
}

class DepthwiseConv final : public Tier<ConvProblem, DepthwiseConfig> {
 public:
  std::string_view name() const override { return "gpu:conv:depthwise"; }

  Status accepts_problem(const ConvProblem& problem, const ArchSpec&) const override {
    const Relation& r = problem.relation;
    if (problem.conv().residual)
      return unimplemented("gpu:conv:depthwise has no residual epilogue (--residual 1); gpu:conv:implicit_gemm and "
                           "gpu:conv:direct run it");
    if (r.ag() != 1)
      return unimplemented(std::to_string(r.ag()) + " channels per group: gpu:conv:depthwise takes one (groups = " +
                           std::string(problem.conv().transposed ? "K" : "C") + ")");
    if (r.bg() > kMaxMultiplier)
      return unimplemented("channel multiplier " + std::to_string(r.bg()) + ": gpu:conv:depthwise takes up to " +
                           std::to_string(kMaxMultiplier));
    if (r.a_size[0] != 1 || r.b_size[0] != 1 || r.f_size[0] != 1)
      return unimplemented("3-D depthwise convolutions are not tiled by gpu:conv:depthwise (1-D and 2-D are)");
    if (r.taps() > kMaxTaps)
      return unimplemented("filter of " + std::to_string(r.taps()) + " taps: gpu:conv:depthwise takes up to " +
                           std::to_string(kMaxTaps) + " (7x7)");
    const auto contiguous = [](const Strides5& s) { return s[1] == 1 || s[4] == 1; };
    if (!contiguous(r.a_strides) || !contiguous(r.b_strides))
      return unimplemented("layouts " + problem.conv().input_layout + " -> " + problem.conv().output_layout +
                           ": gpu:conv:depthwise needs the channels or the width contiguous (NCHW- or NHWC-like)");
    for (long long v : {r.a_size[1], r.a_size[2], r.b_size[1], r.b_size[2], r.batch, r.cb})
      if (v > kInt32Max / 4) return unimplemented("a dimension of " + std::to_string(v) + " exceeds 32-bit tile math");
    return ok_status();
  }

  Result<DepthwiseConfig> configure_problem(const ConvProblem& problem, const ArchSpec& arch) const override {
    return tiled(problem, arch, kOutputsPerBlock);
  }

  // The tier has no cost model: boo tune tries smaller and larger tiles, the
  // nearest to the heuristic's first.
  std::vector<DepthwiseConfig> alternatives(const ConvProblem& problem, const ArchSpec& arch,
                                            const DepthwiseConfig&) const override {
    std::vector<DepthwiseConfig> out;
    for (long long outputs : {kOutputsPerBlock / 2, kOutputsPerBlock * 2, kOutputsPerBlock / 4, kOutputsPerBlock * 4})
      if (Result<DepthwiseConfig> c = tiled(problem, arch, outputs); c.ok()) out.push_back(std::move(*c));
    return out;
  }

  Result<Plan> plan_problem(const ConvProblem& problem, const DepthwiseConfig& config,
                            const ArchSpec&) const override {
    const ConvSignature& conv = problem.conv();
    const Relation& r = problem.relation;
    const TensorRoles roles(conv);
    Plan plan;
    plan.source.name = "conv_depthwise.cu";
    plan.source.text = "// Generated by boo: gpu:conv:depthwise.\n#include \"boo/conv/conv_depthwise.cuh\"\n";
    if (problem.bias_gradient) plan.source.text += "#include \"boo/conv/conv_direct.cuh\"\n";
    plan.tensor_alignment = static_cast<uint32_t>(problem.elem_bytes);
    // `bounds`: ", 1" (one block per SM suffices) lets ptxas give the weight face's per-tap sums
    // (up to 2 x 49) the registers they need: without it, it held a 5x5 dilated one to 128 and spilled.
    auto add_entry = [&](const std::string& entry, const std::string& params, const std::string& call,
                         const std::string& bounds = "") {
      plan.source.text += "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(kThreads) + bounds + ") " +
                          entry + "(const boo::" + params + " p) { " + call + "; }\n";
      plan.source.entries.push_back(entry);
    };
    size_t workspace = 0;
    for (const FaceTiling& f : config.faces) {
      const std::string entry = "boo_depthwise_" + f.task.result, cfg = "Cfg_" + f.task.result;
      plan.source.text += "\n" + cfg_source(cfg, f, config, problem);
      const char* function = f.task.face == kForwardFace ? "forward_face" : f.task.face == kDataFace ? "data_face"
                                                                                                    : "weight_face";
      add_entry(entry, "ConvDepthwiseParams", "boo::depthwise::" + std::string(function) + "<" + cfg + ">(p)",
                f.task.face == kWeightFace ? ", 1" : "");
      BOO_ASSIGN_OR_RETURN(uint32_t blocks, grid_extent(f.blocks, kInt32Max, "x"));
      StepBuilder<ConvDepthwiseParams> step(entry, {blocks, 1, 1}, {kThreads, 1, 1},
                                            static_cast<uint32_t>(f.shared_bytes()));
      step.params.act_alpha = static_cast<float>(conv.activation.alpha);
      step.params.act_lo = static_cast<float>(conv.activation.lo);
      step.params.act_hi = static_cast<float>(conv.activation.hi);
      BOO_ASSIGN_OR_RETURN(TensorBinding a, roles.tensor(f.task.a));
      BOO_ASSIGN_OR_RETURN(TensorBinding b, roles.tensor(f.task.b));
      BOO_ASSIGN_OR_RETURN(TensorBinding w, roles.tensor(f.task.w));
      step.bind(step.params.a, a);
      step.bind(step.params.b, b);
      step.bind(step.params.w, w);
      if (f.task.epilogue && conv.bias) {
        BOO_ASSIGN_OR_RETURN(TensorBinding bias, roles.argument("b"));
        step.bind(step.params.bias, bias);
      }
      if (f.task.face == kWeightFace) {
        // The partials [slices][Cb][taps] at the workspace's start (one weight face per plan).
        step.bind(step.params.partials, TensorBinding::workspace(0));
        workspace = static_cast<size_t>(f.slices * r.cb * r.taps()) * sizeof(float);
      }
      LaunchStep launch = std::move(step).finish();
      plan.steps.push_back(launch);
      if (f.task.face == kWeightFace) {
        const std::string reduce = entry + "_reduce";
        add_entry(reduce, "ConvDepthwiseParams", "boo::depthwise::weight_reduce<" + cfg + ">(p)");
        launch.entry = reduce;
        launch.grid = {static_cast<uint32_t>(std::clamp<long long>(ceil_div(r.cb * r.taps(), kThreads), 1, 65535)), 1,
                       1};
        launch.shared_bytes = 0;
        plan.steps.push_back(std::move(launch));
      }
    }
    if (problem.bias_gradient) {
      // db = the sum of dy over the batch and every pixel (gpu:conv:direct's kernel).
      add_entry("boo_conv_db", "ConvFaceParams", "boo::conv_bias_gradient<" + std::string(device_type(conv.dtype)) +
                                                     ">(p)");
      BOO_ASSIGN_OR_RETURN(LaunchStep step, bias_gradient_step(problem, roles, kThreads));
      plan.steps.push_back(std::move(step));
    }
    plan.workspace_bytes = workspace;
    for (const FaceTiling& f : config.faces) {
      const auto vector_bytes =
          static_cast<uint32_t>(std::max({f.a_vec, f.b_vec, f.stage_vec_x}) * problem.elem_bytes);
      plan.tensor_alignment = std::max(plan.tensor_alignment, vector_bytes);
    }
    return plan;
  }
};

// What differs between the two sliced depthwise weight-gradient tiers' launches (planes, channels).
struct SlicedWeightLaunch {
  std::string entry, call, bounds;  // the kernel: its entry, its body's call, its __launch_bounds__
  uint32_t blocks = 0, threads = 0, shared_bytes = 0;
  long long slices = 1;             // pixel slices: their fp32 partials [slices][Cb][taps] in the workspace
  std::string reduce_call;          // the reduce adding the partials in slice order (slices > 1)
  uint32_t reduce_blocks = 0;       // of kThreads
};

// A sliced tier's source up to its Cfg's first lines (element type, 32-bit indexing), which it returns:
// `tier` names the tier (gpu:conv:<tier>) and its header (conv_<tier>.cuh).
std::string sliced_source_head(Plan& plan, const ConvProblem& problem, const std::string& tier, DType dtype) {
  const ConvSignature& conv = problem.conv();
  plan.source.name = "conv_" + tier + ".cu";
  plan.source.text = "// Generated by boo: gpu:conv:" + tier + ".\n#include \"boo/conv/conv_" + tier + ".cuh\"\n";
  if (problem.bias_gradient) plan.source.text += "#include \"boo/conv/conv_direct.cuh\"\n";
  const bool idx32 = conv.x_spec().storage_elems() < kInt32Max && conv.y_spec().storage_elems() < kInt32Max;
  return "\nstruct Cfg {\n  using T = " + std::string(device_type(dtype)) + ";\n" +
         "  static constexpr bool kIdx32 = " + std::string(idx32 ? "true" : "false") + ";\n";
}

// The sliced tiers' Cfg lines of the 2-D geometry (sizes, stride, padding, dilation, strides) and its end.
std::string sliced_geometry(const Relation& r) {
  return constant("kAH", r.a_size[1]) + constant("kAW", r.a_size[2]) + constant("kBH", r.b_size[1]) +
         constant("kBW", r.b_size[2]) + constant("kFH", r.f_size[1]) + constant("kFW", r.f_size[2]) +
         constant("kSH", r.stride[1]) + constant("kSW", r.stride[2]) + constant("kPH", r.pad[1]) +
         constant("kPW", r.pad[2]) + constant("kDH", r.dil[1]) + constant("kDW", r.dil[2]) +
         array_fn("AStr", r.a_strides) + array_fn("BStr", r.b_strides) + array_fn("WStr", r.w_strides) + "};\n";
}

// The sliced weight gradient's kernels and launches into `plan` (after its Cfg): the kernel binding x, dy
// and dw (and the workspace's partials), with several slices the reduce, then the bias gradient's launch
// where the problem asks for it.
Status plan_sliced_weight(Plan& plan, const ConvProblem& problem, const FaceTask& task, const TensorRoles& roles,
                          const SlicedWeightLaunch& l) {
  const Relation& r = problem.relation;
  auto add_entry = [&](const std::string& entry, const std::string& params, const std::string& call,
                       const std::string& bounds) {
    plan.source.text += "extern \"C\" __global__ void __launch_bounds__(" + bounds + ") " + entry + "(const boo::" +
                        params + " p) { " + call + "; }\n";
    plan.source.entries.push_back(entry);
  };
  add_entry(l.entry, "ConvDepthwiseParams", l.call, l.bounds);
  StepBuilder<ConvDepthwiseParams> step(l.entry, {l.blocks, 1, 1}, {l.threads, 1, 1}, l.shared_bytes);
  BOO_RETURN_IF_ERROR(bind_task_tensors(step, roles, task));
  if (l.slices > 1) {
    step.bind(step.params.partials, TensorBinding::workspace(0));
    plan.workspace_bytes = static_cast<size_t>(l.slices * r.cb * r.taps()) * sizeof(float);
  }
  LaunchStep launch = std::move(step).finish();
  plan.steps.push_back(launch);
  if (l.slices > 1) {
    const std::string reduce = l.entry + "_reduce";
    add_entry(reduce, "ConvDepthwiseParams", l.reduce_call, std::to_string(kThreads));
    launch.entry = reduce;
    launch.grid = {l.reduce_blocks, 1, 1};
    launch.block = {kThreads, 1, 1};
    launch.shared_bytes = 0;
    plan.steps.push_back(std::move(launch));
  }
  if (problem.bias_gradient) {
    add_entry("boo_conv_db", "ConvFaceParams",
              "boo::conv_bias_gradient<" + std::string(device_type(problem.dtype)) + ">(p)", std::to_string(kThreads));
    BOO_ASSIGN_OR_RETURN(LaunchStep db, bias_gradient_step(problem, roles, kThreads));
    plan.steps.push_back(std::move(db));
  }
  return ok_status();
}

// gpu:conv:depthwise_planes: the weight face over whole (image, channel)
// planes (conv_depthwise_planes.cuh). Rows of up to kMaxPlaneWidth pixels go
// to registers whole.
constexpr long long kMaxPlaneWidth = 32;
constexpr int kPlanesThreads = 128;

struct PlanesConfig final : Config {
  DType dtype = DType::kF32;
  int threads = kPlanesThreads;
  long long images = 1;            // images per staged chunk
  long long images_per_slice = 1;  // a block's images
  long long slices = 1;            // blocks per A channel; more than one adds the reduce launch
  int a_vec = 1, b_vec = 1;        // elements per load of an A and a B plane

  // Two stages of A and B planes as the element type (each region padded to 16 bytes), then the
  // warps' sums [warps][taps] as floats.
  long long shared_bytes(const Relation& r, long long elem_bytes) const {
    const auto padded = [](long long bytes) { return ceil_div(bytes, 16) * 16; };
    return 2 * (padded(images * r.pix_a() * elem_bytes) + padded(images * r.bg() * r.pix_b() * elem_bytes)) +
           threads / 32 * r.taps() * 4;
  }
  // Elements a thread moves through registers per chunk: 16-bit planes of odd size (cp.async moves 4 bytes at least).
  long long register_elements(const Relation& r, long long elem_bytes) const {
    long long n = 0;
    if (a_vec * elem_bytes < 4) n += ceil_div(images * r.pix_a(), threads);
    if (b_vec * elem_bytes < 4) n += ceil_div(images * r.bg() * r.pix_b(), threads);
    return n;
  }
  std::string text() const override {
    return "dtype=" + std::string(dtype_name(dtype)) + " dw planes: threads " + std::to_string(threads) + " images " +
           std::to_string(images) + " of " + std::to_string(images_per_slice) + " per block slices " +
           std::to_string(slices) + " vec A " + std::to_string(a_vec) + " B " + std::to_string(b_vec);
  }
};

// Elements per load of a plane of `plane` contiguous elements: 16, 8 or 4
// bytes dividing the plane and the image and channel strides; 1 otherwise.
int plane_vector_width(const Strides5& s, long long plane, long long elem_bytes) {
  for (long long bytes : {16LL, 8LL, 4LL}) {
    const long long v = bytes / elem_bytes;
    if (v <= 1) break;
    if (plane % v == 0 && s[0] % v == 0 && s[1] % v == 0) return static_cast<int>(v);
  }
  return 1;
}

// Rows contiguous and back to back: a plane is one run of H x W elements (D has size 1).
bool planes_contiguous(const Strides5& s, const Dims3& size) {
  return s[4] == 1 && (size[1] == 1 || s[3] == size[2]);
}

class DepthwisePlanesConv final : public Tier<ConvProblem, PlanesConfig> {
 public:
  std::string_view name() const override { return "gpu:conv:depthwise_planes"; }

  Status accepts_problem(const ConvProblem& problem, const ArchSpec& arch) const override {
    const Relation& r = problem.relation;
    if (problem.tasks.size() != 1 || problem.tasks[0].face != kWeightFace || problem.fp32_result)
      return unimplemented("gpu:conv:depthwise_planes computes the weight gradient alone (-F 4, with -F 8's db)");
    if (r.ag() != 1 || r.bg() > kMaxMultiplier)
      return unimplemented("gpu:conv:depthwise_planes takes depthwise convs (one channel per group, a multiplier of up "
                           "to " + std::to_string(kMaxMultiplier) + "), not " + std::to_string(r.ag()) + " -> " +
                           std::to_string(r.bg()));
    if (r.a_size[0] != 1 || r.f_size[0] != 1)
      return unimplemented("3-D depthwise convolutions are not tiled by gpu:conv:depthwise_planes (1-D and 2-D are)");
    if (r.taps() > kMaxTaps)
      return unimplemented("filter of " + std::to_string(r.taps()) + " taps: gpu:conv:depthwise_planes takes up to " +
                           std::to_string(kMaxTaps) + " (7x7)");
    if (!planes_contiguous(r.a_strides, r.a_size) || !planes_contiguous(r.b_strides, r.b_size))
      return unimplemented("layouts " + problem.conv().input_layout + " -> " + problem.conv().output_layout +
                           ": gpu:conv:depthwise_planes reads contiguous planes (NCHW-like; gpu:conv:depthwise_channels and "
                           "gpu:conv:depthwise run channels-last tensors)");
    if (r.a_size[2] > kMaxPlaneWidth || r.b_size[2] > kMaxPlaneWidth)
      return unimplemented("rows of " + std::to_string(std::max(r.a_size[2], r.b_size[2])) +
                           " pixels: gpu:conv:depthwise_planes keeps rows of up to " + std::to_string(kMaxPlaneWidth) +
                           " in registers (gpu:conv:depthwise tiles wider planes)");
    PlanesConfig one;
    one.threads = kThreads;
    const long long one_image = one.shared_bytes(r, problem.elem_bytes);
    if (one_image > std::min<long long>(kSharedBudget, arch.max_shared_bytes_per_block))
      return unimplemented("an image's planes need " + std::to_string(one_image) +
                           " bytes of shared memory (two stages): more than " + std::to_string(kSharedBudget));
    for (long long v : {r.batch, r.ca, r.cb})
      if (v > kInt32Max / 4) return unimplemented("a dimension of " + std::to_string(v) + " exceeds 32-bit block math");
    return ok_status();
  }

  Result<PlanesConfig> configure_problem(const ConvProblem& problem, const ArchSpec& arch) const override {
    const Relation& r = problem.relation;
    PlanesConfig config;
    config.dtype = problem.dtype;
    // A B channel per group of warps: four of them where 128 threads hold one warp each.
    config.threads = r.bg() > kPlanesThreads / 32 ? kThreads : kPlanesThreads;
    // One block per channel (one launch) where the channels alone give every SM two blocks; else
    // the images are sliced until about four blocks per SM keep enough loads in flight.
    config.slices = r.ca >= 2LL * arch.sm_count ? 1 : std::min(r.batch, ceil_div(4LL * arch.sm_count, r.ca));
    config.images_per_slice = ceil_div(r.batch, config.slices);
    config.slices = ceil_div(r.batch, config.images_per_slice);
    config.a_vec = plane_vector_width(r.a_strides, r.pix_a(), problem.elem_bytes);
    config.b_vec = plane_vector_width(r.b_strides, r.pix_b(), problem.elem_bytes);
    // The chunk: the fewest rounds of output rows per thread (a round: each thread of a B channel's
    // group takes one row), then the fewest chunks, within the shared-memory budget and 16
    // registers of elements in flight.
    const long long group = config.threads / 32 / r.bg() * 32;
    const long long budget = std::min<long long>(kSharedBudget, arch.max_shared_bytes_per_block);
    long long best_rounds = -1;
    for (long long images = 1; images <= config.images_per_slice; ++images) {
      PlanesConfig c = config;
      c.images = images;
      if (c.shared_bytes(r, problem.elem_bytes) > budget || c.register_elements(r, problem.elem_bytes) > 16) break;
      const long long chunks = ceil_div(config.images_per_slice, images);
      const long long rounds = chunks * ceil_div(images * r.b_size[1], group);
      if (best_rounds < 0 || rounds < best_rounds ||
          (rounds == best_rounds && chunks < ceil_div(config.images_per_slice, config.images))) {
        best_rounds = rounds;
        config.images = images;
      }
    }
    if (r.ca * config.slices > kInt32Max)
      return unimplemented("dw needs " + std::to_string(r.ca * config.slices) + " blocks");
    return config;
  }

  Result<Plan> plan_problem(const ConvProblem& problem, const PlanesConfig& config,
                            const ArchSpec&) const override {
    const ConvSignature& conv = problem.conv();
    const Relation& r = problem.relation;
    const FaceTask& task = problem.tasks[0];
    const TensorRoles roles(conv);
    Plan plan;
    std::string cfg = sliced_source_head(plan, problem, "depthwise_planes", config.dtype);
    cfg += constant("kThreads", config.threads) + constant("kMult", r.bg()) + constant("kImages", config.images) +
           constant("kImagesPerSlice", config.images_per_slice) + constant("kSlices", config.slices) +
           constant("kBatch", r.batch) + constant("kCA", r.ca) + constant("kCB", r.cb) +
           constant("kAVec", config.a_vec) + constant("kBVec", config.b_vec);
    cfg += sliced_geometry(r);
    plan.source.text += cfg;
    SlicedWeightLaunch l;
    l.entry = "boo_depthwise_planes_" + task.result;
    l.call = "boo::depthwise::weight_planes<Cfg>(p)";
    l.bounds = std::to_string(config.threads);
    BOO_ASSIGN_OR_RETURN(l.blocks, grid_extent(r.ca * config.slices, kInt32Max, "x"));
    l.threads = static_cast<uint32_t>(config.threads);
    l.shared_bytes = static_cast<uint32_t>(config.shared_bytes(r, problem.elem_bytes));
    l.slices = config.slices;
    l.reduce_call = "boo::depthwise::weight_reduce<Cfg>(p)";  // a thread a weight, in slice order
    l.reduce_blocks = static_cast<uint32_t>(std::clamp<long long>(ceil_div(r.cb * r.taps(), kThreads), 1, 65535));
    BOO_RETURN_IF_ERROR(plan_sliced_weight(plan, problem, task, roles, l));
    plan.tensor_alignment = static_cast<uint32_t>(std::max(config.a_vec, config.b_vec) * problem.elem_bytes);
    return plan;
  }
};


// gpu:conv:depthwise_channels: the weight face of channels-last depthwise convs (conv_depthwise_channels.cuh).
// A thread's sums: taps x kVec floats, at most kMaxChannelSums (3x3 x 8 channels) of them.
constexpr long long kMaxChannelSums = 72;
// Channel vectors (lanes) of a block: up to 16 (128 to 256 bytes of a pixel's channels a warp-row).
constexpr long long kMaxLanes = 16;
// Blocks an SM the slices aim for (boo tune tries 1/4 to 4x, with 4x to 1/4 kMinWorkerPixels).
constexpr long long kChannelsBlocksPerSm = 8;
// Pixels a worker takes at least per slice: fewer leave its loop's latency unhidden.
constexpr long long kMinWorkerPixels = 8;
// The L1 cache's rate an SM, bytes a clock, and the clock (an H100's 1.755 GHz): A's repeats of neighbouring
// pixels' taps are served there.
constexpr double kL1BytesPerClock = 64, kClockHz = 1.755e9;

struct ChannelsConfig final : Config {
  DType dtype = DType::kF32;
  long long vec = 1, lanes = 1, threads = kThreads, channel_blocks = 1, slices = 1;
  double dram_us = 0, l1_us = 0;  // the cost model's estimates (text only: explain shows them)

  long long workers() const { return threads / lanes; }
  long long shared_bytes() const { return workers() * lanes * vec * 4; }
  std::string text() const override {
    return "dtype=" + std::string(dtype_name(dtype)) + " dw channels last: vec " + std::to_string(vec) + " lanes " +
           std::to_string(lanes) + " workers " + std::to_string(workers()) + " channel blocks " +
           std::to_string(channel_blocks) + " slices " + std::to_string(slices) + " cost dram " +
           std::to_string(static_cast<long long>(dram_us)) + " us L1 " + std::to_string(static_cast<long long>(l1_us)) +
           " us";
  }
};

// Channels per load of both A and B: 16, 8 or 4 bytes (or one element) dividing the channels and every
// other stride of both, its sums within kMaxChannelSums.
long long channel_vector(const Relation& r, long long elem_bytes) {
  for (long long bytes : {16LL, 8LL, 4LL}) {
    const long long v = bytes / elem_bytes;
    if (v <= 1 || r.taps() * v > kMaxChannelSums || r.ca % v != 0) continue;
    bool aligned = true;
    for (const Strides5* s : {&r.a_strides, &r.b_strides})
      for (int d : {0, 2, 3, 4}) aligned = aligned && (*s)[d] % v == 0;
    if (aligned) return v;
  }
  return 1;
}

class DepthwiseChannelsConv final : public Tier<ConvProblem, ChannelsConfig> {
  static constexpr long long kMaxChannels = 64;

 public:
  std::string_view name() const override { return "gpu:conv:depthwise_channels"; }

  Status accepts_problem(const ConvProblem& problem, const ArchSpec&) const override {
    const Relation& r = problem.relation;
    if (problem.tasks.size() != 1 || problem.tasks[0].face != kWeightFace || problem.fp32_result)
      return unimplemented("gpu:conv:depthwise_channels computes the weight gradient alone (-F 4, with -F 8's db)");
    if (r.ag() != 1 || r.bg() != 1)
      return unimplemented("gpu:conv:depthwise_channels takes depthwise convs of multiplier 1 (one channel per "
                           "group in and out), not " + std::to_string(r.ag()) + " -> " + std::to_string(r.bg()));
    if (r.a_size[0] != 1 || r.f_size[0] != 1)
      return unimplemented("3-D depthwise convolutions are not tiled by gpu:conv:depthwise_channels (1-D and 2-D are)");
    if (r.taps() > kMaxTaps)
      return unimplemented("filter of " + std::to_string(r.taps()) + " taps: gpu:conv:depthwise_channels takes up to " +
                           std::to_string(kMaxTaps) + " (7x7)");
    if (r.a_strides[1] != 1 || r.b_strides[1] != 1 || r.ca == 1)
      return unimplemented("layouts " + problem.conv().input_layout + " -> " + problem.conv().output_layout +
                           ": gpu:conv:depthwise_channels reads channels-last tensors (NHWC-like; "
                           "gpu:conv:depthwise_planes runs NCHW)");
    const long long pixels = r.batch * r.pix_b();
    if (pixels > kInt32Max || r.ca > kInt32Max / 4)
      return unimplemented(std::to_string(pixels) + " output pixels: gpu:conv:depthwise_channels counts them in "
                           "32 bits");
    // Measured against gpu:conv:depthwise on MobileNetV2's lines (H100, 2026-11-26,
    // docs/perf/2026-11-26-session6.md): 32 channels at 112x112 0.62x its time; 96-960 channels 0.91-1.38x,
    // 1.09x on geomean. Until a cost model tells them apart, the few-channel case only.
    if (r.ca > kMaxChannels)
      return unimplemented(std::to_string(r.ca) + " channels: gpu:conv:depthwise_channels runs up to " +
                           std::to_string(kMaxChannels) + " (gpu:conv:depthwise was faster above)");
    return ok_status();
  }

  Result<ChannelsConfig> configure_problem(const ConvProblem& problem, const ArchSpec& arch) const override {
    return configured(problem, arch, kChannelsBlocksPerSm, kMinWorkerPixels);
  }

  // boo tune's alternatives: the slices for half, twice, a quarter and four times the heuristic's blocks an SM
  // and pixels a worker at least (fewer partials to add against more loads in flight).
  std::vector<ChannelsConfig> alternatives(const ConvProblem& problem, const ArchSpec& arch,
                                           const ChannelsConfig&) const override {
    std::vector<ChannelsConfig> out;
    for (long long scale : {2LL, -2LL, 4LL, -4LL}) {
      const long long per_sm = scale > 0 ? kChannelsBlocksPerSm / scale : kChannelsBlocksPerSm * -scale;
      const long long min_pixels = scale > 0 ? kMinWorkerPixels * scale : kMinWorkerPixels / -scale;
      if (Result<ChannelsConfig> c = configured(problem, arch, per_sm, min_pixels); c.ok()) out.push_back(std::move(*c));
    }
    return out;
  }

 private:
  static Result<ChannelsConfig> configured(const ConvProblem& problem, const ArchSpec& arch, long long per_sm,
                                           long long min_pixels) {
    const Relation& r = problem.relation;
    ChannelsConfig c;
    c.dtype = problem.dtype;
    c.vec = channel_vector(r, problem.elem_bytes);
    // The fewest channel blocks of at most kMaxLanes vectors, the vectors spread evenly over them.
    const long long vectors = r.ca / c.vec;
    c.channel_blocks = ceil_div(vectors, kMaxLanes);
    c.lanes = ceil_div(vectors, c.channel_blocks);
    c.threads = kThreads / c.lanes * c.lanes;
    // Slices: per_sm blocks an SM (the heuristic's 8: two resident of 256 threads, four waves), each worker at
    // least min_pixels (the heuristic's kMinWorkerPixels).
    const long long pixels = r.batch * r.pix_b();
    c.slices = std::clamp(ceil_div(per_sm * arch.sm_count, c.channel_blocks), 1LL,
                          std::clamp(pixels / (c.workers() * min_pixels), 1LL, 4096LL));
    if (c.channel_blocks * c.slices > kInt32Max)
      return unimplemented("dw needs " + std::to_string(c.channel_blocks * c.slices) + " blocks");
    // The cost model: A and B read from device memory once; every pixel's taps' A vectors through L1.
    const double dram_bytes = static_cast<double>(problem.elem_bytes) * r.batch * r.ca * (r.pix_a() + r.pix_b());
    const double l1_bytes = static_cast<double>(problem.elem_bytes) * pixels * r.ca * (r.taps() + 1);
    c.dram_us = dram_bytes / arch.copy_bytes_per_s * 1e6;
    c.l1_us = l1_bytes / (kL1BytesPerClock * kClockHz * arch.sm_count) * 1e6;
    return c;
  }


 public:
  Result<Plan> plan_problem(const ConvProblem& problem, const ChannelsConfig& config,
                            const ArchSpec&) const override {
    const ConvSignature& conv = problem.conv();
    const Relation& r = problem.relation;
    const FaceTask& task = problem.tasks[0];
    const TensorRoles roles(conv);
    Plan plan;
    std::string cfg = sliced_source_head(plan, problem, "depthwise_channels", config.dtype);
    cfg += constant("kThreads", config.threads) + constant("kVec", config.vec) + constant("kLanes", config.lanes) +
           constant("kChannelBlocks", config.channel_blocks) + constant("kSlices", config.slices) +
           constant("kBatch", r.batch) + constant("kCA", r.ca) + constant("kCB", r.cb);
    cfg += sliced_geometry(r);
    plan.source.text += cfg;
    SlicedWeightLaunch l;
    l.entry = "boo_depthwise_channels_" + task.result;
    l.call = "boo::depthwise::weight_channels<Cfg>(p)";
    // Two blocks an SM: 128 registers a thread for up to 72 sums, a vector of B and one of A.
    l.bounds = std::to_string(config.threads) + ", 2";
    BOO_ASSIGN_OR_RETURN(l.blocks, grid_extent(config.channel_blocks * config.slices, kInt32Max, "x"));
    l.threads = static_cast<uint32_t>(config.threads);
    l.shared_bytes = static_cast<uint32_t>(config.shared_bytes());
    l.slices = config.slices;
    l.reduce_call = "boo::depthwise::weight_reduce_warps<Cfg>(p)";  // a warp a weight, in slice order
    BOO_ASSIGN_OR_RETURN(l.reduce_blocks, grid_extent(ceil_div(r.cb * r.taps() * 32, kThreads), kInt32Max, "x"));
    BOO_RETURN_IF_ERROR(plan_sliced_weight(plan, problem, task, roles, l));
    plan.tensor_alignment = static_cast<uint32_t>(config.vec * problem.elem_bytes);
    return plan;
  }
};

}  // namespace

const GpuImplementation& depthwise_implementation() {
  static const DepthwiseConv impl;
  return impl;
}

const GpuImplementation& depthwise_planes_implementation() {
  static const DepthwisePlanesConv impl;
  return impl;
}

const GpuImplementation& depthwise_channels_implementation() {
  static const DepthwiseChannelsConv impl;
  return impl;
}

}  // namespace boo::ops::conv
