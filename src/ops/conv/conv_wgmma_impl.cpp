// boo: gpu:conv:wgmma_sm90 — host side: which convs the Hopper kernel takes,
// its tile (the typed config) and the launch plan.
#include "ops/conv/conv_wgmma_impl.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>

#include "boo/conv.hpp"
#include "ops/common/generated_source.hpp"
#include "ops/conv/conv_igemm_impl.hpp"
#include "ops/conv/conv_problem.hpp"
#include "ops/conv/conv_staging.hpp"
#include "ops/conv/conv_wgmma_native.hpp"
#include "ops/conv/device/conv_igemm_params.cuh"
#include "ops/conv/device/conv_wgmma_params.cuh"

namespace boo::ops::conv {
namespace {

// conv_wgmma.cuh's fixed shape: 128-row tiles, k-blocks of 128 bytes a tile row (64 columns of the packed
// (tap, channel) reduction of a 16-bit type, 32 of fp32 read as TF32: Run::block_k; the weight face's, 16-bit
// only: 64 pixels), one producer and two consumer warpgroups.
constexpr long long kTileRows = 128, kBlockBytes = 128, kBlockK = 64;
constexpr uint32_t kThreads = 384;
// Below these the GEMM is too small to fill the GPU with 128 x 128 tiles, or
// too narrow for the wgmma tile (gpu:conv:implicit_gemm's smaller tiles do
// better), unless split K fills it and the cost models say it wins
// (small_gemm_verdict). The forward and data faces' tiles are 64 output
// channels wide at the narrowest; the weight face's rows are the output
// channels, 128 a tile. From 48 output channels (a 64-wide tile a quarter
// idle, a 128-row one 80 rows) every face ran faster than
// gpu:conv:implicit_gemm on BOO's 413 (H100, 2026-11-27,
// docs/perf/2026-11-27-session16.md): the weight face 0.60-0.91x its time
// (3x3s and 5x5s 0.60-0.68x), data faces of 3x3s and 5x5s 0.64-0.84x, 1x1
// forwards 0.85x; at 40, 0.89-1.34x (data faces of 40 result channels
// 1.13-1.34x). (ResNet-50's 64-channel weight gradients: docs/perf/2026-11-26-session6.md.)
constexpr long long kMinPixels = 4096, kMinOutputChannels = 48, kMinFullWaves = 4;
// Below the floor, the factor by which the model must put this tier ahead of gpu:conv:implicit_gemm
// (81 lines of the three workloads crossed with it: 1.16x faster, H100, 2026-11-26;
// docs/perf/2026-11-26-session3-h200x4.md).
constexpr double kSmallGemmMargin = 1.25;
// The weight face's pixels are its reduction, not its tiles: below kMinPixels it still runs (split
// K over fewer pixels) down to kMinWeightPixels, four k-blocks, and down to kMinWeightCopiedPixels where
// it needs copies (channels padded to a multiple of 8). Measured on BOO's 413 (H100, 2026-11-27,
// docs/perf/2026-11-27-session16.md): 336-480 pixels ran in 0.53-0.96x gpu:conv:implicit_gemm's time
// (-c 2048 -H 1 -W 30 -k 576: 11.2 -> 6.0 us) but for one 1x1 of 336 pixels (1.16x); with copies of 66
// channels, 1.03-1.11x.
constexpr long long kMinWeightPixels = 256, kMinWeightCopiedPixels = 512;
// The data face below the floor: at least this many pixels and result channels. (From 1568 pixels until
// BOO's 413 on an H100, 2026-11-27, docs/perf/2026-11-27-session16.md: at 480-1536 pixels and 192-2048 result
// channels it ran in 0.51-0.90x gpu:conv:implicit_gemm's time, -c 2048 -H 1 -W 30 -k 576 12.0 -> 6.1 us.)
constexpr long long kMinSmallDataPixels = 256, kMinSmallDataChannels = 128;
// Fewer than 128 output channels (64-wide tiles, or a 128-wide one partly idle) ran faster than
// gpu:conv:implicit_gemm only at kMinPixels pixels and more, a reduction of a k-block at least, and for
// the data face kMinNarrowDataPixels pixels (BOO's 413, H100, 2026-11-26: forward faces of 48-96 channels
// 0.72-0.88x its time, data faces of 225 x 225 and 75 x 75 images 0.71-0.88x; data faces of 23104 and
// fewer pixels 1.13-1.73x, 1x1 forward faces of 40 reduced channels 1.27-1.40x). Since then (BOO's 413, H100,
// 2026-11-27, docs/perf/2026-11-27-session16.md) data faces of 6144-24576 pixels ran faster from kMinPixels where
// they are 1x1s or reduce at least kMinNarrowDataReduction (0.60-0.93x its time: 3x3s of 64 and 96 channels,
// 1x1s of 96-288, a strided 2x2 of 192; one strided 1x1 1.03x), and slower as 1x3 and 3x1 filters of 64-96
// channels (reductions of 128-288: 1.06-1.29x).
constexpr long long kMinNarrowDataPixels = 65536, kMinNarrowDataReduction = 320;
// Grouped convs where the tier beat gpu:conv:implicit_gemm on BOO's 413 (H200, 2026-11-26,
// docs/perf/2026-11-26-session2-h200x2.md): 96 or 128 output channels a group ran 1.07-1.49x faster;
// 64 a group, once they took 64-wide tiles, 1.60-1.69x (H100, 2026-11-27,
// docs/perf/2026-11-27-session13.md); a grouped data face of fewer than kMinGroupedDataPixels output
// pixels (16 x 24 x 16) 0.73-0.94x.
constexpr long long kMinGroupOutputChannels = 64, kMinGroupedDataPixels = 8192;

// TF32 planar 1x1 convs run on channels-last copies of x and y (the native path is 16-bit): where either
// channel count is at most this, the copies cost more than the wgmma saves (H200, 2026-11-28: -c 256 -k 64 on
// 56x56 images 1.77x gpu:conv:implicit_gemm's time, -c 32 -k 192 1.30x; from 160 channels 0.39-0.94x).
constexpr long long kMaxStagedTf32NarrowChannels = 64;
// The TF32 data face reads the flipped filter's copy (a kernel more: the 16-bit face reads the filter in place).
// Below this many multiply-adds it ran slower than gpu:conv:implicit_gemm (H200, 2026-11-28, the 413's and
// nchw-models' data faces: all 9 lines of 0.23 GFLOP and less at 1.05-1.35x its time, 6-10 us; from 0.30 GFLOP
// 0.29-1.06x, geomean 0.64).
constexpr long long kMinTf32DataMacs = 1LL << 27;

// The native NCHW 1x1 path's GEMM rows (output channels) at least fill one
// consumer: its convs are bandwidth-bound, and the alternative stages copies
// of them (an estimate, to be measured: -k 64 ResNet lines).
constexpr long long kMinNativeRows = 64;
// Shared memory beyond the stages and the epilogue's staging: the barriers and
// the slack for aligning the start to 1024 bytes.
constexpr long long kSharedOverhead = 1024 + 256;
// Split K (the weight face's, and the forward faces' where the tiles are too
// few to fill the SMs): each split at least kMinKBlocksPerSplit k-blocks
// (fewer spend more on their epilogue than on their sums), at most
// kMaxSplits of them, their fp32 partials at most kMaxPartialBytes (as
// gpu:conv:implicit_gemm's; it also keeps the partials' offsets 32-bit).
constexpr long long kMinKBlocksPerSplit = 4, kMaxSplits = 256, kMaxPartialBytes = 512LL << 20;

// The forward conv the kernel runs for the problem's one task:
//   forward face: the relation as it is (B from A and W);
//   data face, stride 1: A from B as the forward conv of B with the filter's
//     taps flipped and its channel roles swapped (W'[c, r', s', kb] =
//     W[kb, c, R-1-r', S-1-s'], a staged copy), padded by dil x (taps - 1) - pad:
//     A[h] = sum_r B[h + pad - r*dil] W[r] = sum_r' B[h - pad' + r'*dil] W'[r'].
//   data face, stride (u, v) > 1, dilation 1: one stride-1 forward conv of B
//     per stride phase, all in one launch (conv_wgmma_slices.cuh): the phases'
//     output grid ceil(H / u) x ceil(W / v) is `rel`'s B, their largest tap
//     counts its filter, the flipped copy's tap steps and dx's pixel steps its
//     strides; each phase's padding, first pixel and taps the kernel derives
//     from problem.relation (`phased`).
//   groups: each group is a slice of the launch too (its channel offsets in
//     the kernel), `rel`'s channels a group's.
//   weight face: W from A and B as it is (conv_wgmma_weight.cuh: the GEMM
//     of the output channels by the (tap, channel) columns over the pixels,
//     M- and N-major tiles, split K).
// Operands whose channels are not contiguous (NCHW, KCRS) run on dense
// channels-last copies (conv_staging.hpp); `rel` then has the copies' strides.
// Pointwise convs of planar (NCHW) activations run natively instead where
// they can (conv_wgmma_native.hpp, device/conv_wgmma_nchw.cuh): `native`,
// `rel` the native GEMM's relation, no copies; else `staged_why` says why not.
struct Run {
  Relation rel;
  bool native = false;
  bool phased = false;        // the strided data face, by stride phases
  Dims3 phase_count{1, 1, 1};  // its phases along (D, H, W): the stride
  // The largest padding pad' of a phase with taps along (D, H, W) (conv_wgmma_slices.cuh): the lower corner of
  // the one im2col map of dy that serves every phase (conv_wgmma.cuh's PhasePadH/W).
  Dims3 phase_pad{0, 0, 0};
  std::string staged_why;
  FaceTask task;
  std::string a, b, w;  // the signature tensors read as the run's A, B (weight face) and W (other faces)
  std::vector<StagedCopy> copies;
  int a_copy = -1, b_copy = -1, w_copy = -1, out_copy = -1;  // the copy each operand lives in, or -1: the tensor itself
  int z_copy = -1;  // the residual's copy, laid out as out_copy (the epilogue reads it at y's offsets), or -1
  // The output's channels are not a multiple of 8: written into out_copy, its channels padded to one (the tiles'
  // last 8-channel chunk stored whole), and copied out without the padding.
  bool padded_out = false;
  // With padded_out, where the output's channels are contiguous: no copy; the epilogue stores it element by element
  // (conv_wgmma.cuh's ElementStores), 64 contiguous bytes a warp's store. (The copy-out of a padded copy wrote 8
  // scalar elements a thread: 16 sectors a warp's store.)
  bool element_stores = false;
  // The 1x1 data face at stride 1 whose operands load by TMA reads the filter where it lies: W[k][c] (c
  // contiguous) is its GEMM's B N-major, BN / 64 boxes {64 channels, 64 k} a k-block (conv_wgmma.cuh's
  // BNMajor), without the flipped copy, a kernel and the filter's bytes twice.
  bool filter_in_place = false;
  // The element's bytes: 2, or 4 for fp32 with --fp32-math tf32 (the forward and data faces on TF32 wgmma).
  long long elem_bytes = 2;
  // A k-block's reduction columns: a 128-byte row of the element.
  long long block_k() const { return kBlockBytes / elem_bytes; }
  bool weight() const { return task.face == kWeightFace; }
  // Split K: the weight face, and the channels-last forward and data faces (conv_wgmma_split.cuh).
  bool may_split() const { return weight() || !native; }
};

// The run's slices (conv_wgmma_slices.cuh): its groups times its stride phases.
long long slices(const Run& run) {
  return run.rel.groups * run.phase_count[1] * run.phase_count[2];
}

// The GEMM the kernel runs: m x n outputs over k-long sums, `images` times.
//   forward and data faces: output pixels x a group's output channels over the packed (tap, channel)
//     reduction, once per slice (group and stride phase; a phase's k is at most this);
//   weight face: a group's output channels x (taps, channels) over the pixels, once per group;
//   native forward and data faces: output channels x an image's pixels over the channels, per image.
// `block_k`: its k-blocks' columns (Run::block_k); `rate`: the tensor cores' rate on its type, relative to
// 16-bit types' (TF32: half).
struct GemmShape {
  long long m, n, k, images = 1;
  long long block_k = kBlockK;
  double rate = 1.0;
};
GemmShape gemm_shape(const Run& run) {
  const Relation& r = run.rel;
  if (run.weight()) return {r.bg(), r.taps() * r.ag(), r.batch * r.pix_b(), r.groups};
  if (run.native) return {r.cb, r.pix_b(), r.ca, r.batch};
  return {r.batch * r.pix_b(), r.bg(), r.taps() * r.ag(), slices(run), run.block_k(), run.elem_bytes == 4 ? 0.5 : 1.0};
}

Status decline(const std::string& why) { return unimplemented("gpu:conv:wgmma_sm90 runs " + why); }

// conv_wgmma_slices.cuh's members of the Cfg: the groups' offsets (elements)
// of A's channels, the filter and the result's channels, and the stride
// phases' geometry (`data`: the problem's relation, the data face's own).
std::string slice_constants(const Relation& data, const Run& run) {
  const Relation& r = run.rel;
  auto constant = [](const char* name, long long v) {
    return "  static constexpr int " + std::string(name) + " = " + std::to_string(v) + ";\n";
  };
  long long ga = r.ag(), gw = r.bg() * r.w_strides[0], gy = r.bg();
  if (run.task.face == kDataFace) gw = r.ag();  // the flipped copy: a group's kb are columns
  if (run.weight()) {  // p.a = x (A's channels), p.b = dy (the rows' channels), the result dw's rows
    ga = r.ag();
    gw = r.bg();
    gy = r.bg() * r.w_strides[0];
  }
  std::string out = constant("kGroups", r.groups) + constant("GA", ga) + constant("GW", gw) + constant("GY", gy);
  out += constant("kPhases", run.phase_count[1] * run.phase_count[2]);
  if (run.phased)
    out += constant("UH", data.stride[1]) + constant("UW", data.stride[2]) + constant("FR", data.f_size[1]) +
           constant("FS", data.f_size[2]) + constant("DPH", data.pad[1]) + constant("DPW", data.pad[2]) +
           constant("OH", data.a_size[1]) + constant("OW", data.a_size[2]);
  return out;
}

// The native NCHW forward and data faces' consumers split a tile's columns where it has at most 64 rows (as
// the weight face's); BOO_WGMMA_NATIVE_HALF_COLUMNS=0 keeps the row split (consumer 1 idle), for A/B runs.
bool native_half_columns_enabled() {
  const char* v = std::getenv("BOO_WGMMA_NATIVE_HALF_COLUMNS");
  return v == nullptr || std::string_view(v) != "0";
}

// Whether a native forward or data face has at most 64 GEMM rows (its output channels).
bool native_few_rows(const Run& run) { return run.native && !run.weight() && run.rel.cb <= 64; }

// Whether a run's GEMM has at most 64 rows that the two consumers share by columns: the weight face's
// (K <= 64 output channels a group) and native_few_rows'.
bool few_rows_split_columns(const Run& run) {
  if (run.weight()) return run.rel.bg() <= 64;
  return native_few_rows(run) && native_half_columns_enabled();
}

// conv_wgmma_weight.cuh's kHalfColumns, the same rule on the Cfg: few_rows_split_columns at 128 or 256
// columns, without promoted sums.
bool consumers_split_columns(const Run& run, int bn, bool promote) {
  return few_rows_split_columns(run) && !promote && (bn == 128 || bn == 256);
}

// TMA loads are the default (numerics, racecheck and synccheck passed on an H100, 2026-11-26; 0.96-0.98x the
// cp.async producers' time: docs/perf/2026-11-26-session6.md). BOO_WGMMA_TMA=0 plans the cp.async producers
// instead, for A/B runs (different Cfg, so different cache keys).
constexpr const char* kTmaOffVariable = "BOO_WGMMA_TMA";
bool tma_loads_enabled() {
  const char* v = std::getenv(kTmaOffVariable);
  return v == nullptr || std::string_view(v) != "0";
}

// The TMA producers' reach beyond the convs they first took (where the configs of the others, and the tuning rows
// that name them, were settled): each the heuristic's choice wherever it applies, boo tune timing the config
// without it as its second candidate (alternatives). For A/B runs, BOO_WGMMA_PARTIAL_IM2COL=0,
// BOO_WGMMA_GROUPED_TMA=0, BOO_WGMMA_PHASED_TMA=0 and BOO_WGMMA_IN_PLACE_TAPS=0 plan those convs as before.
struct TmaReach {
  // A 1x1 filter's x by the im2col map whatever its channels, the last copy partly past them (im2col_blocker).
  bool partial_im2col = true;
  // The grouped forward face with both operands by TMA, each group's channels of x's im2col map and rows of the
  // filter's (tma_blocker).
  bool groups = true;
  // The stride-phased data face by TMA: one im2col map of dy for every phase, the flipped copy's taps a 4-D map
  // (phased_im2col_blocker).
  bool phases = true;
  // The data face of several taps (or stride phases) reads the filter where it lies, its taps a 4-D map, without
  // the flipped copy and its kernel (run_of's filter_in_place).
  bool in_place_taps = true;

