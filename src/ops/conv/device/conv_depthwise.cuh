// boo device code: depthwise convolution (gpu:conv:depthwise), the relation
//
//   B[n, c*M + m, o] = sum_r A[n, c, o*stride - pad + r*dil] * W[c*M + m, 0, r]
//
// (one A channel per group, M = the channel multiplier), 1-D and 2-D.
// Depthwise convs are memory-bound: each block stages the input pixels its
// outputs read into shared memory once (as floats, zero outside the tensor)
// and computes every output from there, so each input element is read from
// device memory about once. The tile is `kBlockChannels` A channels of a
// kTileH x kTileW output tile; shared memory holds it as [c][y][x] (planar:
// NCHW-like tensors, threads along x) or [y][x][c] (channels-last tensors,
// threads along c), and every global load and store walks the tensor's own
// contiguous dimension. Every size, stride and tile is a constant of the
// generated Cfg (see conv_depthwise_impl.cpp).
//
//   forward face (B from A):  a thread per output, taps from the staged A window.
//   data face (A from B):     the same with the filter flipped; stride is a
//                             gather (only taps with (i + pad - r*dil) % stride
//                             == 0 reach pixel i), so no output is padded.
//   weight face (W from A, B): each block reduces a slice of the (n, pixel)
//                             tiles of its channels into fp32 partials
//                             [slice][Cb][taps]; conv_depthwise_weight_reduce
//                             sums the slices in order (deterministic).
#pragma once

#include "boo/kernels/types.cuh"
#include "boo/conv/conv_depthwise_params.cuh"

namespace boo::depthwise {

enum Role : int { kA = 0, kB = 1 };

/// The A or B tensor of the relation: its plane, channels and strides (D has size 1).
template <class C, int kRole>
struct Tensor {
  static constexpr long long kH = kRole == kA ? C::kAH : C::kBH;
  static constexpr long long kW = kRole == kA ? C::kAW : C::kBW;
  static constexpr long long kChannels = kRole == kA ? C::kCA : C::kCB;
  static constexpr long long kStrideN = kRole == kA ? C::AStr(0) : C::BStr(0);
  static constexpr long long kStrideC = kRole == kA ? C::AStr(1) : C::BStr(1);
  static constexpr long long kStrideY = kRole == kA ? C::AStr(3) : C::BStr(3);
  static constexpr long long kStrideX = kRole == kA ? C::AStr(4) : C::BStr(4);
  static constexpr bool kChannelsFastest = kStrideC == 1;

