// boo: gpu:conv:implicit_gemm — host side: the faces of the conv relation as
// GEMMs, their tiling (the typed config) and the launch plan.
#include "ops/conv/conv_igemm_impl.hpp"

#include <algorithm>
#include <array>
#include <optional>

#include "boo/conv.hpp"
#include "ops/common/generated_source.hpp"
#include "ops/conv/conv_bias_gradient.hpp"
#include "ops/conv/conv_problem.hpp"
#include "ops/conv/conv_staging.hpp"
#include "ops/conv/device/conv_direct_params.cuh"
#include "ops/conv/device/conv_igemm_params.cuh"

namespace boo::ops::conv {
namespace {

enum Mode { kScalar = 0, kVectorK = 1, kVectorMN = 2 };  // conv_igemm.cuh OperandMode
const char* mode_name(Mode m) { return m == kScalar ? "scalar" : m == kVectorK ? "vecK" : "vecMN"; }

// The mainloop's math (mainloop.cuh's C::kMath): bf16/fp16 and TF32 (--fp32-math tf32) tensor
// cores follow from the signature; full-precision fp32 runs on FFMA or on 3xTF32, TF32 tensor
// cores with error compensation (mainloop_mma_3xtf32.cuh), whichever the cost model prefers on the
// weight face (choose_fp32_math).
enum Math { kMathHalf = 0, kMathTf32 = 1, kMathFfma = 2, kMath3xTf32 = 3 };
const char* math_name(Math m) {
  return m == kMathHalf ? "f16" : m == kMathTf32 ? "tf32" : m == kMathFfma ? "ffma" : "3xtf32";
}
bool full_precision_fp32(Math m) { return m == kMathFfma || m == kMath3xTf32; }

// The widest vector (16, 8 or 4 bytes: `elem_bytes`-sized elements) along
// dimension `dim` of a tensor with strides `s` that is contiguous and aligned:
// that dim has stride 1, every other stride is a multiple of the width and so
// is the extent walked. 0 when even 4-byte vectors do not fit.
int vector_width(const Strides5& s, int dim, long long extent, long long elem_bytes) {
  if (s[dim] != 1) return 0;
  for (long long bytes : {16LL, 8LL, 4LL}) {
    const long long v = bytes / elem_bytes;
    if (v < 1 || extent % v != 0) continue;
    bool aligned = true;
    for (int d = 0; d < 5; ++d) aligned &= d == dim || s[d] % v == 0;
    if (aligned) return static_cast<int>(v);
  }
  return 0;
}

// Strides with those of extent-1 dims zeroed: such a dim is never stepped, so
// its stride cannot break a vector's alignment (a 1x1 KCRS filter's taps).
Strides5 stepped(const Strides5& s, long long outer, long long channels, const Dims3& size) {
  Strides5 out = s;
  const long long extents[5] = {outer, channels, size[0], size[1], size[2]};
  for (int d = 0; d < 5; ++d)
    if (extents[d] == 1) out[d] = 0;
  return out;
}

// The elements per vector (16 bytes, else 0) of a pointwise conv's planar x (NCHW: pixels contiguous, channels
// not) read along its pixels: output pixel m reads input pixel m, so a vector of consecutive m is one run of
// memory where the image's pixels are dense (rows W apart) and their count a multiple of the vector, which
// then never straddles two images; the batch and channel strides keep every vector aligned.
long long planar_pixel_vector(const Relation& r, long long elem_bytes) {
  if (!r.pointwise()) return 0;
  Strides5 x = stepped(r.a_strides, r.batch, r.ca, r.a_size);
  if (x[1] == 1 || x[2] != 0) return 0;  // channels-last, or 3-D
  const long long w = r.a_size[2], h = r.a_size[1];
  if (w > 1 && x[4] != 1) return 0;
  if (h > 1 && x[3] != w) return 0;
  x[3] = 0;  // the rows are one run with the pixels: only the batch and channel strides must align
  x[4] = 1;
  const int v = vector_width(x, 4, h * w, elem_bytes);
  return v * elem_bytes == 16 ? v : 0;
}

// Forward and weight faces whose channels allow only narrow loads (3, 5, 13,
// 35, 49, 419, ...: every load a scalar) run on dense channels-last copies
// with the channels zero-padded (to 4, or a multiple of 8): A (x) for both
// faces, W (w) for the forward and B (dy) for the weight face are copied in
// before the GEMMs; the weight gradient is computed padded and copied out
// after. The zeros add nothing to any sum; each copy costs one pass (ChannelPad: conv_staging.hpp).

// Copies pay where loads are scalar or 4-byte (odd C, C = 2 mod 4); 3 or 4
// channels pad to 4 (8-byte vectors: a third more MACs, not 8/3 as many),
// more to a multiple of 8 (16-byte vectors). C < 3 stays as it is. A tensor
// whose channels are not contiguous is copied anyway (see StagedCopy): its
// copy is padded by the same rule.
ChannelPad narrow_channel_pad(long long channels, const Strides5& strides, const Dims3& size, long long elem_bytes) {
  ChannelPad pad{false, channels, channels};
  const Strides5 copied = strides[1] == 1 ? strides : channels_last(size, channels);
  if (channels < 3 || vector_width(copied, 1, channels, elem_bytes) * elem_bytes >= 8) return pad;
  pad.on = true;
  pad.padded = channels <= 4 ? 4 : (channels + 7) / 8 * 8;
  return pad;
}

struct ChannelPads {
  ChannelPad a;  // x: for the forward and weight faces
  ChannelPad b;  // dy: for the weight face
  bool any() const { return a.on || b.on; }
};

ChannelPads channel_pads_of(const ConvProblem& problem) {
  const ConvSignature& sig = problem.conv();
  const Relation& r = problem.relation;
  ChannelPads pads{{false, r.ca, r.ca}, {false, r.cb, r.cb}};
  if (sig.transposed || r.groups != 1 || sig.dtype == DType::kF32) return pads;
  const long long es = problem.elem_bytes;
  if (sig.directions & (kConvForward | kConvBackwardWeight))
    pads.a = narrow_channel_pad(r.ca, r.a_strides, r.a_size, es);
  if (sig.directions & kConvBackwardWeight) pads.b = narrow_channel_pad(r.cb, r.b_strides, r.b_size, es);
  return pads;
}

// One GEMM launch of the plan: a face of the relation with its tiling.
struct Gemm {
  std::string entry;  // kernel name
  Face face;
  long long m, n, k;
  int bm, bn, bk, warps_m, warps_n, stages;
  Mode a_mode, b_mode;
  Math math = kMathHalf;
  int a_vec = 1, b_vec = 1;  // elements per vector
  bool vec_out = false;      // 16-byte output stores along N through shared memory
  bool fp32_out = false;     // ConvProblem::fp32_result: the sums stay fp32 in the workspace
  int splits;
  long long min_splits = 1;  // fp32's floor on splits (kFp32TermsPerSlice), for boo tune's alternatives too
  int max_bn = 128;          // 32 where threads keep two-level sums (mainloop_ffma.cuh, mainloop_mma_3xtf32.cuh)
  int max_bm = 128;          // 64 for 3xTF32 with one-element A loads (tile_for)
  Phase phase;  // the data face's pixels and taps
  int threads() const { return warps_m * warps_n * 32; }
};

// The stride of a tensor's (n, z, y, x) pixels when they form one linear index
// (dense channels-last: offset = pixel * stride), else 0. Size-1 dims do not count.
long long pixel_stride(long long batch, const Dims3& size, const Strides5& s) {
  const long long sizes[4] = {batch, size[0], size[1], size[2]};
  const long long strides[4] = {s[0], s[2], s[3], s[4]};
  long long inner_stride = 0, inner_extent = 0;
  for (int d = 3; d >= 0; --d) {
    if (sizes[d] == 1) continue;
    if (inner_stride == 0) {
      inner_stride = strides[d];
      inner_extent = strides[d] * sizes[d];
    } else {
      if (strides[d] != inner_extent) return 0;
      inner_extent = strides[d] * sizes[d];
    }
  }
  return inner_stride == 0 ? 1 : inner_stride;
}

// Warps of a BM x BN CTA: warp tiles of 64x32 (32x32 when the CTA is one warp
// wide; 32-row tiles for BM = 64). Measured against 64x64 warp tiles (CUTLASS's
// sm80 shape): those leave 8 warps per SM and ran 6% slower over the 413 convs
// (docs/perf/).
int warps_n_of(int bn) { return bn / 32; }
int warps_m_of(int bm, int bn) { return bm == 128 ? (warps_n_of(bn) == 1 ? 4 : 2) : (warps_n_of(bn) == 1 ? 2 : 1); }

// The CTAs per SM a tiling's kernel has registers for (its __launch_bounds__): two, except FFMA tiles of
// 256 threads, whose 64 accumulators per thread with the loaders' state need more than the 128
// registers two such CTAs leave (they spilled 50-700 bytes, NvrtcTest.FullPrecisionFp32VariantsCompileWithoutSpills):
// one CTA of 8 warps, as many warps as two CTAs of 128 threads. (One CTA for 6-warp tiles too measured 0.977x
// on the FFMA lines of nchw-models.txt, H100, docs/perf/2026-11-26-session8.md.)
int ctas_per_sm(Math math, int bm, int bn) { return math == kMathFfma && warps_m_of(bm, bn) * warps_n_of(bn) == 8 ? 1 : 2; }

// Tile shape and split-K by a small cost model: padded MACs per CTA over a
// tile-efficiency factor and an occupancy factor, times the waves of two CTAs
// per SM, plus the split-K reduction's memory traffic. Larger tiles reuse each
// loaded element more; the waves term captures quantization (270 CTAs on 264
// slots run as two waves); splitting K refills an under-occupied GPU at the
// price of fp32 partials. Occupancy: two CTAs of fewer than 4 warps leave each
// of an SM's 4 schedulers under two warps to hide mma.sync and shared-memory
// latency. Measured A/B over the 413 convs (docs/perf/2026-11-22-conv-413-h200-90d3901.md):
// the 194 shapes whose tiles it changes ran 1.09x (forward), 1.23x (backward
// data) and 1.10x (backward weight) faster.
// The MAC rate tiling_cost models a math path at when it chooses among the path's tilings. The
// 16-bit, TF32 and FFMA tilings were measured (docs/perf/) with every path at the mma.sync rate,
// and keep it; 3xTF32 is at its own: TF32 at half the 16-bit rate (A100, H100), three MMAs a product.
double tiling_macs_per_s(Math math, const ArchSpec& arch) {
  return math == kMath3xTf32 ? arch.mma_sync_macs_per_s / 6 : arch.mma_sync_macs_per_s;
}
// The rate at which FFMA and 3xTF32 are compared (choose_fp32_math): each path's own. This tier's FFMA
// kernels reach less of the FFMA rate than a streaming kernel: its fastest fp32 lines of nchw-models.txt ran
// at 18e12 MAC/s on an H100 at 8a84b3d (median 9e12) against ArchSpec's 25e12.
constexpr double kFfmaEfficiency = 18.0 / 25.0;
double own_macs_per_s(Math math, const ArchSpec& arch) {
  return math == kMathFfma ? arch.ffma_macs_per_s * kFfmaEfficiency : tiling_macs_per_s(math, arch);
}

constexpr std::string_view kIgemmName = "gpu:conv:implicit_gemm";

// The cost-model term of a math path's multiply-adds (each path's own, so a refit scales each apart).
const char* compute_term(Math math) {
  return math == kMath3xTf32 ? "compute_3xtf32" : math == kMathFfma ? "compute_ffma" : "compute_mma_sync";
}

// The terms (ops/cost_model.hpp) of a BM x BN tiling with `splits` split-K slices, at `macs_per_s`:
// the waves' padded multiply-adds, and with splits the fp32 partials' bytes and the reduce's launch.
CostTerms tiling_terms(const Gemm& g, long long groups, int bm, int bn, long long splits, const ArchSpec& arch,
                       double macs_per_s) {
  const int ctas = ctas_per_sm(g.math, bm, bn);
  const long long slots = ctas * arch.sm_count;
  const double mac_per_s_per_slot = macs_per_s / static_cast<double>(slots);
  const long long k_tiles = ceil_div(g.k, g.bk);
  const long long tiles = ceil_div(g.m, bm) * ceil_div(g.n, bn) * groups;
  const double reuse = static_cast<double>(bm) * bn / (bm + bn) / 64.0;  // 1 for 128x128
  const double occupancy = std::min(1.0, ctas * warps_m_of(bm, bn) * warps_n_of(bn) / 8.0);
  const double efficiency = (0.5 + 0.5 * reuse) * occupancy;
  const long long waves = ceil_div(tiles * splits, slots);
  const double macs = static_cast<double>(bm) * bn * ceil_div(k_tiles, splits) * g.bk;
  CostTerms t;
  t.add(compute_term(g.math), static_cast<double>(waves) * macs / efficiency / mac_per_s_per_slot);
  if (splits > 1) {
    t.add("splitk_memory", static_cast<double>(splits + 1) * g.m * g.n * groups * 4 / arch.copy_bytes_per_s);
    t.add("launch", 2e-6);
  }
  return t;
}

// The modelled time (us) of a tiling: its terms under the arch's cost model.
double tiling_cost(const Gemm& g, long long groups, int bm, int bn, long long splits, const ArchSpec& arch,
                   double macs_per_s) {
  return tiling_terms(g, groups, bm, bn, splits, arch, macs_per_s).predicted_s(*arch.cost_model, kIgemmName) * 1e6;
}

constexpr std::array<int, 2> kTileRows = {128, 64};
constexpr std::array<int, 4> kTileCols = {128, 96, 64, 32};

// Up to 256 splits: a weight gradient of a few channels over a large image (K = 16x225x225)
// needs them to fill the GPU with its few output tiles (measured: up to 2.9x faster than at most 64).
long long max_splits_of(const Gemm& g, long long min_splits) {
  return std::max<long long>(min_splits, std::min<long long>(256, ceil_div(g.k, g.bk) / 4));
}

void set_tiling(Gemm& g, int bm, int bn, long long splits) {
  g.bm = bm;
  g.bn = bn;
  g.splits = static_cast<int>(splits);
  g.warps_n = warps_n_of(bn);
  g.warps_m = warps_m_of(bm, bn);
}

// Tile shape and split-K by a small cost model (tiling_cost): padded MACs per
// CTA over a tile-efficiency factor and an occupancy factor, times the waves
// of two CTAs per SM, plus the split-K reduction's memory traffic. Larger
// tiles reuse each loaded element more; the waves term captures quantization
// (270 CTAs on 264 slots run as two waves); splitting K refills an
// under-occupied GPU at the price of fp32 partials. Occupancy: two CTAs of
// fewer than 4 warps leave each of an SM's 4 schedulers under two warps to
// hide mma.sync and shared-memory latency. Measured A/B over the 413 convs
// (docs/perf/2026-11-22-conv-413-h200-90d3901.md): the 194 shapes whose tiles
// it changes ran 1.09x (forward), 1.23x (backward data) and 1.10x (backward
// weight) faster.
void choose_tiling(Gemm& g, long long groups, long long min_splits, const ArchSpec& arch) {
  const double rate = tiling_macs_per_s(g.math, arch);
  double best = 1e300;
  for (int bm : kTileRows)
    for (int bn : kTileCols)
      for (long long splits = min_splits; bm <= g.max_bm && bn <= g.max_bn && splits <= max_splits_of(g, min_splits);
           ++splits)
        if (const double us = tiling_cost(g, groups, bm, bn, splits, arch, rate); us < best * 0.999) {
          best = us;
          set_tiling(g, bm, bn, splits);
        }
}

// boo tune's alternatives to choose_tiling's pick: each tile shape with its
// cheapest split count, cheapest first by the same cost model.
struct Tiling {
  int bm, bn;
  long long splits;
  double us;
};
std::vector<Tiling> ranked_tilings(const Gemm& g, long long groups, long long min_splits, const ArchSpec& arch) {
  const double rate = tiling_macs_per_s(g.math, arch);
  std::vector<Tiling> out;
  for (int bm : kTileRows)
    for (int bn : kTileCols) {
      if (bm > g.max_bm || bn > g.max_bn) continue;
      Tiling best{bm, bn, min_splits, 1e300};
      for (long long splits = min_splits; splits <= max_splits_of(g, min_splits); ++splits)
        if (const double us = tiling_cost(g, groups, bm, bn, splits, arch, rate); us < best.us * 0.999)
          best = {bm, bn, splits, us};
      out.push_back(best);
    }
  std::stable_sort(out.begin(), out.end(), [](const Tiling& a, const Tiling& b) { return a.us < b.us; });
  return out;
}

// Pipeline depth: as deep as 4 stages while two CTAs still fit on an SM
// (measured: one CTA of 6-8 warps per SM leaves the tensor cores idle): half
// an SM's shared memory less 4 KiB each (110 KiB on sm_90).
int pipeline_depth(const Gemm& g, long long es, const ArchSpec& arch) {
  const long long pad = 16 / es;
  const long long stage_bytes =
      ((g.a_mode == kVectorMN ? g.bk * (g.bm + pad) : g.bm * (g.bk + pad)) +
       (g.b_mode == kVectorMN ? g.bk * (g.bn + pad) : g.bn * (g.bk + pad))) * es;
  return static_cast<int>(std::clamp<long long>((arch.max_shared_bytes_per_sm / 2 - 4096) / stage_bytes, 2, 4));
}

constexpr long long kFp32TermsPerSlice = 4096;
constexpr long long kMaxPartialBytes = 512LL << 20;  // split-K partials of one GEMM

// Sets the GEMM's math path and tiles it for that path. Full-precision fp32 keeps two-level sums
// on tiles 32 columns wide (warp tiles of 32x32 have the registers for a second accumulator set):
// FFMA where the reduction is long (plan_gemm says why), 3xTF32 always, since its tensor cores
// truncate as they accumulate (mainloop_mma_3xtf32.cuh). 3xTF32 with one-element A loads gets 64-row
// tiles: at 128 rows the scalar loader's precomputed rows and the split fragments spilled past 255
// registers (NvrtcTest.FullPrecisionFp32VariantsCompileWithoutSpills).
void tile_for(Gemm& g, Math math, long long groups, long long es, const ArchSpec& arch) {
  g.math = math;
  g.max_bn = math == kMath3xTf32 || (math == kMathFfma && g.k > kFp32TermsPerSlice) ? 32 : 128;
  g.max_bm = math == kMath3xTf32 && g.a_vec == 1 ? 64 : 128;
  choose_tiling(g, groups, g.min_splits, arch);
  g.stages = pipeline_depth(g, es, arch);
}

// The modelled time (us) of the GEMM's tiling at its math path's own rate. A refitted scale of the
// path's compute term was fitted on terms at the tiling rate (cost_terms_of records those), so it
// already holds the path's own speed: with one, the tiling rate, lest FFMA's be counted twice.
double modelled_us(const Gemm& g, long long groups, const ArchSpec& arch) {
  const bool fitted = arch.cost_model->has(kIgemmName, compute_term(g.math));
  return tiling_cost(g, groups, g.bm, g.bn, g.splits, arch,
                     fitted ? tiling_macs_per_s(g.math, arch) : own_macs_per_s(g.math, arch));
}

// Full-precision fp32 runs on FFMA, or, on the weight face, on 3xTF32 where the cost model, each
// path at its own rate, says it is faster. Measured on an H100 (nchw-models.txt's 207 fp32 lines,
// 2026-11-26, all passing numerics): of the 76 lines the model gave 3xTF32 on every face, the weight
// gradients ran 0.88-1.05x FFMA's time (0.94 geomean), the forward and data faces 0.83-1.34x (1.08).
void choose_fp32_math(Gemm& g, long long groups, long long es, const ArchSpec& arch) {
  tile_for(g, kMathFfma, groups, es, arch);
  if (g.face != kWeightFace) return;
  Gemm tensor_cores = g;
  tile_for(tensor_cores, kMath3xTf32, groups, es, arch);
  if (modelled_us(tensor_cores, groups, arch) < modelled_us(g, groups, arch)) g = tensor_cores;
}

Gemm plan_gemm(const std::string& entry, Face face, const Relation& r, DType dtype, bool tf32, const ArchSpec& arch,
               const Phase& phase, bool fp32_out) {
  Gemm g;
  g.entry = entry;
  g.face = face;
  g.fp32_out = fp32_out;
  g.phase = phase;
  const long long es = static_cast<long long>(dtype_size_bytes(dtype));
  // An operand takes the first (dim, mode) whose vectors fit, else scalar loads.
  struct Option {
    const Strides5* strides;
    int dim;
    long long extent;
    Mode mode;
  };
  auto pick = [&](std::initializer_list<Option> options, Mode& mode, int& vec) {
    mode = kScalar;
    vec = 1;
    for (const Option& o : options) {
      if (int v = vector_width(*o.strides, o.dim, o.extent, es); v > 0) {
        mode = o.mode;
        vec = v;
        return;
      }
    }
  };
  const Strides5 as = stepped(r.a_strides, r.batch, r.ca, r.a_size), bs = stepped(r.b_strides, r.batch, r.cb, r.b_size),
                 ws = stepped(r.w_strides, r.cb, r.ag(), r.f_size);
  switch (face) {
    case kForwardFace:
      g.m = r.batch * r.pix_b();
      g.n = r.bg();
      g.k = r.taps() * r.ag();
      // A: im2col of A along (r, c): vectors of channels; a pointwise conv's planar x (NCHW), vectors along
      // an image's dense pixels (planar_pixel_vector). B: filter along c (KRSC) or kb.
      if (const long long v = planar_pixel_vector(r, es); v > 0) {
        g.a_mode = kVectorMN;
        g.a_vec = static_cast<int>(v);
      } else
        pick({{&as, 1, r.ag(), kVectorK}}, g.a_mode, g.a_vec);
      pick({{&ws, 1, r.ag(), kVectorK}, {&ws, 0, r.bg(), kVectorMN}}, g.b_mode, g.b_vec);
      break;
    case kDataFace:
      g.m = r.batch * phase.pixels();
      g.n = r.ag();
      g.k = phase.taps() * r.bg();
      pick({{&bs, 1, r.bg(), kVectorK}}, g.a_mode, g.a_vec);
      pick({{&ws, 1, r.ag(), kVectorMN}, {&ws, 0, r.bg(), kVectorK}}, g.b_mode, g.b_vec);
      break;
    case kWeightFace:
      g.m = r.bg();
      g.n = r.taps() * r.ag();
      g.k = r.batch * r.pix_b();
      pick({{&bs, 1, r.bg(), kVectorMN}}, g.a_mode, g.a_vec);
      pick({{&as, 1, r.ag(), kVectorMN}}, g.b_mode, g.b_vec);
      break;
  }
  // BK = 64 halves the barriers per FLOP (4 k16 steps per stage) where both
  // operands load 16-byte K vectors through precomputed rows (forward and data
  // faces) or linear pixels (pointwise weight face); per-vector address math
  // and narrow vectors do better with BK = 32 (measured, docs/perf/).
  const bool linear_weight_face = face == kWeightFace && r.pointwise() &&
                                  pixel_stride(r.batch, r.a_size, r.a_strides) > 0 &&
                                  pixel_stride(r.batch, r.b_size, r.b_strides) > 0;
  const bool wide_k = dtype != DType::kF32 && g.a_vec * es == 16 && g.b_vec * es == 16 &&
                      ((face != kWeightFace && g.a_mode == kVectorK) || linear_weight_face);
  g.bk = wide_k ? 64 : 32;
  // Full-precision fp32 sums at most kFp32TermsPerSlice terms in one thread's
  // accumulator (more split-K slices, added in float64 by the reduce): the
  // error of a sequential fp32 sum grows with its length, and weight gradients
  // sum N*H*W = 100k-800k terms (issue 17: their spread was 2.5-4.5x cuDNN's,
  // then 1.3-1.6x with slices alone). Their tiles are 32 columns wide (tile_for):
  // warp tiles of 32x32 leave each FFMA thread the registers for two-level sums
  // (mainloop_ffma.cuh; 64x32 warp tiles spill with them), whose error grows
  // like L / sqrt(BK) instead of L (docs/tolerances.md, "fp32 weight gradients").
  if (dtype == DType::kF32 && g.k > kFp32TermsPerSlice) {
    const long long by_memory = std::max<long long>(1, kMaxPartialBytes / (4 * r.groups * g.m * g.n));
    g.min_splits = std::clamp<long long>(ceil_div(g.k, kFp32TermsPerSlice), 1, std::min<long long>(256, by_memory));
  }
  if (dtype != DType::kF32) tile_for(g, kMathHalf, r.groups, es, arch);
  else if (tf32) tile_for(g, kMathTf32, r.groups, es, arch);
  else choose_fp32_math(g, r.groups, es, arch);
  // 16-byte stores need the output's N dimension contiguous and aligned.
  const long long out_v = 16 / es;
  switch (face) {
    case kForwardFace: g.vec_out = vector_width(bs, 1, r.bg(), es) == out_v; break;
    case kDataFace: g.vec_out = vector_width(as, 1, r.ag(), es) == out_v; break;
    case kWeightFace:  // columns (r, c) are contiguous when the filter is K-major with C innermost (KRSC)
      g.vec_out = vector_width(ws, 1, r.ag(), es) == out_v &&
                  (r.f_size[2] == 1 || r.w_strides[4] == r.ag()) &&
                  (r.f_size[1] == 1 || r.w_strides[3] == r.ag() * r.f_size[2]) &&
                  (r.f_size[0] == 1 || r.w_strides[2] == r.ag() * r.f_size[2] * r.f_size[1]);
      break;
  }
  g.vec_out = g.vec_out && g.n % out_v == 0 && !fp32_out;
  return g;
}

size_t smem_bytes(const Gemm& g, DType dtype) {
  const long long elem = static_cast<long long>(dtype_size_bytes(dtype)), pad = 16 / elem;
  auto tile = [&](int rows, Mode mode) { return mode == kVectorMN ? g.bk * (rows + pad) : rows * (g.bk + pad); };
  return static_cast<size_t>(g.stages * (tile(g.bm, g.a_mode) + tile(g.bn, g.b_mode)) * elem);
}

// The fp32 planes (splits, groups, M, N): split-K partials, or the fp32 result (its split 0).
size_t workspace_bytes_of(const Gemm& g, long long groups) {
  return g.splits > 1 || g.fp32_out ? static_cast<size_t>(g.splits * groups * g.m * g.n) * sizeof(float) : 0;
}

std::string array_fn(const char* name, const long long* v, int n) {
  std::string body;
  for (int i = 0; i < n; ++i) body += (i ? ", " : "") + std::to_string(v[i]) + "LL";
  return "  __host__ __device__ static constexpr long long " + std::string(name) +
         "(int i) { constexpr long long v[] = {" + body + "}; return v[i]; }\n";
}

// The Cfg struct of one GEMM (every size a compile-time constant).
std::string cfg_source(const std::string& name, const Gemm& g, const Relation& r, const ConvSignature& sig,
                       bool epilogue) {
  std::string s = "struct " + name + " {\n";
  s += "  using T = " + std::string(device_type(sig.dtype)) + ";\n";
  s += "  static constexpr int kFace = " + std::to_string(g.face) + ", kMath = " + std::to_string(g.math) + ";\n";
  s += "  static constexpr bool kHalf = " + std::string(sig.dtype == DType::kF16 ? "true" : "false") + ";\n";
  s += "  static constexpr int BM = " + std::to_string(g.bm) + ", BN = " + std::to_string(g.bn) +
       ", BK = " + std::to_string(g.bk) + ", WARPS_M = " + std::to_string(g.warps_m) +
       ", WARPS_N = " + std::to_string(g.warps_n) + ", STAGES = " + std::to_string(g.stages) +
       ", kThreads = " + std::to_string(g.threads()) + ";\n";
  s += "  static constexpr int kAMode = " + std::to_string(g.a_mode) + ", kBMode = " + std::to_string(g.b_mode) +
       ", kAVec = " + std::to_string(g.a_vec) + ", kBVec = " + std::to_string(g.b_vec) +
       ", kSplits = " + std::to_string(g.splits) + ";\n";
  // 32-bit index arithmetic when every tensor (and the GEMM) stays below 2^31 elements.
  const long long kMax = (1LL << 31) - 1;
  const bool idx32 = sig.x_spec().storage_elems() < kMax && sig.y_spec().storage_elems() < kMax &&
                     sig.w_spec().storage_elems() < kMax && g.m * g.n < kMax && g.k < kMax &&
                     r.batch * r.pix_a() * r.ca < kMax && r.cb * r.taps() * r.ca < kMax;  // padded copies too
  s += "  static constexpr bool kIdx32 = " + std::string(idx32 ? "true" : "false") + ";\n";
  s += "  static constexpr bool kVecOut = " + std::string(g.vec_out ? "true" : "false") + ";\n";
  s += "  static constexpr bool kFp32Out = " + std::string(g.fp32_out ? "true" : "false") + ";\n";
  // Linear pixel addressing (no division per element) and the pointwise case.
  const bool pointwise = r.pointwise();
  s += "  static constexpr long long kAPixelStride = " + std::to_string(pixel_stride(r.batch, r.a_size, r.a_strides)) +
       ", kBPixelStride = " + std::to_string(pixel_stride(r.batch, r.b_size, r.b_strides)) + ";\n";
  s += "  static constexpr bool kPointwise = " + std::string(pointwise ? "true" : "false") + ";\n";
  s += "  static constexpr long long kM = " + std::to_string(g.m) + ", kN = " + std::to_string(g.n) +
       ", kK = " + std::to_string(g.k) + ", kGroups = " + std::to_string(r.groups) +
       ", kChannelsA = " + std::to_string(r.ca) + ", kChannelsB = " + std::to_string(r.cb) + ";\n";
  // The data face's phase (whole-tensor values otherwise; unused by the other faces).
  const Phase ph = g.face == kDataFace ? g.phase : whole(r);
  Dims3 tn = ph.tn;
  for (long long& t : tn) t = std::max(t, 1LL);  // a phase without taps has K = 0: never indexed
  s += "  static constexpr bool kPhase = " + std::string(ph.on ? "true" : "false") + ";\n";
  s += array_fn("phase_size", ph.is.data(), 3) + array_fn("phase_first_pixel", ph.i0.data(), 3) +
       array_fn("phase_first_tap", ph.t0.data(), 3) + array_fn("phase_taps", tn.data(), 3);
  s += array_fn("a_size", r.a_size.data(), 3) + array_fn("b_size", r.b_size.data(), 3) +
       array_fn("filter_size", r.f_size.data(), 3) + array_fn("stride", r.stride.data(), 3) +
       array_fn("pad", r.pad.data(), 3) + array_fn("dilation", r.dil.data(), 3) +
       array_fn("a_strides", r.a_strides.data(), 5) + array_fn("b_strides", r.b_strides.data(), 5) +
       array_fn("w_strides", r.w_strides.data(), 5);
  s += "  static constexpr int kAct = " + std::to_string(epilogue ? static_cast<int>(sig.activation.kind) : 0) + ";\n";
  s += "  static constexpr bool kBias = " + std::string(epilogue && sig.bias ? "true" : "false") + ";\n";
  s += "  static constexpr bool kResidual = " + std::string(epilogue && sig.residual ? "true" : "false") + ";\n";
  return s + "};\n";
}

// One GEMM of the plan: a face of the relation (or one stride phase of the
// data face) with its tiling, and the task whose result it writes.
struct Work {
  Gemm gemm;
  Relation rel;  // the relation it runs on: staged copies' strides and padded channels
  FaceTask task;
  int a_copy = -1, b_copy = -1, w_copy = -1;  // the StagedCopy each operand lives in, or -1: the tensor itself
  int z_copy = -1;  // the residual's copy, laid out as the staged y it is added to, or -1: z itself
};

// The configuration of a problem: the staged copies, and every GEMM with its
// tiling, in launch order.
struct ImplicitGemmConfig final : Config {
  std::vector<StagedCopy> copies;
  std::vector<Work> works;
  size_t workspace_bytes = 0;  // follows from the above