  static TmaReach by_default() {
    auto on = [](const char* name) {
      const char* v = std::getenv(name);
      return v == nullptr || std::string_view(v) != "0";
    };
    return {on("BOO_WGMMA_PARTIAL_IM2COL"), on("BOO_WGMMA_GROUPED_TMA"), on("BOO_WGMMA_PHASED_TMA"),
            on("BOO_WGMMA_IN_PLACE_TAPS")};
  }
  static TmaReach none() { return {false, false, false, false}; }
};

// Channels that are not a multiple of 8 (16-byte vectors of one tap) are staged in copies padded with zeros to
// the next multiple (16-bit types): from 64 channels, where the tier's tiles are filled (BOO's 413: 419 input channels of a 1x1
// conv, 194 of a 3x3 one, ran 1.8-2.3x cuDNN's time on gpu:conv:implicit_gemm's scalar loads; padded, 1.28-2.45x
// faster, H100 2026-11-27, docs/perf/2026-11-27-session13.md); fewer stay with the tiers made for them (small_c,
// implicit_gemm's own channel padding). Groups 1, and not for a caller's fp32 sums (dense (M, N) planes).
constexpr long long kMinPaddedChannels = 64;
ChannelPad pad_of(const ConvProblem& problem, long long channels) {
  const bool on = channels % 8 != 0 && channels >= kMinPaddedChannels && problem.relation.groups == 1 &&
                  !problem.fp32_result && problem.elem_bytes == 2;
  return {on, channels, ceil_div(channels, 8) * 8};
}
// The forward face pads its reduced channels (x and the filter) only for filters of several taps: a 1x1 conv
// reads x once, so its padded copy cost as much as the conv (67 -> 64 and 77 channels: 0.68-0.74x
// gpu:conv:implicit_gemm's time; 419 -> 384: 1.04x).
ChannelPad forward_reduction_pad(const ConvProblem& problem) {
  ChannelPad pad = pad_of(problem, problem.relation.ca);
  pad.on = pad.on && problem.relation.taps() > 1;
  return pad;
}

// What a decline for channels says of the padding (pad_of): which channels it pads.
std::string padding_rule(const Run& run) {
  return std::string(" (channels from ") + std::to_string(kMinPaddedChannels) + " are padded, groups 1" +
         (run.task.face == kForwardFace ? ", the forward face's reduced ones for filters above 1x1)" : ")");
}

std::string plain_a_blocker(const Run& run);
std::string im2col_blocker(const Run& run, long long elem_bytes, bool partial);
std::string im2col_geometry_blocker(const Run& run, long long elem_bytes);
std::string phased_im2col_blocker(const Run& run, long long elem_bytes);
std::string tma_blocker(const Run& run, long long elem_bytes, TmaReach reach);

// The largest padding pad' of a stride phase with taps along a dim of stride u, r taps and padding pad
// (conv_wgmma_slices.cuh's phase_dim).
long long largest_phase_pad(long long u, long long r, long long pad) {
  long long largest = std::numeric_limits<long long>::min();
  for (long long phase = 0; phase < std::min(u, r); ++phase) {
    const long long taps = ceil_div(r - phase, u), first = ((phase - pad) % u + u) % u;
    largest = std::max(largest, taps - 1 - (first + pad - phase) / u);
  }
  return largest;
}

// `filter_in_place`: a data face reads its filter where it lies where it can (Run's filter_in_place; a filter of
// several taps, or stride phases, as far as `reach` allows); false: through the flipped copy, as the cp.async
// producer needs (boo tune's candidate).
Result<Run> run_of(const ConvProblem& problem, bool filter_in_place = true, TmaReach reach = TmaReach::by_default()) {
  const Relation& r = problem.relation;
  Run run;
  run.task = problem.tasks[0];
  run.rel = r;
  run.elem_bytes = problem.elem_bytes;
  if (r.groups == 1 && planar_pointwise(r) && run.elem_bytes != 2) {
    run.staged_why = "the native NCHW path is 16-bit only (its planar operands are M/N-major tiles, which TF32 wgmma "
                     "cannot read)";
  } else if (r.groups == 1 && planar_pointwise(r) && problem.conv().residual) {
    run.staged_why = "the native NCHW path has no residual epilogue (--residual 1)";
  } else if (r.groups == 1 && planar_pointwise(r)) {
    Status native = native_nchw_pointwise(problem);
    const Relation native_rel = native.ok() ? native_relation(problem) : r;
    if (native.ok() && native_in_channels_last(native_rel) && !tma_loads_enabled())
      native = unimplemented("the native NCHW path reads a channels-last input by TMA only (BOO_WGMMA_TMA=0)");
    // (8-byte pixel vectors were measured on planar inputs only: a channels-last one keeps the 8-pixel rule.)
    if (native.ok() && native_in_channels_last(native_rel) && native_pixel_vector(native_rel) != 8)
      native = unimplemented("the native NCHW path takes a channels-last input where the planar result's pixels per "
                             "image are a multiple of 8, not " + std::to_string(native_rel.pix_b()));
    if (native.ok()) {
      run.native = true;
      run.rel = native_rel;
      run.a = run.task.face == kDataFace ? run.task.b : run.task.a;
      if (run.weight()) run.b = run.task.b;
      run.w = run.task.w;
      return run;
    }
    run.staged_why = std::string(native.message());
  }
  if (run.task.face == kForwardFace) {
    run.a = run.task.a;
    run.w = run.task.w;
    // x and the filter padded alike along the reduced channels; y's channels in a padded copy.
    const ChannelPad c = forward_reduction_pad(problem), k = pad_of(problem, r.cb);
    if (c.on || !channels_contiguous(r.a_strides, r.ca))
      run.a_copy = add_copy(run.copies, layout_copy(problem, run.a, r.batch, r.batch, r.a_size, r.ca, c.count(), c.on));
    if (c.on || !channels_contiguous(r.w_strides, r.ag()))
      run.w_copy = add_copy(run.copies, layout_copy(problem, run.w, r.cb, r.cb, r.f_size, r.ag(), c.on ? c.padded : r.ag(), c.on));
    run.rel.ca = c.count();
    // (An fp32 result leaves y unwritten: it needs no copy.)
    run.padded_out = k.on;
    run.element_stores = k.on && channels_contiguous(r.b_strides, r.cb);
    if ((k.on && !run.element_stores) || (!channels_contiguous(r.b_strides, r.cb) && !problem.fp32_result))
      run.out_copy = add_copy(
          run.copies, layout_copy(problem, run.task.result, r.batch, r.batch, r.b_size, r.cb, k.count(), k.on));
    if (run.out_copy >= 0 && run.task.epilogue && problem.conv().residual)
      run.z_copy = add_copy(run.copies, layout_copy(problem, "z", r.batch, r.batch, r.b_size, r.cb, k.count(), k.on));
  } else if (run.task.face == kDataFace) {
    Relation& f = run.rel;
    f.ca = r.cb;
    f.cb = r.ca;
    f.a_size = r.b_size;
    f.b_size = r.a_size;
    f.stride = {1, 1, 1};
    run.phased = r.stride[0] * r.stride[1] * r.stride[2] != 1;
    if (run.phased) {
      run.phase_count = r.stride;
      // A phase's taps are the filter's taps r = phase + stride*j only at dilation 1 (with dilation d
      // they would be those with r*d = phase mod stride: not an arithmetic run of the copy).
      if (r.dil[1] != 1 || r.dil[2] != 1)
        return decline("the strided data face (backward data) at dilation 1 only, not stride " +
                       std::to_string(r.stride[1]) + "x" + std::to_string(r.stride[2]) + " with dilation " +
                       std::to_string(r.dil[1]) + "x" + std::to_string(r.dil[2]));
      for (int d = 1; d < 3; ++d) {
        f.b_size[d] = ceil_div(r.a_size[d], r.stride[d]);
        f.f_size[d] = ceil_div(r.f_size[d], r.stride[d]);
        run.phase_pad[d] = largest_phase_pad(r.stride[d], r.f_size[d], r.pad[d]);
      }
      f.pad = {0, 0, 0};  // each phase's own: conv_wgmma_slices.cuh
    } else {
      for (int d = 0; d < 3; ++d) {
        f.pad[d] = r.dil[d] * (r.f_size[d] - 1) - r.pad[d];
        if (f.pad[d] < 0)
          return decline("the data face where padding <= dilation x (filter size - 1), not padding " +
                         std::to_string(r.pad[d]) + " of a " + std::to_string(r.f_size[d]) + "-tap filter");
      }
    }
    f.a_strides = r.b_strides;
    f.b_strides = r.a_strides;
    run.a = run.task.b;
    run.w = run.task.w;
    // The reduction, dy's channels, padded in dy's copy and the flipped filter's kb alike.
    const ChannelPad k = pad_of(problem, r.cb);
    // In place (filter_in_place): the filter's channels contiguous, its k rows 16-byte aligned; at stride 1 with
    // one tap dy read where it lies as a plain matrix by TMA (no copy: plain_a_blocker) and the filter a 2-D map
    // {C, K}; with several taps or stride phases (TmaReach::in_place_taps), every k-block one tap's 64 k (dy's
    // channels a multiple of 64), its taps evenly spaced 16-byte aligned runs (a 4-D map {C, S, R, K}: tma_slot)
    // and both operands by TMA as tma_blocker has them (dy by its im2col map).
    const bool taps = run.phased || r.taps() > 1;
    // (TF32 reads K-major operands only: its data face reads the flipped copy.)
    run.filter_in_place = filter_in_place && tma_loads_enabled() && r.groups == 1 && !k.on && run.elem_bytes == 2 &&
                          channels_contiguous(f.a_strides, r.cb) && r.w_strides[1] == 1 && r.w_strides[0] % 8 == 0;
    if (run.filter_in_place && !taps) run.filter_in_place = plain_a_blocker(run).empty();
    if (run.filter_in_place && taps)
      run.filter_in_place = reach.in_place_taps && r.cb % kBlockK == 0 && r.w_strides[3] % 8 == 0 &&
                            r.w_strides[4] % 8 == 0 && r.w_strides[3] >= r.f_size[2] * r.w_strides[4] &&
                            r.w_strides[0] >= r.f_size[1] * r.w_strides[3] &&
                            tma_blocker(run, problem.elem_bytes, reach).empty() &&
                            (run.phased ? phased_im2col_blocker(run, problem.elem_bytes)
                                        : im2col_blocker(run, problem.elem_bytes, false))
                                .empty();
    if (run.filter_in_place) {
      f.w_strides = {1, r.w_strides[0], 0, 0, 0};  // (c, k): N-major (a tap's; tma_slot maps the taps)
    } else {
      std::optional<StagedCopy> flipped = flipped_filter_copy(problem, run.w, k.count());
      if (!flipped)
        return decline("the data face of filters whose taps are one run of memory (any dense layout) only");
      run.w_copy = add_copy(run.copies, *flipped);
      // The copy is [r'][s'][c][kb]: output channel c's row (c < C / groups) of k (kb padded) channels per tap.
      f.w_strides = {k.count(), 1, 0, r.f_size[2] * r.ag() * k.count(), r.ag() * k.count()};
    }
    if (k.on || !channels_contiguous(f.a_strides, r.cb))
      run.a_copy =
          add_copy(run.copies, layout_copy(problem, run.a, r.batch, r.batch, r.b_size, r.cb, k.count(), k.on));
    f.ca = k.count();
    // dx's channels (the GEMM's columns) in a padded copy.
    const ChannelPad c = pad_of(problem, r.ca);
    run.padded_out = c.on;
    run.element_stores = c.on && channels_contiguous(f.b_strides, f.cb);
    if ((c.on && !run.element_stores) || (!channels_contiguous(f.b_strides, f.cb) && !problem.fp32_result))
      run.out_copy = add_copy(
          run.copies, layout_copy(problem, run.task.result, r.batch, r.batch, r.a_size, r.ca, c.count(), c.on));
    if (run.out_copy >= 0 && run.task.epilogue && problem.conv().residual)  // a transposed conv's forward
      run.z_copy = add_copy(run.copies, layout_copy(problem, "z", r.batch, r.batch, r.a_size, r.ca, c.count(), c.on));
  } else {
    run.a = run.task.a;
    run.b = run.task.b;
    // x's channels (dw's columns) and dy's (dw's rows) padded; dw computed padded in both and copied out.
    const ChannelPad c = pad_of(problem, r.ca), k = pad_of(problem, r.cb);
    if (c.on || !channels_contiguous(r.a_strides, r.ca))
      run.a_copy = add_copy(run.copies, layout_copy(problem, run.a, r.batch, r.batch, r.a_size, r.ca, c.count(), c.on));
    if (k.on || !channels_contiguous(r.b_strides, r.cb))
      run.b_copy = add_copy(run.copies, layout_copy(problem, run.b, r.batch, r.batch, r.b_size, r.cb, k.count(), k.on));
    run.rel.ca = c.count();
    run.rel.cb = k.count();
    if (c.on || k.on || (!channels_contiguous(r.w_strides, r.ag()) && !problem.fp32_result))
      run.out_copy = add_copy(run.copies, layout_copy(problem, run.task.result, r.cb, k.count(), r.f_size, r.ag(),
                                                      c.on ? c.padded : r.ag(), c.on || k.on));
  }
  Relation& f = run.rel;
  if (run.a_copy >= 0) f.a_strides = channels_last(f.a_size, f.ca);
  if (run.b_copy >= 0) f.b_strides = channels_last(f.b_size, f.cb);
  // (A filter copy holds a group's input channels per output channel: [K][R][S][C / groups].)
  if (run.w_copy >= 0 && !run.copies[static_cast<size_t>(run.w_copy)].flip)
    f.w_strides = channels_last(f.f_size, f.ag());
  if (run.out_copy >= 0) {
    if (run.weight())
      f.w_strides = channels_last(f.f_size, f.ag());
    else
      f.b_strides = channels_last(run.phased ? r.a_size : f.b_size, run.copies[static_cast<size_t>(run.out_copy)].padded);
  }
  if (run.phased)  // a phase's taps and pixels are a stride apart
    for (int d = 1; d < 3; ++d) {
      f.w_strides[2 + d] *= r.stride[d];
      f.b_strides[2 + d] *= r.stride[d];
    }
  return run;
}

// The weight face by shifted taps (conv_wgmma_weight_taps.cuh): a k-block is a strip of `rows` x `cols`
// output pixels (64), and x's box its receptive field, box_w x box_h input pixels of 64 channels.
struct TapStrip {
  int rows = 0, cols = 0;
  long long strips = 0;  // per image
  long long box_w = 0, box_h = 0, box_bytes = 0;
};

// The strip that covers an image's P x Q output pixels in the fewest strips (each is 64 pixels of tensor-core
// work, its overhang past the output zeros), then with the fewest x bytes per strip; rows 0 where no strip's
// box fits a TMA box (256 pixels along W and H).
constexpr int kTapStripCols[] = {64, 32, 16};

// The strip of `cols` output pixels by 64 / cols rows; rows 0 where its box does not fit a TMA box.
TapStrip strip_of(const Relation& r, int cols) {
  TapStrip t;
  t.box_w = cols + (r.f_size[2] - 1) * r.dil[2];
  t.box_h = (kBlockK / cols - 1) * r.stride[1] + (r.f_size[1] - 1) * r.dil[1] + 1;
  if (t.box_w > 256 || t.box_h > 256) return {};
  t.cols = cols;
  t.rows = static_cast<int>(kBlockK / cols);
  t.box_bytes = t.box_w * t.box_h * 128;
  t.strips = ceil_div(r.b_size[1], t.rows) * ceil_div(r.b_size[2], cols);
  return t;
}

// The shifted taps' tiles: 64 output channels by one 64-channel slice of x, per group.
long long taps_tiles(const Relation& r) { return ceil_div(r.bg(), 64) * (r.ag() / kBlockK) * r.groups; }

TapStrip best_strip(const Relation& r) {
  TapStrip best;
  for (const int cols : kTapStripCols) {
    const TapStrip t = strip_of(r, cols);
    if (t.rows == 0) continue;
    if (best.rows == 0 || t.strips < best.strips || (t.strips == best.strips && t.box_bytes < best.box_bytes))
      best = t;
  }
  return best;
}

// A tensor's element strides (w, h, n) as a 4-D map {channels, W, H, N} reads them: a dim of extent 1 is
// never stepped, so it takes the nested value (the extent below it) that the driver's checks accept.
std::array<long long, 3> nested_strides(const Strides5& s, long long channels, const Dims3& size, long long batch) {
  const long long w = size[2] > 1 ? s[4] : channels;
  const long long h = size[1] > 1 ? s[3] : size[2] * w;
  const long long n = batch > 1 ? s[0] : size[1] * h;
  return {w, h, n};
}

// Filter rows of the shifted taps: a consumer warpgroup each (512 threads at most), and a row's S taps one
// m64n(64 S) wgmma whose 32 S accumulators a thread keeps (S = 4 beside 3 consumers leaves too few registers).
constexpr long long kMaxTapRows = 3;
long long max_tap_columns(long long rows) { return rows == kMaxTapRows ? 3 : 4; }

// Where the shifted taps are the heuristic's choice (taps_default_blocker). Measured against the GEMM path
// on 34 weight faces (H100, 2026-11-28, docs/perf/2026-11-28-session18.md):
//   - at most 64 output channels a group, where the GEMM path's tile is 64 rows by two taps and reads x nine
//     times per 3x3 strip from L2: 0.34-0.92x its time (ResNet-50's 56 x 56: 148 -> 58 us; BOO's 225 x 225:
//     306 -> 104 us; -g 6 of 384: 362 -> 125 us), 0.98-1.01x on NCHW fp16 lines of copies;
//   - wider: 0.78-0.88x at 576-2048 output channels over 384 strips (48 x 32 images, strips covering them
//     exactly), but 0.95-1.06x at 128-512 channels (each 64-row tile reads x again, where the GEMM path's
//     128-row tile reads it once per two), 1.16-1.96x where an eighth or more of the strips' pixels lie
//     past the output (28 x 28, 14 x 14, 7 x 7), and 1.60x at stride 3 along H (no input row serves two
//     output rows);
//   - below kMinTapsWork strips x tiles (a unit per SM of at most ~8 strips): 1.14-1.59x, the reduce's
//     launch and the splits' partials outweigh the sums.
constexpr long long kMinTapsWork = 1024;
constexpr long long kMinWideTapsChannels = 512, kMinWideTapsStrips = 256;
constexpr double kMinWideTapsCoverage = 0.95;

// Why the heuristic keeps the GEMM path for a weight face the shifted taps take (empty: it chooses them);
// boo tune times both. BOO_WGMMA_TAPS=all makes them the choice wherever taps_blocker allows them, =0
// nowhere, for A/B runs.
std::string taps_default_blocker(const Run& run) {
  const char* v = std::getenv("BOO_WGMMA_TAPS");
  if (v != nullptr && std::string_view(v) == "0") return "BOO_WGMMA_TAPS=0";
  if (v != nullptr && std::string_view(v) == "all") return "";
  const Relation& r = run.rel;
  const TapStrip strip = best_strip(r);
  if (r.batch * strip.strips * taps_tiles(r) < kMinTapsWork)
    return "fewer than " + std::to_string(kMinTapsWork) + " strips x tiles (boo tune's candidate)";
  if (r.bg() <= 64) return "";
  const double coverage = static_cast<double>(r.pix_b()) / static_cast<double>(strip.strips * kBlockK);
  if (r.bg() < kMinWideTapsChannels || r.stride[1] != 1 || r.batch * strip.strips < kMinWideTapsStrips ||
      coverage < kMinWideTapsCoverage)
    return "more than 64 output channels a group, but fewer than " + std::to_string(kMinWideTapsChannels) +
           ", a stride along H, fewer than " + std::to_string(kMinWideTapsStrips) +
           " strips or strips covering under 95% of their pixels (boo tune's candidate)";
  return "";
}

// Why the weight face cannot run by shifted taps (empty: it can): channels-last operands whose x slices are
// whole 64-channel rows of 128 bytes, a filter of 2-12 taps in at most 3 rows (see max_tap_columns), stride
// 1 along W (a strip row's pixels are consecutive box rows), dw in its own type, and dy and x as 4-D maps.
std::string taps_blocker(const Run& run, long long elem_bytes, bool fp32_out) {
  const Relation& r = run.rel;
  if (!run.weight() || run.native) return "the channels-last weight face only";
  if (fp32_out) return "dw in its own type only (not a caller's fp32 sums)";
  if (elem_bytes != 2) return "16-bit types only";
  if (r.ag() % kBlockK != 0)
    return "input channels per group that are a multiple of 64, not " + std::to_string(r.ag());
  if (r.taps() < 2) return "filters of several taps";
  if (r.f_size[1] > kMaxTapRows || r.f_size[2] > max_tap_columns(r.f_size[1]))
    return "filters of at most 3 rows of 4 taps (3 with 3 rows), not " + std::to_string(r.f_size[1]) + "x" +
           std::to_string(r.f_size[2]);
  if (r.stride[2] != 1) return "stride 1 along W, not " + std::to_string(r.stride[2]);
  if (best_strip(r).rows == 0) return "a strip's receptive field within a TMA box of 256 x 256 pixels";
  const std::array<long long, 3> x = nested_strides(r.a_strides, r.ca, r.a_size, r.batch);
  const std::array<long long, 3> y = nested_strides(r.b_strides, r.cb, r.b_size, r.batch);
  if (x[0] < r.ca || x[1] < r.a_size[2] * x[0] || x[2] < r.a_size[1] * x[1] || y[0] < r.cb ||
      y[1] < r.b_size[2] * y[0] || y[2] < r.b_size[1] * y[1])
    return "x's and dy's strides nested (N, H, W, C outermost first)";
  return "";
}

struct WgmmaConfig final : Config {
  int bn = 256;     // columns per CTA tile (the wgmma N: output channels, the weight face's taps x channels): 128, 192 or 256
  int stages = 4;   // depth of the shared-memory ring
  int splits = 1;   // split K: slices of the reduction, fp32 partials summed by a second kernel
  bool fp32_out = false;  // ConvProblem::fp32_result: the sums stay fp32 in the workspace
  bool promote = false;   // ConvProblem::promote_sums: each k-block's sums added into fp32 registers (BN = 128)
  // The plain operand's tiles loaded with TMA, one copy of a whole box per k-block issued by one producer
  // thread, instead of 16-byte cp.async by all 128: the forward face's filter (B), the weight face's dy (A)
  // (conv_wgmma.cuh's produce, conv_wgmma_weight.cuh's produce_weight; docs/wgmma-tma-design.md §1);
  // `tma_off`: why the run's shape does not qualify (tma_blocker, or BOO_WGMMA_TMA=0), shown in the text.
  bool tma = false;
  std::string tma_off;
  // With `tma`, x by TMA too, and one producer thread issuing every box of a k-block (Cfg kTmaX, kIm2colX):
  // the forward face's A as a plain matrix (plain_a_blocker) for pointwise convs, else as an im2col map
  // (`im2col`, im2col_blocker; conv_wgmma.cuh's produce_tma); the weight face's B as an im2col map, a box
  // per 64 columns of one tap (conv_wgmma_weight.cuh's produce_weight_tma). `tma_x_off`: why not.
  bool tma_x = false, im2col = false;
  std::string tma_x_off;
  // With `tma_x`, the forward face's y stored by TMA too (Cfg kTmaY; conv_wgmma.cuh's store_tile_tma):
  // the epilogue no longer waits for its stores (tma_store_blocker says where it applies).
  bool tma_y = false;
  // With `tma_x` on the channels-last forward face, CTAs in clusters of `cluster` along the rows (Cfg
  // kClusterM; conv_wgmma.cuh's produce_tma): each loads 1 / cluster of the filter tile they share and
  // multicasts it to the others (cluster_blocker says where it applies).
  int cluster = 1;
  // The weight face by shifted taps (conv_wgmma_weight_taps.cuh; taps_blocker says where it applies): a
  // k-block is a strip of strip.rows x strip.cols output pixels, x copied once per strip (its receptive
  // field, one box) and every tap read from that copy at a shifted start; a consumer warpgroup per filter
  // row. strip.rows 0: the im2col path above. `taps_off`: why not (for tests and boo explain's reader: the
  // GEMM path's text, its identity in the cache and the tuning rows, leaves it out).
  TapStrip strip;
  std::string taps_off;
  Run run;
  size_t partial_bytes = 0;  // the splits' partials, at the workspace's start
  size_t workspace_bytes = 0;

