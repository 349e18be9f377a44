// boo device code: the depthwise weight gradient over whole planes
// (gpu:conv:depthwise_planes), the relation's weight face
//
//   W[c*M + m, 0, r] = sum_{n, o} A[n, c, o*stride - pad + r*dil] * B[n, c*M + m, o]
//
// for planes small enough to stage whole (MobileNet's and EfficientNet's 7x7
// to 28x28 stages, NCHW-like tensors). Block (slice, c) owns A channel c and
// its M B channels over the slice's images: per chunk of kImages images it
// copies the A planes [kImages][kAH*kAW] and the B planes
// [kImages][M][kBH*kBW] -- each a contiguous run of the tensor, copied in
// vectors -- into one of two shared-memory stages, the next chunk's copy in
// flight while the current one is summed. A thread takes an
// output row (image, m, oy) at a time: the B row and, per filter row, the A row
// it meets go to registers, and every tap's products over the row are summed
// there. The threads of a B channel then add their sums in a fixed tree
// (shuffles, then the warps in order): deterministic. With one slice the
// block writes dW itself (one launch); with several it writes fp32 partials
// [slice][Cb][taps] that depthwise::weight_reduce adds in slice order.
// Every size, stride and tile is a constant of the generated Cfg
// (see conv_depthwise_planes_impl.cpp).
#pragma once

#include "boo/conv/conv_depthwise.cuh"
#include "boo/kernels/arch/sm80.cuh"

namespace boo::depthwise {

/// A chunk's copy into shared memory, kept as T: A planes [kImages][kAH*kAW], B planes
/// [kImages][kMult][kBH*kBW] (each region padded to 16 bytes). A tensor whose vectors are 4 bytes or
/// more moves by cp.async (nothing passes through registers); 16-bit planes of odd size (7x7) move
/// element by element through registers, loaded before the current chunk is summed and stored after.
template <class C>
struct PlaneCopy {
  using T = typename C::T;
  static constexpr int kPlaneA = C::kAH * C::kAW, kPlaneB = C::kBH * C::kBW;
  static constexpr int kElemsA = C::kImages * kPlaneA, kElemsB = C::kImages * C::kMult * kPlaneB;
  static constexpr int kPadded = 16 / static_cast<int>(sizeof(T));
  /// Elements of one stage: the A region, then the B region.
  static constexpr int kStageA = (kElemsA + kPadded - 1) / kPadded * kPadded;
  static constexpr int kStage = kStageA + (kElemsB + kPadded - 1) / kPadded * kPadded;
  static constexpr bool kAsyncA = C::kAVec * sizeof(T) >= 4, kAsyncB = C::kBVec * sizeof(T) >= 4;
  // Vectors per chunk and per thread. A vector never crosses a plane (kAVec divides kPlaneA, kBVec kPlaneB).
  static constexpr int kVecsA = kElemsA / C::kAVec, kVecsB = kElemsB / C::kBVec;
  static constexpr int kLoadsA = (kVecsA + C::kThreads - 1) / C::kThreads;
  static constexpr int kLoadsB = (kVecsB + C::kThreads - 1) / C::kThreads;
  T a[kAsyncA ? 1 : kLoadsA];
  T b[kAsyncB ? 1 : kLoadsB];

  /// Element offset of A vector l of the chunk at image n0 (channel c), and whether it is in the chunk.
  __device__ __forceinline__ static Index<C> a_offset(int l, int n0, int c) {
    using I = Index<C>;
    const int img = l / (kPlaneA / C::kAVec), at = l % (kPlaneA / C::kAVec) * C::kAVec;
    return I(n0 + img) * I(C::AStr(0)) + I(c) * I(C::AStr(1)) + I(at);
  }
  __device__ __forceinline__ static Index<C> b_offset(int l, int n0, int c) {
    using I = Index<C>;
    const int img = l / (C::kMult * kPlaneB / C::kBVec), rest = l % (C::kMult * kPlaneB / C::kBVec);
    const int m = rest / (kPlaneB / C::kBVec), at = rest % (kPlaneB / C::kBVec) * C::kBVec;
    return I(n0 + img) * I(C::BStr(0)) + I(c * C::kMult + m) * I(C::BStr(1)) + I(at);
  }