  std::string text() const override {
    std::string record = "copies";
    for (const StagedCopy& c : copies) record += " " + c.text();
    for (const Work& w : works) {
      const Gemm& g = w.gemm;
      record += "; " + w.task.result + ": face " + std::to_string(g.face) + " gemm " + std::to_string(g.m) + "x" +
                std::to_string(g.n) + "x" + std::to_string(g.k) + " tile " + std::to_string(g.bm) + "x" +
                std::to_string(g.bn) + "x" + std::to_string(g.bk) + " warps " + std::to_string(g.warps_m) + "x" +
                std::to_string(g.warps_n) + " stages " + std::to_string(g.stages) + " A " + mode_name(g.a_mode) +
                std::to_string(g.a_vec) + " B " + mode_name(g.b_mode) + std::to_string(g.b_vec) + " splits " +
                std::to_string(g.splits) + (g.vec_out ? " vec_out" : "") + (g.fp32_out ? " fp32_out" : "") +
                (full_precision_fp32(g.math) ? std::string(" math ") + math_name(g.math) : "");
    }
    return record;
  }
};

// The relation each face runs on and the copies it needs, added to `copies`
// (one per tensor and channel count: faces share them).
std::vector<Work> works_of(const ConvProblem& problem, const ChannelPads& pads, const ArchSpec& arch,
                           std::vector<StagedCopy>& copies) {
  const Relation& r = problem.relation;
  auto request = [&](const std::string& tensor, long long outer, long long outer_rows, const Dims3& size,
                     long long channels, long long padded, bool padding) {
    return add_copy(copies, layout_copy(problem, tensor, outer, outer_rows, size, channels, padded, padding));
  };
  // A strided data face (dilation 1) runs as one GEMM per stride phase, each a
  // kernel of its own: up to kMaxPhaseGemms of them; beyond, as one GEMM over every tap.
  constexpr long long kMaxPhaseGemms = 64;
  const bool strided = r.stride[0] > 1 || r.stride[1] > 1 || r.stride[2] > 1;
  const bool unit_dilation = r.dil[0] == 1 && r.dil[1] == 1 && r.dil[2] == 1;
  const bool few_phases = r.stride[0] <= kMaxPhaseGemms && r.stride[1] <= kMaxPhaseGemms &&
                          r.stride[2] <= kMaxPhaseGemms && r.stride[0] * r.stride[1] * r.stride[2] <= kMaxPhaseGemms;
  std::vector<Work> out;
  for (const FaceTask& task : problem.tasks) {
    Relation rel = r;
    int a = -1, b = -1, w = -1;
    // Channel padding: x (and w) for the forward face, x, dy and dw for the weight face.
    if (task.face == kForwardFace && pads.a.on) {
      a = request("x", r.batch, r.batch, r.a_size, r.ca, pads.a.padded, true);
      w = request("w", r.cb, r.cb, r.f_size, r.ca, pads.a.padded, true);
      rel.ca = pads.a.padded;
    }
    if (task.face == kWeightFace && pads.any()) {
      if (pads.a.on) a = request("x", r.batch, r.batch, r.a_size, r.ca, pads.a.padded, true);
      if (pads.b.on) b = request("dy", r.batch, r.batch, r.b_size, r.cb, pads.b.padded, true);
      w = request("dw", r.cb, pads.b.count(), r.f_size, r.ca, pads.a.count(), true);
      rel.ca = pads.a.count();
      rel.cb = pads.b.count();
    }
    // A pointwise forward face of planar (NCHW) x and y reads x as vectors along its pixels and writes y by
    // element through its strides: one GEMM without the two copies. Measured on the fp32 nchw-models lines
    // (H100): 1.10-1.58x the staged plan's speed where 1/C + 1/K >= 1/128 (the copies' traffic against the
    // GEMM's work), and since FFMA's MN-major tiles load 16-byte vectors also below: 1.16-1.26x or a tie
    // (docs/perf/2026-11-26-session8.md). With y channels-last (MIOpen's mixed layout) only x is copied, and
    // in place was 0.94x.
    const bool planar_pointwise = task.face == kForwardFace && a < 0 && !problem.fp32_result &&
                                  r.b_strides[1] != 1 && planar_pixel_vector(r, problem.elem_bytes) > 0;
    // Layout: any other operand whose channels are not contiguous.
    if (a < 0 && !planar_pointwise && !channels_contiguous(r.a_strides, r.ca))
      a = request(task.a, r.batch, r.batch, r.a_size, r.ca, r.ca, false);
    // (An fp32 result leaves B, the forward face's output, unwritten: it needs no copy.)
    if (b < 0 && !planar_pointwise && !channels_contiguous(r.b_strides, r.cb) && !problem.fp32_result)
      b = request(task.b, r.batch, r.batch, r.b_size, r.cb, r.cb, false);
    if (w < 0 && !channels_contiguous(r.w_strides, r.ag()))
      w = request(task.w, r.cb, r.cb, r.f_size, r.ag(), r.ag(), false);
    // The epilogue reads the residual at y's offsets: where y is written to a copy, z is staged the same way.
    int z = -1;
    if (task.epilogue && problem.conv().residual) {
      const bool forward = task.face == kForwardFace;
      const int y_copy = forward ? b : a;
      if (y_copy >= 0)
        z = request("z", r.batch, r.batch, forward ? r.b_size : r.a_size, forward ? r.cb : r.ca,
                    copies[static_cast<size_t>(y_copy)].padded, false);
    }
    if (a >= 0) rel.a_strides = channels_last(r.a_size, copies[a].padded);
    if (b >= 0) rel.b_strides = channels_last(r.b_size, copies[b].padded);
    if (w >= 0) rel.w_strides = channels_last(r.f_size, copies[w].padded);
    const std::string entry = "boo_igemm_" + task.result;
    if (task.face == kDataFace && strided && unit_dilation && few_phases) {
      int index = 0;
      for (const Phase& p : phases(rel))
        out.push_back({plan_gemm(entry + "_p" + std::to_string(index++), task.face, rel, problem.dtype, problem.conv().fp32_tf32, arch, p, false), rel,
                       task, a, b, w, z});
    } else {
      out.push_back({plan_gemm(entry, task.face, rel, problem.dtype, problem.conv().fp32_tf32, arch, whole(rel), problem.fp32_result), rel, task, a, b, w, z});
    }
  }
  return out;
}

// Builds the source and the steps together: each step names the entry it adds.
class PlanWriter {
 public:
  PlanWriter(const ConvProblem& problem, const ArchSpec& arch) : problem_(problem), arch_(arch), roles_(problem.conv()) {
    plan_.source.name = "conv_implicit_gemm.cu";
    plan_.source.text = "// Generated by boo: gpu:conv:implicit_gemm.\n#include \"boo/conv/conv_igemm.cuh\"\n";
    if (problem.bias_gradient) plan_.source.text += "#include \"boo/conv/conv_direct.cuh\"\n";
  }

