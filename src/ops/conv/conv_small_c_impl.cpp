// boo: gpu:conv:small_c_data and gpu:conv:small_c_forward — host side: which
// problems they take, their tiles (the typed configs) and the launch plans
// (device/conv_small_c.cuh, device/conv_small_c_forward.cuh).
#include "ops/conv/conv_small_c_impl.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <tuple>

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
// 16-bit data faces: registers a thread may hold the next chunk in (conv_small_c.cuh's Staged16). NVRTC for
// sm_90a: the 7x7 stem's chunk of 4 (16 elements) spilled at 128 registers, a chunk of 2 (8) took 113.
constexpr long long kMaxStagedRegisters = 10;
// The cost model of the 16-bit choice (accepts_problem): this tier's FFMA efficiency (an estimate: its fp32
// lines ran at 0.73-0.81x cuDNN's time on an H100), against the tier that runs these data faces otherwise,
// gpu:conv:implicit_gemm (gpu:conv:wgmma_sm90 declines fewer than 8 output channels): its narrowest tile is
// 128 x 32 (conv_igemm_impl.cpp's kTileCols), of which the GEMM's N (the result's few channels) fills C
// columns, at the efficiency its tiling_cost gives that tile (0.7).
constexpr double kFfmaEfficiency = 0.7;
constexpr long long kTensorTileColumns = 32;
constexpr double kTensorTileEfficiency = 0.7;
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
  // 16-bit only: B channels per load (the chunk's 4 or 8: one 8- or 16-byte vector, or 1), whether B's
  // channels are contiguous, and the cost model's estimates (accepts_problem) that chose this tier over the
  // tensor-core tiers.
  bool sixteen_bit = false, b_channels_last = false;
  long long b_vec = 1;
  double ffma_us = 0, tensor_us = 0;

  long long shared_bytes(const Relation& r) const {
    return 2 * chunk * (rows.extent * pitch + r.f_size[1] * r.f_size[2] * channels_padded) * 4;
  }
  // Registers of the next chunk a thread holds (Staged16): a vector of b_vec 16-bit channels b_vec / 2, an
  // element 1.
  long long staged_registers(const Relation& r) const {
    const long long b_loads = ceil_div(chunk / b_vec * rows.extent * cols.extent, threads);
    const long long w_loads = ceil_div(chunk * r.f_size[1] * r.f_size[2] * channels_padded, threads);
    return b_loads * std::max(1LL, b_vec / 2) + w_loads;
  }
  std::string text() const override {
    std::string t = "dx small C: tile " + std::to_string(tile_u) + "x" + std::to_string(tile_v) +
                    " phase pixels threads " + std::to_string(threads) + " pixels/thread " + std::to_string(kPixels) +
                    " chunk " + std::to_string(chunk) + " window " + std::to_string(rows.extent) + "x" +
                    std::to_string(cols.extent) + " blocks " + std::to_string(blocks);
    if (sixteen_bit)
      t += " 16-bit B vec " + std::to_string(b_vec) + (b_channels_last ? " channels last" : " rows") + " cost ffma " +
           std::to_string(static_cast<long long>(ffma_us)) + " us < tensor cores " +
           std::to_string(static_cast<long long>(tensor_us)) + " us";
    return t;
  }
};

// The 16-bit cost model: FFMA over the phase-exact taps (every B value times every tap that reaches an A
// pixel, times C) at kFfmaEfficiency, against the tensor-core tier's GEMM, whose N (the C result channels) fills
// C of its narrowest tile's kTensorTileColumns; either bound below by reading B and writing A once.
struct DataCost {
  double ffma_us = 0, tensor_us = 0;
};
DataCost data_cost(const ConvProblem& problem, const ArchSpec& arch) {
  const Relation& r = problem.relation;
  const double macs = static_cast<double>(r.batch) * r.cb * r.b_size[1] * r.b_size[2] * r.f_size[1] * r.f_size[2] *
                      r.ca;
  const double bytes =
      static_cast<double>(problem.elem_bytes) * r.batch * (r.cb * r.b_size[1] * r.b_size[2] + r.ca * r.a_size[1] *
                                                                                                 r.a_size[2]);
  const double memory_us = bytes / arch.copy_bytes_per_s * 1e6;
  DataCost c;
  c.ffma_us = std::max(memory_us, macs / (arch.ffma_macs_per_s * kFfmaEfficiency) * 1e6);
  c.tensor_us = std::max(memory_us, macs * static_cast<double>(kTensorTileColumns) / static_cast<double>(r.ca) /
                                        (arch.mma_sync_macs_per_s * kTensorTileEfficiency) * 1e6);
  return c;
}

