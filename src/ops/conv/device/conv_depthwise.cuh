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
//   forward face (B from A):  a thread per run of kRunY outputs down a column
//                             (consecutive threads along the tensor's
//                             contiguous dimension), taps from the staged A
//                             window: each window row a run reads is loaded once
//                             for the kRunY outputs, not once per output.
//   data face (A from B):     at stride 1 the same with the filter turned 180
//                             degrees; at a larger stride a thread per output
//                             gathers (only taps with (i + pad - r*dil) % stride
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

/// stage() for a planar window of the run faces whose rows load kVecX
/// elements at a time (the plan checks that the tensor's width and every
/// stride but x's are multiples of kVecX). The window's first column
/// x0 moves down to a multiple of kVecX, so that vectors never straddle the
/// plane's edge; the tile's rows are kW floats from there and hold the window
/// from column `skip`, which this returns. Each vector lands as kVecX floats by
/// 16-byte shared stores (the tile starts 16-byte aligned).
template <class C, int kRole, int kCh, int kH, int kW, int kVecX>
__device__ __forceinline__ int stage_rows(float* tile, unsigned long long base, int n, int c0, int y0, int x0) {
  using X = Tensor<C, kRole>;
  using T = typename C::T;
  static_assert(kW % kVecX == 0 && kVecX % 4 == 0, "rows of whole vectors, stored 4 floats at a time");
  const int first = x0 >= 0 ? x0 / kVecX * kVecX : -((kVecX - 1 - x0) / kVecX * kVecX);  // floor to a multiple
  constexpr int kRowVectors = kW / kVecX, kCount = kCh * kH * kRowVectors;
  constexpr int kIters = (kCount + C::kThreads - 1) / C::kThreads, kBatch = 8;
#pragma unroll
  for (int i0 = 0; i0 < kIters; i0 += kBatch) {
    Vector<T, kVecX> values[kBatch];
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      const int l = threadIdx.x + (i0 + i) * C::kThreads;
      const int gc = c0 + l / (kRowVectors * kH), gy = y0 + l / kRowVectors % kH, gx = first + l % kRowVectors * kVecX;
      if (i0 + i < kIters && l < kCount && gc < X::kChannels && gy >= 0 && gy < X::kH && gx >= 0 && gx < X::kW) {
        values[i] = *reinterpret_cast<const Vector<T, kVecX>*>(base + sizeof(T) * X::offset(n, gc, gy, gx));
      } else {
#pragma unroll
        for (int v = 0; v < kVecX; ++v) values[i].v[v] = from_float<T>(0.f);
      }
    }
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      const int l = threadIdx.x + (i0 + i) * C::kThreads;
      if (i0 + i >= kIters || l >= kCount) continue;
      // [c][y][x] rows of kW floats: vector l starts at float 4-aligned l * kVecX.
#pragma unroll
      for (int v = 0; v < kVecX; v += 4) {
        Vector<float, 4> four;
#pragma unroll
        for (int k = 0; k < 4; ++k) four.v[k] = to_float(values[i].v[v + k]);
        *reinterpret_cast<Vector<float, 4>*>(tile + l * kVecX + v) = four;
      }
    }
  }
  return x0 - first;
}