  // One copy between a signature tensor and its dense channels-last copy.
  Status staged_copy(const StagedCopy& c) {
    BOO_ASSIGN_OR_RETURN(LaunchStep step, staged_copy_step(c, problem_.dtype, roles_, arch_, plan_.source));
    plan_.steps.push_back(std::move(step));
    return ok_status();
  }

  // One GEMM (and its split-K reduce) with A, B, W and the output bound.
  Status gemm(const Work& w, TensorBinding a, TensorBinding b, TensorBinding weight, TensorBinding out,
              std::optional<TensorBinding> bias, std::optional<TensorBinding> residual, TensorBinding partials) {
    const Gemm& g = w.gemm;
    const ConvSignature& conv = problem_.conv();
    const std::string cfg = "Cfg_" + g.entry.substr(std::string("boo_igemm_").size());
    plan_.source.text += "\n" + cfg_source(cfg, g, w.rel, conv, w.task.epilogue);
    plan_.source.text += "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(g.threads()) + ", " +
                         std::to_string(ctas_per_sm(g.math, g.bm, g.bn)) + ") " + g.entry + "(const boo::ConvIgemmParams p) { boo::igemm::conv_igemm<" + cfg + ">(p); }\n";
    plan_.source.entries.push_back(g.entry);
    BOO_ASSIGN_OR_RETURN(uint32_t tiles, grid_extent(ceil_div(g.m, g.bm) * ceil_div(g.n, g.bn), 0x7fffffff, "x"));
    BOO_ASSIGN_OR_RETURN(uint32_t groups, grid_extent(problem_.relation.groups, 65535, "y (groups)"));
    BOO_ASSIGN_OR_RETURN(uint32_t splits, grid_extent(g.splits, 65535, "z (split-K slices)"));
    StepBuilder<ConvIgemmParams> step(g.entry, {tiles, groups, splits}, {static_cast<uint32_t>(g.threads()), 1, 1},
                                      static_cast<uint32_t>(smem_bytes(g, conv.dtype)));
    step.params.act_alpha = static_cast<float>(conv.activation.alpha);
    step.params.act_lo = static_cast<float>(conv.activation.lo);
    step.params.act_hi = static_cast<float>(conv.activation.hi);
    step.bind(step.params.a, a);
    step.bind(step.params.b, b);
    step.bind(step.params.w, weight);
    if (!g.fp32_out) step.bind(step.params.out, out);
    step.bind(step.params.workspace, partials);
    if (bias) step.bind(step.params.bias, *bias);
    if (residual) step.bind(step.params.residual, *residual);
    LaunchStep launch = std::move(step).finish();
    plan_.steps.push_back(launch);
    if (g.splits > 1) {
      const std::string reduce = g.entry + "_reduce";
      plan_.source.text += "extern \"C\" __global__ void __launch_bounds__(256) " + reduce +
                           "(const boo::ConvIgemmParams p) { boo::igemm::conv_igemm_reduce<" + cfg + ">(p); }\n";
      plan_.source.entries.push_back(reduce);
      // Same parameters; a grid-stride loop over groups x M x N beyond 65535 blocks.
      launch.entry = reduce;
      launch.grid = {static_cast<uint32_t>(std::clamp<long long>(
                         ceil_div(problem_.relation.groups * g.m * g.n, 256), 1, 65535)),
                     1, 1};
      launch.block = {256, 1, 1};
      launch.shared_bytes = 0;
      plan_.steps.push_back(std::move(launch));
    }
    return ok_status();
  }