  __device__ static __forceinline__ Index<C> offset(int n, int c, int y, int x) {
    using I = Index<C>;
    return I(n) * I(kStrideN) + I(c) * I(kStrideC) + I(y) * I(kStrideY) + I(x) * I(kStrideX);
  }
};

/// Position of (channel, row, column) in a shared tile of kCh x kH x kW floats.
template <class C, int kCh, int kH, int kW>
__device__ __forceinline__ int tile_index(int c, int y, int x) {
  return C::kTileChannelsLast ? (y * kW + x) * kCh + c : (c * kH + y) * kW + x;
}

template <class T, int kVec>
struct alignas(sizeof(T) * kVec) Vector {
  T v[kVec];
};

/// Stages channels [c0, c0 + kCh), rows [y0, y0 + kH) and columns [x0, x0 + kW)
/// of image `n` of tensor kRole into `tile` as floats (0 outside the tensor).
/// Consecutive threads load along the tensor's contiguous dimension, kVec
/// channels at a time where the channels are contiguous and aligned (the
/// plan checks: kVec divides the channel count, c0, kCh and every stride).
/// Each thread issues up to kBatch loads before it stores any, so a block
/// waits for one round trip to device memory per batch, not per element.
template <class C, int kRole, int kCh, int kH, int kW>
__device__ __forceinline__ void stage(float* tile, unsigned long long base, int n, int c0, int y0, int x0) {
  using X = Tensor<C, kRole>;
  using T = typename C::T;
  constexpr int kVec = kRole == kA ? C::kAVec : C::kBVec;
  constexpr int kCount = kCh / kVec * kH * kW, kIters = (kCount + C::kThreads - 1) / C::kThreads, kBatch = 8;
  // Element l of the window: its channel (a multiple of kVec), row and column.
  const auto place = [](int l, int& c, int& y, int& x) {
    if (X::kChannelsFastest) {
      c = l % (kCh / kVec) * kVec;
      x = l / (kCh / kVec) % kW;
      y = l / (kCh / kVec * kW);
    } else {
      x = l % kW;
      y = l / kW % kH;
      c = l / (kW * kH);
    }
  };
#pragma unroll
  for (int i0 = 0; i0 < kIters; i0 += kBatch) {
    Vector<T, kVec> values[kBatch];
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      const int l = threadIdx.x + (i0 + i) * C::kThreads;
      int c, y, x;
      place(l, c, y, x);
      const int gc = c0 + c, gy = y0 + y, gx = x0 + x;
      if (i0 + i < kIters && l < kCount && gc < X::kChannels && gy >= 0 && gy < X::kH && gx >= 0 && gx < X::kW) {
        values[i] = *reinterpret_cast<const Vector<T, kVec>*>(base + sizeof(T) * X::offset(n, gc, gy, gx));
      } else {
#pragma unroll
        for (int v = 0; v < kVec; ++v) values[i].v[v] = from_float<T>(0.f);
      }
    }
    // The places are computed again rather than kept: registers go to the loads in flight.
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      const int l = threadIdx.x + (i0 + i) * C::kThreads;
      if (i0 + i >= kIters || l >= kCount) continue;
      int c, y, x;
      place(l, c, y, x);
#pragma unroll
      for (int v = 0; v < kVec; ++v) tile[tile_index<C, kCh, kH, kW>(c + v, y, x)] = to_float(values[i].v[v]);
    }
  }
}

/// The sum of f(0) ... f(kCount - 1) in blocks of about sqrt(kCount) terms:
/// rounding error grows like 2 sqrt(kCount) additions instead of kCount, in a
/// fixed order (deterministic).
template <int kCount, class F>
__device__ __forceinline__ float blocked_sum(F f) {
  constexpr int kBlock = kCount <= 256 ? 16 : kCount <= 1024 ? 32 : 64;
  float total = 0.f;
  for (int b = 0; b < kCount; b += kBlock) {
    float part = 0.f;
    for (int i = b; i < b + kBlock && i < kCount; ++i) part += f(i);
    total += part;
  }
  return total;
}

constexpr int kTaps(long long fh, long long fw) { return static_cast<int>(fh * fw); }

/// The filter taps of B channels [kb0, kb0 + kBlockChannels * kMult) as [channel][tap] floats.
template <class C>
__device__ __forceinline__ void stage_weights(float* w_s, unsigned long long w, int kb0) {
  constexpr int taps = kTaps(C::kFH, C::kFW), kCount = C::kBlockChannels * C::kMult * taps;
  for (int l = threadIdx.x; l < kCount; l += C::kThreads) {
    const int kb = kb0 + l / taps, t = l % taps;
    w_s[l] = kb < C::kCB ? load_as_float<typename C::T>(w, static_cast<long long>(kb) * C::WStr(0) +
                                                             (t / C::kFW) * C::WStr(3) + (t % C::kFW) * C::WStr(4))
                         : 0.f;
  }
}

/// The block's place for the forward and data faces: image, channel block and output tile (x fastest).
struct Place {
  int n, channel_block, tile_y, tile_x;
};
template <class C, long long kOutH, long long kOutW>
__device__ __forceinline__ Place place_of(unsigned id) {
  constexpr unsigned kTilesX = (kOutW + C::kTileW - 1) / C::kTileW, kTilesY = (kOutH + C::kTileH - 1) / C::kTileH;
  constexpr unsigned kChannelBlocks = (C::kCA + C::kBlockChannels - 1) / C::kBlockChannels;
  Place p;
  p.tile_x = id % kTilesX;
  id /= kTilesX;
  p.tile_y = id % kTilesY;
  id /= kTilesY;
  p.channel_block = id % kChannelBlocks;
  p.n = id / kChannelBlocks;
  return p;
}