  std::string text() const override {
    std::string record = "tile " + std::to_string(kTileRows) + "x" + std::to_string(bn) + "x" +
                         std::to_string(run.block_k()) + " stages " + std::to_string(stages);
    record += " warpgroups 1 producer + 2 consumers, persistent; ";
    record += run.task.result;
    record += ": face " + std::to_string(run.task.face);
    const bool half_columns = consumers_split_columns(run, bn, promote);
    if (taps()) {
      record = "tile 64x" + std::to_string(64 * run.rel.taps()) + " (64 output channels by every tap of 64 channels) "
               "stages " + std::to_string(stages) + " warpgroups 1 producer + " + std::to_string(run.rel.f_size[1]) +
               " consumers (one per filter row), persistent; " + run.task.result + ": face " +
               std::to_string(run.task.face) + " as weight gradient by shifted taps: strips of " +
               std::to_string(strip.rows) + "x" + std::to_string(strip.cols) +
               " output pixels, x once per strip by TMA, splits " + std::to_string(splits);
      if (run.rel.groups > 1) record += ", " + std::to_string(run.rel.groups) + " groups";
      if (!run.copies.empty()) {
        record += "; copies";
        for (const StagedCopy& c : run.copies) record += " " + c.text();
      }
      if (!run.staged_why.empty()) record += "; staged: " + run.staged_why;
      return record;
    }
    if (run.native && run.weight()) {
      record += " as weight gradient, native NCHW 1x1: K-major tiles over the pixels, splits ";
      record += std::to_string(splits);
    } else if (run.native) {
      record += " as a GEMM per image, native NCHW 1x1: w ";
      record += run.rel.w_strides[1] != 1 ? "M-major" : "K-major";
      record += native_in_channels_last(run.rel) ? ", pixels K-major (channels-last)" : ", pixels N-major";
    } else if (run.weight()) {
      record += " as weight gradient, M/N-major tiles, splits ";
      record += std::to_string(splits);
      if (fp32_out) record += ", fp32 result";
    } else {
      record += " as forward";
      if (run.phased)
        record += ", " + std::to_string(run.phase_count[1]) + "x" + std::to_string(run.phase_count[2]) +
                  " stride phases";
      if (splits > 1) record += ", splits " + std::to_string(splits);
      if (fp32_out) record += ", fp32 result";
    }
    if (run.native && native_pixel_vector(run.rel) != 8)
      record += ", pixels in vectors of " + std::to_string(native_pixel_vector(run.rel));
    if (half_columns)
      record += ", consumers split the columns (K <= 64)";
    else if (run.weight() && run.rel.bg() <= 64)
      record += ", consumer 1 idle (K <= 64)";
    if (run.rel.groups > 1) record += ", " + std::to_string(run.rel.groups) + " groups";
    if (!run.copies.empty()) {
      record += "; copies";
      for (const StagedCopy& c : run.copies) record += " " + c.text();
    }
    if (promote) record += ", sums promoted per k-block";
    if (tma) record += run.weight() ? ", dy by TMA" : run.filter_in_place ? ", filter in place by TMA (N-major)" : ", filter by TMA";
    if (tma_x) record += im2col ? ", x by TMA (im2col): one producer thread" : ", x by TMA (a plain matrix): one producer thread";
    if (tma_y) record += ", y by TMA";
    if (run.element_stores) record += ", y stored element by element (unaligned rows)";
    if (cluster > 1) record += ", clusters of " + std::to_string(cluster) + " CTAs along the rows share the filter tile";
    if (!tma_off.empty()) record += "; no TMA: " + tma_off;
    if (!tma_x_off.empty()) record += "; x by cp.async: " + tma_x_off;
    if (!run.staged_why.empty()) {
      record += "; staged: ";
      record += run.staged_why;
    }
    return record;
  }
  bool taps() const { return strip.rows > 0; }
  /// A stage: conv_wgmma.cuh's Layout (A and B tiles), or the shifted taps' (Taps: the strip's dy, x's box).
  long long stage_bytes() const {
    return taps() ? kBlockK * 128 + ceil_div(strip.box_bytes, 1024) * 1024 : (kTileRows + bn) * kBlockBytes;
  }
  /// conv_wgmma.cuh's Layout: two consumers' 32 output rows at a time, rows padded by 16 bytes (none for the
  /// shifted taps, whose sums go to the workspace).
  long long staging_bytes() const {
    return taps() ? 0 : 2 * 32 * (bn + 16 / run.elem_bytes) * run.elem_bytes;
  }
  /// Threads of a CTA: a producer warpgroup and two consumers, or one consumer per filter row.
  uint32_t threads() const { return taps() ? static_cast<uint32_t>(128 * (run.rel.f_size[1] + 1)) : kThreads; }
  long long shared_bytes() const { return stages * stage_bytes() + staging_bytes() + kSharedOverhead; }
};

// Wider tiles load fewer bytes per MAC (N = 256: half the B bytes of N =
// 128); narrower ones waste less where the columns are not a multiple of the
// width (K = 576: three tiles of 192, not three of 256) and quantize into
// waves more finely. The efficiency per MAC of 192 and 128 is taken as 0.95
// and 0.85 of 256's (estimates; 256 and 192 measured on an H100 in
// docs/perf/2026-11-24-wgmma-h100.md); 64 (for 64-channel convs, which a
// 128-wide tile runs half idle) as 0.6: its m64n64k16 reads as many shared
// memory bytes per MAC as the tensor cores take (an estimate).
constexpr std::pair<int, double> kTileWidths[] = {{256, 1.0}, {192, 0.95}, {128, 0.85}, {64, 0.6}};
// The native NCHW path's narrowest tile (its 64-wide tiles are not built).
constexpr int kNarrowestNativeWidth = 128;
// 64-wide tiles only where the GEMM is at most this wide (a 128-wide tile half idle): elsewhere the
// model's trade of narrow tiles against split K and waves is not yet measured.
constexpr long long kNarrowTileMaxColumns = 64;
// Promoted sums (ConvProblem::promote_sums) keep a second BN / 2 accumulators per consumer thread:
// within the consumers' registers (208 at 128 columns, Registers in device/conv_wgmma.cuh) only at 128 columns.
constexpr int kPromotedWidth = 128;

// Whether a run may take bn-wide tiles: promoted sums at kPromotedWidth only, the native path from
// kNarrowestNativeWidth, 64-wide tiles where the GEMM is at most kNarrowTileMaxColumns wide.
bool width_allowed(int bn, const Run& run, bool promote) {
  if (promote) return bn == kPromotedWidth;
  // At most 64 output channels the consumers split the columns, which the 64-column wgmma does at 128 and
  // 256 columns only (64 stays for 64 columns).
  if (few_rows_split_columns(run) && bn == 192) return false;
  if (run.native && bn < kNarrowestNativeWidth) return false;
  return bn > kNarrowTileMaxColumns || gemm_shape(run).n <= kNarrowTileMaxColumns;
}

// A tiling of the GEMM: the tile width, the split K and the modelled time.
struct Tiling {
  int bn = 256;
  int splits = 1;
  double us = 1e300;
};

// The most splits worth weighing: the partials' bytes and kMinKBlocksPerSplit
// k-blocks per split bound them.
long long max_splits_of(const GemmShape& g) {
  const long long kblocks = ceil_div(g.k, g.block_k);
  const long long by_memory = std::max<long long>(1, kMaxPartialBytes / (4 * g.m * g.n * g.images));
  return std::max<long long>(1, std::min({kMaxSplits, kblocks / kMinKBlocksPerSplit, by_memory}));
}

// The cheapest split count of bn-wide tiles, min_splits ... max_splits. Time ~
// the waves of units (tiles x splits) over the persistent grid x each unit's
// k-blocks (plus one for its epilogue) at the wgmma rate, plus, with splits,
// the fp32 partials' traffic (each written once, read once by the reduce,
// which writes the result) at the copy rate and the reduce's launch. No
// tiling (us 1e300) where min_splits > max_splits. The terms of one split
// count (split_terms) are scaled by the arch's cost model (ops/cost_model.hpp).
CostTerms split_terms(const GemmShape& g, int bn, double efficiency, long long splits, const ArchSpec& arch) {
  const long long tiles = ceil_div(g.m, kTileRows) * ceil_div(g.n, bn) * g.images, kblocks = ceil_div(g.k, g.block_k);
  const double kblock_s = static_cast<double>(kTileRows) * bn * static_cast<double>(g.block_k) / efficiency /
                          (arch.wgmma_macs_per_s * g.rate / arch.sm_count);
  const long long per_split = ceil_div(kblocks, splits);
  const long long waves = ceil_div(tiles * splits, arch.sm_count);
  CostTerms t;
  t.add("compute", static_cast<double>(waves) * static_cast<double>(per_split + 1) * kblock_s);
  if (splits > 1) {
    t.add("splitk_memory", static_cast<double>(splits + 1) * g.m * g.n * g.images * 4 / arch.copy_bytes_per_s);
    t.add("launch", 2e-6);  // the reduce's
  }
  return t;
}

Tiling cheapest_split(const GemmShape& g, int bn, double efficiency, long long min_splits, long long max_splits,
                      const ArchSpec& arch) {
  const long long kblocks = ceil_div(g.k, g.block_k);
  Tiling best{bn, static_cast<int>(min_splits), 1e300};
  for (long long splits = min_splits; splits <= max_splits; ++splits) {
    if (ceil_div(kblocks, ceil_div(kblocks, splits)) != splits) continue;  // the same slices as fewer splits, one empty
    const double us =
        split_terms(g, bn, efficiency, splits, arch).predicted_s(*arch.cost_model, "gpu:conv:wgmma_sm90") * 1e6;
    if (us < best.us * 0.999) best = {bn, static_cast<int>(splits), us};
  }
  return best;
}

// The weight face's tile width and split K: the GEMM is K x (taps x C) over
// the N x P x Q pixels, usually few tiles over a long reduction, so the
// pixels are split until the units (tiles x splits) fill the SMs.
void choose_weight_tiling(WgmmaConfig& config, const ArchSpec& arch) {
  const GemmShape g = gemm_shape(config.run);
  Tiling best;
  for (const auto& [bn, efficiency] : kTileWidths) {
    if (!width_allowed(bn, config.run, config.promote)) continue;
    if (const Tiling t = cheapest_split(g, bn, efficiency, 1, max_splits_of(g), arch); t.us < best.us * 0.999) best = t;
  }
  config.bn = best.bn;
  config.splits = best.splits;
}

// The shifted taps' split K: units are (64 output channels, 64-channel slice, group, split), a k-block a
// strip. Time ~ the waves of units over the persistent grid x each unit's strips (plus one for its stores)
// at the wgmma rate (a 64 x 64 R S tile of efficiency kTapsEfficiency, an estimate), plus the fp32 partials'
// traffic and the reduce's launch, which runs with any number of splits (it converts the sums to dw's type).
constexpr double kTapsEfficiency = 0.8;
CostTerms taps_split_terms(const Run& run, const TapStrip& strip, long long splits, const ArchSpec& arch) {
  const Relation& r = run.rel;
  const long long tiles = taps_tiles(r);
  const long long kblocks = r.batch * strip.strips, per_split = ceil_div(kblocks, splits);
  const double kblock_s = 64.0 * 64 * kBlockK * r.taps() / kTapsEfficiency / (arch.wgmma_macs_per_s / arch.sm_count);
  const long long waves = ceil_div(tiles * splits, arch.sm_count);
  CostTerms t;
  t.add("compute", static_cast<double>(waves) * static_cast<double>(per_split + 1) * kblock_s);
  const GemmShape g = gemm_shape(run);
  t.add("splitk_memory", static_cast<double>(splits + 1) * g.m * g.n * g.images * 4 / arch.copy_bytes_per_s);
  t.add("launch", 2e-6);  // the reduce's
  return t;
}

// The shifted taps' cheapest split count (within max_splits_of's bounds on the strips).
int taps_splits(const Run& run, const TapStrip& strip, const ArchSpec& arch) {
  const GemmShape g = gemm_shape(run);
  const long long kblocks = run.rel.batch * strip.strips;
  const long long most = max_splits_of({g.m, g.n, kblocks * kBlockK, g.images});
  long long best = 1;
  double best_us = 1e300;
  for (long long splits = 1; splits <= most; ++splits) {
    if (ceil_div(kblocks, ceil_div(kblocks, splits)) != splits) continue;  // as fewer splits, one empty
    const double us = taps_split_terms(run, strip, splits, arch).predicted_s(*arch.cost_model, "gpu:conv:wgmma_sm90");
    if (us < best_us * 0.999) best = splits, best_us = us;
  }
  return static_cast<int>(best);
}

// The forward and data faces' tilings, cheapest first (the first of equals:
// the wider): each width unsplit and, where its tiles leave SMs idle and
// `split` allows, at its cheapest split K (listed for boo tune even where the
// model ranks it below the unsplit one). Unsplit, the model ranks the widths
// by waves x width / efficiency (kTileWidths); the native path's tiles are
// per image (output channels by pixel tiles) and never split.
std::vector<Tiling> ranked_tilings(const Run& run, bool split, bool promote, const ArchSpec& arch) {
  const GemmShape g = gemm_shape(run);
  std::vector<Tiling> out;
  for (const auto& [bn, efficiency] : kTileWidths) {
    if (!width_allowed(bn, run, promote)) continue;
    out.push_back(cheapest_split(g, bn, efficiency, 1, 1, arch));
    const long long tiles = ceil_div(g.m, kTileRows) * ceil_div(g.n, bn) * g.images;
    // (Split K runs one slice: groups 1, no stride phases.)
    if (!split || run.native || slices(run) > 1 || tiles >= arch.sm_count) continue;
    if (const Tiling t = cheapest_split(g, bn, efficiency, 2, max_splits_of(g), arch); t.us < 1e300) out.push_back(t);
  }
  std::stable_sort(out.begin(), out.end(), [](const Tiling& a, const Tiling& b) { return a.us < b.us; });
  return out;
}

// A forward or data face below the size floor (`floor`; `sizes`: its own) runs
// here where the cost model's best tiling is split K and beats
// gpu:conv:implicit_gemm's model of the same GEMM, or is unsplit and beats it
// by kSmallGemmMargin: the
// floor's convs with many channels (VGG's 14x14 and 7x7 layers: 2.3-2.5x
// cuDNN's time on the implicit GEMM, H100 2026-11-26) fill the SMs with tiles
// of their channels or with splits.
Status small_gemm_verdict(const Run& run, const ArchSpec& arch, const std::string& floor, const std::string& sizes) {
  const GemmShape g = gemm_shape(run);
  const std::vector<Tiling> ranked = ranked_tilings(run, true, false, arch);
  const double mma_sync = implicit_gemm_modelled_us(g.m, g.n, g.k, arch) / g.rate;  // (TF32: half the rate there too)
  // (A split tiling ahead of both needs no margin: measured faster, 2026-11-26 second session.)
  const bool split_wins = ranked.front().splits > 1 && ranked.front().us < mma_sync;
  // Unsplit, the data face ran slower than gpu:conv:implicit_gemm with fewer than kMinSmallDataChannels
  // result channels (0.80-0.83x at 96, 128-wide tiles) or kMinSmallDataPixels pixels (0.54-0.57x at 1536
  // and 480).
  if (!split_wins && run.task.face == kDataFace && (g.n < kMinSmallDataChannels || g.m < kMinSmallDataPixels))
    return decline(floor + " (unsplit, the data face " + std::to_string(kMinSmallDataChannels) + " channels and " +
                   std::to_string(kMinSmallDataPixels) + " pixels)" + sizes);
  if (!split_wins && ranked.front().us * kSmallGemmMargin >= mma_sync) {
    char models[160];
    std::snprintf(models, sizeof(models), " (modelled: %.1f us in %d splits, %.1f us on gpu:conv:implicit_gemm)",
                  ranked.front().us, ranked.front().splits, mma_sync);
    return decline(floor + ", or fewer where its cost model beats gpu:conv:implicit_gemm's (unsplit by " +
                   std::to_string(static_cast<int>((kSmallGemmMargin - 1) * 100 + 0.5)) + "%)" + sizes + models);
  }
  return ok_status();
}

// Whether a channels-last tensor's channels are contiguous and every other
// stride keeps 16-byte vectors aligned (a dim of extent 1 is never stepped:
// its stride does not matter, as in a 1x1 KCRS filter).
bool vector_aligned(const Strides5& s, long long outer, const Dims3& size) {
  if (s[1] != 1) return false;
  if (outer > 1 && s[0] % 8 != 0) return false;
  for (int d = 0; d < 3; ++d)
    if (size[d] > 1 && s[2 + d] % 8 != 0) return false;
  return true;
}

// TMA stores of the forward face's y (tma_store_blocker) are the default; BOO_WGMMA_TMA_STORE=0 plans
// the plain stores instead, for A/B runs.
bool tma_stores_enabled() {
  const char* v = std::getenv("BOO_WGMMA_TMA_STORE");
  return v == nullptr || std::string_view(v) != "0";
}

// Whether a grouped run's forward face, or stride-1 data face of several taps, loads by TMA (TmaReach::groups):
// a k-block's box of x (dy) must stay within its group's channels (a multiple of 64), and x must load by TMA
// too (the cp.async producer's filter map is one group's). (A 1x1 data face's flipped copy, a 2-D map of its
// rows, is one group's.)
bool grouped_by_tma(const Run& run, long long elem_bytes, TmaReach reach) {
  const Relation& r = run.rel;
  if (!reach.groups || run.weight() || run.native || run.phased || r.ag() % run.block_k() != 0) return false;
  if (run.task.face == kDataFace && r.taps() == 1) return false;
  return (r.pointwise() ? plain_a_blocker(run) : im2col_geometry_blocker(run, elem_bytes)).empty();
}

// Why the run's plain operand cannot be loaded by TMA boxes (empty: it can): the forward face's filter
// where its (r, s, c) columns are one run of memory per output channel (a 2-D map, any C: the packed
// k-blocks are 64 consecutive columns), groups 1 (or with TmaReach::groups a grouped forward face whose x
// loads by TMA too, in whole 64-channel boxes of a group), and so a 1x1 data face's filter at stride 1 (that face is the
// forward conv of dy, a plain matrix, with the filter's one tap: its flipped copy {K columns, C rows}, or the
// filter in place, filter_in_place); the weight face's dy where its pixels are evenly spaced (a 2-D map of
// channels by pixels). docs/wgmma-tma-design.md §1.
std::string tma_blocker(const Run& run, long long elem_bytes, TmaReach reach) {
  const Relation& r = run.rel;
  if (run.native) {
    // A channels-last input by TMA only (its pixels evenly spaced: native_nchw_pointwise's rule).
    if (native_in_channels_last(r)) return "";
    // The forward face's w (K-major) and x, the data face's w (M-major) and dy, by TMA (produce_planar_tma):
    // x (dy) as a 3-D map {pixels, channel rows, images}, which needs 16-byte aligned rows and images.
    if (run.weight()) return "the native NCHW path loads its weight face with cp.async";
    if (native_pixel_vector(r) != 8)
      return "the native NCHW path maps x by TMA where its pixels and strides are multiples of 8 (16-byte rows)";
    return "";
  }
  // (The data faces the maps below do not take (dy's channels per group not a multiple of 64, or beyond the
  // TmaReach allowed) keep the reason they were given before the flipped copy's map existed: a config's text is
  // its identity in the cache and in the shipped tuning rows.)
  const std::string flipped_reason = "the data face's flipped filter changes taps inside a k-block (a 3-D map, not built yet)";
  // The phases (TmaReach::phases): one group, whole 64-kb boxes, dy by the phases' im2col map.
  if (run.task.face == kDataFace && run.phased)
    return reach.phases && r.groups == 1 && r.ag() % run.block_k() == 0 &&
                   phased_im2col_blocker(run, elem_bytes).empty()
               ? ""
               : flipped_reason;
  if (run.task.face == kDataFace && r.taps() > 1) {
    // The flipped copy [tap][c][kb] as a 4-D map, a box per k-block of one tap's 64 kb (tma_slot).
    if (r.groups != 1 && !grouped_by_tma(run, elem_bytes, reach)) return flipped_reason;
    if (r.ag() % run.block_k() != 0) return flipped_reason;  // (dy's channels not a multiple of 64: it does)
    return "";
  }
  if (run.weight()) {
    const Strides5& y = r.b_strides;  // dy: (n, k, d, p, q)
    const bool dense = (r.b_size[1] == 1 || y[3] == r.b_size[2] * y[4]) &&
                       (r.batch == 1 || y[0] == r.pix_b() * y[4]) && y[4] >= r.bg();
    return dense ? "" : "dy's pixels are not evenly spaced in memory";
  }
  if (r.groups != 1 && !grouped_by_tma(run, elem_bytes, reach)) return "groups = 1 only, not " + std::to_string(r.groups);
  if (run.filter_in_place) return "";  // (run_of's rule: c contiguous, k rows 16-byte aligned)
  const Strides5& w = r.w_strides;  // (k, c, d, r, s)
  const long long row = r.taps() * r.ag();
  const bool dense = (r.f_size[2] == 1 || w[4] == r.ag()) && (r.f_size[1] == 1 || w[3] == r.f_size[2] * r.ag()) &&
                     w[0] >= row;
  return dense ? "" : "the filter's (tap, channel) columns are not one run of memory per output channel";
}

// Why the forward and data faces' x (dy) does not load by TMA (empty: it does): by the stride phases' im2col
// map, an im2col map for filters above 1x1 or strides, else as a plain matrix.
std::string x_tma_blocker(const Run& run, TmaReach reach) {
  if (run.phased) return phased_im2col_blocker(run, run.elem_bytes);
  return run.rel.pointwise() ? plain_a_blocker(run) : im2col_blocker(run, run.elem_bytes, reach.partial_im2col);
}

// Why a TF32 run's operands do not both load by TMA (empty: they do), as configure_gemm plans them: TF32 runs
// only so, since the TFLOAT32 copy rounds each value to TF32 (runtime/tensor_maps.cpp) where a cp.async
// producer's copies would leave the tensor cores to truncate it (a bias of -2^-10 of each sum).
std::string tf32_tma_blocker(const Run& run) {
  if (!tma_loads_enabled()) return kTmaOffVariable + std::string("=0");
  const TmaReach reach = TmaReach::by_default();
  if (std::string why = tma_blocker(run, run.elem_bytes, reach); !why.empty()) return why;
  return x_tma_blocker(run, reach);
}

// The forward face's A (x) pixels' uniform_stride.
long long uniform_pixel_stride(const Relation& r) { return uniform_stride(r.a_strides, r.batch, r.a_size); }

// Why the forward face's y cannot be stored by TMA (empty: it can; conv_wgmma.cuh's store_tile_tma): the
// producer must load x and the filter by TMA (`tma_x`), the epilogue must be the plain one (one group, no
// stride phases, split K, fp32 sums or residual), and y a plain matrix {K channels, pixels}: its pixels
// evenly spaced, 16-byte aligned rows. On the native NCHW path, the forward and data faces' planar
// result (which never has a residual: run_of) whose operands load by TMA.
std::string tma_store_blocker(const WgmmaConfig& c, const ConvProblem& problem) {
  const Run& run = c.run;
  const Relation& r = run.rel;
  // A 3-D map {pixels, channel rows, images} (y_store_slot) of 16-byte aligned rows: native_pixel_vector's 8,
  // which TMA loads need too (tma_blocker; a channels-last input needs it of the result: run_of).
  if (run.native) {
    if (!c.tma_x || run.weight()) return "the native forward and data faces whose operands all load by TMA only";
    // ptxas spills 4-44 bytes of the consumers' registers there (192 and 256 columns; 0 with the plain stores).
    const Activation::Kind act = problem.conv().activation.kind;
    if (act == Activation::Kind::kGelu || act == Activation::Kind::kGeluTanh)
      return "the native path's epilogue with a GELU stores plainly (by TMA its registers spill)";
    return "";
  }
  // Beside cp.async producers it measured 1.04x the plain stores' time on the 413's forward faces, and
  // 1.00x on its data faces (H100, 2026-11-27, docs/perf/2026-11-27-session10.md).
  if (!c.tma_x || run.weight()) return "the channels-last forward face whose operands all load by TMA only";
  if (run.phased) return "convs without stride phases only";
  if (r.groups != 1 || c.splits != 1 || c.fp32_out || problem.conv().residual)
    return "one group, unsplit, with the plain epilogue only";
  const long long step = uniform_stride(r.b_strides, r.batch, r.b_size);
  if (step == 0 || r.b_strides[1] != 1 || step % 8 != 0 || step < r.cb)
    return "y's pixels are not evenly spaced 16-byte aligned rows";
  return "";
}

// Clusters sharing the filter tile are boo tune's candidate, not the heuristic's choice: against single
// CTAs they measured 1.00x over 17 GEMMs and 1.10x the time over the 413's 56 forward lines that may take
// them (0.88-0.94x on a few large ones), H100 2026-11-27 (docs/perf/2026-11-27-session12.md): the mainloop
// already keeps the tensor cores 94% busy at 8192^3. BOO_WGMMA_CLUSTER=1 makes them the heuristic's
// choice where they apply, for A/B runs.
bool clusters_by_default() {
  const char* v = std::getenv("BOO_WGMMA_CLUSTER");
  return v != nullptr && std::string_view(v) == "1";
}

// Why the config's CTAs do not run in clusters of two sharing the filter tile (empty: they may): the
// channels-last forward face with both operands by TMA (one producer thread issues the boxes, the
// filter's half multicast), unsplit, and at least two row tiles to pair.
std::string cluster_blocker(const WgmmaConfig& c) {
  const Run& run = c.run;
  if (!c.tma_x || run.weight() || run.native) return "the channels-last forward face whose operands all load by TMA only";
  if (c.splits != 1) return "unsplit reductions only";
  if (run.filter_in_place || run.task.face == kDataFace)
    return "a filter tile of one 2-D box (not the data face's filter in place or flipped copy)";
  if (ceil_div(gemm_shape(run).m, kTileRows) < 2) return "at least two row tiles";
  return "";
}

// Why a pointwise conv's A (x; output pixel m reads input pixel m: Relation::pointwise) is not a plain
// matrix that one TMA box per k-block loads (empty: it is): its pixels must be evenly spaced in memory,
// 16-byte aligned (a 2-D map {C channels, N x H x W pixels}). (Groups 1 and B by TMA: `tma`'s rule; the
// producer is then one thread.) docs/wgmma-tma-design.md §1.
std::string plain_a_blocker(const Run& run) {
  const Relation& r = run.rel;
  const long long step = uniform_pixel_stride(r);
  if (step == 0 || step % 8 != 0 || step < r.ca) return "x's pixels are not evenly spaced 16-byte aligned rows";
  return "";
}

// x's element strides (w, h, n) as an im2col map {C, W, H, N} reads them (nested_strides).
std::array<long long, 3> im2col_strides(const Relation& r) {
  return nested_strides(r.a_strides, r.ca, r.a_size, r.batch);
}

// The smallest x an im2col map takes: CUTLASS changes the encoded map of tensors below 128 KiB for a
// driver issue (docs/wgmma-tma-design.md §2) that boo does not reproduce; those run on cp.async.
constexpr long long kMinIm2colBytes = 128 * 1024;

// Why the run's A (named `name`) cannot be an im2col map's tensor (empty: it can): its strides nested, its bytes at
// least kMinIm2colBytes.
std::string im2col_tensor_blocker(const Run& run, long long elem_bytes, const std::string& name) {
  const Relation& r = run.rel;
  const std::array<long long, 3> s = im2col_strides(r);
  if (s[0] < r.ca || s[1] < r.a_size[2] * s[0] || s[2] < r.a_size[1] * s[1])
    return name + "'s strides are not nested (N, H, W, C outermost first)";
  if (r.batch * s[2] * elem_bytes < kMinIm2colBytes)
    return name + " below " + std::to_string(kMinIm2colBytes / 1024) +
           " KiB (a driver issue's workaround is not built)";
  return "";
}

// im2col_blocker's rules of the map's geometry and size.
std::string im2col_geometry_blocker(const Run& run, long long elem_bytes) {
  const Relation& r = run.rel;
  for (int d = 1; d < 3; ++d) {
    const char* dim = d == 1 ? "H" : "W";
    const long long reach = r.dil[d] * (r.f_size[d] - 1), upper = r.pad[d] - reach;
    if (r.pad[d] > 128 || upper < -128 || upper > 127 || reach >= 255 || r.stride[d] > 8)
      return std::string("an im2col x along ") + dim +
             " needs padding up to 128, padding - dilation x (taps - 1) in [-128, 127], dilation x (taps - 1) "
             "below 255 and a stride up to 8";
    const long long span = r.a_size[d] + r.pad[d] + upper;  // the bounding box's positions along the dim
    if (span < 1 || ceil_div(span, r.stride[d]) != r.b_size[d])
      return std::string("the im2col bounding box along ") + dim + " does not hold the output's pixels";
  }
  return im2col_tensor_blocker(run, elem_bytes, "x");
}

// Why x cannot be TMA im2col copies (empty: it can), the forward face's A (a copy per k-block) or the
// weight face's B (a copy per 64 columns of a k-block): every copy must be one tap's 64 channels (C a
// multiple of 64; with `partial`, the forward face's 1x1 filter may take any C, its last copy partly past
// C, which TMA fills with zeros), the bounding box of the corners {-P, -P} ..
// {P - (taps - 1) x dilation} walked at the conv's stride must hold exactly the output's P x Q pixels, and
// the corners, strides and offsets within the driver's ranges (rank 4: corners in [-128, 128), element
// strides up to 8; tap offsets below 255: CUTLASS's limit). docs/wgmma-tma-design.md §2.
//
// Filters of several taps whose channels are not a multiple of 64 keep the cp.async producers: each tap's
// channels padded to whole copies (TMA's zero fill past C, a k-block one tap's 64 channels) ran geomean
// 1.26x their time over 52 such lines of BOO's 413 and 257 (0.91-2.65x; H100, 2026-11-28,
// docs/perf/2026-11-28-session19.md): a third or a tenth more k-blocks (96 or 288 channels), and x's pixels,
// C x 2 bytes apart, no longer 128-byte aligned. The strided 1x1 filters' one partial copy costs no extra
// k-block: 0.85-0.94x the time.
std::string im2col_blocker(const Run& run, long long elem_bytes, bool partial) {
  const Relation& r = run.rel;
  const std::string geometry = im2col_geometry_blocker(run, elem_bytes);
  // (Channels not a multiple of 64 whose geometry blocks keep the channels' reason: a config's text is its
  // identity in the cache and in the shipped tuning rows, given before partial copies existed.)
  if (r.ag() % run.block_k() != 0 && (run.weight() || r.taps() > 1 || !partial || !geometry.empty()))
    return "an im2col x needs input channels that are a multiple of " + std::to_string(run.block_k()) +
           " (one tap a copy), not " + std::to_string(r.ag());
  return geometry;
}

// Why the stride-phased data face's dy cannot be the phases' one im2col map (empty: it can): its lower corner
// -Run::phase_pad and its bounding box the phases' P x Q grid (its upper corner P - H_dy - phase_pad) within the
// driver's rank-4 corners [-128, 128), dy's strides nested, and im2col_geometry_blocker's size.
std::string phased_im2col_blocker(const Run& run, long long elem_bytes) {
  const Relation& r = run.rel;
  for (int d = 1; d < 3; ++d) {
    const long long lower = -run.phase_pad[d], upper = r.b_size[d] - r.a_size[d] - run.phase_pad[d];
    if (lower < -128 || lower > 127 || upper < -128 || upper > 127)
      return std::string("the phases' im2col map along ") + (d == 1 ? "H" : "W") +
             " needs corners in [-128, 127]";
  }
  return im2col_tensor_blocker(run, elem_bytes, "dy");
}

// A 2-D map of `tensor` with the 128-byte swizzle: {columns, rows} elements, rows `row_stride` elements
// apart, box {box_columns, box_rows}. Every tiled map of the tier is one.
TensorMapSlot matrix_slot(TensorBinding tensor, DType dtype, long long columns, long long rows, long long row_stride,
                          uint32_t box_columns, uint32_t box_rows) {
  TensorMapSlot m;
  m.tensor = tensor;
  m.dtype = dtype;
  m.rank = 2;
  m.swizzle = TensorMapSlot::Swizzle::k128B;
  m.dims = {static_cast<uint64_t>(columns), static_cast<uint64_t>(rows), 1, 1, 1};
  m.strides = {static_cast<uint64_t>(row_stride) * dtype_size_bytes(dtype), 0, 0, 0};
  m.box = {box_columns, box_rows, 1, 1, 1};
  return m;
}

// A planar activation (the native NCHW path's) as a 3-D map {pixels, channel rows, images}, rows
// strides[1] and images strides[0] elements apart, box {64 pixels, `box_rows` rows, 1 image}: a tile
// never straddles two images, and rows past `channels` are each image's own zeros (or unstored).
TensorMapSlot planar_slot(TensorBinding tensor, DType dtype, long long pixels, long long channels, long long images,
                          const Strides5& strides, uint32_t box_rows) {
  TensorMapSlot m = matrix_slot(tensor, dtype, pixels, channels, strides[1], 64, box_rows);
  m.rank = 3;
  m.dims[2] = static_cast<uint64_t>(images);
  // (One image's stride is never stepped: the rows' extent then keeps the map's strides ordered.)
  m.strides[1] = static_cast<uint64_t>(images > 1 ? strides[0] : strides[1] * channels) * dtype_size_bytes(dtype);
  return m;
}

// A 4-D tiled map of `tensor` with the 128-byte swizzle: `dims` elements, `strides` bytes (dims 1-3), box `box`.
TensorMapSlot tiled_4d_slot(TensorBinding tensor, DType dtype, const std::array<uint64_t, 4>& dims,
                            const std::array<uint64_t, 3>& strides, const std::array<uint32_t, 4>& box) {
  TensorMapSlot m = matrix_slot(tensor, dtype, 1, 1, 1, 1, 1);
  m.rank = 4;
  m.dims = {dims[0], dims[1], dims[2], dims[3], 1};
  m.strides = {strides[0], strides[1], strides[2], 0};
  m.box = {box[0], box[1], box[2], box[3], 1};
  return m;
}

// The map of the run's TMA operand (run.rel's strides, a multiple of 8 elements: vector_aligned),
// one box a tile's k-block (conv_wgmma.cuh's produce, conv_wgmma_weight.cuh's produce_weight):
//   forward: the filter as {R x S x C columns, K rows}, rows WK apart; box {64, rows}: a B tile's BN
//     rows, or in clusters a CTA's part of them;
//   weight: dy as {K channels, N x P x Q pixels}, pixels YW apart; box {64, 64}: one of an A tile's two
//     atom columns.
TensorMapSlot tma_slot(const Run& run, const Relation& data, int rows, DType dtype, TensorBinding tensor) {
  const Relation& r = run.rel;
  const uint64_t element = dtype_size_bytes(dtype);
  auto count = [](long long n) { return static_cast<uint64_t>(n); };
  // The data face's filter in place with several taps or stride phases: {C, S, R, K} (data's KRSC strides), box
  // {64, 1, 1, 64}: one of a B tile's BN / 64 atom columns of a tap (conv_wgmma.cuh's InPlaceTaps).
  if (run.filter_in_place && (run.phased || r.taps() > 1))
    return tiled_4d_slot(tensor, dtype, {count(r.cb), count(data.f_size[2]), count(data.f_size[1]), count(r.ca)},
                         {count(data.w_strides[4]) * element, count(data.w_strides[3]) * element,
                          count(data.w_strides[0]) * element},
                         {64, 1, 1, static_cast<uint32_t>(kBlockK)});
  // The stride phases' flipped copy [r'][s'][c][kb] (its tap strides a phase's U taps in run.rel) as
  // {kb, C rows, S, R}, box {64, rows, 1, 1}: a phase's tap (conv_wgmma.cuh's PhasePadH/W).
  if (run.phased)
    return tiled_4d_slot(tensor, dtype, {count(r.ca), count(r.cb), count(data.f_size[2]), count(data.f_size[1])},
                         {count(r.w_strides[0]) * element, count(r.w_strides[4] / data.stride[2]) * element,
                          count(r.w_strides[3] / data.stride[1]) * element},
                         {static_cast<uint32_t>(run.block_k()), static_cast<uint32_t>(rows), 1, 1});
  // The data face's flipped copy of several taps (Cfg kBTaps): [tap][c][kb] as {kb, C rows, taps, 1}, box
  // {64, rows, 1, 1}: one tap's 64 kb of the tile's rows (conv_wgmma.cuh's produce_tma).
  // With groups the copy's rows are a group's channels and its kb every group's ({kb, C / groups, taps, 1}; a
  // unit's boxes start at its group's kb, conv_wgmma.cuh's produce_tma).
  if (run.task.face == kDataFace && r.taps() > 1) {
    const uint64_t tap = count(r.w_strides[4]) * element;
    return tiled_4d_slot(tensor, dtype, {count(r.ca), count(r.bg()), count(r.taps()), 1},
                         {count(r.w_strides[0]) * element, tap, tap * count(r.taps())},
                         {static_cast<uint32_t>(run.block_k()), static_cast<uint32_t>(rows), 1, 1});
  }
  if (run.weight()) return matrix_slot(tensor, dtype, r.cb, r.batch * r.pix_b(), r.b_strides[4], kBlockK, 64);
  if (run.filter_in_place) return matrix_slot(tensor, dtype, r.cb, r.ca, r.w_strides[1], 64, kBlockK);
  return matrix_slot(tensor, dtype, r.taps() * r.ag(), r.cb, r.w_strides[0], static_cast<uint32_t>(run.block_k()),
                     static_cast<uint32_t>(rows));
}

// The native path's maps (produce_planar_tma): w K-major as {K reduced channels, M output channels},
// rows WK apart, box {64, 128} (an A tile), or M-major (the data face's view) as {M, K}, rows WC apart,
// box {64, 64} (one of an A tile's two atom columns); x planar as {pixels, images x K channel rows}, rows
// XC apart (images dense: tma_blocker), box {64, 64} (one of a B tile's atom columns), or channels-last
// as {K channels, images x pixels}, pixels evenly spaced, box {64, BN} (a B tile).
TensorMapSlot native_w_slot(const Run& run, DType dtype, TensorBinding tensor) {
  const Relation& r = run.rel;
  if (r.w_strides[1] != 1) return matrix_slot(tensor, dtype, r.cb, r.ca, r.w_strides[1], 64, 64);
  return matrix_slot(tensor, dtype, r.ca, r.cb, r.w_strides[0], kBlockK, kTileRows);
}
TensorMapSlot native_x_slot(const Run& run, int bn, DType dtype, TensorBinding tensor) {
  const Relation& r = run.rel;
  if (native_in_channels_last(r))
    return matrix_slot(tensor, dtype, r.ca, r.batch * r.pix_a(), uniform_stride(r.a_strides, r.batch, r.a_size),
                       kBlockK, static_cast<uint32_t>(bn));
  return planar_slot(tensor, dtype, r.pix_a(), r.ca, r.batch, r.a_strides, kBlockK);
}

// The forward face's plain A (plain_a_blocker): x as {C channels, N x H x W pixels}, pixels
// uniform_pixel_stride apart; box {64, 128}: an A tile (conv_wgmma.cuh's produce_tma).
TensorMapSlot plain_a_slot(const Run& run, DType dtype, TensorBinding tensor) {
  const Relation& r = run.rel;
  return matrix_slot(tensor, dtype, r.ca, r.batch * r.pix_a(), uniform_pixel_stride(r),
                     static_cast<uint32_t>(run.block_k()), kTileRows);
}

// The forward face's y stored by TMA (tma_store_blocker), 3-D as store_tile_tma stores: {K channels, N x P x Q
// pixels, 1}, pixels evenly spaced; on the native path the result's {pixels, channel rows, images}
// (planar_slot). Box {block_k, 32, 1}: one of store_tile_tma's boxes (32 rows of a consumer's pass, a 128-byte row of
// columns).
TensorMapSlot y_store_slot(const Run& run, DType dtype, TensorBinding tensor) {
  const Relation& r = run.rel;
  if (run.native) return planar_slot(tensor, dtype, r.pix_b(), r.cb, r.batch, r.b_strides, 32);
  TensorMapSlot m = matrix_slot(tensor, dtype, r.cb, r.batch * r.pix_b(),
                                uniform_stride(r.b_strides, r.batch, r.b_size), static_cast<uint32_t>(run.block_k()),
                                32);
  m.rank = 3;
  m.strides[1] = m.strides[0] * static_cast<uint64_t>(r.batch * r.pix_b());  // (one image: never stepped)
  return m;
}

// A channels-last activation as a tiled 4-D map {channels, W, H, N} (nested_strides), box {64, box_w,
// box_h, 1}: the shifted taps' dy (a strip's 64 pixels of 64 output channels) and x (the strip's receptive
// field), conv_wgmma_weight_taps.cuh.
TensorMapSlot activation_slot(TensorBinding tensor, DType dtype, long long channels, const Dims3& size,
                              long long batch, const Strides5& strides, long long box_w, long long box_h) {
  const std::array<long long, 3> s = nested_strides(strides, channels, size, batch);
  const uint64_t element = dtype_size_bytes(dtype);
  TensorMapSlot m;
  m.tensor = tensor;
  m.dtype = dtype;
  m.rank = 4;
  m.swizzle = TensorMapSlot::Swizzle::k128B;
  m.dims = {static_cast<uint64_t>(channels), static_cast<uint64_t>(size[2]), static_cast<uint64_t>(size[1]),
            static_cast<uint64_t>(batch), 1};
  m.strides = {static_cast<uint64_t>(s[0]) * element, static_cast<uint64_t>(s[1]) * element,
               static_cast<uint64_t>(s[2]) * element, 0};
  m.box = {static_cast<uint32_t>(kBlockK), static_cast<uint32_t>(box_w), static_cast<uint32_t>(box_h), 1, 1};
  return m;
}

// x as an im2col map {C, W, H, N} (im2col_blocker), 64 channels of `pixels` output pixels' receptive fields a
// copy: the forward face's A tile (128 pixels: conv_wgmma.cuh's produce_tma) or one of the weight face's B
// atom columns (64 pixels, a k-block: conv_wgmma_weight.cuh's produce_weight_tma).
TensorMapSlot im2col_slot(const Run& run, DType dtype, TensorBinding tensor, long long pixels) {
  const Relation& r = run.rel;
  const uint64_t element = dtype_size_bytes(dtype);
  const std::array<long long, 3> s = im2col_strides(r);
  TensorMapSlot m;
  m.tensor = tensor;
  m.dtype = dtype;
  m.mode = TensorMapSlot::Mode::kIm2col;
  m.rank = 4;
  m.swizzle = TensorMapSlot::Swizzle::k128B;
  m.dims = {static_cast<uint64_t>(r.ca), static_cast<uint64_t>(r.a_size[2]), static_cast<uint64_t>(r.a_size[1]),
            static_cast<uint64_t>(r.batch), 1};
  m.strides = {static_cast<uint64_t>(s[0]) * element, static_cast<uint64_t>(s[1]) * element,
               static_cast<uint64_t>(s[2]) * element, 0};
  for (int d = 0; d < 2; ++d) {  // W, H
    const int dim = 2 - d;
    if (run.phased) {  // the phases' map (phased_im2col_blocker): the P x Q grid from -phase_pad
      m.lower_corner[d] = static_cast<int32_t>(-run.phase_pad[dim]);
      m.upper_corner[d] = static_cast<int32_t>(r.b_size[dim] - r.a_size[dim] - run.phase_pad[dim]);
    } else {
      m.lower_corner[d] = static_cast<int32_t>(-r.pad[dim]);
      m.upper_corner[d] = static_cast<int32_t>(r.pad[dim] - r.dil[dim] * (r.f_size[dim] - 1));
    }
  }
  m.element_strides = {1, static_cast<uint32_t>(r.stride[2]), static_cast<uint32_t>(r.stride[1]), 1, 1};
  m.channels_per_pixel = static_cast<uint32_t>(run.block_k());
  m.pixels_per_column = static_cast<uint32_t>(pixels);
  return m;
}

class WgmmaSm90Conv final : public Tier<ConvProblem, WgmmaConfig> {
 public:
  std::string_view name() const override { return "gpu:conv:wgmma_sm90"; }

