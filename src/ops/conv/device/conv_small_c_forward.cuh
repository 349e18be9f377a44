// boo device code: the forward face of convs with few A channels
// (gpu:conv:small_c_forward), the relation
//
//   B[n, k, oy, ox] = sum_{c, r, s} A[n, c, oy * sh - ph + r, ox * sw - pw + s] * W[k, c, r, s]
//
// for C <= 4 A channels, one group, 2-D, dilation 1: a network's stem (RGB
// input, 3x3 or 7x7 stride 2). An implicit GEMM's reduction would be C x R x S
// (27 for a 3x3) and its NCHW operands staged to channels last and back; here
// x is read once into shared memory and y written once, rows contiguous, and
// the sums are FFMA in registers. Elements are C::T (float, f16, bf16); the
// window, the filter and the sums are float.
//
// Block (n, tile_h, tile_w, k chunk) owns kTH output rows x kTW columns of
// image n and kKB output channels. It copies (cp.async, zeros outside the
// tensor) the A window those pixels read into shared memory as
// [kCA][kWinH][kSW][kPitch]: input column ix0 + phase + kSW * col sits at
// [phase][col], so that output pixel ox's tap s is column ox - ox0 + s / kSW of
// phase s % kSW, consecutive pixels reading consecutive floats whatever the
// stride. The filter chunk sits beside it as [kCA][kFH][kFW][kKB] (a tap's kKB
// channels contiguous). Thread (row, g) owns kJ = 4 consecutive pixels of
// output row oy0 + row, columns ox0 + 4g..: per (c, r, phase) it reads its
// 4 + taps - 1 window floats in 16-byte vectors once and multiplies each by
// every tap of that phase and kKT = 8 channels (two broadcast 16-byte filter
// reads a tap: every thread of the block is at the same channels), then
// stores 4 pixels x 8 channels, one 4-pixel vector (16 bytes in fp32, 8 in
// 16-bit) a channel along the row where y allows.
// kPitch is chosen on the host so that each quarter warp's 16-byte window
// reads fall on distinct bank groups. Every size, stride and tile is a
// constant of the generated Cfg (see conv_small_c_forward_impl.cpp).
#pragma once

#include "boo/kernels/arch/sm80.cuh"
#include "boo/kernels/types.cuh"
#include "boo/conv/conv_small_c_params.cuh"