/// The output element `e` of a tile of kCh channels x kPix pixels: along the
/// output tensor's contiguous dimension for consecutive e.
template <bool kChannelsFastest, int kCh, int kPix>
__device__ __forceinline__ void split_output(int e, int& channel, int& pixel) {
  if (kChannelsFastest) {
    channel = e % kCh;
    pixel = e / kCh;
  } else {
    channel = e / kPix;
    pixel = e % kPix;
  }
}

template <class C>
__device__ __forceinline__ float epilogue(float acc, const ConvDepthwiseParams& p, int channel) {
  if (C::kBias) acc += load_as_float<typename C::T>(p.bias, channel);
  return activate<C::kAct>(acc, p.act_alpha, p.act_lo, p.act_hi);
}

/// B from A and W: regular forward, transposed backward-data.
template <class C>
__device__ void forward_face(const ConvDepthwiseParams& p) {
  constexpr int taps = kTaps(C::kFH, C::kFW), kInCh = C::kBlockChannels, kOutCh = kInCh * C::kMult;
  constexpr int kPix = C::kTileH * C::kTileW;
  extern __shared__ float smem[];
  float* w_s = smem;                   // [kOutCh][taps]
  float* in_s = smem + C::kWindowAt;  // the A window [kInCh][kWinH][kWinW]
  const Place at = place_of<C, C::kBH, C::kBW>(blockIdx.x);
  const int c0 = at.channel_block * kInCh, kb0 = c0 * C::kMult;
  const int oy0 = at.tile_y * C::kTileH, ox0 = at.tile_x * C::kTileW;
  stage_weights<C>(w_s, p.w, kb0);
  stage<C, kA, kInCh, C::kWinH, C::kWinW>(in_s, p.a, at.n, c0, oy0 * C::kSH - C::kPH, ox0 * C::kSW - C::kPW);
  __syncthreads();
  for (int e = threadIdx.x; e < kOutCh * kPix; e += C::kThreads) {
    int j, pix;
    split_output<Tensor<C, kB>::kChannelsFastest, kOutCh, kPix>(e, j, pix);
    const int ly = pix / C::kTileW, lx = pix % C::kTileW;
    const int kb = kb0 + j, oy = oy0 + ly, ox = ox0 + lx;
    if (kb >= C::kCB || oy >= C::kBH || ox >= C::kBW) continue;
    const int ci = j / C::kMult;
    float acc = 0.f;
#pragma unroll
    for (int ry = 0; ry < C::kFH; ++ry) {
#pragma unroll
      for (int rx = 0; rx < C::kFW; ++rx) {
        const int wy = ly * C::kSH + ry * C::kDH, wx = lx * C::kSW + rx * C::kDW;
        acc += in_s[tile_index<C, kInCh, C::kWinH, C::kWinW>(ci, wy, wx)] * w_s[j * taps + ry * C::kFW + rx];
      }
    }
    store_from_float<typename C::T>(p.b, Tensor<C, kB>::offset(at.n, kb, oy, ox), epilogue<C>(acc, p, kb));
  }
}

