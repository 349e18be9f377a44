// boo: gpu:conv:implicit_gemm — host side: face mapping, tile heuristic,
// generated kernel configuration and the launch plan.
#include "ops/conv/conv_igemm_impl.hpp"

#include <algorithm>
#include <array>

#include "boo/conv.hpp"
#include "ops/common/generated_source.hpp"
#include "ops/conv/device/conv_direct_params.cuh"
#include "ops/conv/device/conv_igemm_params.cuh"

namespace boo::ops::conv {
namespace {

using Dims3 = std::array<long long, 3>;
using Strides5 = std::array<long long, 5>;

enum Face { kForwardFace = 0, kDataFace = 1, kWeightFace = 2 };
enum Mode { kScalar = 0, kVectorK = 1, kVectorMN = 2 };  // conv_igemm.cuh OperandMode

Dims3 pad3(const std::vector<int64_t>& v, long long fill) {
  Dims3 out{fill, fill, fill};
  for (size_t i = 0; i < v.size(); ++i) out[3 - v.size() + i] = v[i];
  return out;
}

Strides5 strides5(const TensorSpec& spec) {
  Strides5 out{spec.strides[0], spec.strides[1], 0, 0, 0};
  const size_t spatial = spec.strides.size() - 2;
  for (size_t i = 0; i < spatial; ++i) out[2 + 3 - spatial + i] = spec.strides[2 + i];
  return out;
}

long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

// The regular relation of a signature: A (Ca channels), B (Cb channels), W.
struct Relation {
  long long batch, ca, cb, groups;
  Dims3 a_size, b_size, f_size, stride, pad, dil;
  Strides5 a_strides, b_strides, w_strides;
  long long ag() const { return ca / groups; }
  long long bg() const { return cb / groups; }
  long long taps() const { return f_size[0] * f_size[1] * f_size[2]; }
  long long pix_a() const { return a_size[0] * a_size[1] * a_size[2]; }
  long long pix_b() const { return b_size[0] * b_size[1] * b_size[2]; }
};

Relation relation_of(const ConvSignature& sig) {
  Relation r;
  r.batch = sig.n;
  r.groups = sig.groups;
  r.ca = sig.transposed ? sig.k : sig.c;
  r.cb = sig.transposed ? sig.c : sig.k;
  r.a_size = pad3(sig.transposed ? sig.output_size() : sig.input_size, 1);
  r.b_size = pad3(sig.transposed ? sig.input_size : sig.output_size(), 1);
  r.f_size = pad3(sig.filter_size, 1);
  r.stride = pad3(sig.stride, 1);
  r.pad = pad3(sig.padding, 0);
  r.dil = pad3(sig.dilation, 1);
  const TensorSpec x = sig.x_spec(), y = sig.y_spec();
  r.a_strides = strides5(sig.transposed ? y : x);
  r.b_strides = strides5(sig.transposed ? x : y);
  r.w_strides = strides5(sig.w_spec());
  return r;
}

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

// The A pixels and filter taps one data-face GEMM covers: all of them, or one
// stride phase (pixels i = i0 + stride*t whose contributing taps are exactly
// r = t0 + stride*j), which strided backward-data is split into.
struct Phase {
  bool on = false;
  Dims3 is{1, 1, 1}, i0{0, 0, 0}, t0{0, 0, 0}, tn{1, 1, 1};
  long long pixels() const { return is[0] * is[1] * is[2]; }
  long long taps() const { return tn[0] * tn[1] * tn[2]; }
};

Phase whole(const Relation& r) {
  Phase p;
  p.is = r.a_size;
  p.tn = r.f_size;
  return p;
}

// Every stride phase of the data face (dilation 1); phases without pixels are dropped.
std::vector<Phase> phases(const Relation& r) {
  std::vector<Phase> out;
  for (long long pz = 0; pz < r.stride[0]; ++pz)
    for (long long py = 0; py < r.stride[1]; ++py)
      for (long long px = 0; px < r.stride[2]; ++px) {
        Phase p;
        p.on = true;
        const long long phase[3] = {pz, py, px};
        for (int d = 0; d < 3; ++d) {
          const long long s = r.stride[d];
          // Pixels with (i + pad) % s == phase, and the taps r % s == phase that reach them.
          p.i0[d] = ((phase[d] - r.pad[d]) % s + s) % s;
          p.is[d] = p.i0[d] < r.a_size[d] ? ceil_div(r.a_size[d] - p.i0[d], s) : 0;
          p.t0[d] = phase[d];
          p.tn[d] = phase[d] < r.f_size[d] ? ceil_div(r.f_size[d] - phase[d], s) : 0;
        }
        if (p.pixels() > 0) out.push_back(p);
      }
  return out;
}

// Forward and weight faces whose channels allow only narrow loads (3, 5, 13,
// 35, 49, 419, ...: every load a scalar) run on dense channels-last copies
// with the channels zero-padded (to 4, or a multiple of 8): A (x) for both
// faces, W (w) for the forward and B (dy) for the weight face are copied in
// before the GEMMs; the weight gradient is computed padded and copied out
// after. The zeros add nothing to any sum; each copy costs one pass.
struct ChannelPad {
  bool on = false;
  long long channels = 0, padded = 0;  // real and padded channel counts
  long long count() const { return on ? padded : channels; }
};

// Copies pay where loads are scalar or 4-byte (odd C, C = 2 mod 4); 3 or 4
// channels pad to 4 (8-byte vectors: a third more MACs, not 8/3 as many),
// more to a multiple of 8 (16-byte vectors). C < 3 stays as it is.
// Channels-last tensors only: for other layouts the copy would be a transpose,
// which has not been measured against their scalar loads.
ChannelPad narrow_channel_pad(long long channels, const Strides5& strides, long long elem_bytes) {
  ChannelPad pad{false, channels, channels};
  if (strides[1] != 1 || channels < 3 || vector_width(strides, 1, channels, elem_bytes) * elem_bytes >= 8) return pad;
  pad.on = true;
  pad.padded = channels <= 4 ? 4 : (channels + 7) / 8 * 8;
  return pad;
}

struct ChannelPads {
  ChannelPad a;  // x: for the forward and weight faces
  ChannelPad b;  // dy: for the weight face
  bool any() const { return a.on || b.on; }
};

ChannelPads channel_pads_of(const ConvSignature& sig, const Relation& r) {
  ChannelPads pads{{false, r.ca, r.ca}, {false, r.cb, r.cb}};
  if (sig.transposed || r.groups != 1 || sig.dtype == DType::kF32) return pads;
  const long long es = static_cast<long long>(dtype_size_bytes(sig.dtype));
  if (sig.directions & (kConvForward | kConvBackwardWeight)) pads.a = narrow_channel_pad(r.ca, r.a_strides, es);
  if (sig.directions & kConvBackwardWeight) pads.b = narrow_channel_pad(r.cb, r.b_strides, es);
  return pads;
}

// Dense channels-last strides (outer, channel, z, y, x) of `size` pixels with `channels`.
Strides5 channels_last(const Dims3& size, long long channels) {
  return {size[0] * size[1] * size[2] * channels, 1, size[1] * size[2] * channels, size[2] * channels, channels};
}

// The relation the forward face sees: A and W dense channels-last with A's padded channels.
Relation forward_relation(const Relation& r, const ChannelPads& pads) {
  if (!pads.a.on) return r;
  Relation p = r;
  p.ca = pads.a.padded;
  p.a_strides = channels_last(r.a_size, pads.a.padded);
  p.w_strides = channels_last(r.f_size, pads.a.padded);
  return p;
}

// The relation the weight face sees: with any padding, B dense channels-last with its
// padded channels too, and W (the gradient) a dense padded buffer [Cb padded][taps][Ca padded].
Relation weight_relation(const Relation& r, const ChannelPads& pads) {
  if (!pads.any()) return r;
  Relation p = forward_relation(r, pads);
  p.cb = pads.b.count();
  if (pads.b.on) p.b_strides = channels_last(r.b_size, pads.b.padded);
  p.w_strides = channels_last(r.f_size, pads.a.count());
  return p;
}

// One GEMM launch of the plan: a face of the relation with its tiling.
struct Gemm {
  std::string entry;  // kernel name
  Face face;
  long long m, n, k;
  int bm, bn, bk, warps_m, warps_n, stages;
  Mode a_mode, b_mode;
  int a_vec = 1, b_vec = 1;  // elements per vector
  bool vec_out = false;      // 16-byte output stores along N through shared memory
  int splits;
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

// 1x1 filter, stride 1, no padding: pixel k of B reads pixel k of A.
bool is_pointwise(const Relation& r) {
  bool pointwise = r.a_size == r.b_size;
  for (int i = 0; i < 3; ++i) pointwise &= r.f_size[i] == 1 && r.stride[i] == 1 && r.pad[i] == 0;
  return pointwise;
}

// Warps of a BM x BN CTA: warp tiles of 64x32 (32x32 when the CTA is one warp
// wide; 32-row tiles for BM = 64). Measured against 64x64 warp tiles (CUTLASS's
// sm80 shape): those leave 8 warps per SM and ran 6% slower over the 413 convs
// (docs/perf/).
int warps_n_of(int bn) { return bn / 32; }
int warps_m_of(int bm, int bn) { return bm == 128 ? (warps_n_of(bn) == 1 ? 4 : 2) : (warps_n_of(bn) == 1 ? 2 : 1); }

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
void choose_tiling(Gemm& g, long long groups, const DeviceInfo& device) {
  const long long slots = 2LL * (device.sm_count > 0 ? device.sm_count : 132);
  const double mac_per_us_per_slot = 150e12 / 264 / 1e6;  // measured order of boo's mma.sync rate
  const double bytes_per_us = 3e6;                        // ~3 TB/s
  const long long k_tiles = ceil_div(g.k, g.bk);
  double best = 1e300;
  for (int bm : {128, 64}) {
    for (int bn : {128, 96, 64, 32}) {
      const long long tiles = ceil_div(g.m, bm) * ceil_div(g.n, bn) * groups;
      const double reuse = static_cast<double>(bm) * bn / (bm + bn) / 64.0;  // 1 for 128x128
      const double occupancy = std::min(1.0, 2.0 * warps_m_of(bm, bn) * warps_n_of(bn) / 8.0);
      const double efficiency = (0.5 + 0.5 * reuse) * occupancy;
      // Up to 256 splits: a weight gradient of a few channels over a large image (K = 16x225x225)
      // needs them to fill the GPU with its few output tiles (measured: up to 2.9x faster than at most 64).
      const long long max_splits = std::max<long long>(1, std::min<long long>(256, k_tiles / 4));
      for (long long splits = 1; splits <= max_splits; ++splits) {
        const long long waves = ceil_div(tiles * splits, slots);
        const double macs = static_cast<double>(bm) * bn * ceil_div(k_tiles, splits) * g.bk;
        double us = static_cast<double>(waves) * macs / efficiency / mac_per_us_per_slot;
        if (splits > 1) us += static_cast<double>(splits + 1) * g.m * g.n * groups * 4 / bytes_per_us + 2.0;
        if (us < best * 0.999) {
          best = us;
          g.bm = bm;
          g.bn = bn;
          g.splits = static_cast<int>(splits);
        }
      }
    }
  }
  g.warps_n = warps_n_of(g.bn);
  g.warps_m = warps_m_of(g.bm, g.bn);
}

Gemm plan_gemm(const std::string& entry, Face face, const Relation& r, DType dtype, const DeviceInfo& device,
               const Phase& phase) {
  Gemm g;
  g.entry = entry;
  g.face = face;
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
  switch (face) {
    case kForwardFace:
      g.m = r.batch * r.pix_b();
      g.n = r.bg();
      g.k = r.taps() * r.ag();
      // A: im2col of A along (r, c): vectors of channels. B: filter along c (KRSC) or kb.
      pick({{&r.a_strides, 1, r.ag(), kVectorK}}, g.a_mode, g.a_vec);
      pick({{&r.w_strides, 1, r.ag(), kVectorK}, {&r.w_strides, 0, r.bg(), kVectorMN}}, g.b_mode, g.b_vec);
      break;
    case kDataFace:
      g.m = r.batch * phase.pixels();
      g.n = r.ag();
      g.k = phase.taps() * r.bg();
      pick({{&r.b_strides, 1, r.bg(), kVectorK}}, g.a_mode, g.a_vec);
      pick({{&r.w_strides, 1, r.ag(), kVectorMN}, {&r.w_strides, 0, r.bg(), kVectorK}}, g.b_mode, g.b_vec);
      break;
    case kWeightFace:
      g.m = r.bg();
      g.n = r.taps() * r.ag();
      g.k = r.batch * r.pix_b();
      pick({{&r.b_strides, 1, r.bg(), kVectorMN}}, g.a_mode, g.a_vec);
      pick({{&r.a_strides, 1, r.ag(), kVectorMN}}, g.b_mode, g.b_vec);
      break;
  }
  // BK = 64 halves the barriers per FLOP (4 k16 steps per stage) where both
  // operands load 16-byte K vectors through precomputed rows (forward and data
  // faces) or linear pixels (pointwise weight face); per-vector address math
  // and narrow vectors do better with BK = 32 (measured, docs/perf/).
  const bool linear_weight_face = face == kWeightFace && is_pointwise(r) &&
                                  pixel_stride(r.batch, r.a_size, r.a_strides) > 0 &&
                                  pixel_stride(r.batch, r.b_size, r.b_strides) > 0;
  const bool wide_k = dtype != DType::kF32 && g.a_vec * es == 16 && g.b_vec * es == 16 &&
                      ((face != kWeightFace && g.a_mode == kVectorK) || linear_weight_face);
  g.bk = wide_k ? 64 : 32;
  choose_tiling(g, r.groups, device);
  // Pipeline depth: as deep as 4 stages while two CTAs still fit on an SM
  // (measured: one CTA of 6-8 warps per SM leaves the tensor cores idle).
  const long long pad = 16 / es;
  const long long stage_bytes =
      ((g.a_mode == kVectorMN ? g.bk * (g.bm + pad) : g.bm * (g.bk + pad)) +
       (g.b_mode == kVectorMN ? g.bk * (g.bn + pad) : g.bn * (g.bk + pad))) * es;
  g.stages = static_cast<int>(std::clamp<long long>(110 * 1024 / stage_bytes, 2, 4));
  // 16-byte stores need the output's N dimension contiguous and aligned.
  const long long out_v = 16 / es;
  switch (face) {
    case kForwardFace: g.vec_out = vector_width(r.b_strides, 1, r.bg(), es) == out_v; break;
    case kDataFace: g.vec_out = vector_width(r.a_strides, 1, r.ag(), es) == out_v; break;
    case kWeightFace:  // columns (r, c) are contiguous when the filter is K-major with C innermost (KRSC)
      g.vec_out = vector_width(r.w_strides, 1, r.ag(), es) == out_v &&
                  (r.f_size[2] == 1 || r.w_strides[4] == r.ag()) &&
                  (r.f_size[1] == 1 || r.w_strides[3] == r.ag() * r.f_size[2]) &&
                  (r.f_size[0] == 1 || r.w_strides[2] == r.ag() * r.f_size[2] * r.f_size[1]);
      break;
  }
  g.vec_out = g.vec_out && g.n % out_v == 0;
  return g;
}

size_t smem_bytes(const Gemm& g, DType dtype) {
  const long long elem = static_cast<long long>(dtype_size_bytes(dtype)), pad = 16 / elem;
  auto tile = [&](int rows, Mode mode) { return mode == kVectorMN ? g.bk * (rows + pad) : rows * (g.bk + pad); };
  return static_cast<size_t>(g.stages * (tile(g.bm, g.a_mode) + tile(g.bn, g.b_mode)) * elem);
}

size_t workspace_bytes_of(const Gemm& g, long long groups) {
  return g.splits > 1 ? static_cast<size_t>(g.splits * groups * g.m * g.n) * sizeof(float) : 0;
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
  // 0: bf16/fp16 tensor cores; 1: TF32 tensor cores (--fp32-math tf32); 2: fp32 FFMA (full precision).
  const int math = sig.dtype != DType::kF32 ? 0 : sig.fp32_tf32 ? 1 : 2;
  std::string s = "struct " + name + " {\n";
  s += "  using T = " + std::string(device_type(sig.dtype)) + ";\n";
  s += "  static constexpr int kFace = " + std::to_string(g.face) + ", kMath = " + std::to_string(math) + ";\n";
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
  // Linear pixel addressing (no division per element) and the pointwise case.
  const bool pointwise = is_pointwise(r);
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
  return s + "};\n";
}

// The GEMMs of a signature, in launch order, with which result each writes.
struct Work {
  Gemm gemm;
  Relation rel;        // the relation it runs on (padded channels or the signature's)
  std::string result;  // "y", "dx", "dw"
  bool epilogue;       // bias + activation on this output
};

std::vector<Work> work_of(const ConvSignature& sig, const DeviceInfo& device) {
  const Relation r = relation_of(sig);
  const ChannelPads pads = channel_pads_of(sig, r);
  const Relation forward = forward_relation(r, pads), weight = weight_relation(r, pads);
  std::vector<Work> out;
  // A strided data face (dilation 1) runs as one GEMM per stride phase, so
  // that no GEMM step multiplies a tap that cannot reach its pixel.
  const bool strided = r.stride[0] * r.stride[1] * r.stride[2] > 1;
  const bool unit_dilation = r.dil[0] == 1 && r.dil[1] == 1 && r.dil[2] == 1;
  auto add = [&](const std::string& entry, Face face, const std::string& result, bool epilogue) {
    if (face == kDataFace && strided && unit_dilation) {
      int index = 0;
      for (const Phase& p : phases(r))
        out.push_back({plan_gemm(entry + "_p" + std::to_string(index++), face, r, sig.dtype, device, p), r, result,
                       epilogue});
    } else {
      const Relation& rel = face == kDataFace ? r : face == kWeightFace ? weight : forward;  // dx: never padded
      out.push_back({plan_gemm(entry, face, rel, sig.dtype, device, whole(rel)), rel, result, epilogue});
    }
  };
  if (sig.directions & kConvForward) add("boo_igemm_y", sig.transposed ? kDataFace : kForwardFace, "y", true);
  if (sig.directions & kConvBackwardData) add("boo_igemm_dx", sig.transposed ? kForwardFace : kDataFace, "dx", false);
  if (sig.directions & kConvBackwardWeight) add("boo_igemm_dw", kWeightFace, "dw", false);
  return out;
}

// The workspace: split-K partials (the largest GEMM's; GEMMs run one after
// another), then the padded copies of x, w (forward), dy and dw (weight face).
struct WorkspaceLayout {
  size_t partials = 0, x_pad = 0, w_pad = 0, dy_pad = 0, dw_pad = 0, total = 0;  // byte offsets, total size
};

WorkspaceLayout workspace_layout(const ConvSignature& sig, const std::vector<Work>& works) {
  auto align = [](size_t bytes) { return (bytes + 255) / 256 * 256; };
  WorkspaceLayout l;
  size_t partials = 0;
  for (const Work& w : works) partials = std::max(partials, workspace_bytes_of(w.gemm, sig.groups));
  l.total = align(partials);
  const Relation r = relation_of(sig);
  const ChannelPads pads = channel_pads_of(sig, r);
  const size_t es = dtype_size_bytes(sig.dtype);
  auto take = [&](size_t& offset, long long elements) {
    offset = l.total;
    l.total += align(static_cast<size_t>(elements) * es);
  };
  if (pads.a.on) take(l.x_pad, r.batch * r.pix_a() * pads.a.padded);
  if (pads.a.on && (sig.directions & kConvForward)) take(l.w_pad, r.cb * r.taps() * pads.a.padded);
  if (pads.b.on) take(l.dy_pad, r.batch * r.pix_b() * pads.b.padded);
  if (pads.any() && (sig.directions & kConvBackwardWeight)) take(l.dw_pad, pads.b.count() * r.taps() * pads.a.count());
  return l;
}

// Everything plan() needs that no tensor address changes, kept by the Launchable.
struct Prepared final : PreparedPlan {
  Relation r;
  ChannelPads pads;
  std::vector<Work> works;
  WorkspaceLayout ws;
  std::vector<TensorSpec> arguments, results;  // the signature's (their strides are compiled in)
};

// One copy between a strided conv tensor (`spec` at `strided`) with `outer`
// (N or K) and `size` pixels and its padded dense copy at `dense`.
KernelLaunch channel_pad_launch(size_t entry, uint64_t strided, const TensorSpec& spec, long long outer,
                                const Dims3& size, uint64_t dense, const ChannelPad& pad, bool into_dense,
                                const DeviceInfo& device) {
  ConvChannelPadParams p{};
  p.strided = strided;
  p.dense = dense;
  const Strides5 st = strides5(spec);
  for (int i = 0; i < 5; ++i) p.strides[i] = st[i];
  p.sizes[0] = outer;
  for (int i = 0; i < 3; ++i) p.sizes[1 + i] = size[i];
  p.channels = pad.channels;
  p.padded_channels = pad.padded;
  const long long elements = outer * size[0] * size[1] * size[2] * (into_dense ? pad.padded : pad.channels);
  KernelLaunch l;
  l.entry = entry;
  const long long most = 16LL * (device.sm_count > 0 ? device.sm_count : 132);  // grid-stride beyond this
  l.grid[0] = static_cast<uint32_t>(std::clamp<long long>(ceil_div(elements, 256), 1, most));
  l.block[0] = 256;
  l.set_params(p);
  return l;
}

class ImplicitGemmConv final : public GpuImplementation {
 public:
  std::string_view name() const override { return "gpu:conv:implicit_gemm"; }