  // db = the sum of dy over the batch and every pixel (gpu:conv:direct's kernel).
  Status bias_gradient() {
    const ConvSignature& conv = problem_.conv();
    plan_.source.text += "\nextern \"C\" __global__ void __launch_bounds__(256) boo_conv_db(const boo::ConvFaceParams p) {\n"
                         "  boo::conv_bias_gradient<" + std::string(device_type(conv.dtype)) + ">(p);\n}\n";
    plan_.source.entries.emplace_back("boo_conv_db");
    BOO_ASSIGN_OR_RETURN(LaunchStep step, bias_gradient_step(problem_, roles_, 256));
    plan_.steps.push_back(std::move(step));
    return ok_status();
  }

  const TensorRoles& roles() const { return roles_; }
  Plan finish(size_t workspace_bytes) && {
    plan_.workspace_bytes = workspace_bytes;
    plan_.tensor_alignment = 16;  // vector loads and stores of 16 bytes
    return std::move(plan_);
  }

 private:
  const ConvProblem& problem_;
  const ArchSpec& arch_;
  TensorRoles roles_;
  Plan plan_;
};

// Declines tilings the device cannot run (shared memory, grid) and places
// the workspace: split-K partials (the largest GEMM's; GEMMs run one after
// another), then the copies.
Status check_and_place(const ConvProblem& problem, const ArchSpec& arch, ImplicitGemmConfig& config) {
  for (const Work& w : config.works) {
    const size_t bytes = smem_bytes(w.gemm, problem.dtype);
    if (bytes > static_cast<size_t>(arch.max_shared_bytes_per_block))
      return unimplemented("tile needs " + std::to_string(bytes) + " bytes of shared memory, the device allows " +
                           std::to_string(arch.max_shared_bytes_per_block));
    // One block per tile along the grid's x (plan_problem): a GEMM with more tiles is declined here.
    const long long tiles = ceil_div(w.gemm.m, w.gemm.bm) * ceil_div(w.gemm.n, w.gemm.bn);
    if (tiles > 0x7fffffff)
      return unimplemented("the GEMM has " + std::to_string(tiles) + " tiles, more than the grid's 2147483647 blocks");
  }
  size_t partials = 0;
  for (const Work& w : config.works) partials = std::max(partials, workspace_bytes_of(w.gemm, problem.relation.groups));
  config.workspace_bytes = place_copies(config.copies, partials, problem.elem_bytes);
  return ok_status();
}

class ImplicitGemmConv final : public Tier<ConvProblem, ImplicitGemmConfig> {
 public:
  std::string_view name() const override { return kIgemmName; }