  Status accepts_problem(const ConvProblem& problem, const ArchSpec& arch) const override {
    const ConvSignature& sig = problem.conv();
    if (arch.target != "sm_90a") return decline("on sm_90a only (wgmma), the device is " + arch.target);
    const bool tf32 = sig.dtype == DType::kF32 && sig.fp32_tf32;
    if (sig.dtype != DType::kBF16 && sig.dtype != DType::kF16 && !tf32)
      return decline("bf16, fp16, and fp32 with --fp32-math tf32 only, not " + std::string(dtype_name(sig.dtype)) +
                     (sig.dtype == DType::kF32 ? " at full precision" : ""));
    if (problem.tasks.size() != 1 || problem.bias_gradient)
      return decline("one direction at a time (-F 1, -F 2 or -F 4), without a bias gradient");
    // TF32 wgmma reads both operands K-major: the forward face's, and the data face's on its flipped filter copy
    // (the weight face's tiles are M/N-major).
    if (tf32 && (problem.tasks[0].face == kWeightFace || problem.fp32_result))
      return decline("fp32 with --fp32-math tf32 on the forward and data faces only (TF32 wgmma reads K-major "
                     "operands)");
    BOO_RETURN_IF_ERROR(problem.fp32_result_supported(name(), /*every_face=*/true));
    const Relation& r0 = problem.relation;
    if (r0.a_size[0] != 1 || r0.f_size[0] != 1) return decline("1-D and 2-D convs only");
    if (tf32 && r0.groups == 1 && planar_pointwise(r0) && std::min(r0.ca, r0.cb) <= kMaxStagedTf32NarrowChannels)
      return decline("fp32 with --fp32-math tf32 on planar 1x1 convs of more than " +
                     std::to_string(kMaxStagedTf32NarrowChannels) + " input and output channels (their TF32 runs on "
                     "channels-last copies), not " + std::to_string(r0.ca) + " and " + std::to_string(r0.cb));
    BOO_ASSIGN_OR_RETURN(Run run, run_of(problem));
    if (tf32)
      if (const std::string why = tf32_tma_blocker(run); !why.empty())
        return decline("fp32 with --fp32-math tf32 where both operands load by TMA (its copy rounds them to TF32), "
                       "not here: " + why);
    const Relation& r = run.rel;
    const bool grouped = r.groups > 1;
    if (tf32 && run.task.face == kDataFace) {
      const GemmShape g = gemm_shape(run);
      if (g.m * g.n * g.k * g.images < kMinTf32DataMacs)
        return decline("the TF32 data face of at least " + std::to_string(kMinTf32DataMacs) +
                       " multiply-adds (it reads a flipped copy of the filter), not " +
                       std::to_string(g.m * g.n * g.k * g.images));
    }
    // The fp32 sums are one dense (M, N) plane: one slice, as the unsplit channels-last GEMM stores it.
    if (problem.fp32_result && (grouped || run.phased))
      return decline("fp32 sums for a caller's epilogue of groups = 1 without stride phases only");
    const std::string per_group = grouped ? " per group" : "";
    // 16-byte copies of 8 channels of one tap (the reduction's, or the weight face's columns), within a group.
    if (r.ag() % 8 != 0)
      return decline((run.weight() ? "the weight face where the input channels" + per_group +
                                         " are a multiple of 8, not " + std::to_string(r.ag())
                                   : "reduced channels" + per_group + " that are a multiple of 8, not " +
                                         std::to_string(r.ag())) +
                     padding_rule(run));
    // (The native path's rows and strides: conv_wgmma_native.cpp.)
    if (!run.native && r.bg() % 8 != 0 && !run.padded_out)
      return decline("output channels" + per_group + " that are a multiple of 8, not " + std::to_string(r.bg()) +
                     padding_rule(run));
    const long long pixels = r.batch * r.pix_b() * run.phase_count[1] * run.phase_count[2];  // (all phases')
    if (grouped && run.task.face == kDataFace && pixels < kMinGroupedDataPixels)
      return decline("the grouped data face of at least " + std::to_string(kMinGroupedDataPixels) +
                     " output pixels, not " + std::to_string(pixels));
    // (Below 64, most of a 64-wide tile or of a weight face consumer's 64 rows would idle.)
    if (grouped && r.bg() < kMinGroupOutputChannels)
      return decline("grouped convs with at least " + std::to_string(kMinGroupOutputChannels) +
                     " output channels per group, not " + std::to_string(r.bg()));
    // (The filter in place is a TMA map whose k rows run_of aligned.)
    if (!run.native && (!vector_aligned(r.a_strides, r.batch, r.a_size) ||
                        (!run.filter_in_place && !vector_aligned(r.w_strides, r.cb, r.f_size)) ||
                        ((!problem.fp32_result || run.weight()) && !run.element_stores &&
                         !vector_aligned(r.b_strides, r.batch, r.b_size))))
      return decline("operands whose channels-last strides keep 16-byte vectors aligned only");
    const long long min_channels = run.native ? kMinNativeRows : kMinOutputChannels;
    // Few pixels but channels enough for kMinFullWaves waves of 128 x 128 tiles (a GEMM of 2048 rows
    // by 36864 columns) fill the GPU all the same.
    const bool many_tiles = !run.weight() && !run.native && r.cb >= min_channels &&
                            ceil_div(pixels, kTileRows) * ceil_div(r.bg(), 128) >= kMinFullWaves * arch.sm_count;
    // (Grouped convs have their own measured floors above.)
    if (!grouped && !run.weight() && !run.native && r.bg() < kMinSmallDataChannels) {
      const long long reduced = r.taps() * r.ag();
      const bool short_data = run.task.face == kDataFace && r.taps() > 1 && reduced < kMinNarrowDataReduction;
      const long long least = short_data ? kMinNarrowDataPixels : kMinPixels;
      if (pixels < least || reduced < run.block_k())
        return decline("fewer than " + std::to_string(kMinSmallDataChannels) + " output channels with at least " +
                       std::to_string(least) + " output pixels and a reduction of " + std::to_string(run.block_k()) +
                       ", not " + std::to_string(pixels) + " and " + std::to_string(reduced) + " (" +
                       std::to_string(r.bg()) + " channels)");
    }
    if ((pixels < kMinPixels && !many_tiles) || r.cb < min_channels) {
      const std::string floor = "at least " + std::to_string(kMinPixels) + " output pixels and " +
                                std::to_string(min_channels) + " output channels";
      const std::string sizes = ", not " + std::to_string(pixels) + " and " + std::to_string(r.cb);
      const long long least_weight_pixels = run.copies.empty() ? kMinWeightPixels : kMinWeightCopiedPixels;
      if (run.native || (run.weight() && (pixels < least_weight_pixels || r.cb < min_channels)))
        return decline(floor + (run.weight() ? " (the weight face: " + std::to_string(least_weight_pixels) +
                                                   " pixels" + (run.copies.empty() ? "" : " with copies") + ")"
                                             : "") +
                       sizes);
      if (!run.weight()) BOO_RETURN_IF_ERROR(small_gemm_verdict(run, arch, floor, sizes));
    }
    // The forward kernel keeps a receptive field's first input row and column in 16 bits.
    const long long kMaxExtent = 1LL << 14;
    // A stride phase reads dy from t - pad' (t < the phases' grid, pad' in [-(pad / stride + 1), taps - 1]).
    for (int d = 1; d < 3 && !run.weight() && !run.native; ++d) {
      const long long extent = run.phased ? std::max(r.a_size[d], r.b_size[d]) +
                                                std::max(r.f_size[d], r0.pad[d] / r0.stride[d] + 1)
                                          : r.a_size[d] + r.pad[d];
      if (extent >= kMaxExtent)
        return decline("inputs below " + std::to_string(kMaxExtent) + " pixels high and wide (with padding) only");
    }
    // Offsets are 32-bit in the kernel.
    const long long limit = (1LL << 31) - 1;
    if (sig.x_spec().storage_elems() > limit || sig.w_spec().storage_elems() > limit ||
        sig.y_spec().storage_elems() > limit)
      return decline("tensors of fewer than 2^31 elements only");
    return ok_status();
  }