/// The run faces' window: by stage_rows where C::kStageVecX > 1 (the window's
/// columns then start at the returned skip), else by stage (skip 0).
template <class C, int kRole, int kCh>
__device__ __forceinline__ int stage_window(float* tile, unsigned long long base, int n, int c0, int y0, int x0) {
  if constexpr (C::kStageVecX > 1) {
    return stage_rows<C, kRole, kCh, C::kWinH, C::kWinW, C::kStageVecX>(tile, base, n, c0, y0, x0);
  } else {
    stage<C, kRole, kCh, C::kWinH, C::kWinW>(tile, base, n, c0, y0, x0);
    return 0;
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

/// Run `e` of a tile of kCh channels x kTileH x kTileW outputs, a run being
/// kRunY outputs down one column: its channel and first row and column in the
/// tile. Consecutive e walk the output tensor's contiguous dimension.
template <class C, bool kChannelsFastest, int kCh>
__device__ __forceinline__ void split_run(int e, int& channel, int& ly0, int& lx) {
  constexpr int kStrips = C::kTileH / C::kRunY;
  int run;
  if (kChannelsFastest) {
    channel = e % kCh;
    run = e / kCh;
  } else {
    channel = e / (kStrips * C::kTileW);
    run = e % (kStrips * C::kTileW);
  }
  ly0 = run / C::kTileW * C::kRunY;
  lx = run % C::kTileW;
}

/// Adds to acc[y] (y < kRunY) the taps of the run whose first output reads
/// window row wy0 and column wx0: output y takes tap (ry, rx) from window
/// (wy0 + y * kStepY + ry * kDH, wx0 + rx * kDW) of window channel `ch`,
/// weighted by w[tap] ([kFH][kFW] floats in registers). kFlip: the filter
/// turned 180 degrees (the data face at stride 1). Each of the run's window
/// rows is loaded once and used by every output it reaches, taps in order.
template <class C, int kWinCh, int kStepY, int kStepX, bool kFlip>
__device__ __forceinline__ void accumulate_run(float (&acc)[C::kRunY], const float* window, const float* w, int ch,
                                               int wy0, int wx0) {
  constexpr int kRows = (C::kRunY - 1) * kStepY + (C::kFH - 1) * C::kDH + 1;
#pragma unroll
  for (int iy = 0; iy < kRows; ++iy) {
    float row[C::kFW];  // the run's window row iy: [kFW] taps kDW apart
#pragma unroll
    for (int rx = 0; rx < C::kFW; ++rx)
      row[rx] = window[tile_index<C, kWinCh, C::kWinH, C::kWinW>(ch, wy0 + iy, wx0 + rx * C::kDW)];
#pragma unroll
    for (int y = 0; y < C::kRunY; ++y) {
      const int reach = iy - y * kStepY;  // ry * kDH where output y reads this row
      if (reach < 0 || reach % C::kDH != 0 || reach / C::kDH >= C::kFH) continue;
      const int ry = reach / C::kDH;
#pragma unroll
      for (int rx = 0; rx < C::kFW; ++rx)
        acc[y] += row[rx] * w[kFlip ? (C::kFH - 1 - ry) * C::kFW + (C::kFW - 1 - rx) : ry * C::kFW + rx];
    }
  }
}

/// The filter taps of weight row `row` ([kFH][kFW] of the staged w_s) in registers.
template <class C>
__device__ __forceinline__ void load_taps(float (&w)[kTaps(C::kFH, C::kFW)], const float* w_s, int row) {
#pragma unroll
  for (int t = 0; t < kTaps(C::kFH, C::kFW); ++t) w[t] = w_s[row * kTaps(C::kFH, C::kFW) + t];
}

/// Stores a run's outputs (their epilogue applied) to tensor kRole at image n, channel ch, rows oy0 + y, column ox.
/// The channel's bias is read once for the run (the output may alias it as far as the compiler knows).
template <class C, int kRole>
__device__ __forceinline__ void store_run(const ConvDepthwiseParams& p, unsigned long long out, const float (&acc)[C::kRunY],
                                          int n, int ch, int oy0, int ox) {
  using X = Tensor<C, kRole>;
  const float bias = C::kBias ? load_as_float<typename C::T>(p.bias, ch) : 0.f;
#pragma unroll
  for (int y = 0; y < C::kRunY; ++y)
    if (oy0 + y < X::kH)
      store_from_float<typename C::T>(out, X::offset(n, ch, oy0 + y, ox),
                                      activate<C::kAct>(C::kBias ? acc[y] + bias : acc[y], p.act_alpha, p.act_lo,
                                                        p.act_hi));
}

/// B from A and W: regular forward, transposed backward-data.
template <class C>
__device__ void forward_face(const ConvDepthwiseParams& p) {
  constexpr int taps = kTaps(C::kFH, C::kFW), kInCh = C::kBlockChannels, kOutCh = kInCh * C::kMult;
  constexpr int kRuns = kOutCh * (C::kTileH / C::kRunY) * C::kTileW;
  extern __shared__ float smem[];
  float* w_s = smem;                   // [kOutCh][taps]
  float* in_s = smem + C::kWindowAt;  // the A window [kInCh][kWinH][kWinW]
  const Place at = place_of<C, C::kBH, C::kBW>(blockIdx.x);
  const int c0 = at.channel_block * kInCh, kb0 = c0 * C::kMult;
  const int oy0 = at.tile_y * C::kTileH, ox0 = at.tile_x * C::kTileW;
  stage_weights<C>(w_s, p.w, kb0);
  const int skip = stage_window<C, kA, kInCh>(in_s, p.a, at.n, c0, oy0 * C::kSH - C::kPH, ox0 * C::kSW - C::kPW);
  __syncthreads();
  for (int e = threadIdx.x; e < kRuns; e += C::kThreads) {
    int j, ly0, lx;
    split_run<C, Tensor<C, kB>::kChannelsFastest, kOutCh>(e, j, ly0, lx);
    const int kb = kb0 + j;
    if (kb >= C::kCB || oy0 + ly0 >= C::kBH || ox0 + lx >= C::kBW) continue;
    float w[taps], acc[C::kRunY];
    load_taps<C>(w, w_s, j);
#pragma unroll
    for (int y = 0; y < C::kRunY; ++y) acc[y] = 0.f;
    accumulate_run<C, kInCh, C::kSH, C::kSW, false>(acc, in_s, w, j / C::kMult, ly0 * C::kSH, skip + lx * C::kSW);
    store_run<C, kB>(p, p.b, acc, at.n, kb, oy0 + ly0, ox0 + lx);
  }
}

/// A from B and W at stride 1 (regular backward-data, transposed forward):
/// pixel i takes tap r from o = i + pad - r*dil, so the tile's B window
/// starts at iy0 + pad - (kFH - 1)*dil and the taps run over it flipped.
template <class C>
__device__ void data_face_unit_stride(const ConvDepthwiseParams& p) {
  constexpr int taps = kTaps(C::kFH, C::kFW), kOutCh = C::kBlockChannels, kInCh = kOutCh * C::kMult;
  constexpr int kRuns = kOutCh * (C::kTileH / C::kRunY) * C::kTileW;
  extern __shared__ float smem[];
  float* w_s = smem;                   // [kInCh][taps]
  float* in_s = smem + C::kWindowAt;  // the B window [kInCh][kWinH][kWinW]
  const Place at = place_of<C, C::kAH, C::kAW>(blockIdx.x);
  const int c0 = at.channel_block * kOutCh, kb0 = c0 * C::kMult;
  const int iy0 = at.tile_y * C::kTileH, ix0 = at.tile_x * C::kTileW;
  stage_weights<C>(w_s, p.w, kb0);
  const int skip = stage_window<C, kB, kInCh>(in_s, p.b, at.n, kb0, iy0 + C::kPH - (C::kFH - 1) * C::kDH,
                                              ix0 + C::kPW - (C::kFW - 1) * C::kDW);
  __syncthreads();
  for (int e = threadIdx.x; e < kRuns; e += C::kThreads) {
    int j, ly0, lx;
    split_run<C, Tensor<C, kA>::kChannelsFastest, kOutCh>(e, j, ly0, lx);
    const int c = c0 + j;
    if (c >= C::kCA || iy0 + ly0 >= C::kAH || ix0 + lx >= C::kAW) continue;
    float acc[C::kRunY];
#pragma unroll
    for (int y = 0; y < C::kRunY; ++y) acc[y] = 0.f;
#pragma unroll
    for (int m = 0; m < C::kMult; ++m) {
      float w[taps];
      load_taps<C>(w, w_s, j * C::kMult + m);
      accumulate_run<C, kInCh, 1, 1, true>(acc, in_s, w, j * C::kMult + m, ly0, skip + lx);
    }
    store_run<C, kA>(p, p.a, acc, at.n, c, iy0 + ly0, ix0 + lx);
  }
}

/// A from B and W at a larger stride (regular backward-data, transposed
/// forward), a thread per output. Pixel i takes tap r from
/// o = (i + pad - r*dil) / stride where that divides exactly; the B window
/// starts at the lowest such o of the tile.
template <class C>
__device__ void data_face_gather(const ConvDepthwiseParams& p) {
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

/// A from B and W: regular backward-data, transposed forward.
template <class C>
__device__ void data_face(const ConvDepthwiseParams& p) {
  if constexpr (C::kSH == 1 && C::kSW == 1)
    data_face_unit_stride<C>(p);
  else
    data_face_gather<C>(p);
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