  Status accepts_problem(const ConvProblem& problem, const ArchSpec& arch) const override {
    BOO_RETURN_IF_ERROR(problem.fp32_result_supported(name()));
    if (arch.cc_major < 8)
      return unimplemented("needs compute capability 8.0+ (mma.sync bf16), device has " +
                           std::to_string(arch.cc_major) + "." + std::to_string(arch.cc_minor));
    const Relation& r = problem.relation;
    if (r.ag() < 4 && r.bg() < 4)
      return unimplemented("channels per group " + std::to_string(r.ag()) + " -> " + std::to_string(r.bg()) +
                           " (depthwise-like): a GEMM would be mostly padding; gpu:conv:depthwise (one channel per group) or "
                           "gpu:conv:direct runs it");
    return ok_status();
  }

  Result<ImplicitGemmConfig> configure_problem(const ConvProblem& problem, const ArchSpec& arch) const override {
    ImplicitGemmConfig config;
    config.works = works_of(problem, channel_pads_of(problem), arch, config.copies);
    BOO_RETURN_IF_ERROR(check_and_place(problem, arch, config));
    return config;
  }

  // Candidate i gives every GEMM its i-th tiling by the cost model (its last
  // where it has fewer), at the depth pipeline_depth gives it; then the
  // chosen tiling one stage shallower; then, for full-precision fp32, every
  // fp32 GEMM on each math path (FFMA, 3xTF32) with its i-th tilings, so that
  // boo tune times both: the paths' first kRanksPerMath ranks come right after
  // the chosen's first, ahead of its deeper ranks, which the candidate list's
  // limit (kMaxCandidates) may then cut. Split-K
  // partials past kMaxPartialBytes and tiles past the device's shared memory
  // are left out.
  std::vector<ImplicitGemmConfig> alternatives(const ConvProblem& problem, const ArchSpec& arch,
                                               const ImplicitGemmConfig& chosen) const override {
    const long long es = problem.elem_bytes, groups = problem.relation.groups;
    auto partials = [&](const ImplicitGemmConfig& c) {
      size_t most = 0;
      for (const Work& w : c.works) most = std::max(most, workspace_bytes_of(w.gemm, groups));
      return most;
    };
    const size_t partials_limit = std::max(partials(chosen), static_cast<size_t>(kMaxPartialBytes));
    std::vector<ImplicitGemmConfig> out;
    auto keep = [&](ImplicitGemmConfig c) {
      if (partials(c) <= partials_limit && check_and_place(problem, arch, c).ok()) out.push_back(std::move(c));
    };
    auto keep_ranked = [&](const ImplicitGemmConfig& base, size_t first_rank, size_t end_rank) {
      std::vector<std::vector<Tiling>> ranked;
      for (const Work& w : base.works) ranked.push_back(ranked_tilings(w.gemm, groups, w.gemm.min_splits, arch));
      for (size_t rank = first_rank; rank < end_rank; ++rank) {
        ImplicitGemmConfig c = base;
        for (size_t i = 0; i < c.works.size(); ++i) {
          const Tiling& t = ranked[i][std::min(rank, ranked[i].size() - 1)];
          Gemm& g = c.works[i].gemm;
          set_tiling(g, t.bm, t.bn, t.splits);
          g.stages = pipeline_depth(g, es, arch);
        }
        keep(std::move(c));
      }
    };
    constexpr size_t kRanks = kTileRows.size() * kTileCols.size(), kRanksPerMath = 3;
    keep_ranked(chosen, 0, 1);
    ImplicitGemmConfig shallower = chosen;
    for (Work& w : shallower.works) w.gemm.stages = std::max(2, w.gemm.stages - 1);
    keep(std::move(shallower));
    for (Math math : {kMathFfma, kMath3xTf32}) {
      ImplicitGemmConfig other = chosen;
      bool changed = false;
      for (Work& w : other.works)
        if (full_precision_fp32(w.gemm.math) && w.gemm.math != math) {
          tile_for(w.gemm, math, groups, es, arch);
          changed = true;
        }
      if (changed) keep_ranked(other, 0, kRanksPerMath);
    }
    keep_ranked(chosen, 1, kRanks);
    return out;
  }