  /// Starts the copy of images [n0, n0 + images) of channel c into `stage` (zeros past `images`).
  __device__ __forceinline__ void issue(const ConvDepthwiseParams& p, int n0, int images, int c, T* stage) {
#pragma unroll
    for (int i = 0; i < kLoadsA; ++i) {
      const int l = threadIdx.x + i * C::kThreads;
      const bool valid = l < kVecsA && l / (kPlaneA / C::kAVec) < images;
      const T* src = reinterpret_cast<const T*>(p.a) + (valid ? a_offset(l, n0, c) : 0);
      if constexpr (kAsyncA) {
        if (l < kVecsA) cp_async_vector<C::kAVec * sizeof(T)>(stage + l * C::kAVec, src, valid);
      } else {
        a[kAsyncA ? 0 : i] = valid ? *src : from_float<T>(0.f);
      }
    }
#pragma unroll
    for (int i = 0; i < kLoadsB; ++i) {
      const int l = threadIdx.x + i * C::kThreads;
      const bool valid = l < kVecsB && l / (C::kMult * kPlaneB / C::kBVec) < images;
      const T* src = reinterpret_cast<const T*>(p.b) + (valid ? b_offset(l, n0, c) : 0);
      if constexpr (kAsyncB) {
        if (l < kVecsB) cp_async_vector<C::kBVec * sizeof(T)>(stage + kStageA + l * C::kBVec, src, valid);
      } else {
        b[kAsyncB ? 0 : i] = valid ? *src : from_float<T>(0.f);
      }
    }
    cp_async_commit();
  }

