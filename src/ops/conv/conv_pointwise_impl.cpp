// boo: gpu:conv:pointwise — host side: which convs it takes, the tiles of each
// face (the typed config) and the launch plan (device/conv_pointwise.cuh).
#include "ops/conv/conv_pointwise_impl.hpp"

#include <algorithm>
#include <optional>

#include "boo/conv.hpp"
#include "ops/common/generated_source.hpp"
#include "ops/conv/conv_bias_gradient.hpp"
#include "ops/conv/conv_problem.hpp"
#include "ops/conv/conv_wgmma_impl.hpp"
#include "ops/conv/conv_wgmma_native.hpp"
#include "ops/conv/device/conv_pointwise_params.cuh"

namespace boo::ops::conv {
namespace {

constexpr int kThreads = 256, kWarps = kThreads / 32;
// Accumulators a thread may hold: beyond 64 floats the tiles spill or starve the loads of registers.
constexpr long long kMaxAccumulators = 64;
// Pixel columns per tile, widest first: boo tune tries every one that fits. configure takes the widest
// that gives every SM several tiles to stream (kTilesPerSm), else the narrowest of 64 and up that fits;
// 32 (kNarrowTile) only where that choice leaves the busiest SM more bytes to move (narrow_pays_off).
constexpr long long kTileWidths[] = {256, 128, 64, 32};
constexpr long long kNarrowTile = 32, kTilesPerSm = 4;
constexpr long long kInt32Max = (1LL << 31) - 1;

long long round_up(long long v, long long m) { return ceil_div(v, m) * m; }

// The tiling of one face (see conv_pointwise.cuh for the names).
struct FaceTiling {
  FaceTask task;
  bool tensor_cores = true;
  long long tp = 0;               // pixel columns per tile
  long long m = 0, r = 0;         // forward/data: output rows, reduced rows; weight: dW's M x N = (m, r)
  long long m_pad = 0, r_pad = 0;
  long long warps_m = 1, warps_n = 1, tm = 1;                              // forward/data
  long long out_groups = 1, pix_splits = 1, blocks_per_warp = 1, out_threads = 0;  // weight
  int in_vec = 1, out_vec = 1;
  long long in_pitch = 0, f_pitch = 0, out_pitch = 0;
  long long filter_at = 0, stage_at = 0, stage_bytes = 0, b_at = 0, out_at = 0, shared_bytes = 0;
  long long tiles = 0, grid = 0;  // grid: the weight face's splits
  long long blocks_per_sm = 1;    // resident blocks the grid counts on (the kernel's launch bounds ask for them)