/// A from B and W: regular backward-data, transposed forward. Pixel i takes
/// tap r from o = (i + pad - r*dil) / stride where that divides exactly; the
/// B window starts at the lowest such o of the tile.
template <class C>
__device__ void data_face(const ConvDepthwiseParams& p) {
  constexpr int taps = kTaps(C::kFH, C::kFW), kOutCh = C::kBlockChannels, kInCh = kOutCh * C::kMult;
  constexpr int kPix = C::kTileH * C::kTileW;
  extern __shared__ float smem[];
  float* w_s = smem;                   // [kInCh][taps]
  float* in_s = smem + C::kWindowAt;  // the B window [kInCh][kWinH][kWinW]
  const Place at = place_of<C, C::kAH, C::kAW>(blockIdx.x);
  const int c0 = at.channel_block * kOutCh, kb0 = c0 * C::kMult;
  const int iy0 = at.tile_y * C::kTileH, ix0 = at.tile_x * C::kTileW;
  // Shifted by kShift (a multiple of the stride) so that divisions see non-negative values: floor division.
  const int by0 = (iy0 + C::kPH - (C::kFH - 1) * C::kDH + C::kShiftH) / C::kSH - C::kShiftH / C::kSH;
  const int bx0 = (ix0 + C::kPW - (C::kFW - 1) * C::kDW + C::kShiftW) / C::kSW - C::kShiftW / C::kSW;
  stage_weights<C>(w_s, p.w, kb0);
  stage<C, kB, kInCh, C::kWinH, C::kWinW>(in_s, p.b, at.n, kb0, by0, bx0);
  __syncthreads();
  for (int e = threadIdx.x; e < kOutCh * kPix; e += C::kThreads) {
    int j, pix;
    split_output<Tensor<C, kA>::kChannelsFastest, kOutCh, kPix>(e, j, pix);
    const int ly = pix / C::kTileW, lx = pix % C::kTileW;
    const int c = c0 + j, iy = iy0 + ly, ix = ix0 + lx;
    if (c >= C::kCA || iy >= C::kAH || ix >= C::kAW) continue;
    float acc = 0.f;
#pragma unroll
    for (int ry = 0; ry < C::kFH; ++ry) {
      const int ty = iy + C::kPH - ry * C::kDH + C::kShiftH;
      if (C::kSH > 1 && ty % C::kSH != 0) continue;
      const int wy = ty / C::kSH - C::kShiftH / C::kSH - by0;
#pragma unroll
      for (int rx = 0; rx < C::kFW; ++rx) {
        const int tx = ix + C::kPW - rx * C::kDW + C::kShiftW;
        if (C::kSW > 1 && tx % C::kSW != 0) continue;
        const int wx = tx / C::kSW - C::kShiftW / C::kSW - bx0;
#pragma unroll
        for (int m = 0; m < C::kMult; ++m) {
          const int jb = j * C::kMult + m;
          acc += in_s[tile_index<C, kInCh, C::kWinH, C::kWinW>(jb, wy, wx)] * w_s[jb * taps + ry * C::kFW + rx];
        }
      }
    }
    store_from_float<typename C::T>(p.a, Tensor<C, kA>::offset(at.n, c, iy, ix), epilogue<C>(acc, p, c));
  }
}

