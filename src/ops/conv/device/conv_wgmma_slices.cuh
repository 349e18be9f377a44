// boo device code: the slices of a gpu:conv:wgmma_sm90 launch — its groups
// and the stride phases of a strided data face, each a GEMM of its own that
// the persistent grid's tiles walk one after another (one launch for all).
//
// Groups (C::kGroups > 1): group g's GEMM is the ungrouped one with its
// operands and result moved by g x (C::GA, C::GW, C::GY) elements: its A
// channels (forward: x's g*C/g.., data: dy's g*K/g..), its filter rows or
// columns and its result's channels; kC and kN are a group's channels.
//
// Stride phases (C::kPhases = UH x UW > 1, the data face at stride (UH, UW),
// dilation 1). The data face
//   dx[i] = sum_{r : (i + pad - r) % U == 0} dy[(i + pad - r) / U] w[r]   (per dim)
// falls apart into U phases py: the pixels i = i0 + U t with i0 = (py - pad) mod U
// are reached exactly by the taps r = py + U j, j < tn = ceil((R - py) / U),
// from dy[base + t - j], base = (i0 + pad - py) / U (>= 0: i0 + pad - py is a
// multiple of U above -U). With j' = tn - 1 - j this is the stride-1 forward
// conv of dy with the phase's taps flipped, padded by pad' = tn - 1 - base
// (may be negative: the window starts past t):
//   dx[i0 + U t] = sum_{j' < tn} dy[t - pad' + j'] w'[rb + U j'],
// w' the fully flipped filter copy (w'[r'] = w[R-1-r']) and rb = R - 1 - py - U (tn - 1)
// the copy's tap of j' = 0, so a phase's filter is the copy from tap rb with
// taps U apart (C::WR, C::WS are those steps). Every phase runs on the same
// grid of P x Q = ceil(OH / UH) x ceil(OW / UW) output pixels; rows past a
// phase's own extent ceil((OH - i0) / U) are not stored. A phase with no
// taps (stride > filter) has no k-blocks and stores zeros (with the
// epilogue: act(bias)). C::YH, C::YW step U pixels of dx.
//
// The generated `struct Cfg` (conv_wgmma_impl.cpp) has kGroups, GA, GW, GY,
// kPhases, and with phases UH, UW (the data face's stride), FR, FS (the
// filter's taps), DPH, DPW (its padding) and OH, OW (dx's size).
#pragma once

namespace boo {
namespace wgmma_conv {

/// One slice's GEMM: offsets of its operands and result (elements), the
/// forward padding of its stride-1 conv, its taps per filter row, its
/// (tap, channel) reduction's length and its output rows' extent.
struct Slice {
  int a, w, out;        ///< element offsets of the slice's A, filter and result
  int bias;             ///< its first output channel (the bias's index)
  int pad_h, pad_w;     ///< padding of the slice's conv (the phase's pad', else Cfg's PH, PW)
  int taps_w;           ///< taps per filter row (S, or the phase's tn along W)
  int reduced;          ///< length of the packed (tap, channel) reduction
  int rows_h, rows_w;   ///< output pixels of the slice along H and W (P, Q without phases)
};

/// A phase along one dimension (see above): stride u, filter taps r, padding pad, dx extent o.
struct PhaseDim {
  int first;  ///< i0: dx's first pixel of the phase
  int taps;   ///< tn
  int pad;    ///< pad' of the stride-1 conv
  int tap0;   ///< rb: the flipped copy's tap of the phase's first (flipped) tap
  int rows;   ///< the phase's dx pixels
};
__device__ __forceinline__ PhaseDim phase_dim(int phase, int u, int r, int pad, int o) {
  PhaseDim d;
  d.first = ((phase - pad) % u + u) % u;
  d.taps = phase < r ? (r - phase + u - 1) / u : 0;
  const int base = (d.first + pad - phase) / u;
  d.pad = d.taps - 1 - base;
  d.tap0 = r - 1 - phase - u * (d.taps - 1);
  d.rows = d.first < o ? (o - d.first + u - 1) / u : 0;
  return d;
}

/// Slice `slice` of the launch: phase slice / kGroups (phases outermost: the
/// first ones have the most taps, so the long tiles start first), group
/// slice % kGroups.
template <class C>
__device__ __forceinline__ Slice slice_of(int slice) {
  Slice s;
  const int g = C::kGroups == 1 ? 0 : slice % C::kGroups;
  s.a = g * C::GA;
  s.w = g * C::GW;
  s.out = g * C::GY;
  s.bias = g * C::kN;
  if constexpr (C::kPhases == 1) {
    s.pad_h = C::PH;
    s.pad_w = C::PW;
    s.taps_w = C::S;
    s.reduced = C::R * C::S * C::kC;
    s.rows_h = C::P;
    s.rows_w = C::Q;
  } else {
    const int phase = C::kGroups == 1 ? slice : slice / C::kGroups;
    const PhaseDim h = phase_dim(phase / C::UW, C::UH, C::FR, C::DPH, C::OH);
    const PhaseDim w = phase_dim(phase % C::UW, C::UW, C::FS, C::DPW, C::OW);
    s.pad_h = h.pad;
    s.pad_w = w.pad;
    s.taps_w = w.taps;
    s.reduced = h.taps * w.taps * C::kC;
    s.rows_h = h.rows;
    s.rows_w = w.rows;
    // WR, WS step UH, UW taps of the copy; YH, YW step UH, UW pixels of dx.
    if (h.taps > 0 && w.taps > 0) s.w += h.tap0 * (C::WR / C::UH) + w.tap0 * (C::WS / C::UW);
    s.out += h.first * (C::YH / C::UH) + w.first * (C::YW / C::UW);
  }
  return s;
}

}  // namespace wgmma_conv
}  // namespace boo
