// boo device code: sums over a group of threads — the lanes of a warp, or a
// whole block — the reduction step of every row normalization.
// NVRTC-clean: includes nothing.
#pragma once

namespace boo {

/// Two float sums reduced together (NVRTC has no make_float2 without headers).
struct Sum2 {
  float a, b;
};

/// Sums (a, b) over each aligned group of kLanes lanes of a warp (a power of
/// two, at most 32) by butterfly shuffles; every lane gets its group's sums.
/// @pre the whole warp calls it.
template <int kLanes>
__device__ __forceinline__ Sum2 lane_group_sum2(Sum2 v) {
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset >>= 1) {
    v.a += __shfl_xor_sync(0xffffffffu, v.a, offset);
    v.b += __shfl_xor_sync(0xffffffffu, v.b, offset);
  }
  return v;
}

/// Sums (a, b) over groups of kThreads consecutive threads (a power of two);
/// every thread of a group gets the sums. Groups of up to 32 threads reduce
/// with shuffles; wider groups are the whole block (blockDim.x == kThreads)
/// and reduce through `scratch` (32 Sum2) as well.
/// @pre every thread of the block calls it (the shuffles name the whole warp).
template <int kThreads>
__device__ __forceinline__ Sum2 group_sum2(Sum2 v, Sum2* scratch) {
  v = lane_group_sum2<(kThreads < 32 ? kThreads : 32)>(v);
  if (kThreads <= 32) return v;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();  // scratch may still be read by the previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < kThreads / 32 ? scratch[lane] : Sum2{0.f, 0.f};
  return lane_group_sum2<32>(v);
}

}  // namespace boo