  Result<WgmmaConfig> configure_problem(const ConvProblem& problem, const ArchSpec& arch) const override {
    BOO_ASSIGN_OR_RETURN(WgmmaConfig config, configure_gemm(problem, arch));
    if (!config.run.weight()) return config;
    config.taps_off = taps_blocker(config.run, problem.elem_bytes, config.fp32_out);
    if (config.taps_off.empty()) config.taps_off = taps_default_blocker(config.run);
    if (config.taps_off.empty()) return by_shifted_taps(config, best_strip(config.run.rel), problem, arch);
    return config;
  }

 private:
  // The config of the GEMM kernels (conv_wgmma.cuh, conv_wgmma_weight.cuh, conv_wgmma_nchw.cuh): every face
  // but the weight face's shifted taps, the TMA producers as far as `reach` allows.
  static Result<WgmmaConfig> configure_gemm(const ConvProblem& problem, const ArchSpec& arch,
                                            TmaReach reach = TmaReach::by_default()) {
    WgmmaConfig config;
    BOO_ASSIGN_OR_RETURN(config.run, run_of(problem, true, reach));
    config.fp32_out = problem.fp32_result;
    config.promote = problem.fp32_result && problem.promote_sums;
    config.tma_off = tma_loads_enabled() ? tma_blocker(config.run, problem.elem_bytes, reach)
                                         : kTmaOffVariable + std::string("=0");
    config.tma = config.tma_off.empty();
    if (config.tma && config.run.native) {
      config.tma_x = true;  // the native forward's w and x: one producer thread (produce_planar_tma)
    } else if (config.tma && config.run.weight()) {
      // One producer thread issues the k-block's dy and x boxes (the weight face's producer was its
      // bottleneck: docs/perf/2026-11-26-session6.md, call 10).
      config.tma_x_off = im2col_blocker(config.run, problem.elem_bytes, reach.partial_im2col);
      config.tma_x = config.im2col = config.tma_x_off.empty();
    } else if (config.tma && config.run.task.face != kWeightFace) {  // (the data face: 1x1, tma_blocker)
      config.im2col = config.run.phased || !config.run.rel.pointwise();
      config.tma_x_off = x_tma_blocker(config.run, reach);
      config.tma_x = config.tma_x_off.empty();
      config.im2col = config.im2col && config.tma_x;
      if (!config.tma_x) {
        // The filter by TMA beside x by cp.async ran 1.05x the cp.async producer's time (BOO's 413, forward
        // faces of C % 64 != 0 with filters above 1x1, H100 2026-11-26): TMA where x goes by TMA too, the
        // other as boo tune's second candidate (alternatives).
        config.tma = false;
        config.tma_off = "the filter alone by TMA was slower";
      }
    }
    // (A TmaReach short of tf32_tma_blocker's, boo tune's candidates: no TF32 config.)
    if (config.run.elem_bytes == 4 && !config.tma_x)
      return decline("fp32 with --fp32-math tf32 where both operands load by TMA only: " + config.tma_off +
                     config.tma_x_off);
    if (config.run.filter_in_place && !config.tma_x)  // (run_of checks what tma_blocker and plain_a_blocker do)
      return internal_error("the data face's filter in place needs both operands by TMA: " + config.tma_off +
                            config.tma_x_off);
    if (config.run.weight()) {
      choose_weight_tiling(config, arch);
    } else {
      const Tiling best = ranked_tilings(config.run, config.run.may_split(), config.promote, arch).front();
      config.bn = best.bn;
      config.splits = best.splits;
    }
    BOO_ASSIGN_OR_RETURN(const int deepest, deepest_ring(config, arch));
    config.stages = deepest;
    config.tma_y = tma_stores_enabled() && tma_store_blocker(config, problem).empty();
    config.cluster = clusters_by_default() && cluster_blocker(config).empty() ? 2 : 1;
    place_workspace(config, problem.elem_bytes);
    return config;
  }