std::string constant(const char* name, long long value) {
  return "  static constexpr int " + std::string(name) + " = " + std::to_string(value) + ";\n";
}

std::string array_fn(const char* name, const Strides5& v) {
  std::string body;
  for (size_t i = 0; i < v.size(); ++i) body += (i ? ", " : "") + std::to_string(v[i]) + "LL";
  return "  __host__ __device__ static constexpr long long " + std::string(name) +
         "(int i) { constexpr long long v[] = {" + body + "}; return v[i]; }\n";
}

// The end of both small-C tiers' plans: the kernel's entry (a launch-bounded wrapper of `call`) and its step,
// x or dy, the result (or input) and the filter bound as ConvSmallCParams' a, b and w with the bias and the
// activation; then, with db asked for, the bias gradient's entry and step. Element copies: the kernels take
// vector accesses only where an address allows them.
Status finish_small_c_plan(Plan& plan, const ConvProblem& problem, const std::string& entry, const std::string& call,
                           long long threads, long long min_blocks, long long blocks, long long shared_bytes) {
  const ConvSignature& conv = problem.conv();
  const FaceTask& task = problem.tasks[0];
  const TensorRoles roles(conv);
  auto add_entry = [&](const std::string& name, const std::string& params, const std::string& body, long long t,
                       long long min) {
    plan.source.text += "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(t) + ", " +
                        std::to_string(min) + ") " + name + "(const boo::" + params + " p) { " + body + "; }\n";
    plan.source.entries.push_back(name);
  };
  add_entry(entry, "ConvSmallCParams", call, threads, min_blocks);
  BOO_ASSIGN_OR_RETURN(uint32_t grid, grid_extent(blocks, kInt32Max, "x"));
  StepBuilder<ConvSmallCParams> step(entry, {grid, 1, 1}, {static_cast<uint32_t>(threads), 1, 1},
                                     static_cast<uint32_t>(shared_bytes));
  step.params.act_alpha = static_cast<float>(conv.activation.alpha);
  step.params.act_lo = static_cast<float>(conv.activation.lo);
  step.params.act_hi = static_cast<float>(conv.activation.hi);
  BOO_RETURN_IF_ERROR(bind_task_tensors(step, roles, task));
  if (task.epilogue && conv.bias) {
    BOO_ASSIGN_OR_RETURN(TensorBinding bias, roles.argument("b"));
    step.bind(step.params.bias, bias);
  }
  plan.steps.push_back(std::move(step).finish());
  if (problem.bias_gradient) {
    add_entry("boo_conv_db", "ConvFaceParams",
              "boo::conv_bias_gradient<" + std::string(device_type(problem.dtype)) + ">(p)", 256, 1);
    BOO_ASSIGN_OR_RETURN(LaunchStep db, bias_gradient_step(problem, roles, 256));
    plan.steps.push_back(std::move(db));
  }
  plan.tensor_alignment = static_cast<uint32_t>(problem.elem_bytes);
  return ok_status();
}

class SmallCDataConv final : public Tier<ConvProblem, SmallCConfig> {
 public:
  std::string_view name() const override { return "gpu:conv:small_c_data"; }