/// W from A and B, first pass: block (channel block, slice) sums the tiles
/// [slice * U / S, (slice + 1) * U / S) of the U = N x tiles of the B plane.
/// Thread (j, g) accumulates every tap of B channel j over pixel group g; the
/// groups are then added in a fixed order, a chunk of taps at a time. Sums
/// are blocked (per tile, per block of groups and of slices) so that fp32
/// rounding grows with about the square root of N x H x W, not with it.
template <class C>
__device__ void weight_face(const ConvDepthwiseParams& p) {
  constexpr int taps = kTaps(C::kFH, C::kFW), kACh = C::kBlockChannels, kOutCh = kACh * C::kMult;
  constexpr int kPix = C::kTileH * C::kTileW, kGroups = C::kThreads / kOutCh;
  constexpr long long kTilesX = (C::kBW + C::kTileW - 1) / C::kTileW, kTilesY = (C::kBH + C::kTileH - 1) / C::kTileH;
  constexpr long long kUnits = C::kBatch * kTilesY * kTilesX;
  constexpr int kChannelBlocks = (C::kCA + kACh - 1) / kACh;
  extern __shared__ float smem[];
  float* a_s = smem + C::kWindowAt;  // the A window [kACh][kWinH][kWinW]
  float* b_s = smem + C::kTileBAt;   // the B tile [kOutCh][kTileH][kTileW]
  float* red = smem + C::kReduceAt;  // [kTapChunk][kThreads]
  const int channel_block = blockIdx.x % kChannelBlocks, slice = blockIdx.x / kChannelBlocks;
  const int c0 = channel_block * kACh, kb0 = c0 * C::kMult;
  const int j = threadIdx.x % kOutCh, g = threadIdx.x / kOutCh;
  float acc[taps];
#pragma unroll
  for (int t = 0; t < taps; ++t) acc[t] = 0.f;
  const long long begin = slice * kUnits / C::kSlices, end = (slice + 1) * kUnits / C::kSlices;
  for (long long unit = begin; unit < end; ++unit) {
    const int tile_x = static_cast<int>(unit % kTilesX), tile_y = static_cast<int>(unit / kTilesX % kTilesY);
    const int n = static_cast<int>(unit / (kTilesX * kTilesY));
    const int oy0 = tile_y * C::kTileH, ox0 = tile_x * C::kTileW;
    __syncthreads();  // the previous tile is no longer read
    stage<C, kA, kACh, C::kWinH, C::kWinW>(a_s, p.a, n, c0, oy0 * C::kSH - C::kPH, ox0 * C::kSW - C::kPW);
    stage<C, kB, kOutCh, C::kTileH, C::kTileW>(b_s, p.b, n, kb0, oy0, ox0);
    __syncthreads();
    if (g < kGroups) {
      // The tile's products are summed apart, then added to the running sums (blocked summation).
      float tile_sum[taps];
#pragma unroll
      for (int t = 0; t < taps; ++t) tile_sum[t] = 0.f;
      // B is zero outside the plane, so pixels past its edge add nothing. Not
      // unrolled: the taps already are, and unrolled pixels would spill.
#pragma unroll 1
      for (int pix = g; pix < kPix; pix += kGroups) {
        const int ly = pix / C::kTileW, lx = pix % C::kTileW;
        const float bv = b_s[tile_index<C, kOutCh, C::kTileH, C::kTileW>(j, ly, lx)];
#pragma unroll
        for (int ry = 0; ry < C::kFH; ++ry) {
#pragma unroll
          for (int rx = 0; rx < C::kFW; ++rx) {
            const int wy = ly * C::kSH + ry * C::kDH, wx = lx * C::kSW + rx * C::kDW;
            tile_sum[ry * C::kFW + rx] += a_s[tile_index<C, kACh, C::kWinH, C::kWinW>(j / C::kMult, wy, wx)] * bv;
          }
        }
      }
#pragma unroll
      for (int t = 0; t < taps; ++t) acc[t] += tile_sum[t];
    }
  }
#pragma unroll
  for (int t0 = 0; t0 < taps; t0 += C::kTapChunk) {
    __syncthreads();
#pragma unroll
    for (int tc = 0; tc < C::kTapChunk; ++tc)
      if (t0 + tc < taps) red[tc * C::kThreads + threadIdx.x] = acc[t0 + tc];
    __syncthreads();
    for (int e = threadIdx.x; e < kOutCh * C::kTapChunk; e += C::kThreads) {
      const int jj = e % kOutCh, tc = e / kOutCh, kb = kb0 + jj;
      if (t0 + tc >= taps || kb >= C::kCB) continue;
      const float sum = blocked_sum<kGroups>([&](int gg) { return red[tc * C::kThreads + gg * kOutCh + jj]; });
      reinterpret_cast<float*>(p.partials)[(static_cast<long long>(slice) * C::kCB + kb) * taps + t0 + tc] = sum;
    }
  }
}

/// W from A and B, second pass: dw[kb, r] = the slices' partials, added in a fixed order.
template <class C>
__device__ void weight_reduce(const ConvDepthwiseParams& p) {
  constexpr int taps = kTaps(C::kFH, C::kFW);
  constexpr long long kTotal = C::kCB * taps;
  const float* partials = reinterpret_cast<const float*>(p.partials);
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < kTotal;
       e += static_cast<long long>(gridDim.x) * blockDim.x) {
    const float sum = blocked_sum<C::kSlices>([&](int s) { return partials[s * kTotal + e]; });
    const long long kb = e / taps;
    const int t = static_cast<int>(e % taps);
    store_from_float<typename C::T>(p.w, kb * C::WStr(0) + (t / C::kFW) * C::WStr(3) + (t % C::kFW) * C::WStr(4), sum);
  }
}

}  // namespace boo::depthwise
