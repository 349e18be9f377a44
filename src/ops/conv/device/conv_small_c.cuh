// boo device code: the data face of convs with few A channels
// (gpu:conv:small_c_data), the relation
//
//   A[n, c, i] = sum_{k, r : i + pad - r = o * stride} B[n, k, o] * W[k, c, r]
//
// for C <= 4 A channels, one group, 2-D, dilation 1: a network's first conv's
// backward-data (RGB input, 7x7 stride 2 or 3x3) and a transposed conv's
// forward to an image. An implicit GEMM's N would be C (3 of a 32-wide tile);
// here the sums are FFMA in registers. Pixel i of stride phase ph (i = ph +
// stride * u) takes exactly the taps r = r0(ph) + stride * t, t < tn(ph), from
// o = u + q(ph) - t (phase_taps), so no multiply is wasted on a tap that
// cannot reach it.
//
// Block (n, tile_u, tile_v) owns kTU x kTV phase pixels of every phase of
// image n: dx rows stride * [u0, u0 + kTU), columns stride * [v0, v0 + kTV).
// Per chunk of kKC B channels it copies (cp.async, zeros outside the tensor)
// the B window every phase of the tile reads [kKC][kWinH][kPitch] and the
// filter [kKC][kFH][kFW][kCPad] into one of two shared-memory stages, the next
// chunk's copy in flight while this one is summed, so B is read from device
// memory about once. A warp is one phase (its taps and filter reads are
// uniform: broadcasts); thread (u, strip) of it owns kJ consecutive phase
// columns of row u for every A channel: per tap row it reads kJ + kTnW - 1 B
// values once and multiplies each by every tap column and channel. The odd
// pitch puts the 8 rows x 4 strips of a warp on distinct banks.
// fp32 copies B with cp.async (rows contiguous); fp16/bf16 (data_face_16bit)
// load the next chunk into registers while this one is summed and widen it
// into the same float stages (Staged16), at any strides. The sums are fp32,
// converted on the store.
// Every size, stride and tile is a constant of the generated Cfg
// (see conv_small_c_impl.cpp).
#pragma once

#include "boo/kernels/arch/sm80.cuh"
#include "boo/kernels/types.cuh"
#include "boo/conv/conv_small_c_params.cuh"