  // `config` (a weight face that taps_blocker accepts) by shifted taps in strips `strip`: both operands
  // by TMA (4-D maps), its own split K, no epilogue staging.
  static Result<WgmmaConfig> by_shifted_taps(WgmmaConfig config, const TapStrip& strip, const ConvProblem& problem,
                                             const ArchSpec& arch) {
    config.strip = strip;
    config.taps_off.clear();
    config.bn = 64;
    config.splits = taps_splits(config.run, strip, arch);
    config.tma = config.tma_x = true;
    config.im2col = config.tma_y = false;
    config.tma_off.clear();
    config.tma_x_off.clear();
    config.cluster = 1;
    BOO_ASSIGN_OR_RETURN(config.stages, deepest_ring(config, arch));
    place_workspace(config, problem.elem_bytes);
    return config;
  }

 public:

  // The tiling's terms (cheapest_split's model; the ring's depth is not in it).
  CostTerms cost_terms_of(const ConvProblem&, const WgmmaConfig& config, const ArchSpec& arch) const override {
    if (config.taps()) return taps_split_terms(config.run, config.strip, config.splits, arch);
    for (const auto& [bn, efficiency] : kTileWidths)
      if (bn == config.bn) return split_terms(gemm_shape(config.run), bn, efficiency, config.splits, arch);
    return {};
  }