  std::string text() const {
    std::string s = task.result + ": face " + std::to_string(task.face) + (tensor_cores ? " mma.sync" : " ffma") +
                    " rows " + std::to_string(m) + " x " + std::to_string(r) + " tile " + std::to_string(tp) +
                    " pixels, vec in " + std::to_string(in_vec) + " out " + std::to_string(out_vec);
    if (task.face == kWeightFace) {
      s += ", " + std::to_string(out_groups > 0 && tensor_cores ? out_groups : out_threads) +
           (tensor_cores ? " warp" : " thread") + " groups x " + std::to_string(pix_splits) + " pixel splits, splits " +
           std::to_string(grid);
    } else {
      s += tensor_cores ? ", warps " + std::to_string(warps_m) + "x" + std::to_string(warps_n)
                        : ", rows per thread " + std::to_string(tm);
      s += ", grid " + std::to_string(grid) + " (" + std::to_string(blocks_per_sm) + " an SM)";
    }
    return s;
  }
};

struct PointwiseConfig final : Config {
  DType dtype = DType::kF32;
  std::vector<FaceTiling> faces;
  std::string text() const override {
    std::string s = "dtype=" + std::string(dtype_name(dtype)) + ", pixel tiles over N x pixels";
    for (const FaceTiling& f : faces) s += "; " + f.text();
    return s;
  }
};


// Elements per copy along the pixels: the widest of 16, 8, 4 or 2 bytes (or
// one element) dividing the pixels per image and the strides that are stepped.
int vector_width(long long hw, long long batch, long long channels, const Strides5& s, long long elem_bytes) {
  for (long long bytes : {16LL, 8LL, 4LL, 2LL}) {
    const long long v = bytes / elem_bytes;
    if (v < 1) break;
    if (hw % v == 0 && (batch == 1 || s[0] % v == 0) && (channels == 1 || s[1] % v == 0)) return static_cast<int>(v);
  }
  return 1;
}

// The face's relation: out rows m x reduced rows r (forward/data) or dW's M x N (weight), and the tensors it reads.
struct FaceShape {
  long long m, r;
  Strides5 in, out;  // forward/data: the activation read and the one written; weight: A and B
};
FaceShape shape_of(const Relation& rel, Face face) {
  if (face == kForwardFace) return {rel.cb, rel.ca, rel.a_strides, rel.b_strides};
  if (face == kDataFace) return {rel.ca, rel.cb, rel.b_strides, rel.a_strides};
  return {rel.cb, rel.ca, rel.a_strides, rel.b_strides};
}

// The face tiled with `tp` pixel columns, or nullopt where the registers or shared memory do not allow it.
std::optional<FaceTiling> tile_face(const FaceTask& task, const ConvProblem& problem, const ArchSpec& arch,
                                    long long tp) {
  const Relation& rel = problem.relation;
  const FaceShape shape = shape_of(rel, task.face);
  const long long e = problem.elem_bytes, hw = rel.pix_a(), l = rel.batch * hw;
  FaceTiling f;
  f.task = task;
  f.tensor_cores = problem.dtype != DType::kF32;
  f.tp = tp;
  f.m = shape.m;
  f.r = shape.r;
  // Rows padded by 16 bytes: ldmatrix's eight rows and the FFMA's float4 rows fall in distinct banks.
  f.in_pitch = f.out_pitch = tp + 16 / e;
  if (task.face != kWeightFace) {
    if (f.tensor_cores) {
      f.warps_n = std::min<long long>(kWarps, tp / 16);
      f.warps_m = kWarps / f.warps_n;
      f.m_pad = round_up(f.m, 16 * f.warps_m);
      f.r_pad = round_up(f.r, 16);
      if (f.m_pad * tp / (kThreads / 32 * 32) > kMaxAccumulators) return std::nullopt;  // m_pad x tp / 256
      f.f_pitch = f.r_pad + 8;
    } else {
      const long long row_groups = kThreads / (tp / 4);
      f.m_pad = round_up(f.m, row_groups);
      f.r_pad = f.r;
      f.tm = f.m_pad / row_groups;
      if (f.tm * 4 > kMaxAccumulators) return std::nullopt;
      // Odd: the data face's transposed filter writes (consecutive rows, one element each) hit distinct banks.
      f.f_pitch = f.r | 1;
    }
    f.filter_at = 0;
    f.stage_at = round_up(f.m_pad * f.f_pitch * e, 16);
    f.stage_bytes = round_up(f.r_pad * f.in_pitch * e, 16);
    f.out_at = f.stage_at + 2 * f.stage_bytes;
    f.shared_bytes = f.out_at + f.m_pad * f.out_pitch * e;
    f.in_vec = vector_width(hw, rel.batch, f.r, shape.in, e);
    f.out_vec = vector_width(hw, rel.batch, f.m, shape.out, e);
  } else {
    if (f.tensor_cores) {
      f.m_pad = round_up(f.m, 16);
      f.r_pad = round_up(f.r, 16);
      const long long blocks = f.m_pad / 16 * (f.r_pad / 16);
      // Output blocks of 16 x 16 (8 accumulators each) per warp: at most 8.
      f.out_groups = 1;
      while (f.out_groups < kWarps && ceil_div(blocks, f.out_groups) * 8 > kMaxAccumulators) f.out_groups *= 2;
      f.blocks_per_warp = ceil_div(blocks, f.out_groups);
      if (f.blocks_per_warp * 8 > kMaxAccumulators) return std::nullopt;
      f.pix_splits = kWarps / f.out_groups;
    } else {
      f.m_pad = round_up(f.m, 4);
      f.r_pad = round_up(f.r, 4);
      const long long micro = f.m_pad / 4 * (f.r_pad / 4);
      // Micro-tiles of 4 x 4 per thread: at most 2 (their sums and the tile's: 64 registers).
      f.out_threads = 32;
      while (f.out_threads < kThreads && ceil_div(micro, f.out_threads) > 2) f.out_threads *= 2;
      f.blocks_per_warp = ceil_div(micro, f.out_threads);
      if (f.blocks_per_warp > 2) return std::nullopt;
      f.pix_splits = kThreads / f.out_threads;
    }
    f.stage_at = 0;
    f.b_at = round_up(f.r_pad * f.in_pitch * e, 16);
    f.stage_bytes = f.b_at + round_up(f.m_pad * f.in_pitch * e, 16);
    const long long reduce = f.pix_splits * f.m_pad * f.r_pad * 4;
    f.shared_bytes = std::max(2 * f.stage_bytes, reduce);
    f.in_vec = std::min(vector_width(hw, rel.batch, f.r, shape.in, e), vector_width(hw, rel.batch, f.m, shape.out, e));
    f.out_vec = 1;
  }
  if (f.shared_bytes > arch.max_shared_bytes_per_block) return std::nullopt;
  f.tiles = ceil_div(l, tp);
  // Blocks per SM: by threads and by shared memory (1 KiB of it reserved per block).
  // Registers a thread needs, estimated from its accumulators (the fp32 weight face keeps two sets) and
  // what the loads and addresses hold beside them (FFMA more: its operands pass through registers).
  const long long accumulators = task.face != kWeightFace ? (f.tensor_cores ? f.m_pad * tp / kThreads : f.tm * 4)
                                 : f.tensor_cores       ? f.blocks_per_warp * 8
                                                        : f.blocks_per_warp * 32;
  const long long registers = f.tensor_cores ? accumulators + 48 : 2 * accumulators + 64;
  f.blocks_per_sm = std::clamp<long long>(
      std::min({static_cast<long long>(arch.max_threads_per_sm / kThreads),
                arch.max_shared_bytes_per_sm / (f.shared_bytes + 1024), arch.registers_per_sm / (kThreads * registers)}),
      1, kWarps);
  f.grid = std::min(f.tiles, arch.sm_count * f.blocks_per_sm);
  return f;
}

// Seconds of multiply-adds (padded, at the mma.sync or FFMA rate) and of
// moving the tensors once at copy bandwidth, for one face.
struct Cost {
  double compute_s, memory_s;
};
Cost cost_of(const FaceTask& task, const ConvProblem& problem, const ArchSpec& arch) {
  const Relation& rel = problem.relation;
  const FaceShape shape = shape_of(rel, task.face);
  const bool tc = problem.dtype != DType::kF32;
  const double l = static_cast<double>(rel.batch) * static_cast<double>(rel.pix_a());
  const double macs = static_cast<double>(round_up(shape.m, tc ? 16 : 1)) * static_cast<double>(round_up(shape.r, 16)) * l;
  const double bytes = (static_cast<double>(shape.m + shape.r) * l + static_cast<double>(shape.m * shape.r)) *
                       static_cast<double>(problem.elem_bytes);
  return {macs / (tc ? arch.mma_sync_macs_per_s : arch.ffma_macs_per_s), bytes / arch.copy_bytes_per_s};
}

// The seconds gpu:conv:wgmma_sm90's native NCHW path would take where it runs
// the problem (nullopt elsewhere): its multiply-adds padded to 64-wide tiles at
// the wgmma rate, or its bytes at copy bandwidth.
std::optional<double> native_wgmma_seconds(const ConvProblem& problem, const ArchSpec& arch) {
  if (!native_nchw_pointwise(problem).ok() || !wgmma_sm90_implementation().accepts(problem, arch).ok())
    return std::nullopt;
  const FaceTask& task = problem.tasks[0];
  const FaceShape shape = shape_of(problem.relation, task.face);
  const double l = static_cast<double>(problem.relation.batch) * static_cast<double>(problem.relation.pix_a());
  const double macs = static_cast<double>(round_up(shape.m, 64)) * static_cast<double>(round_up(shape.r, 64)) * l;
  return std::max(macs / arch.wgmma_macs_per_s, cost_of(task, problem, arch).memory_s);
}

// The bytes the busiest SM moves for a forward or data face tiled as `f`: each of its CTAs reads the
// filter once (counted at full price although L2 serves it: ArchSpec has no L2 rate, and counting it
// whole keeps narrow tiles from winning on the filter's account), and its CTAs' tiles are spread
// b, b + grid, ... (kernel `forward`), so its CTAs' rounds of tiles, in and out.
double busiest_sm_bytes(const FaceTiling& f, const ConvProblem& problem, const ArchSpec& arch) {
  const long long ctas = ceil_div(f.grid, arch.sm_count), rounds = ceil_div(f.tiles, f.grid);
  const double e = static_cast<double>(problem.elem_bytes);
  return static_cast<double>(ctas) * (static_cast<double>(f.m * f.r) * e +
                                      static_cast<double>(rounds * f.tp * (f.m + f.r)) * e);
}

// Whether 32-column tiles beat `wide` (configure's choice among the wider ones, nullopt where none fits)
// for a problem too small to give every SM kTilesPerSm tiles of 64 (the caller's condition): they split
// the pixels into more, smaller rounds, and their narrower stages and output tile fit larger filters
// (where none fits, the conv went to a staged GEMM tier: at least two more passes over its tensors).
// Larger problems keep the wide tiles' bytes in flight. The case that motivated them (issue's list, H100, cuDNN 9.3 us vs boo 22.6 us):
// `convfp16 -n 64 -c 64 -H 14 -W 14 -k 384 -y 1 -x 1 -F 2`: 196 tiles of 64 on 132 SMs, a 170 KB block
// alone on its SM (two rounds, the second half empty) against 392 tiles of 32 in three full rounds.
// The weight face keeps the wider tiles: each of its CTAs writes an M x N partial, so more CTAs only add
// bytes. Not measured yet: boo tune times both widths (the alternatives).
// Measured on an H100 (2026-11-26, docs/perf/2026-11-26-session5-h100x4.md, nchw-models.txt's 1x1 lines): 32-wide
// tiles paid where the 64-wide ones ran more than a wave but few (64 images of 14x14: 196 tiles, 2.16 -> 0.80x
// cuDNN's time) and lost where those were fewer than the SMs (7x7: 25-49 tiles, 0.71 -> 1.05x): there each CTA
// streams the whole filter and twice the CTAs read it twice.
bool narrow_pays_off(const FaceTiling& narrow, const std::optional<FaceTiling>& wide, const ConvProblem& problem,
                     const ArchSpec& arch) {
  if (narrow.task.face == kWeightFace) return false;
  if (!wide) return true;
  if (wide->tiles < arch.sm_count) return false;
  return busiest_sm_bytes(narrow, problem, arch) < busiest_sm_bytes(*wide, problem, arch);
}

Result<PointwiseConfig> tiled(const ConvProblem& problem, const ArchSpec& arch, std::optional<long long> only_tp) {
  PointwiseConfig config;
  config.dtype = problem.dtype;
  for (const FaceTask& task : problem.tasks) {
    std::optional<FaceTiling> chosen;
    for (long long tp : kTileWidths) {
      if (only_tp && tp != *only_tp) continue;
      if (!only_tp && tp == kNarrowTile) continue;
      std::optional<FaceTiling> f = tile_face(task, problem, arch, tp);
      if (!f) continue;
      // The widest tile that still gives every SM several tiles to stream (else the narrowest that fits).
      if (!chosen || (chosen->tiles < kTilesPerSm * arch.sm_count && f->tiles > chosen->tiles && !only_tp)) chosen = f;
      if (chosen->tiles >= kTilesPerSm * arch.sm_count) break;
    }
    const long long columns = problem.relation.batch * problem.relation.pix_a();
    if (!only_tp && ceil_div(columns, 2 * kNarrowTile) < kTilesPerSm * arch.sm_count) {
      std::optional<FaceTiling> narrow = tile_face(task, problem, arch, kNarrowTile);
      if (narrow && narrow_pays_off(*narrow, chosen, problem, arch)) chosen = narrow;
    }
    if (!chosen)
      return unimplemented("no pixel tile of gpu:conv:pointwise fits " + task.result + "'s " +
                           std::to_string(shape_of(problem.relation, task.face).m) + " x " +
                           std::to_string(shape_of(problem.relation, task.face).r) +
                           " channels in 64 accumulators a thread and the shared memory of a block");
    config.faces.push_back(*chosen);
  }
  return config;
}

std::string constant(const char* name, long long v) {
  return "  static constexpr long long " + std::string(name) + " = " + std::to_string(v) + "LL;\n";
}
std::string int_constant(const char* name, long long v) {
  return "  static constexpr int " + std::string(name) + " = " + std::to_string(v) + ";\n";
}
std::string bool_constant(const char* name, bool v) {
  return "  static constexpr bool " + std::string(name) + " = " + (v ? "true" : "false") + ";\n";
}

// The Cfg of one face: every size a compile-time constant (conv_pointwise.cuh names them).
std::string cfg_source(const std::string& name, const FaceTiling& f, const ConvProblem& problem) {
  const Relation& rel = problem.relation;
  const ConvSignature& sig = problem.conv();
  const FaceShape shape = shape_of(rel, f.task.face);
  std::string s = "struct " + name + " {\n  using T = " + std::string(device_type(problem.dtype)) + ";\n";
  const bool idx32 = sig.x_spec().storage_elems() < kInt32Max && sig.y_spec().storage_elems() < kInt32Max &&
                     sig.w_spec().storage_elems() < kInt32Max;
  s += bool_constant("kIdx32", idx32) + bool_constant("kTensorCores", f.tensor_cores);
  s += int_constant("kThreads", kThreads) + int_constant("kTP", f.tp) + constant("kHW", rel.pix_a()) +
       constant("kL", rel.batch * rel.pix_a()) + constant("kTiles", f.tiles);
  s += int_constant("kInVec", f.in_vec) + int_constant("kOutVec", f.out_vec) + int_constant("kInPitch", f.in_pitch) +
       int_constant("kOutPitch", f.out_pitch) + int_constant("kFPitch", f.f_pitch);
  s += int_constant("kStageAt", f.stage_at) + int_constant("kStageBytes", f.stage_bytes);
  // W(m, r): the forward face's w[m][r]; the data face's transpose; the weight face's dW[m][n].
  const bool data = f.task.face == kDataFace;
  if (f.task.face != kWeightFace) {
    s += int_constant("kM", f.m) + int_constant("kR", f.r) + int_constant("kMPad", f.m_pad) +
         int_constant("kRPad", f.r_pad) + int_constant("kWarpsM", f.warps_m) + int_constant("kWarpsN", f.warps_n) +
         int_constant("kTM", f.tm) + int_constant("kFilterAt", f.filter_at) + int_constant("kOutAt", f.out_at);
    s += constant("IN_N", shape.in[0]) + constant("IN_C", shape.in[1]) + constant("OUT_N", shape.out[0]) +
         constant("OUT_C", shape.out[1]);
    s += constant("FM", data ? rel.w_strides[1] : rel.w_strides[0]) +
         constant("FR", data ? rel.w_strides[0] : rel.w_strides[1]);
    s += int_constant("kAct", f.task.epilogue ? static_cast<int>(sig.activation.kind) : 0);
    s += bool_constant("kBias", f.task.epilogue && sig.bias);
  } else {
    s += int_constant("kM", f.m) + int_constant("kN", f.r) + int_constant("kMPad", f.m_pad) +
         int_constant("kNPad", f.r_pad) + int_constant("kBAt", f.b_at) + int_constant("kOutGroups", f.out_groups) +
         int_constant("kOutThreads", f.out_threads) + int_constant("kPixSplits", f.pix_splits) +
         int_constant("kBlocksPerWarp", f.blocks_per_warp) + constant("kSplits", f.grid);
    s += constant("A_N", shape.in[0]) + constant("A_C", shape.in[1]) + constant("B_N", shape.out[0]) +
         constant("B_C", shape.out[1]) + constant("FM", rel.w_strides[0]) + constant("FN", rel.w_strides[1]);
    // split_k_reduce's: one group, no bias (none exists for dW) and no activation, rounded to T.
    s += int_constant("kGroups", 1) + bool_constant("kFp32Out", false) + bool_constant("kBias", false) +
         bool_constant("kResidual", false) + int_constant("kAct", 0);
  }
  return s + "};\n";
}

class PointwiseConv final : public Tier<ConvProblem, PointwiseConfig> {
 public:
  std::string_view name() const override { return "gpu:conv:pointwise"; }