  Status accepts(const OpSignature& sig, const DeviceInfo& device) const override {
    const auto* conv = dynamic_cast<const ConvSignature*>(&sig);
    if (!conv) return invalid_argument("not a conv signature");
    if (device.cc_major < 8)
      return unimplemented("needs compute capability 8.0+ (mma.sync bf16), device has " +
                           std::to_string(device.cc_major) + "." + std::to_string(device.cc_minor));
    const Relation r = relation_of(*conv);
    if (r.ag() < 4 && r.bg() < 4)
      return unimplemented("channels per group " + std::to_string(r.ag()) + " -> " + std::to_string(r.bg()) +
                           " (depthwise-like): a GEMM would be mostly padding; gpu:conv:direct runs it");
    for (const Work& w : work_of(*conv, device)) {
      if (smem_bytes(w.gemm, conv->dtype) > static_cast<size_t>(device.max_shared_bytes_per_block))
        return unimplemented("tile needs " + std::to_string(smem_bytes(w.gemm, conv->dtype)) +
                             " bytes of shared memory, the device allows " +
                             std::to_string(device.max_shared_bytes_per_block));
    }
    return ok_status();
  }

  std::string compile_params(const OpSignature& sig, const DeviceInfo& device) const override {
    // The whole geometry is compiled in (see source_sha256); this is the tiling, readably.
    const auto& conv = dynamic_cast<const ConvSignature&>(sig);
    static const char* kModes[] = {"scalar", "vecK", "vecMN"};
    std::string record = "dtype=" + std::string(dtype_name(conv.dtype));
    for (const Work& w : work_of(conv, device)) {
      const Gemm& g = w.gemm;
      record += "; " + w.result + ": face " + std::to_string(g.face) + " gemm " + std::to_string(g.m) + "x" +
                std::to_string(g.n) + "x" + std::to_string(g.k) + " tile " + std::to_string(g.bm) + "x" +
                std::to_string(g.bn) + "x" + std::to_string(g.bk) + " warps " + std::to_string(g.warps_m) + "x" +
                std::to_string(g.warps_n) + " stages " + std::to_string(g.stages) + " A " + kModes[g.a_mode] + std::to_string(g.a_vec) +
                " B " + kModes[g.b_mode] + std::to_string(g.b_vec) + " splits " + std::to_string(g.splits);
    }
    return record;
  }