  Status accepts_problem(const ConvProblem& problem, const ArchSpec& arch) const override {
    const Relation& r = problem.relation;
    if (problem.tasks.size() != 1 || problem.tasks[0].face != kDataFace || problem.fp32_result)
      return unimplemented("gpu:conv:small_c_data computes the data face alone (backward-data, or a transposed "
                           "conv's forward; with db)");
    const bool sixteen_bit = problem.dtype == DType::kF16 || problem.dtype == DType::kBF16;
    if (problem.dtype != DType::kF32 && !sixteen_bit)
      return unimplemented("gpu:conv:small_c_data runs float32, float16 and bfloat16, not " +
                           std::string(dtype_name(problem.dtype)));
    if (r.groups != 1 || r.ca > kMaxChannels)
      return unimplemented(std::to_string(r.ca) + " result channels in " + std::to_string(r.groups) +
                           " groups: gpu:conv:small_c_data takes up to " + std::to_string(kMaxChannels) +
                           " in one group");
    if (r.a_size[0] != 1 || r.f_size[0] != 1 || r.a_size[1] == 1)
      return unimplemented("gpu:conv:small_c_data takes 2-D convs");
    if (r.dil[1] != 1 || r.dil[2] != 1) return unimplemented("gpu:conv:small_c_data takes dilation 1");
    // fp32 copies B with 4-byte cp.async along its rows; 16-bit elements go through registers (Staged16) at
    // any strides, 8- or 16-byte vectors across channels where they are contiguous.
    if (!sixteen_bit && (r.a_strides[4] != 1 || r.b_strides[4] != 1))
      return unimplemented("layouts " + problem.conv().input_layout + " -> " + problem.conv().output_layout +
                           ": gpu:conv:small_c_data needs rows contiguous (NCHW-like) in float32");
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
    // 16-bit: the tensor-core tiers run at their rate, not FFMA's; they win unless their GEMM's N (these few
    // channels) wastes most of their tile (the forward face's N is K: there they won the 7x7 stem). Measured
    // on an H100: the fp16 7x7 stem's data face ran at 2.63x cuDNN's time on gpu:conv:implicit_gemm.
    if (sixteen_bit) {
      // Measured on an H100 (2026-11-26, docs/perf/2026-11-26-session6.md): the 7x7 stride-2 stem 0.26-0.30x
      // gpu:conv:implicit_gemm's time, a 3x3 stride-1 one 2.57x (one channel a chunk: a barrier per channel).
      // Until the model sees that, 16-bit takes strided data faces only.
      if (r.stride[1] * r.stride[2] < 2)
        return unimplemented("16-bit data faces of strided convs only (stride " + std::to_string(r.stride[1]) + "x" +
                             std::to_string(r.stride[2]) + ": gpu:conv:implicit_gemm was faster)");
      const DataCost cost = data_cost(problem, arch);
      if (cost.ffma_us >= cost.tensor_us)
        return unimplemented("16-bit cost: FFMA " + std::to_string(static_cast<long long>(cost.ffma_us)) +
                             " us >= the tensor-core tier's " + std::to_string(static_cast<long long>(cost.tensor_us)) +
                             " us (" + std::to_string(r.ca) + " of its " +
                             std::to_string(kTensorTileColumns) + " columns)");
    }
    return ok_status();
  }

  Result<SmallCConfig> configure_problem(const ConvProblem& problem, const ArchSpec& arch) const override {
    const Relation& r = problem.relation;
    const long long budget = std::min<long long>(kSharedBudget, arch.max_shared_bytes_per_block);
    // The most B channels a stage holds, up to 8: fewer barriers per FFMA (16-bit: and the next chunk within
    // kMaxStagedRegisters).
    for (long long chunk : {8LL, 4LL, 2LL, 1LL}) {
      SmallCConfig c = tiling(problem, chunk);
      if (c.shared_bytes(r) > budget) continue;
      if (c.sixteen_bit && chunk > 1 && c.staged_registers(r) > kMaxStagedRegisters) continue;
      if (c.blocks > kInt32Max) return unimplemented("dx needs " + std::to_string(c.blocks) + " blocks");
      if (c.sixteen_bit) {
        const DataCost cost = data_cost(problem, arch);
        c.ffma_us = cost.ffma_us;
        c.tensor_us = cost.tensor_us;
      }
      return c;
    }
    return unimplemented("a B channel's window needs more than " + std::to_string(budget) +
                         " bytes of shared memory");
  }