  // Every tile width, each at every depth from the deepest ring down to 3
  // stages (deeper first): the forward and data faces' tilings by the cost
  // model (each width unsplit and at its cheapest split K, where it may
  // split), the weight face's widths in kTileWidths' order at the chosen split.
  std::vector<WgmmaConfig> alternatives(const ConvProblem& problem, const ArchSpec& arch,
                                        const WgmmaConfig& chosen) const override {
    // The weight face by shifted taps: the chosen strip, the other strips, then the GEMM path's alternatives;
    // where the heuristic chose the GEMM path, the shifted taps second.
    if (chosen.run.weight() && !chosen.run.native) {
      std::vector<WgmmaConfig> taps;
      if (taps_blocker(chosen.run, problem.elem_bytes, chosen.fp32_out).empty()) {
        std::vector<int> widths{chosen.taps() ? chosen.strip.cols : best_strip(chosen.run.rel).cols};
        for (const int cols : kTapStripCols)
          if (cols != widths.front()) widths.push_back(cols);
        for (const int cols : widths) {
          const TapStrip strip = strip_of(chosen.run.rel, cols);
          if (strip.rows == 0) continue;
          if (Result<WgmmaConfig> c = by_shifted_taps(chosen, strip, problem, arch); c.ok())
            taps.push_back(std::move(c).value());
        }
      }
      if (chosen.taps()) {
        Result<WgmmaConfig> gemm = configure_gemm(problem, arch);
        std::vector<WgmmaConfig> out = taps;
        if (gemm.ok())
          for (WgmmaConfig& c : alternatives(problem, arch, *gemm)) out.push_back(std::move(c));
        return out;
      }
      std::vector<WgmmaConfig> out = gemm_alternatives(problem, arch, chosen);
      out.insert(out.begin() + std::min<size_t>(1, out.size()), taps.begin(), taps.end());
      return out;
    }
    std::vector<WgmmaConfig> out = gemm_alternatives(problem, arch, chosen);
    // The configs of the TMA producers' first reach and of their whole one (TmaReach), where they differ from
    // the chosen config (a path beyond the first, or one the heuristic was told not to take), second, their
    // alternatives last: boo tune times each path against the one it replaced.
    for (const TmaReach reach : {TmaReach::none(), TmaReach{}}) {
      Result<WgmmaConfig> other = configure_gemm(problem, arch, reach);
      if (!other.ok() || other->text() == chosen.text()) continue;
      std::vector<WgmmaConfig> more = gemm_alternatives(problem, arch, *other);
      out.insert(out.begin() + std::min<size_t>(1, out.size()), *other);
      out.insert(out.end(), more.begin(), more.end());
    }
    return out;
  }

 private:
  // The GEMM kernels' alternatives to `chosen` (not by shifted taps).
  static std::vector<WgmmaConfig> gemm_alternatives(const ConvProblem& problem, const ArchSpec& arch,
                                                    const WgmmaConfig& chosen) {
    std::vector<Tiling> tilings;
    if (chosen.run.weight()) {
      tilings.push_back({chosen.bn, chosen.splits});
      for (const auto& [bn, efficiency] : kTileWidths)
        if (bn != chosen.bn && width_allowed(bn, chosen.run, chosen.promote)) tilings.push_back({bn, chosen.splits});
    } else {
      tilings = ranked_tilings(chosen.run, chosen.run.may_split(), chosen.promote, arch);
    }
    // Every tiling with y by plain stores first (the list before TMA stores, whose order a tuning row's
    // config was chosen from, so that it still finds its config), then with y by TMA where the chosen
    // config stores so (store_tile_tma).
    std::vector<WgmmaConfig> out, tma_stores;
    for (const Tiling& t : tilings) {
      WgmmaConfig c = chosen;
      c.bn = t.bn;
      c.splits = t.splits;
      c.tma_y = false;
      c.cluster = chosen.cluster > 1 && cluster_blocker(c).empty() ? chosen.cluster : 1;
      Result<int> deepest = deepest_ring(c, arch);
      if (!deepest.ok()) continue;
      for (int stages = *deepest; stages >= 3; --stages) {
        c.stages = stages;
        place_workspace(c, problem.elem_bytes);
        out.push_back(c);
        if (chosen.tma_y && tma_store_blocker(c, problem).empty()) {
          tma_stores.push_back(c);
          tma_stores.back().tma_y = true;
        }
      }
    }
    out.insert(out.end(), tma_stores.begin(), tma_stores.end());
    // Where the heuristic keeps the forward face's filter off TMA because x goes by cp.async, the same
    // tiling with the filter by TMA second (slower on average, faster on some lines).
    if (!out.empty() && chosen.run.task.face == kForwardFace && !chosen.tma && tma_loads_enabled() &&
        tma_blocker(chosen.run, problem.elem_bytes, TmaReach::none()).empty()) {
      WgmmaConfig c = out.front();
      c.tma = true;
      c.tma_off.clear();
      out.insert(out.begin() + 1, c);
    }
    // The weight face's x by cp.async beside dy by TMA (its producer before the im2col B) second.
    if (!out.empty() && chosen.run.weight() && chosen.tma_x) {
      WgmmaConfig c = out.front();
      c.tma_x = c.im2col = false;
      c.tma_x_off = "boo tune's candidate";
      out.insert(out.begin() + 1, c);
    }
    // The 1x1 data face's cp.async producer second, on the flipped copy it reads (it was the only producer until
    // 2026-11-27; a few small lines ran it up to 4% faster than TMA on that copy).
    // (Not for TF32: its operands load by TMA only, tf32_tma_blocker.)
    if (!out.empty() && chosen.run.task.face == kDataFace && chosen.tma && !chosen.run.native &&
        chosen.run.elem_bytes == 2) {
      WgmmaConfig c = out.front();
      Result<Run> flipped = run_of(problem, /*filter_in_place=*/false);
      if (flipped.ok()) {
        c.run = std::move(flipped).value();
        c.tma = c.tma_x = false;
        c.tma_off = "boo tune's candidate";
        place_workspace(c, problem.elem_bytes);
        out.insert(out.begin() + 1, c);
      }
    }
    // The native forward and data faces' cp.async producer (produce_planar) second (a channels-last input loads
    // by TMA only).
    if (!out.empty() && chosen.run.native && chosen.tma && !native_in_channels_last(chosen.run.rel)) {
      WgmmaConfig c = out.front();
      c.tma = c.tma_x = false;
      c.tma_off = "boo tune's candidate";
      out.insert(out.begin() + 1, c);
    }
    // The chosen config with the other cluster size second, where clusters apply: in clusters of two
    // (boo tune's candidate), or without them where the heuristic chose them (clusters_by_default).
    if (cluster_blocker(chosen).empty()) {
      WgmmaConfig c = chosen;
      c.cluster = chosen.cluster > 1 ? 1 : 2;
      out.insert(out.begin(), c);
    }
    return out;
  }

 private:
  // As deep a ring as fits (at most 6; 3 at least: the producer announces a stage
  // STAGES - 2 k-blocks after its copies, keeping STAGES - 1 of them in flight).
  static Result<int> deepest_ring(const WgmmaConfig& config, const ArchSpec& arch) {
    const long long fit =
        (arch.max_shared_bytes_per_block - kSharedOverhead - config.staging_bytes()) / config.stage_bytes();
    if (fit < 3)
      return unimplemented("gpu:conv:wgmma_sm90 needs 3 stages of " + std::to_string(config.stage_bytes()) +
                           " bytes of shared memory, the device allows " +
                           std::to_string(arch.max_shared_bytes_per_block) + " per block");
    return static_cast<int>(std::min<long long>(6, fit));
  }