namespace boo::small_c {

/// Taps of column phase `phase` along a filter of `filter` taps at `stride`: s = phase + stride * t, t < taps.
__host__ __device__ constexpr int phase_tap_count(int phase, int stride, int filter) {
  return phase < filter ? (filter - phase + stride - 1) / stride : 0;
}

/// B from A and W (see the file comment). Grid: N x k chunks x tiles_h x tiles_w blocks, tile_w fastest.
template <class C>
__device__ void forward_face(const ConvSmallCParams& p) {
  using I = Index<C>;
  constexpr int kJ = 4, kKT = 8, kTW = C::kG * kJ;
  constexpr int kTilesH = (C::kBH + C::kTH - 1) / C::kTH, kTilesW = (C::kBW + kTW - 1) / kTW;
  constexpr int kChunks = (C::kCB + C::kKB - 1) / C::kKB;
  constexpr int kWinCols = C::kSW * C::kPhW;  // input columns of the window, phases interleaved
  constexpr int kXElems = C::kCA * C::kWinH * C::kSW * C::kPitch;
  constexpr int kTaps = C::kCA * C::kFH * C::kFW;
  extern __shared__ __align__(16) float smem[];  // x window [kCA][kWinH][kSW][kPitch], filter [kTaps][kKB]
  float* xs = smem;
  float* ws = smem + kXElems;
  const int tile_w = blockIdx.x % kTilesW, tile_h = blockIdx.x / kTilesW % kTilesH;
  const int chunk = blockIdx.x / (kTilesW * kTilesH) % kChunks, n = blockIdx.x / (kTilesW * kTilesH * kChunks);
  const int oy0 = tile_h * C::kTH, ox0 = tile_w * kTW, k0 = chunk * C::kKB;
  const int iy0 = oy0 * C::kSH - C::kPH, ix0 = ox0 * C::kSW - C::kPW;
  using T = typename C::T;
  const T* a = reinterpret_cast<const T*>(p.a);
  const T* w = reinterpret_cast<const T*>(p.w);
  for (int e = threadIdx.x; e < C::kCA * C::kWinH * kWinCols; e += C::kThreads) {
    const int c = e / (C::kWinH * kWinCols), row = e / kWinCols % C::kWinH, col = e % kWinCols;
    const int iy = iy0 + row, ix = ix0 + col;
    const bool valid = iy >= 0 && iy < C::kAH && ix >= 0 && ix < C::kAW;
    const I at = valid ? I(n) * I(C::AStr(0)) + I(c) * I(C::AStr(1)) + I(iy) * I(C::AStr(3)) + I(ix) : I(0);
    float* to = xs + ((c * C::kWinH + row) * C::kSW + col % C::kSW) * C::kPitch + col / C::kSW;
    if constexpr (sizeof(T) == 4) {
      cp_async_vector<4>(to, a + at, valid);
    } else {
      *to = valid ? to_float(a[at]) : 0.f;  // 16-bit elements widen on their way in
    }
  }
  for (int e = threadIdx.x; e < C::kKB * kTaps; e += C::kThreads) {
    // e runs along W's taps of one channel (contiguous in KCRS), landing channel-fastest in shared memory.
    const int kc = e / kTaps, tap = e % kTaps, c = tap / (C::kFH * C::kFW), r = tap / C::kFW % C::kFH,
              s = tap % C::kFW;
    const bool valid = k0 + kc < C::kCB;
    const long long at =
        valid ? (k0 + kc) * C::WStr(0) + c * C::WStr(1) + r * C::WStr(3) + s * C::WStr(4) : 0;
    if constexpr (sizeof(T) == 4) {
      cp_async_vector<4>(ws + tap * C::kKB + kc, w + at, valid);
    } else {
      ws[tap * C::kKB + kc] = valid ? to_float(w[at]) : 0.f;
    }
  }
  cp_async_commit();
  cp_async_wait<0>();
  __syncthreads();

  const int row = threadIdx.x / C::kG, g = threadIdx.x % C::kG;
  const int oy = oy0 + row, ox = ox0 + g * kJ;
  T* b = reinterpret_cast<T*>(p.b);
  // Vector stores of 4 pixels where y's rows allow them (C::kVec: widths and strides multiples of 4) and y's
  // address is aligned to 4 elements.
  const bool vec = C::kVec && (p.b & (4 * sizeof(T) - 1)) == 0;
#pragma unroll 1
  for (int kg = 0; kg < C::kKB / kKT; ++kg) {
    if (k0 + kg * kKT >= C::kCB) break;
    float acc[kKT][kJ];
#pragma unroll
    for (int kk = 0; kk < kKT; ++kk)
#pragma unroll
      for (int j = 0; j < kJ; ++j) acc[kk][j] = 0.f;
#pragma unroll 1
    for (int c = 0; c < C::kCA; ++c) {
#pragma unroll
      for (int r = 0; r < C::kFH; ++r) {
#pragma unroll
        for (int ph = 0; ph < C::kSW; ++ph) {
          constexpr int kMaxTaps = (C::kFW + C::kSW - 1) / C::kSW;
          const int taps = phase_tap_count(ph, C::kSW, C::kFW);
          if (taps == 0) continue;
          // Window floats kJ * g .. kJ * g + kJ + taps - 2 of this (c, input row, phase): 16-byte reads.
          const float4* src = reinterpret_cast<const float4*>(
              xs + ((c * C::kWinH + row * C::kSH + r) * C::kSW + ph) * C::kPitch + g * kJ);
          float seg[4 * C::kSegV];
#pragma unroll
          for (int v = 0; v < C::kSegV; ++v) {
            if (4 * v >= kJ + taps - 1) break;
            const float4 q = src[v];
            seg[4 * v] = q.x, seg[4 * v + 1] = q.y, seg[4 * v + 2] = q.z, seg[4 * v + 3] = q.w;
          }
#pragma unroll
          for (int t = 0; t < kMaxTaps; ++t) {
            if (t >= taps) break;
            const float4* wt =
                reinterpret_cast<const float4*>(ws + ((c * C::kFH + r) * C::kFW + ph + C::kSW * t) * C::kKB + kg * kKT);
            const float4 w0 = wt[0], w1 = wt[1];
            const float wv[kKT] = {w0.x, w0.y, w0.z, w0.w, w1.x, w1.y, w1.z, w1.w};
#pragma unroll
            for (int kk = 0; kk < kKT; ++kk)
#pragma unroll
              for (int j = 0; j < kJ; ++j) acc[kk][j] += seg[j + t] * wv[kk];
          }
        }
      }
    }
    if (oy >= C::kBH || ox >= C::kBW) continue;  // a partial tile's idle pixels
#pragma unroll
    for (int kk = 0; kk < kKT; ++kk) {
      const int k = k0 + kg * kKT + kk;
      if (k >= C::kCB) break;
      const float bias = C::kBias ? load_as_float<T>(p.bias, k) : 0.f;
      float v[kJ];
#pragma unroll
      for (int j = 0; j < kJ; ++j) v[j] = activate<C::kAct>(acc[kk][j] + bias, p.act_alpha, p.act_lo, p.act_hi);
      const I at = I(n) * I(C::BStr(0)) + I(k) * I(C::BStr(1)) + I(oy) * I(C::BStr(3)) + I(ox);
      if (vec) {
        // ox and the row's width are multiples of 4: all four pixels are in y.
        if constexpr (sizeof(T) == 4) {
          *reinterpret_cast<float4*>(b + at) = make_float4(v[0], v[1], v[2], v[3]);
        } else {
          const T h[kJ] = {from_float<T>(v[0]), from_float<T>(v[1]), from_float<T>(v[2]), from_float<T>(v[3])};
          uint2 packed;
          packed.x = static_cast<unsigned>(h[0].bits) | static_cast<unsigned>(h[1].bits) << 16;
          packed.y = static_cast<unsigned>(h[2].bits) | static_cast<unsigned>(h[3].bits) << 16;
          *reinterpret_cast<uint2*>(b + at) = packed;
        }
      } else {
#pragma unroll
        for (int j = 0; j < kJ; ++j)
          if (ox + j < C::kBW) b[at + j] = from_float<T>(v[j]);
      }
    }
  }
}

}  // namespace boo::small_c