  Result<base::KernelSource> source(const OpSignature& sig, const DeviceInfo& device) const override {
    const auto& conv = dynamic_cast<const ConvSignature&>(sig);
    const ChannelPads pads = channel_pads_of(conv, relation_of(conv));
    const bool wgrad = conv.directions & kConvBackwardWeight;
    const std::string t = device_type(conv.dtype);
    base::KernelSource src;
    src.name = "conv_implicit_gemm.cu";
    src.text = "// Generated by boo: gpu:conv:implicit_gemm.\n#include \"boo/conv/conv_igemm.cuh\"\n";
    if (conv.directions & kConvBackwardBias) src.text += "#include \"boo/conv/conv_direct.cuh\"\n";
    // Entries in launch order (plan() counts them the same way).
    auto pad_kernel = [&](const std::string& entry, bool into_dense) {
      src.text += "extern \"C\" __global__ void __launch_bounds__(256) " + entry +
                  "(const boo::ConvChannelPadParams p) { boo::conv_copy_channels<" + t + ", " +
                  (into_dense ? "true" : "false") + ">(p); }\n";
      src.entries.push_back(entry);
    };
    if (pads.any()) src.text += "#include \"boo/conv/conv_channel_pad.cuh\"\n";
    if (pads.a.on) pad_kernel("boo_conv_pad_x", true);
    if (pads.a.on && (conv.directions & kConvForward)) pad_kernel("boo_conv_pad_w", true);
    if (pads.b.on) pad_kernel("boo_conv_pad_dy", true);
    for (const Work& w : work_of(conv, device)) {
      const std::string cfg = "Cfg_" + w.gemm.entry.substr(std::string("boo_igemm_").size());
      src.text += "\n" + cfg_source(cfg, w.gemm, w.rel, conv, w.epilogue);
      src.text += "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(w.gemm.threads()) + ", 2) " +
                  w.gemm.entry + "(const boo::ConvIgemmParams p) { boo::igemm::conv_igemm<" + cfg + ">(p); }\n";
      src.entries.push_back(w.gemm.entry);
      if (w.gemm.splits > 1) {
        src.text += "extern \"C\" __global__ void __launch_bounds__(256) " + w.gemm.entry +
                    "_reduce(const boo::ConvIgemmParams p) { boo::igemm::conv_igemm_reduce<" + cfg + ">(p); }\n";
        src.entries.push_back(w.gemm.entry + "_reduce");
      }
    }
    if (pads.any() && wgrad) pad_kernel("boo_conv_unpad_dw", false);
    if (conv.directions & kConvBackwardBias) {
      src.text += "\nextern \"C\" __global__ void __launch_bounds__(256) boo_conv_db(const boo::ConvFaceParams p) {\n"
                  "  boo::conv_bias_gradient<" + std::string(device_type(conv.dtype)) + ">(p);\n}\n";
      src.entries.emplace_back("boo_conv_db");
    }
    return src;
  }