  // The workspace: the split-K partials (kSplits planes of the GEMM's m x n)
  // or the forward face's fp32 result (one plane), then the copies.
  static void place_workspace(WgmmaConfig& config, long long elem_bytes) {
    const GemmShape g = gemm_shape(config.run);
    const long long planes = config.splits > 1 || config.taps() ? config.splits : config.fp32_out ? 1 : 0;
    config.partial_bytes = static_cast<size_t>(planes * g.m * g.n * g.images) * sizeof(float);
    config.workspace_bytes = place_copies(config.run.copies, config.partial_bytes, elem_bytes);
  }

 public:
  Result<Plan> plan_problem(const ConvProblem& problem, const WgmmaConfig& config,
                            const ArchSpec& arch) const override {
    const ConvSignature& sig = problem.conv();
    const Run& run = config.run;
    const Relation& r = run.rel;
    const GemmShape g = gemm_shape(run);
    const long long m = g.m, n = g.n;
    // Split K's reduce (split_k.cuh): the forward faces' or the weight face's.
    const bool split = config.splits > 1;
    const bool epilogue = run.task.epilogue;
    auto constant = [](const char* name, long long v) {
      return "  static constexpr int " + std::string(name) + " = " + std::to_string(v) + ";\n";
    };
    std::string cfg = "struct Cfg {\n  using T = " + std::string(device_type(sig.dtype)) + ";\n";
    cfg += constant("kType", sig.dtype == DType::kF16 ? 1 : sig.dtype == DType::kF32 ? 2 : 0);  // sm90::WgmmaType
    cfg += constant("BN", config.bn) + constant("STAGES", config.stages);
    cfg += constant("kM", m) + constant("kN", n) + constant("kC", r.ag());
    // conv_wgmma_weight.cuh's reduction; the split K of the weight face and of the channels-last forward
    // faces (conv_wgmma.cuh's Units), and split_k.cuh's members (32-bit offsets; kGroups is slice_constants').
    if (run.weight()) cfg += constant("kL", g.k);
    if (config.taps()) cfg += constant("kStripRows", config.strip.rows) + constant("kStripCols", config.strip.cols);
    if (run.weight() || !run.native) cfg += constant("kSplits", config.splits);
    if (run.weight() || split) cfg += "  static constexpr bool kIdx32 = true;\n";
    cfg += slice_constants(problem.relation, run);
    cfg += constant("H", r.a_size[1]) + constant("W", r.a_size[2]) + constant("P", r.b_size[1]) +
           constant("Q", r.b_size[2]) + constant("R", r.f_size[1]) + constant("S", r.f_size[2]);
    cfg += constant("SH", r.stride[1]) + constant("SW", r.stride[2]) + constant("PH", r.pad[1]) +
           constant("PW", r.pad[2]) + constant("DH", r.dil[1]) + constant("DW", r.dil[2]);
    // Strides in elements: x (n, h, w), w (k, r, s), y (n, p, q) (dw and dy for the weight face); channels are contiguous.
    cfg += constant("XN", r.a_strides[0]) + constant("XH", r.a_strides[3]) + constant("XW", r.a_strides[4]);
    cfg += constant("WK", r.w_strides[0]) + constant("WR", r.w_strides[3]) + constant("WS", r.w_strides[4]);
    cfg += constant("YN", r.b_strides[0]) + constant("YH", r.b_strides[3]) + constant("YW", r.b_strides[4]);
    cfg += constant("kAct", epilogue ? static_cast<int>(sig.activation.kind) : 0);
    cfg += "  static constexpr bool kBias = " + std::string(epilogue && sig.bias ? "true" : "false") + ";\n";
    cfg += "  static constexpr bool kResidual = " + std::string(epilogue && sig.residual ? "true" : "false") + ";\n";
    if (run.native) cfg += native_constants(r);
    // (Only where the rule would split them: conv_wgmma_nchw.cuh's RowSplit.)
    if (native_few_rows(run) && !native_half_columns_enabled())
      cfg += "  static constexpr bool kConsumersSplitRows = true;\n";
    cfg += "  static constexpr bool kFp32Out = " + std::string(config.fp32_out ? "true" : "false") + ";\n";
    cfg += "  static constexpr bool kPromote = " + std::string(config.promote ? "true" : "false") + ";\n";
    cfg += "  static constexpr bool kTma = " + std::string(config.tma ? "true" : "false") + ";\n";
    // (Only where set: conv_wgmma.cuh's FullyTma reads its absence as false, and every other kernel's
    // generated source stays as it was.)
    if (config.tma_x) cfg += "  static constexpr bool kTmaX = true;\n";
    if (config.im2col) cfg += "  static constexpr bool kIm2colX = true;\n";
    if (config.tma_y) cfg += "  static constexpr bool kTmaY = true;\n";
    if (config.cluster > 1) cfg += constant("kClusterM", config.cluster);
    if (run.element_stores) cfg += "  static constexpr bool kElementStores = true;\n";
    if (run.filter_in_place) cfg += "  static constexpr bool kBNMajor = true;\n";
    if (config.tma && run.task.face == kDataFace && (r.taps() > 1 || run.phased))
      cfg += run.filter_in_place ? "  static constexpr bool kBInPlaceTaps = true;\n"
                                 : "  static constexpr bool kBTaps = true;\n";
    if (config.tma && run.phased)
      cfg += constant("kPhasePadH", run.phase_pad[1]) + constant("kPhasePadW", run.phase_pad[2]);
    cfg += "};\n";

    Plan plan;
    const TensorRoles roles(sig);
    plan.source.name = "conv_wgmma_sm90.cu";
    plan.source.text = std::string("// Generated by boo: gpu:conv:wgmma_sm90.\n#include \"boo/conv/") +
                       (run.native       ? "conv_wgmma_nchw.cuh"
                        : config.taps() ? "conv_wgmma_weight_taps.cuh"
                        : run.weight()  ? "conv_wgmma_weight.cuh"
                        : split        ? "conv_wgmma_split.cuh"
                                       : "conv_wgmma.cuh") +
                       "\"\n";
    for (const StagedCopy& c : run.copies)
      if (c.input) {
        BOO_ASSIGN_OR_RETURN(LaunchStep copy, staged_copy_step(c, sig.dtype, roles, arch, plan.source));
        plan.steps.push_back(std::move(copy));
      }
    const std::string entry = "boo_wgmma_" + run.task.result;
    const std::string body = run.native      ? (run.weight() ? "conv_wgmma_nchw_weight" : "conv_wgmma_nchw")
                             : config.taps() ? "conv_wgmma_weight_taps"
                             : run.weight()  ? "conv_wgmma_weight"
                                             : "conv_wgmma";
    // With TMA the block carries the tensor maps, which the copy engine reads in the parameter space
    // (__grid_constant__: the kernel never copies them).
    const std::string maps = run.weight() ? std::string("&p.tma_a") + (config.tma_x ? ", &p.tma_b" : "")
                                          : std::string("&p.tma_b") + (config.tma_x ? ", &p.tma_a" : "");
    plan.source.text +=
        "\n" + cfg + "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(config.threads()) + ", 1) " +
        (config.cluster > 1 ? "__cluster_dims__(" + std::to_string(config.cluster) + ", 1, 1) " : std::string()) + entry +
        (config.tma_y  ? "(const __grid_constant__ boo::ConvWgmmaStoreParams s) { const boo::ConvWgmmaParams& p = "
                         "s.base; boo::wgmma_conv::" + body + "<Cfg>(p.p, " + maps + ", &s.tma_y); }\n"
         : config.tma ? "(const __grid_constant__ boo::ConvWgmmaParams p) { boo::wgmma_conv::" + body + "<Cfg>(p.p, " +
                            maps + "); }\n"
                      : "(const boo::ConvIgemmParams p) { boo::wgmma_conv::" + body + "<Cfg>(p); }\n");
    plan.source.entries.push_back(entry);

    // A signature tensor, or the workspace copy it is staged in.
    auto bind = [&](const std::string& name, int copy, bool result) -> Result<TensorBinding> {
      if (copy >= 0) return TensorBinding::workspace(run.copies[static_cast<size_t>(copy)].offset);
      return result ? roles.result(name) : roles.argument(name);
    };
    // A persistent grid: one CTA per SM (its shared memory allows no second), each walking its units
    // (tiles x splits; per image on the native path, per slice with groups or stride phases).
    // In clusters (conv_wgmma.cuh's Tiles), a unit is a cluster's `cluster` row tiles, and whole clusters
    // fill the SMs.
    // (By shifted taps: 64 output channels by a 64-channel slice of every tap, per group.)
    const long long units = config.taps() ? taps_tiles(r) * config.splits
                                          : ceil_div(m, kTileRows * config.cluster) * ceil_div(n, config.bn) *
                                                config.splits * g.images;
    BOO_ASSIGN_OR_RETURN(uint32_t ctas, grid_extent(std::min<long long>(units, arch.sm_count / config.cluster) *
                                                        config.cluster,
                                                    0x7fffffff, "x (CTAs)"));
    // The implicit GEMM's block `p` (within `step`'s parameters) with its addresses bound.
    auto bind_params = [&](auto& step, ConvIgemmParams& p) -> Status {
      p.act_alpha = static_cast<float>(sig.activation.alpha);
      p.act_lo = static_cast<float>(sig.activation.lo);
      p.act_hi = static_cast<float>(sig.activation.hi);
      BOO_ASSIGN_OR_RETURN(TensorBinding a, bind(run.a, run.a_copy, false));
      BOO_ASSIGN_OR_RETURN(TensorBinding out, bind(run.task.result, run.out_copy, true));
      step.bind(p.a, a);
      if (run.weight()) {
        BOO_ASSIGN_OR_RETURN(TensorBinding b, bind(run.b, run.b_copy, false));
        step.bind(p.b, b);
      } else {
        BOO_ASSIGN_OR_RETURN(TensorBinding w, bind(run.w, run.w_copy, false));
        step.bind(p.w, w);
      }
      // The partials or the fp32 sums at the workspace's start; y (or its copy) written by this kernel's
      // epilogue or by the reduce's.
      if (split || config.fp32_out || config.taps()) step.bind(p.workspace, TensorBinding::workspace(0));
      if (!config.fp32_out) step.bind(p.out, out);
      if (epilogue && sig.bias) {
        BOO_ASSIGN_OR_RETURN(TensorBinding bias, roles.argument("b"));
        step.bind(p.bias, bias);
      }
      if (epilogue && sig.residual) {
        BOO_ASSIGN_OR_RETURN(TensorBinding z, bind("z", run.z_copy, false));
        step.bind(p.residual, z);
      }
      return ok_status();
    };
    const Dim3 grid{ctas, 1, 1}, block{config.threads(), 1, 1};
    const auto shared = static_cast<uint32_t>(config.shared_bytes());
    LaunchStep launch;
    // The TMA block `params` (within `step`'s): the implicit GEMM's block and the operands' maps.
    auto bind_tma = [&](auto& step, ConvWgmmaParams& params) -> Status {
      BOO_RETURN_IF_ERROR(bind_params(step, params.p));
      if (config.taps()) {  // dy (A) and x (B) as 4-D maps: a strip's box of each
        BOO_ASSIGN_OR_RETURN(TensorBinding dy, bind(run.b, run.b_copy, false));
        BOO_ASSIGN_OR_RETURN(TensorBinding x, bind(run.a, run.a_copy, false));
        step.map(params.tma_a, activation_slot(dy, sig.dtype, r.cb, r.b_size, r.batch, r.b_strides, config.strip.cols,
                                               config.strip.rows));
        step.map(params.tma_b, activation_slot(x, sig.dtype, r.ca, r.a_size, r.batch, r.a_strides,
                                               config.strip.box_w, config.strip.box_h));
        return ok_status();
      }
      // The TMA operand: the weight face's dy (the GEMM's A), the forward face's filter (its B).
      BOO_ASSIGN_OR_RETURN(TensorBinding tensor, run.weight() ? bind(run.b, run.b_copy, false)
                                                              : bind(run.w, run.w_copy, false));
      step.map(run.weight() ? params.tma_a : params.tma_b,
               run.native ? native_w_slot(run, sig.dtype, tensor)
                          : tma_slot(run, problem.relation, config.bn / config.cluster, sig.dtype, tensor));
      if (config.tma_x) {  // x (or its copy): the forward face's A, as a plain matrix or by im2col (the native
                           // path's B); the weight face's B
        BOO_ASSIGN_OR_RETURN(TensorBinding x, bind(run.a, run.a_copy, false));
        step.map(run.weight() ? params.tma_b : params.tma_a,
                 config.im2col ? im2col_slot(run, sig.dtype, x, run.weight() ? kBlockK : kTileRows)
                 : run.native  ? native_x_slot(run, config.bn, sig.dtype, x)
                               : plain_a_slot(run, sig.dtype, x));
      }
      return ok_status();
    };
    if (config.tma_y) {
      StepBuilder<ConvWgmmaStoreParams> step(entry, grid, block, shared);
      BOO_RETURN_IF_ERROR(bind_tma(step, step.params.base));
      BOO_ASSIGN_OR_RETURN(TensorBinding y, bind(run.task.result, run.out_copy, true));
      step.map(step.params.tma_y, y_store_slot(run, sig.dtype, y));
      launch = std::move(step).finish();
    } else if (config.tma) {
      StepBuilder<ConvWgmmaParams> step(entry, grid, block, shared);
      BOO_RETURN_IF_ERROR(bind_tma(step, step.params));
      launch = std::move(step).finish();
    } else {
      StepBuilder<ConvIgemmParams> step(entry, grid, block, shared);
      BOO_RETURN_IF_ERROR(bind_params(step, step.params));
      launch = std::move(step).finish();
    }
    launch.cluster_x = static_cast<uint32_t>(config.cluster);
    plan.steps.push_back(launch);
    if (split || config.taps()) {
      // The sum of the splits' partials with the epilogue, written to the result (or its copy; the
      // fp32 sums: over the first plane): same parameters, one thread per element, a grid-stride loop
      // beyond 16 blocks per SM.
      const std::string reduce = entry + "_reduce";
      plan.source.text += "extern \"C\" __global__ void __launch_bounds__(256) " + reduce +
                          "(const boo::ConvIgemmParams p) { boo::wgmma_conv::" +
                          (run.weight() ? "conv_wgmma_weight_reduce" : "conv_wgmma_forward_reduce") + "<Cfg>(p); }\n";
      plan.source.entries.push_back(reduce);
      launch.entry = reduce;
      // The reduce reads the implicit GEMM's block, the start of a TMA kernel's (ConvWgmmaParams::p).
      launch.params.resize(sizeof(ConvIgemmParams));
      launch.tensor_maps.clear();
      BOO_ASSIGN_OR_RETURN(launch.grid.x,
                           grid_extent(std::clamp<long long>(ceil_div(m * n * g.images, 256), 1, 16LL * arch.sm_count),
                                       0x7fffffff, "x (reduce)"));
      launch.block = {256, 1, 1};
      launch.shared_bytes = 0;
      plan.steps.push_back(std::move(launch));
    }
    for (const StagedCopy& c : run.copies)
      if (!c.input) {
        BOO_ASSIGN_OR_RETURN(LaunchStep copy, staged_copy_step(c, sig.dtype, roles, arch, plan.source));
        plan.steps.push_back(std::move(copy));
      }
    plan.workspace_bytes = config.workspace_bytes;
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