  /// Stores the elements that came through registers.
  __device__ __forceinline__ void finish(T* stage) const {
#pragma unroll
    for (int i = 0; i < kLoadsA; ++i) {
      const int l = threadIdx.x + i * C::kThreads;
      if (!kAsyncA && l < kVecsA) stage[l] = a[kAsyncA ? 0 : i];
    }
#pragma unroll
    for (int i = 0; i < kLoadsB; ++i) {
      const int l = threadIdx.x + i * C::kThreads;
      if (!kAsyncB && l < kVecsB) stage[kStageA + l] = b[kAsyncB ? 0 : i];
    }
  }
};

/// W from A and B over whole planes (see the file comment). Grid: kSlices x kCA blocks, channel fastest.
template <class C>
__device__ void weight_planes(const ConvDepthwiseParams& p) {
  using T = typename C::T;
  using Copy = PlaneCopy<C>;
  constexpr int taps = kTaps(C::kFH, C::kFW);
  constexpr int kWarps = C::kThreads / 32, kGroupWarps = kWarps / C::kMult, kGroupThreads = kGroupWarps * 32;
  static_assert(kGroupWarps >= 1, "a warp per B channel at least");
  extern __shared__ __align__(16) unsigned char smem_bytes[];
  T* stages = reinterpret_cast<T*>(smem_bytes);                                    // [2][Copy::kStage]
  float* red = reinterpret_cast<float*>(smem_bytes + 2 * Copy::kStage * sizeof(T));  // [kWarps][taps]
  const int c = blockIdx.x % C::kCA, slice = blockIdx.x / C::kCA;
  const int n_begin = slice * C::kImagesPerSlice;
  const int n_end = n_begin + C::kImagesPerSlice < C::kBatch ? n_begin + C::kImagesPerSlice : C::kBatch;
  // The thread's B channel (threads past kMult groups only join the barriers and the tree) and place in its group.
  const int m = threadIdx.x / kGroupThreads, g = threadIdx.x % kGroupThreads;
  float acc[taps];
#pragma unroll
  for (int t = 0; t < taps; ++t) acc[t] = 0.f;
  Copy copy;
  copy.issue(p, n_begin, n_end - n_begin, c, stages);
  copy.finish(stages);
  for (int n0 = n_begin, stage = 0; n0 < n_end; n0 += C::kImages, stage ^= 1) {
    const int images = n_end - n0 < C::kImages ? n_end - n0 : C::kImages;
    const bool next = n0 + C::kImages < n_end;
    // The next chunk's copy flies while this one is summed.
    if (next) {
      copy.issue(p, n0 + C::kImages, n_end - n0 - C::kImages, c, stages + (stage ^ 1) * Copy::kStage);
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    const T* a_s = stages + stage * Copy::kStage;
    const T* b_s = a_s + Copy::kStageA;
    if (m < C::kMult) {
      // The chunk's products are summed apart, then added to the running sums (blocked summation),
      // up to 5x5: 7x7's second set of 49 sums would cost more registers than the block's tree saves.
      constexpr bool kBlocked = taps <= 25;
      float part_or_none[kBlocked ? taps : 1];
      float* part = kBlocked ? part_or_none : acc;
#pragma unroll
      for (int t = 0; t < (kBlocked ? taps : 0); ++t) part[t] = 0.f;
#pragma unroll 1
      for (int e = g; e < images * C::kBH; e += kGroupThreads) {
        const int img = e / C::kBH, oy = e % C::kBH;
        const T* b_row = b_s + (img * C::kMult + m) * Copy::kPlaneB + oy * C::kBW;
        float bv[C::kBW];
#pragma unroll
        for (int ox = 0; ox < C::kBW; ++ox) bv[ox] = to_float(b_row[ox]);
#pragma unroll
        for (int ry = 0; ry < C::kFH; ++ry) {
          const int iy = oy * C::kSH - C::kPH + ry * C::kDH;
          if (iy < 0 || iy >= C::kAH) continue;
          const T* a_row = a_s + img * Copy::kPlaneA + iy * C::kAW;
          // The columns are constants: loads of columns no tap reads are dropped.
          float av[C::kAW];
#pragma unroll
          for (int ix = 0; ix < C::kAW; ++ix) av[ix] = to_float(a_row[ix]);
#pragma unroll
          for (int rx = 0; rx < C::kFW; ++rx) {
#pragma unroll
            for (int ox = 0; ox < C::kBW; ++ox) {
              const int ix = ox * C::kSW - C::kPW + rx * C::kDW;
              if (ix >= 0 && ix < C::kAW) part[ry * C::kFW + rx] += bv[ox] * av[ix];
            }
          }
        }
      }
#pragma unroll
      for (int t = 0; t < (kBlocked ? taps : 0); ++t) acc[t] += part[t];
    }
    if (next) copy.finish(stages + (stage ^ 1) * Copy::kStage);
    __syncthreads();  // this stage is no longer read: the next issue refills it
  }
  // The group's sums: a butterfly within each warp, then its warps in order.
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
  for (int t = 0; t < taps; ++t) {
    float v = acc[t];
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
    if (lane == 0) red[warp * taps + t] = v;
  }
  __syncthreads();
  for (int e = threadIdx.x; e < C::kMult * taps; e += C::kThreads) {
    const int mm = e / taps, t = e % taps, kb = c * C::kMult + mm;
    float sum = 0.f;
#pragma unroll
    for (int w = 0; w < kGroupWarps; ++w) sum += red[(mm * kGroupWarps + w) * taps + t];
    if (C::kSlices == 1)
      store_from_float<T>(p.w, kb * C::WStr(0) + (t / C::kFW) * C::WStr(3) + (t % C::kFW) * C::WStr(4), sum);
    else
      reinterpret_cast<float*>(p.partials)[(static_cast<long long>(slice) * C::kCB + kb) * taps + t] = sum;
  }
}

}  // namespace boo::depthwise