  size_t workspace_bytes(const OpSignature& sig, const DeviceInfo& device) const override {
    const auto& conv = dynamic_cast<const ConvSignature&>(sig);
    return workspace_layout(conv, work_of(conv, device)).total;
  }

  Result<std::shared_ptr<const PreparedPlan>> prepare(const OpSignature& sig, const DeviceInfo& device) const override {
    const auto& conv = dynamic_cast<const ConvSignature&>(sig);
    auto p = std::make_shared<Prepared>();
    p->r = relation_of(conv);
    p->pads = channel_pads_of(conv, p->r);
    p->works = work_of(conv, device);
    p->ws = workspace_layout(conv, p->works);
    p->arguments = sig.arguments();
    p->results = sig.results();
    return std::shared_ptr<const PreparedPlan>(std::move(p));
  }

  Result<std::vector<KernelLaunch>> plan(const OpSignature& sig, const DeviceInfo& device,
                                         std::span<const DeviceTensor> args, std::span<const DeviceTensor> results,
                                         uint64_t workspace) const override {
    BOO_ASSIGN_OR_RETURN(std::shared_ptr<const PreparedPlan> prepared, prepare(sig, device));
    return plan_prepared(prepared.get(), sig, device, args, results, workspace);
  }

  Result<std::vector<KernelLaunch>> plan_prepared(const PreparedPlan* prepared_plan, const OpSignature& sig,
                                                  const DeviceInfo& device, std::span<const DeviceTensor> args,
                                                  std::span<const DeviceTensor> results,
                                                  uint64_t workspace) const override {
    const auto* prepared = dynamic_cast<const Prepared*>(prepared_plan);
    if (!prepared) return internal_error("gpu:conv:implicit_gemm: plan_prepared without its prepare()");
    const auto& conv = dynamic_cast<const ConvSignature&>(sig);
    auto find = [](std::span<const DeviceTensor> list, std::string_view name) { return find_tensor(list, name); };
    // Strides and alignment are compiled in: the tensors must match the signature.
    auto check = [](std::span<const DeviceTensor> tensors, const std::vector<TensorSpec>& specs) -> Status {
      for (const DeviceTensor& t : tensors) {
        for (const TensorSpec& s : specs)
          if (s.name == t.spec.name && s.strides != t.spec.strides)
            return invalid_argument("gpu:conv:implicit_gemm compiles the strides in: '" + t.spec.name + "' has " +
                                    format_dims(t.spec.strides) + ", the signature's layout needs " +
                                    format_dims(s.strides));
        if (t.address % 16 != 0)
          return invalid_argument("gpu:conv:implicit_gemm needs 16-byte aligned tensors; '" + t.spec.name + "' is not");
      }
      return ok_status();
    };
    BOO_RETURN_IF_ERROR(check(args, prepared->arguments));
    BOO_RETURN_IF_ERROR(check(results, prepared->results));
    const Relation& r = prepared->r;
    const ChannelPads& pads = prepared->pads;
    const std::vector<Work>& works = prepared->works;
    const WorkspaceLayout& ws = prepared->ws;
    std::vector<KernelLaunch> launches;
    size_t entry = 0;
    const bool tr = conv.transposed;
    if (pads.a.on) {
      const DeviceTensor* x = find(args, "x");
      launches.push_back(channel_pad_launch(entry++, x->address, x->spec, r.batch, r.a_size, workspace + ws.x_pad,
                                            pads.a, true, device));
      if (conv.directions & kConvForward) {
        const DeviceTensor* w = find(args, "w");
        launches.push_back(channel_pad_launch(entry++, w->address, w->spec, r.cb, r.f_size, workspace + ws.w_pad,
                                              pads.a, true, device));
      }
    }
    if (pads.b.on) {
      const DeviceTensor* dy = find(args, "dy");
      launches.push_back(channel_pad_launch(entry++, dy->address, dy->spec, r.batch, r.b_size, workspace + ws.dy_pad,
                                            pads.b, true, device));
    }
    for (const Work& w : works) {
      ConvIgemmParams p{};
      p.act_alpha = static_cast<float>(conv.activation.alpha);
      p.act_lo = static_cast<float>(conv.activation.lo);
      p.act_hi = static_cast<float>(conv.activation.hi);
      p.workspace = workspace + ws.partials;
      const DeviceTensor* out = find(results, w.result);
      if (!out) return internal_error("result '" + w.result + "' missing from the plan");
      p.out = out->address;
      // Bind A, B, W of the relation for this direction.
      if (w.result == "y") {
        const uint64_t x = find(args, "x")->address;
        (tr ? p.b : p.a) = x;
        (tr ? p.a : p.b) = out->address;
        p.w = find(args, "w")->address;
        if (conv.bias) p.bias = find(args, "b")->address;
      } else if (w.result == "dx") {
        const uint64_t dy = find(args, "dy")->address;
        (tr ? p.a : p.b) = dy;
        (tr ? p.b : p.a) = out->address;
        p.w = find(args, "w")->address;
      } else {
        (tr ? p.a : p.b) = find(args, "dy")->address;
        (tr ? p.b : p.a) = find(args, "x")->address;
        p.w = out->address;
      }
      // Padded faces read the padded copies; the weight face writes dw padded.
      if (pads.a.on && w.result != "dx") {
        p.a = workspace + ws.x_pad;
        if (w.result == "y") p.w = workspace + ws.w_pad;
      }
      if (pads.b.on && w.result == "dw") p.b = workspace + ws.dy_pad;
      if (pads.any() && w.result == "dw") p.w = p.out = workspace + ws.dw_pad;
      KernelLaunch l;
      l.entry = entry++;
      l.grid[0] = static_cast<uint32_t>(ceil_div(w.gemm.m, w.gemm.bm) * ceil_div(w.gemm.n, w.gemm.bn));
      l.grid[1] = static_cast<uint32_t>(r.groups);
      l.grid[2] = static_cast<uint32_t>(w.gemm.splits);
      l.block[0] = static_cast<uint32_t>(w.gemm.threads());
      l.shared_bytes = static_cast<uint32_t>(smem_bytes(w.gemm, conv.dtype));
      l.set_params(p);
      launches.push_back(l);
      if (w.gemm.splits > 1) {
        KernelLaunch reduce;
        reduce.entry = entry++;
        const long long elems = r.groups * w.gemm.m * w.gemm.n;
        reduce.grid[0] = static_cast<uint32_t>(std::clamp<long long>(ceil_div(elems, 256), 1, 65535));
        reduce.block[0] = 256;
        reduce.set_params(p);
        launches.push_back(reduce);
      }
    }
    if (pads.any() && (conv.directions & kConvBackwardWeight)) {
      // dw [Cb][taps][Ca] out of the padded [Cb padded][taps][Ca padded]: rows past Cb are left behind.
      const DeviceTensor* dw = find(results, "dw");
      launches.push_back(channel_pad_launch(entry++, dw->address, dw->spec, r.cb, r.f_size, workspace + ws.dw_pad,
                                            ChannelPad{true, r.ca, pads.a.count()}, false, device));
    }
    if (conv.directions & kConvBackwardBias) {
      ConvFaceParams p{};
      const DeviceTensor* dy = find(args, "dy");
      p.b = dy->address;
      p.n = conv.n;
      p.cb = conv.k;
      p.groups = 1;
      const Dims3 out = pad3(conv.output_size(), 1);
      for (int i = 0; i < 3; ++i) p.b_size[i] = out[i];
      const Strides5 s = strides5(dy->spec);
      for (int i = 0; i < 5; ++i) p.b_strides[i] = s[i];
      p.bias = find(results, "db")->address;
      KernelLaunch l;
      l.entry = entry++;
      l.grid[0] = static_cast<uint32_t>(std::min<long long>(conv.k, 65535));
      l.block[0] = 256;
      l.set_params(p);
      launches.push_back(l);
    }
    return launches;
  }
};

}  // namespace

const GpuImplementation& implicit_gemm_implementation() {
  static const ImplicitGemmConv impl;
  return impl;
}

}  // namespace boo::ops::conv