  // Each GEMM's tiling terms at the rate the tilings are ranked at (tiling_macs_per_s), summed.
  CostTerms cost_terms_of(const ConvProblem& problem, const ImplicitGemmConfig& config,
                          const ArchSpec& arch) const override {
    CostTerms total;
    for (const Work& w : config.works)
      for (const auto& [term, s] : tiling_terms(w.gemm, problem.relation.groups, w.gemm.bm, w.gemm.bn,
                                                w.gemm.splits, arch, tiling_macs_per_s(w.gemm.math, arch))
                                       .seconds)
        total.add(term, s);
    return total;
  }

  Result<Plan> plan_problem(const ConvProblem& problem, const ImplicitGemmConfig& config,
                            const ArchSpec& arch) const override {
    const ConvSignature& conv = problem.conv();
    PlanWriter out(problem, arch);
    const TensorRoles& roles = out.roles();
    for (const StagedCopy& c : config.copies)
      if (c.input) BOO_RETURN_IF_ERROR(out.staged_copy(c));
    // A signature tensor is an argument or (the face's output) a result.
    auto bind = [&](const std::string& name, int copy) -> Result<TensorBinding> {
      if (copy >= 0) return TensorBinding::workspace(config.copies[static_cast<size_t>(copy)].offset);
      return roles.tensor(name);
    };
    for (const Work& w : config.works) {
      BOO_ASSIGN_OR_RETURN(TensorBinding a, bind(w.task.a, w.a_copy));
      BOO_ASSIGN_OR_RETURN(TensorBinding b, bind(w.task.b, w.b_copy));
      BOO_ASSIGN_OR_RETURN(TensorBinding weight, bind(w.task.w, w.w_copy));
      const int result_copy = w.task.face == kForwardFace ? w.b_copy : w.task.face == kDataFace ? w.a_copy : w.w_copy;
      BOO_ASSIGN_OR_RETURN(TensorBinding result, bind(w.task.result, result_copy));
      std::optional<TensorBinding> bias;
      if (w.task.epilogue && conv.bias) {
        BOO_ASSIGN_OR_RETURN(bias, roles.argument("b"));
      }
      std::optional<TensorBinding> residual;
      if (w.task.epilogue && conv.residual) {
        BOO_ASSIGN_OR_RETURN(residual, bind("z", w.z_copy));
      }
      BOO_RETURN_IF_ERROR(out.gemm(w, a, b, weight, result, bias, residual, TensorBinding::workspace(0)));
    }
    for (const StagedCopy& c : config.copies)
      if (!c.input) BOO_RETURN_IF_ERROR(out.staged_copy(c));
    if (problem.bias_gradient) BOO_RETURN_IF_ERROR(out.bias_gradient());
    return std::move(out).finish(config.workspace_bytes);
  }
};

}  // namespace

double implicit_gemm_modelled_us(long long m, long long n, long long k, const ArchSpec& arch) {
  Gemm g{};
  g.m = m;
  g.n = n;
  g.k = k;
  g.bk = 64;  // 16-byte K vectors of both operands (plan_gemm's wide_k)
  return ranked_tilings(g, 1, 1, arch).front().us;
}

const GpuImplementation& implicit_gemm_implementation() {
  static const ImplicitGemmConv impl;
  return impl;
}

}  // namespace boo::ops::conv