  Result<Plan> plan_problem(const ConvProblem& problem, const SmallCConfig& config, const ArchSpec&) const override {
    const ConvSignature& conv = problem.conv();
    const Relation& r = problem.relation;
    const FaceTask& task = problem.tasks[0];
    Plan plan;
    plan.source.name = "conv_small_c.cu";
    plan.source.text = "// Generated by boo: gpu:conv:small_c_data.\n#include \"boo/conv/conv_small_c.cuh\"\n";
    if (problem.bias_gradient) plan.source.text += "#include \"boo/conv/conv_direct.cuh\"\n";
    const bool idx32 = conv.x_spec().storage_elems() < kInt32Max && conv.y_spec().storage_elems() < kInt32Max;
    std::string cfg = "\nstruct Cfg {\n";
    if (config.sixteen_bit)
      cfg += "  using T = " + std::string(device_type(problem.dtype)) + ";\n  static constexpr bool kBChannelsLast = " +
             (config.b_channels_last ? "true" : "false") + ";\n" + constant("kBVec", config.b_vec);
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
    const std::string entry = "boo_small_c_" + task.result;
    // Three blocks of 256 threads per SM (85 registers a thread): 64 for four spill the 3-channel lines' 24 sums.
    // 16-bit: two (128 registers): the next chunk's registers spilled at 85.
    const long long resident_threads = config.sixteen_bit ? 512 : 768;
    BOO_RETURN_IF_ERROR(finish_small_c_plan(
        plan, problem, entry,
        config.sixteen_bit ? "boo::small_c::data_face_16bit<Cfg>(p)" : "boo::small_c::data_face<Cfg>(p)",
        config.threads, std::max(1LL, resident_threads / config.threads), config.blocks, config.shared_bytes(r)));
    if (config.b_vec > 1)
      plan.tensor_alignment = static_cast<uint32_t>(std::max<long long>(plan.tensor_alignment,
                                                                         config.b_vec * problem.elem_bytes));
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
    c.sixteen_bit = problem.dtype != DType::kF32;
    c.b_channels_last = c.sixteen_bit && r.b_strides[1] == 1 && r.cb > 1;
    // One 16- or 8-byte load of the chunk's 8 or 4 channels: every group in B or out, every address aligned.
    const auto aligned = [&](long long v) { return v % chunk == 0; };
    if (c.b_channels_last && (chunk == 8 || chunk == 4) && aligned(r.cb) && aligned(r.b_strides[0]) &&
        aligned(r.b_strides[3]) && aligned(r.b_strides[4]))
      c.b_vec = chunk;
    return c;
  }
};


// gpu:conv:small_c_forward: output pixels and channels a thread owns (kJ and kKT of conv_small_c_forward.cuh).
constexpr long long kFwdPixels = 4, kFwdChannels = 8;
// Filter taps a dimension and column stride: the per-row body is unrolled over them.
constexpr long long kMaxFwdFilter = 11, kMaxFwdStride = 4;
// 16-bit stems: filters up to 3x3 (accepts_problem says why).
constexpr long long kMaxSixteenBitTaps = 9;

/// The most lanes of one quarter warp whose 16-byte window reads fall on one bank group (1: none share),
/// lane l at row l / lanes reading float row * row_floats + 4 * (l % lanes).
long long quarter_warp_conflicts(long long lanes, long long row_floats) {
  long long worst = 1;
  for (long long q = 0; q < 4; ++q) {
    std::array<long long, 8> count{};
    for (long long l = 8 * q; l < 8 * q + 8; ++l)
      worst = std::max(worst, ++count[((l / lanes) * row_floats + 4 * (l % lanes)) / 4 % 8]);
  }
  return worst;
}

