// boo device code: the depthwise weight gradient of channels-last tensors
// (gpu:conv:depthwise_channels), the relation's weight face
//
//   W[c, 0, r] = sum_{n, o} A[n, c, o*stride - pad + r*dil] * B[n, c, o]
//
// for a channel multiplier of 1 and A and B whose channels are contiguous
// (NHWC-like: MobileNet's depthwise layers run channels last). Every (n, o)
// pixel of B meets each tap's A pixel, kVec adjacent channels at a time, so a
// thread reads one vector of B and one of A per tap (8 or 16 bytes; the taps
// of neighbouring pixels overlap, and the L1 cache serves the repeats) and
// keeps the taps x kVec sums in registers.
//
// Block (slice, channel block) has kLanes x kWorkers threads: lane l owns
// channels c0 + l * kVec .. + kVec - 1 of the block's kLanes * kVec; worker w
// takes the slice's pixels (flattened n, oy, ox) w, w + kWorkers, ..., so a
// warp reads adjacent pixels' adjacent channels. The workers' sums are added
// in worker order through shared memory, one tap at a time: deterministic.
// With one slice the block writes dW (as T); with several, fp32 partials
// [slice][Cb][taps] that weight_reduce_warps adds (a warp per weight: the
// slices can number a thousand where few channels have many pixels).
// Every size, stride and tile is a constant of the generated Cfg (see
// conv_depthwise_impl.cpp).
#pragma once

#include "boo/conv/conv_depthwise.cuh"

namespace boo::depthwise {

/// kV elements of T from `base + at` in one load of kV * sizeof(T) bytes (the host aligned every address).
template <class T, int kV>
struct ChannelVector {
  static constexpr int kBytes = kV * static_cast<int>(sizeof(T));
  using Raw = typename Select<kBytes == 16, uint4,
                              typename Select<kBytes == 8, uint2,
                                              typename Select<kBytes == 4, unsigned, unsigned short>::type>::type>::type;
  static_assert(kBytes == 16 || kBytes == 8 || kBytes == 4 || kBytes == 2, "a vector of 2 to 16 bytes");

  template <class I>
  __device__ __forceinline__ static void load(unsigned long long base, I at, float (&out)[kV]) {
    const Raw raw = *reinterpret_cast<const Raw*>(reinterpret_cast<const T*>(base) + at);
    const T* v = reinterpret_cast<const T*>(&raw);
#pragma unroll
    for (int i = 0; i < kV; ++i) out[i] = to_float(v[i]);
  }
};

/// dW (or the slice's partials) from A and B (see the file comment). Grid: slices x channel blocks, the
/// channel block fastest. Shared memory: [kWorkers][kLanes * kVec] floats.
template <class C>
__device__ void weight_channels(const ConvDepthwiseParams& p) {
  using T = typename C::T;
  using I = Index<C>;
  using Vec = ChannelVector<T, C::kVec>;
  constexpr int kTapCount = C::kFH * C::kFW, kV = C::kVec;
  constexpr int kWorkers = C::kThreads / C::kLanes, kBlockChannels = C::kLanes * kV;
  constexpr int kPixels = C::kBatch * C::kBH * C::kBW;
  constexpr int kPerSlice = (kPixels + C::kSlices - 1) / C::kSlices;
  extern __shared__ __align__(16) float red[];
  const int channel_block = blockIdx.x % C::kChannelBlocks, slice = blockIdx.x / C::kChannelBlocks;
  const int lane = threadIdx.x % C::kLanes, worker = threadIdx.x / C::kLanes;
  const int c0 = channel_block * kBlockChannels + lane * kV;  // the host makes kCA a multiple of kV
  float acc[kTapCount][kV];
#pragma unroll
  for (int t = 0; t < kTapCount; ++t)
#pragma unroll
    for (int v = 0; v < kV; ++v) acc[t][v] = 0.f;
  if (c0 < C::kCA) {
    const int begin = slice * kPerSlice, end = begin + kPerSlice < kPixels ? begin + kPerSlice : kPixels;
#pragma unroll 1
    for (int e = begin + worker; e < end; e += kWorkers) {
      const int ox = e % C::kBW, oy = e / C::kBW % C::kBH, n = e / (C::kBW * C::kBH);
      float bv[kV];
      Vec::load(p.b, I(n) * I(C::BStr(0)) + I(c0) + I(oy) * I(C::BStr(3)) + I(ox) * I(C::BStr(4)), bv);
#pragma unroll
      for (int ry = 0; ry < C::kFH; ++ry) {
        const int iy = oy * C::kSH - C::kPH + ry * C::kDH;
        if (iy < 0 || iy >= C::kAH) continue;
#pragma unroll
        for (int rx = 0; rx < C::kFW; ++rx) {
          const int ix = ox * C::kSW - C::kPW + rx * C::kDW;
          if (ix < 0 || ix >= C::kAW) continue;
          float av[kV];
          Vec::load(p.a, I(n) * I(C::AStr(0)) + I(c0) + I(iy) * I(C::AStr(3)) + I(ix) * I(C::AStr(4)), av);
#pragma unroll
          for (int v = 0; v < kV; ++v) acc[ry * C::kFW + rx][v] += av[v] * bv[v];
        }
      }
    }
  }
  // One tap at a time: every worker's kV sums to shared memory, then a thread per channel adds them in worker
  // order.
#pragma unroll
  for (int t = 0; t < kTapCount; ++t) {
#pragma unroll
    for (int v = 0; v < kV; ++v) red[worker * kBlockChannels + lane * kV + v] = acc[t][v];
    __syncthreads();
    for (int j = threadIdx.x; j < kBlockChannels; j += C::kThreads) {
      const int c = channel_block * kBlockChannels + j;
      if (c >= C::kCA) break;
      float sum = 0.f;
      for (int w = 0; w < kWorkers; ++w) sum += red[w * kBlockChannels + j];
      if (C::kSlices == 1)
        store_from_float<T>(p.w, c * C::WStr(0) + (t / C::kFW) * C::WStr(3) + (t % C::kFW) * C::WStr(4), sum);
      else
        reinterpret_cast<float*>(p.partials)[(static_cast<long long>(slice) * C::kCB + c) * kTapCount + t] = sum;
    }
    __syncthreads();  // red is refilled by the next tap
  }
}

/// dW from the slices' partials [kSlices][kCB][taps]: warp e (of kCB x taps) sums its weight's slices, lane l
/// taking slices l, l + 32, ... in order, then a fixed butterfly: deterministic, kSlices / 32 loads a lane.
/// Grid: kCB x taps warps (blocks of whole warps).
template <class C>
__device__ void weight_reduce_warps(const ConvDepthwiseParams& p) {
  constexpr int kTapCount = C::kFH * C::kFW;
  constexpr long long kTotal = static_cast<long long>(C::kCB) * kTapCount;
  const long long e = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (e >= kTotal) return;  // a whole warp: the shuffles below see every lane
  const float* partials = reinterpret_cast<const float*>(p.partials);
  float sum = 0.f;
  for (int s = lane; s < C::kSlices; s += 32) sum += partials[s * kTotal + e];
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (lane == 0) {
    const long long c = e / kTapCount;
    const int t = static_cast<int>(e % kTapCount);
    store_from_float<typename C::T>(p.w, c * C::WStr(0) + (t / C::kFW) * C::WStr(3) + (t % C::kFW) * C::WStr(4), sum);
  }
}

}  // namespace boo::depthwise