namespace boo::small_c {

/// The taps of stride phase `ph` along one dimension: r = r0 + stride * t for t < tn, read from
/// B at o = u + q - t for the phase's pixel u.
struct PhaseTaps {
  int r0, tn, q;
};
__host__ __device__ constexpr PhaseTaps phase_taps(int ph, int stride, int pad, int filter) {
  const int r0 = (ph + pad) % stride;
  return {r0, r0 < filter ? (filter - r0 + stride - 1) / stride : 0, (ph + pad - r0) / stride};
}

template <class C>
__device__ __forceinline__ void copy_chunk(const ConvSmallCParams& p, float* stage, int n, int k0, int u0, int v0) {
  using I = Index<C>;
  constexpr int kWindow = C::kWinH * C::kWinW, kFilter = C::kFH * C::kFW * C::kCPad;
  const float* b = reinterpret_cast<const float*>(p.b);
  const float* w = reinterpret_cast<const float*>(p.w);
  for (int e = threadIdx.x; e < C::kKC * kWindow; e += C::kThreads) {
    const int kc = e / kWindow, wy = e % kWindow / C::kWinW, wx = e % C::kWinW;
    const int kb = k0 + kc, oy = u0 + C::kQLoH + wy, ox = v0 + C::kQLoW + wx;
    const bool valid = kb < C::kCB && oy >= 0 && oy < C::kBH && ox >= 0 && ox < C::kBW;
    const I at = valid ? I(n) * I(C::BStr(0)) + I(kb) * I(C::BStr(1)) + I(oy) * I(C::BStr(3)) + I(ox) : I(0);
    cp_async_vector<4>(stage + (kc * C::kWinH + wy) * C::kPitch + wx, b + at, valid);
  }
  float* w_s = stage + C::kKC * C::kWinH * C::kPitch;
  for (int e = threadIdx.x; e < C::kKC * kFilter; e += C::kThreads) {
    const int kc = e / kFilter, tap = e % kFilter / C::kCPad, c = e % C::kCPad, kb = k0 + kc;
    const bool valid = kb < C::kCB && c < C::kCA;
    const long long at = valid ? kb * C::WStr(0) + c * C::WStr(1) + tap / C::kFW * C::WStr(3) + tap % C::kFW * C::WStr(4)
                               : 0;
    cp_async_vector<4>(w_s + e, w + at, valid);
  }
  cp_async_commit();
}

/// Adds one stage's kKC B channels into thread (u, strip)'s sums acc[kJ][kCA] (see the file comment).
template <class C>
__device__ __forceinline__ void sum_chunk(const float* stage, float (&acc)[C::kJ][C::kCA], int u, int strip,
                                          PhaseTaps ty_of, PhaseTaps tx_of) {
#pragma unroll 1
  for (int kc = 0; kc < C::kKC; ++kc) {
    const float* window = stage + kc * C::kWinH * C::kPitch;
    const float* filter = stage + C::kKC * C::kWinH * C::kPitch + kc * C::kFH * C::kFW * C::kCPad;
#pragma unroll
    for (int t = 0; t < C::kTnH; ++t) {
      if (t >= ty_of.tn) break;
      // B row o = u0 + u + q - t, columns from the strip's first pixel's last tap on.
      const float* row = window + (u + ty_of.q - t - C::kQLoH) * C::kPitch + strip * C::kJ + tx_of.q - C::kQLoW -
                         (C::kTnW - 1);
      float seg[C::kJ + C::kTnW - 1];
#pragma unroll
      for (int i = 0; i < C::kJ + C::kTnW - 1; ++i) seg[i] = row[i];
      const float* taps = filter + (ty_of.r0 + C::kSH * t) * C::kFW * C::kCPad;
#pragma unroll
      for (int s = 0; s < C::kTnW; ++s) {
        if (s >= tx_of.tn) break;
        float wv[C::kCA];
#pragma unroll
        for (int c = 0; c < C::kCA; ++c) wv[c] = taps[(tx_of.r0 + C::kSW * s) * C::kCPad + c];
#pragma unroll
        for (int j = 0; j < C::kJ; ++j)
#pragma unroll
          for (int c = 0; c < C::kCA; ++c) acc[j][c] += seg[j - s + C::kTnW - 1] * wv[c];
      }
    }
  }
}

/// Writes thread's sums acc[kJ][kCA] (phase row pu, phase columns pv.. pv + kJ - 1 of phase (py, px)) to A
/// with the bias and activation, as T.
template <class C, class T>
__device__ __forceinline__ void store_result(const ConvSmallCParams& p, const float (&acc)[C::kJ][C::kCA], int n,
                                             int pu, int pv, int py, int px) {
  constexpr int kPhaseRows = (C::kAH + C::kSH - 1) / C::kSH;
  const int iy = C::kSH * pu + py;
  if (pu >= kPhaseRows || iy >= C::kAH) return;
  using I = Index<C>;
#pragma unroll
  for (int c = 0; c < C::kCA; ++c) {
    const float bias = C::kBias ? load_as_float<T>(p.bias, c) : 0.f;
#pragma unroll
    for (int j = 0; j < C::kJ; ++j) {
      const int ix = C::kSW * (pv + j) + px;
      if (ix >= C::kAW) continue;
      const float v = activate<C::kAct>(acc[j][c] + bias, p.act_alpha, p.act_lo, p.act_hi);
      reinterpret_cast<T*>(p.a)[I(n) * I(C::AStr(0)) + I(c) * I(C::AStr(1)) + I(iy) * I(C::AStr(3)) +
                                I(ix) * I(C::AStr(4))] = from_float<T>(v);
    }
  }
}

/// A from B and W (see the file comment). Grid: N x tiles_u x tiles_v blocks, v fastest.
template <class C>
__device__ void data_face(const ConvSmallCParams& p) {
  constexpr int kStrips = C::kTV / C::kJ, kPerPhase = C::kTU * kStrips;
  constexpr int kStage = C::kKC * (C::kWinH * C::kPitch + C::kFH * C::kFW * C::kCPad);
  constexpr int kPhaseRows = (C::kAH + C::kSH - 1) / C::kSH, kPhaseCols = (C::kAW + C::kSW - 1) / C::kSW;
  constexpr int kTilesU = (kPhaseRows + C::kTU - 1) / C::kTU, kTilesV = (kPhaseCols + C::kTV - 1) / C::kTV;
  constexpr int kChunks = (C::kCB + C::kKC - 1) / C::kKC;
  extern __shared__ __align__(16) float smem[];  // [2][kStage]
  const int tile_v = blockIdx.x % kTilesV, tile_u = blockIdx.x / kTilesV % kTilesU, n = blockIdx.x / (kTilesV * kTilesU);
  const int u0 = tile_u * C::kTU, v0 = tile_v * C::kTV;
  const int phase = threadIdx.x / kPerPhase, py = phase / C::kSW, px = phase % C::kSW;
  const int u = threadIdx.x % kPerPhase / kStrips, strip = threadIdx.x % kStrips;
  const PhaseTaps ty_of = phase_taps(py, C::kSH, C::kPH, C::kFH), tx_of = phase_taps(px, C::kSW, C::kPW, C::kFW);
  float acc[C::kJ][C::kCA];
#pragma unroll
  for (int j = 0; j < C::kJ; ++j)
#pragma unroll
    for (int c = 0; c < C::kCA; ++c) acc[j][c] = 0.f;
  copy_chunk<C>(p, smem, n, 0, u0, v0);
  for (int chunk = 0; chunk < kChunks; ++chunk) {
    float* stage = smem + (chunk & 1) * kStage;
    if (chunk + 1 < kChunks) {
      copy_chunk<C>(p, smem + ((chunk + 1) & 1) * kStage, n, (chunk + 1) * C::kKC, u0, v0);
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    sum_chunk<C>(stage, acc, u, strip, ty_of, tx_of);
    __syncthreads();  // this stage is no longer read: the next copy refills it
  }
  store_result<C, float>(p, acc, n, u0 + u, v0 + strip * C::kJ, py, px);
}

/// 16-bit B and W (C::T, bf16 or f16) on their way to a stage of floats: cp.async moves 4 bytes at least, so
/// the next chunk is loaded into registers before this chunk's sums and widened into the other stage after
/// them. A B load is C::kBVec channels of one window pixel: the chunk's 8 or 4 (one 16- or 8-byte vector)
/// where B's channels are contiguous and the plan found every address aligned, else 1; with channels contiguous (C::kBChannelsLast)
/// consecutive threads take consecutive channel groups of a pixel, else consecutive pixels of a row.
template <class C>
struct Staged16 {
  using T = typename C::T;
  static constexpr int kWindow = C::kWinH * C::kWinW, kFilter = C::kFH * C::kFW * C::kCPad;
  static constexpr int kGroups = C::kKC / C::kBVec;  // B loads per window pixel
  static constexpr int kBLoads = (kGroups * kWindow + C::kThreads - 1) / C::kThreads;
  static constexpr int kWLoads = (C::kKC * kFilter + C::kThreads - 1) / C::kThreads;
  struct alignas(2 * C::kBVec) Pack {
    unsigned short bits[C::kBVec];
  };
  Pack b[kBLoads];
  unsigned short w[kWLoads];

  // Load e (< kGroups * kWindow): its channel group and window pixel.
  __device__ __forceinline__ static void b_unit(int e, int& group, int& wy, int& wx) {
    const int pixel = C::kBChannelsLast ? e / kGroups : e % kWindow;
    group = C::kBChannelsLast ? e % kGroups : e / kWindow;
    wy = pixel / C::kWinW;
    wx = pixel % C::kWinW;
  }

  __device__ __forceinline__ void load(const ConvSmallCParams& p, int n, int k0, int u0, int v0) {
    using I = Index<C>;
    const T* bp = reinterpret_cast<const T*>(p.b);
    const T* wp = reinterpret_cast<const T*>(p.w);
#pragma unroll
    for (int i = 0; i < kBLoads; ++i) {
      const int e = threadIdx.x + i * C::kThreads;
      int group, wy, wx;
      b_unit(e, group, wy, wx);
      // The host takes vectors only where kCB is a multiple of kBVec: a group is all in B or all out.
      const int kb = k0 + group * C::kBVec, oy = u0 + C::kQLoH + wy, ox = v0 + C::kQLoW + wx;
      const bool valid = e < kGroups * kWindow && kb < C::kCB && oy >= 0 && oy < C::kBH && ox >= 0 && ox < C::kBW;
      const I at = I(n) * I(C::BStr(0)) + I(kb) * I(C::BStr(1)) + I(oy) * I(C::BStr(3)) + I(ox) * I(C::BStr(4));
      if (!valid) {
#pragma unroll
        for (int l = 0; l < C::kBVec; ++l) b[i].bits[l] = 0;
      } else if constexpr (C::kBVec == 8) {
        *reinterpret_cast<uint4*>(b[i].bits) = *reinterpret_cast<const uint4*>(bp + at);
      } else if constexpr (C::kBVec == 4) {
        *reinterpret_cast<uint2*>(b[i].bits) = *reinterpret_cast<const uint2*>(bp + at);
      } else {
#pragma unroll
        for (int l = 0; l < C::kBVec; ++l) b[i].bits[l] = bp[at + I(l) * I(C::BStr(1))].bits;
      }
    }
#pragma unroll
    for (int i = 0; i < kWLoads; ++i) {
      const int e = threadIdx.x + i * C::kThreads;
      const int kc = e / kFilter, tap = e % kFilter / C::kCPad, c = e % C::kCPad, kb = k0 + kc;
      const bool valid = e < C::kKC * kFilter && kb < C::kCB && c < C::kCA;
      const long long at = kb * C::WStr(0) + c * C::WStr(1) + tap / C::kFW * C::WStr(3) + tap % C::kFW * C::WStr(4);
      w[i] = valid ? wp[at].bits : 0;
    }
  }

  // Widens the loaded chunk into `stage` (conv_small_c.cuh's [kKC][kWinH][kPitch] window, then the filter).
  __device__ __forceinline__ void store(float* stage) const {
#pragma unroll
    for (int i = 0; i < kBLoads; ++i) {
      const int e = threadIdx.x + i * C::kThreads;
      if (e >= kGroups * kWindow) break;
      int group, wy, wx;
      b_unit(e, group, wy, wx);
#pragma unroll
      for (int l = 0; l < C::kBVec; ++l)
        stage[((group * C::kBVec + l) * C::kWinH + wy) * C::kPitch + wx] = to_float(T{b[i].bits[l]});
    }
    float* w_s = stage + C::kKC * C::kWinH * C::kPitch;
#pragma unroll
    for (int i = 0; i < kWLoads; ++i) {
      const int e = threadIdx.x + i * C::kThreads;
      if (e < C::kKC * kFilter) w_s[e] = to_float(T{w[i]});
    }
  }
};

/// data_face for 16-bit B, W and A (C::T): the same tile, stages of floats and sums; one barrier a chunk,
/// the next chunk's loads in flight in registers while this one is summed (Staged16).
template <class C>
__device__ void data_face_16bit(const ConvSmallCParams& p) {
  constexpr int kStrips = C::kTV / C::kJ, kPerPhase = C::kTU * kStrips;
  constexpr int kStage = C::kKC * (C::kWinH * C::kPitch + C::kFH * C::kFW * C::kCPad);
  constexpr int kPhaseRows = (C::kAH + C::kSH - 1) / C::kSH, kPhaseCols = (C::kAW + C::kSW - 1) / C::kSW;
  constexpr int kTilesU = (kPhaseRows + C::kTU - 1) / C::kTU, kTilesV = (kPhaseCols + C::kTV - 1) / C::kTV;
  constexpr int kChunks = (C::kCB + C::kKC - 1) / C::kKC;
  extern __shared__ __align__(16) float smem[];  // [2][kStage]
  const int tile_v = blockIdx.x % kTilesV, tile_u = blockIdx.x / kTilesV % kTilesU, n = blockIdx.x / (kTilesV * kTilesU);
  const int u0 = tile_u * C::kTU, v0 = tile_v * C::kTV;
  const int phase = threadIdx.x / kPerPhase, py = phase / C::kSW, px = phase % C::kSW;
  const int u = threadIdx.x % kPerPhase / kStrips, strip = threadIdx.x % kStrips;
  const PhaseTaps ty_of = phase_taps(py, C::kSH, C::kPH, C::kFH), tx_of = phase_taps(px, C::kSW, C::kPW, C::kFW);
  float acc[C::kJ][C::kCA];
#pragma unroll
  for (int j = 0; j < C::kJ; ++j)
#pragma unroll
    for (int c = 0; c < C::kCA; ++c) acc[j][c] = 0.f;
  Staged16<C> staged;
  staged.load(p, n, 0, u0, v0);
  staged.store(smem);
  for (int chunk = 0; chunk < kChunks; ++chunk) {
    if (chunk + 1 < kChunks) staged.load(p, n, (chunk + 1) * C::kKC, u0, v0);
    // Chunk's stage is complete; every thread is past chunk - 1's sums, so the other stage may be refilled.
    __syncthreads();
    sum_chunk<C>(smem + (chunk & 1) * kStage, acc, u, strip, ty_of, tx_of);
    if (chunk + 1 < kChunks) staged.store(smem + ((chunk + 1) & 1) * kStage);
  }
  store_result<C, typename C::T>(p, acc, n, u0 + u, v0 + strip * C::kJ, py, px);
}

}  // namespace boo::small_c