struct SmallCForwardConfig final : Config {
  long long lanes = 8;   // threads of one output row, kFwdPixels consecutive pixels each
  long long rows = 32;   // output rows of a block
  long long chunk = 64;  // output channels of a block, a multiple of kFwdChannels
  long long win_rows = 0, phase_cols = 0, seg_vectors = 0, pitch = 0, chunks = 0, blocks = 0, padded_pixels = 0;

  long long threads() const { return rows * lanes; }
  long long shared_bytes(const Relation& r) const {
    return (r.ca * win_rows * r.stride[2] * pitch + r.ca * r.f_size[1] * r.f_size[2] * chunk) * 4;
  }
  std::string text() const override {
    return "y small C: tile " + std::to_string(rows) + "x" + std::to_string(lanes * kFwdPixels) + " pixels threads " +
           std::to_string(threads()) + " channels " + std::to_string(chunk) + " window " + std::to_string(win_rows) +
           "x" + std::to_string(phase_cols) + " pitch " + std::to_string(pitch) + " blocks " + std::to_string(blocks);
  }
};

class SmallCForwardConv final : public Tier<ConvProblem, SmallCForwardConfig> {
 public:
  std::string_view name() const override { return "gpu:conv:small_c_forward"; }

  Status accepts_problem(const ConvProblem& problem, const ArchSpec& arch) const override {
    const Relation& r = problem.relation;
    if (problem.tasks.size() != 1 || problem.tasks[0].face != kForwardFace || problem.fp32_result)
      return unimplemented("gpu:conv:small_c_forward computes the forward face alone (forward, or a transposed "
                           "conv's backward-data; with db)");
    if (problem.conv().residual)
      return unimplemented("gpu:conv:small_c_forward has no residual epilogue (--residual 1); gpu:conv:implicit_gemm "
                           "and gpu:conv:direct run it");
    // 16-bit elements halve the bytes of x and y. Measured on an H100 (2026-11-26, bf16 stems, NCHW): 3x3
    // filters 0.37-0.74x cuDNN's time (the tensor-core tiers 0.95-1.11x); the 7x7 stride-2 stem 221 us against
    // the tensor-core tier's 151: 16-bit takes filters of at most kMaxSixteenBitTaps taps.
    if (problem.dtype != DType::kF32 && r.f_size[1] * r.f_size[2] > kMaxSixteenBitTaps)
      return unimplemented("gpu:conv:small_c_forward runs 16-bit convs with filters of at most " +
                           std::to_string(kMaxSixteenBitTaps) + " taps (3x3), not " + std::to_string(r.f_size[1]) +
                           "x" + std::to_string(r.f_size[2]) + ": the tensor-core tiers are faster there");
    if (r.groups != 1 || r.ca > kMaxChannels)
      return unimplemented(std::to_string(r.ca) + " input channels in " + std::to_string(r.groups) +
                           " groups: gpu:conv:small_c_forward takes up to " + std::to_string(kMaxChannels) +
                           " in one group");
    if (r.a_size[0] != 1 || r.f_size[0] != 1 || r.a_size[1] == 1)
      return unimplemented("gpu:conv:small_c_forward takes 2-D convs");
    if (r.dil[1] != 1 || r.dil[2] != 1) return unimplemented("gpu:conv:small_c_forward takes dilation 1");
    if (r.a_strides[4] != 1 || r.b_strides[4] != 1)
      return unimplemented("layouts " + problem.conv().input_layout + " -> " + problem.conv().output_layout +
                           ": gpu:conv:small_c_forward needs rows contiguous (NCHW-like)");
    if (r.f_size[1] > kMaxFwdFilter || r.f_size[2] > kMaxFwdFilter || r.stride[2] > kMaxFwdStride)
      return unimplemented("filter " + std::to_string(r.f_size[1]) + "x" + std::to_string(r.f_size[2]) +
                           ", column stride " + std::to_string(r.stride[2]) +
                           ": gpu:conv:small_c_forward takes filters up to " + std::to_string(kMaxFwdFilter) +
                           " taps a dimension and column strides up to " + std::to_string(kMaxFwdStride));
    for (long long v : {r.batch, r.cb, r.a_size[1], r.a_size[2], r.b_size[1], r.b_size[2]})
      if (v > kInt32Max / 4) return unimplemented("a dimension of " + std::to_string(v) + " exceeds 32-bit tile math");
    return configure_problem(problem, arch).status();
  }