  Status accepts_problem(const ConvProblem& problem, const ArchSpec& arch) const override {
    const Relation& r = problem.relation;
    if (problem.dtype != DType::kF32 && problem.dtype != DType::kF16 && problem.dtype != DType::kBF16)
      return unimplemented("gpu:conv:pointwise takes fp32, fp16 and bf16");
    if (!r.pointwise()) return unimplemented("gpu:conv:pointwise takes 1x1 filters at stride 1 without padding");
    if (r.groups != 1) return unimplemented("gpu:conv:pointwise takes groups 1, not " + std::to_string(r.groups));
    if (problem.fp32_result) return unimplemented("gpu:conv:pointwise does not leave fp32 sums for a GEMM epilogue");
    if (problem.conv().residual)
      return unimplemented("gpu:conv:pointwise has no residual epilogue (--residual 1); gpu:conv:implicit_gemm and "
                           "gpu:conv:direct run it");
    if (!planar_pixels(r.a_strides, r.a_size) || !planar_pixels(r.b_strides, r.b_size))
      return unimplemented("gpu:conv:pointwise takes activations whose channels' pixels are contiguous (NCHW, NCDHW; "
                           "channels-last ones are the GEMM tiers')");
    if (r.batch * r.pix_a() > kInt32Max)
      return unimplemented("gpu:conv:pointwise takes at most 2^31 - 1 pixels over the batch");
    if (problem.tasks.empty())
      return unimplemented("gpu:conv:pointwise runs the forward, data or weight face; a bias gradient alone is "
                           "gpu:conv:implicit_gemm's");
    for (const FaceTask& task : problem.tasks) {
      const Cost c = cost_of(task, problem, arch);
      if (c.compute_s > c.memory_s)
        return unimplemented("gpu:conv:pointwise takes memory-bound convs: " + task.result + "'s multiply-adds take " +
                             std::to_string(c.compute_s * 1e6) + " us at " +
                             (problem.dtype == DType::kF32 ? "the FFMA rate" : "the mma.sync rate") + ", more than the " +
                             std::to_string(c.memory_s * 1e6) + " us of its bytes at copy bandwidth");
    }
    // Where the Hopper tier reads the conv natively as fast (both at the copy bound), the tie is its.
    if (const std::optional<double> native = native_wgmma_seconds(problem, arch)) {
      const Cost c = cost_of(problem.tasks[0], problem, arch);
      if (std::max(c.compute_s, c.memory_s) >= *native)
        return unimplemented("gpu:conv:wgmma_sm90's native NCHW 1x1 path runs it as fast (" +
                             std::to_string(*native * 1e6) + " us by the cost model)");
    }
    return ok_status();
  }