  Result<SmallCForwardConfig> configure_problem(const ConvProblem& problem, const ArchSpec& arch) const override {
    const Relation& r = problem.relation;
    // Three blocks an SM where the window and filter chunk fit in a third of its shared memory (x's window
    // copy of one block overlaps the others' sums); else fewer (AlexNet's 11x11 stride 4).
    const long long third = std::min<long long>(arch.max_shared_bytes_per_block, arch.max_shared_bytes_per_sm / 3);
    const long long most = arch.max_shared_bytes_per_block;
    // Three blocks an SM first, then the fewest padded pixels (a partial tile's idle threads), blocks of at
    // least 128 threads, the fewest channel chunks (each re-reads x's window), the most threads, the widest rows
    // (longer stores).
    std::optional<SmallCForwardConfig> best;
    std::tuple<bool, long long, bool, long long, long long, long long> best_key;
    for (long long lanes : {8LL, 4LL}) {
      for (long long rows = 32 / lanes; rows * lanes <= 256; rows += 32 / lanes) {
        if (rows * lanes < 64) continue;
        for (long long budget : {third, most}) {
          std::optional<SmallCForwardConfig> fit;
          for (long long chunk = round_up(r.cb, kFwdChannels);; chunk = round_up(ceil_div(chunk, 2), kFwdChannels)) {
            const SmallCForwardConfig c = tiling(problem, lanes, rows, chunk);
            if (c.shared_bytes(r) <= budget) {
              fit = c;
              break;
            }
            if (chunk == kFwdChannels) break;
          }
          if (!fit) continue;
          const auto key = std::make_tuple(budget != third, fit->padded_pixels, fit->threads() < 128, fit->chunks,
                                           -fit->threads(), -lanes);
          if (!best || key < best_key) best = fit, best_key = key;
          break;
        }
      }
    }
    if (!best)
      return unimplemented("x's window for 8 output rows of 32 pixels and 8 filter channels need more than " +
                           std::to_string(most) + " bytes of shared memory");
    if (best->blocks > kInt32Max) return unimplemented("y needs " + std::to_string(best->blocks) + " blocks");
    return *best;
  }

  Result<Plan> plan_problem(const ConvProblem& problem, const SmallCForwardConfig& config,
                            const ArchSpec&) const override {
    const ConvSignature& conv = problem.conv();
    const Relation& r = problem.relation;
    const FaceTask& task = problem.tasks[0];
    Plan plan;
    plan.source.name = "conv_small_c_forward.cu";
    plan.source.text =
        "// Generated by boo: gpu:conv:small_c_forward.\n#include \"boo/conv/conv_small_c_forward.cuh\"\n";
    if (problem.bias_gradient) plan.source.text += "#include \"boo/conv/conv_direct.cuh\"\n";
    const bool idx32 = conv.x_spec().storage_elems() < kInt32Max && conv.y_spec().storage_elems() < kInt32Max;
    // Vector stores of 4 pixels: every row of B starts on a multiple of 4 elements and holds a multiple of 4.
    const bool vec = r.b_size[2] % 4 == 0 && r.b_strides[0] % 4 == 0 && r.b_strides[1] % 4 == 0 &&
                     r.b_strides[3] % 4 == 0;
    std::string cfg = "\nstruct Cfg {\n  using T = " + std::string(device_type(problem.dtype)) + ";\n";
    cfg += "  static constexpr bool kIdx32 = " + std::string(idx32 ? "true" : "false") + ";\n";
    cfg += "  static constexpr bool kBias = " + std::string(task.epilogue && conv.bias ? "true" : "false") + ";\n";
    cfg += "  static constexpr bool kVec = " + std::string(vec ? "true" : "false") + ";\n";
    cfg += constant("kAct", task.epilogue ? static_cast<int>(conv.activation.kind) : 0);
    cfg += constant("kThreads", config.threads()) + constant("kG", config.lanes) + constant("kTH", config.rows) +
           constant("kKB", config.chunk) + constant("kCA", r.ca) + constant("kCB", r.cb) +
           constant("kWinH", config.win_rows) + constant("kPhW", config.phase_cols) +
           constant("kSegV", config.seg_vectors) + constant("kPitch", config.pitch);
    cfg += constant("kAH", r.a_size[1]) + constant("kAW", r.a_size[2]) + constant("kBH", r.b_size[1]) +
           constant("kBW", r.b_size[2]) + constant("kFH", r.f_size[1]) + constant("kFW", r.f_size[2]) +
           constant("kSH", r.stride[1]) + constant("kSW", r.stride[2]) + constant("kPH", r.pad[1]) +
           constant("kPW", r.pad[2]);
    cfg += array_fn("AStr", r.a_strides) + array_fn("BStr", r.b_strides) + array_fn("WStr", r.w_strides) + "};\n";
    plan.source.text += cfg;
    const std::string entry = "boo_small_c_forward_" + task.result;
    // Registers for 768 threads an SM (85 a thread): 32 sums, a window segment, a tap's 8 channels.
    BOO_RETURN_IF_ERROR(finish_small_c_plan(plan, problem, entry, "boo::small_c::forward_face<Cfg>(p)",
                                            config.threads(), std::max(1LL, 640 / config.threads()), config.blocks,
                                            config.shared_bytes(r)));
    return plan;
  }

 private:
  static long long round_up(long long v, long long m) { return ceil_div(v, m) * m; }

  // A block of `rows` output rows x `lanes` * 4 columns and `chunk` channels: x's window (rows, each
  // column phase's columns and a pitch whose 16-byte reads are free of bank conflicts) and the grid.
  static SmallCForwardConfig tiling(const ConvProblem& problem, long long lanes, long long rows, long long chunk) {
    const Relation& r = problem.relation;
    SmallCForwardConfig c;
    c.lanes = lanes;
    c.rows = rows;
    c.chunk = chunk;
    const long long tile_w = lanes * kFwdPixels, max_taps = ceil_div(r.f_size[2], r.stride[2]);
    c.win_rows = (rows - 1) * r.stride[1] + r.f_size[1];
    c.phase_cols = tile_w + max_taps - 1;
    c.seg_vectors = ceil_div(kFwdPixels + max_taps - 1, 4);
    // The last lane's reads end at 4 * (lanes - 1) + 4 * seg_vectors; of the 8 pitches from there, the first
    // whose rows (stride rows of every phase apart) put a quarter warp on distinct bank groups, else the least bad.
    const long long least = std::max(round_up(c.phase_cols, 4), tile_w + 4 * (c.seg_vectors - 1));
    c.pitch = least;
    for (long long pitch = least; pitch < least + 32; pitch += 4)
      if (quarter_warp_conflicts(lanes, r.stride[1] * r.stride[2] * pitch) <
          quarter_warp_conflicts(lanes, r.stride[1] * r.stride[2] * c.pitch))
        c.pitch = pitch;
    const long long tiles_h = ceil_div(r.b_size[1], rows), tiles_w = ceil_div(r.b_size[2], tile_w);
    c.chunks = ceil_div(r.cb, chunk);
    c.blocks = r.batch * c.chunks * tiles_h * tiles_w;
    c.padded_pixels = tiles_h * rows * tiles_w * tile_w;
    return c;
  }
};

}  // namespace

const GpuImplementation& small_c_data_implementation() {
  static const SmallCDataConv impl;
  return impl;
}

const GpuImplementation& small_c_forward_implementation() {
  static const SmallCForwardConv impl;
  return impl;
}

}  // namespace boo::ops::conv