  Result<PointwiseConfig> configure_problem(const ConvProblem& problem, const ArchSpec& arch) const override {
    return tiled(problem, arch, std::nullopt);
  }

  // boo tune tries every other tile width that fits (no cost model ranks them: all are at the copy bound).
  std::vector<PointwiseConfig> alternatives(const ConvProblem& problem, const ArchSpec& arch,
                                            const PointwiseConfig& chosen) const override {
    std::vector<PointwiseConfig> out;
    for (long long tp : kTileWidths) {
      if (tp == chosen.faces[0].tp) continue;
      if (Result<PointwiseConfig> c = tiled(problem, arch, tp); c.ok()) out.push_back(std::move(*c));
    }
    return out;
  }

  Result<Plan> plan_problem(const ConvProblem& problem, const PointwiseConfig& config,
                            const ArchSpec&) const override {
    const ConvSignature& conv = problem.conv();
    const TensorRoles roles(conv);
    Plan plan;
    plan.source.name = "conv_pointwise.cu";
    plan.source.text = "// Generated by boo: gpu:conv:pointwise.\n#include \"boo/conv/conv_pointwise.cuh\"\n";
    if (problem.bias_gradient) plan.source.text += "#include \"boo/conv/conv_direct.cuh\"\n";
    plan.tensor_alignment = static_cast<uint32_t>(problem.elem_bytes);
    // `blocks`: the resident blocks per SM the persistent grid counts on, which caps the registers
    // ptxas may give a thread (the NVRTC test checks that nothing spills under the cap).
    auto add_entry = [&](const std::string& entry, const std::string& params, const std::string& call,
                         long long blocks = 1) {
      plan.source.text += "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(kThreads) + ", " +
                          std::to_string(blocks) + ") " + entry + "(const boo::" + params + " p) { " + call + "; }\n";
      plan.source.entries.push_back(entry);
    };
    size_t workspace = 0;
    for (const FaceTiling& f : config.faces) {
      const std::string entry = "boo_pointwise_" + f.task.result, cfg = "Cfg_" + f.task.result;
      plan.source.text += "\n" + cfg_source(cfg, f, problem);
      const bool weight = f.task.face == kWeightFace;
      add_entry(entry, "ConvPointwiseParams",
                "boo::pointwise::" + std::string(weight ? "weight" : "forward") + "<" + cfg + ">(p)", f.blocks_per_sm);
      BOO_ASSIGN_OR_RETURN(uint32_t blocks, grid_extent(f.grid, kInt32Max, "x"));
      StepBuilder<ConvPointwiseParams> step(entry, {blocks, 1, 1}, {kThreads, 1, 1},
                                            static_cast<uint32_t>(f.shared_bytes));
      step.params.act_alpha = static_cast<float>(conv.activation.alpha);
      step.params.act_lo = static_cast<float>(conv.activation.lo);
      step.params.act_hi = static_cast<float>(conv.activation.hi);
      BOO_ASSIGN_OR_RETURN(TensorBinding a, roles.tensor(f.task.a));
      BOO_ASSIGN_OR_RETURN(TensorBinding b, roles.tensor(f.task.b));
      BOO_ASSIGN_OR_RETURN(TensorBinding w, roles.tensor(f.task.w));
      if (weight) {
        step.bind(step.params.a, a);
        step.bind(step.params.b, b);
        step.bind(step.params.out, w);
        // The partials [splits][M][N] at the workspace's start (one weight face per plan).
        step.bind(step.params.workspace, TensorBinding::workspace(0));
        workspace = static_cast<size_t>(f.grid * f.m * f.r) * sizeof(float);
      } else {
        const bool data = f.task.face == kDataFace;
        step.bind(step.params.a, data ? b : a);
        step.bind(step.params.out, data ? a : b);
        step.bind(step.params.w, w);
        if (f.task.epilogue && conv.bias) {
          BOO_ASSIGN_OR_RETURN(TensorBinding bias, roles.argument("b"));
          step.bind(step.params.bias, bias);
        }
      }
      LaunchStep launch = std::move(step).finish();
      plan.steps.push_back(launch);
      if (weight) {
        const std::string reduce = entry + "_reduce";
        add_entry(reduce, "ConvPointwiseParams", "boo::pointwise::weight_reduce<" + cfg + ">(p)");
        launch.entry = reduce;
        launch.grid = {static_cast<uint32_t>(std::clamp<long long>(ceil_div(f.m * f.r, kThreads), 1, 65535)), 1, 1};
        launch.shared_bytes = 0;
        plan.steps.push_back(std::move(launch));
      }
      plan.tensor_alignment =
          std::max(plan.tensor_alignment, static_cast<uint32_t>(std::max(f.in_vec, f.out_vec) * problem.elem_bytes));
    }
    if (problem.bias_gradient) {
      // db = the sum of dy over the batch and every pixel (gpu:conv:direct's kernel).
      add_entry("boo_conv_db", "ConvFaceParams",
                "boo::conv_bias_gradient<" + std::string(device_type(conv.dtype)) + ">(p)");
      BOO_ASSIGN_OR_RETURN(LaunchStep step, bias_gradient_step(problem, roles, kThreads));
      plan.steps.push_back(std::move(step));
    }
    plan.workspace_bytes = workspace;
    return plan;
  }
};

}  // namespace

const GpuImplementation& pointwise_implementation() {
  static const PointwiseConv impl;
  return impl;
}

}  // namespace boo::ops::conv
