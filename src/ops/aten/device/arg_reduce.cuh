// boo device code: argmax/argmin along dims of a strided tensor (ATen's
// semantics: the first index of the extreme value; a NaN is the extreme of
// both, and the first NaN wins), one block per output.
#pragma once

#include "boo/aten/arg_reduce_params.cuh"
#include "boo/kernels/types.cuh"

namespace boo {

/// Whether (v, i) beats (best, best_i): NaN first, then the larger (kMax) or
/// smaller value, then the smaller index.
template <bool kMax>
__device__ __forceinline__ bool arg_beats(float v, long long i, float best, long long best_i) {
  const bool v_nan = v != v, best_nan = best != best;
  if (v_nan || best_nan) return v_nan && (!best_nan || i < best_i);
  if (v == best) return i < best_i;
  return kMax ? v > best : v < best;
}

/// Offset of element `linear` (row-major) of the dims `sizes`/`strides` (rank of them).
__device__ __forceinline__ long long arg_offset(long long linear, const long long* sizes, const long long* strides,
                                                int rank) {
  long long offset = 0;
  for (int d = rank - 1; d >= 0; --d) {
    offset += (linear % sizes[d]) * strides[d];
    linear /= sizes[d];
  }
  return offset;
}

/// Grid: blocks stride over the outputs; block: a multiple of 32 threads, each
/// thread scans r = threadIdx.x, +blockDim.x, ... then the block combines.
/// x: the tensor the params describe (element T); out: int64 [outputs].
template <typename T, bool kMax>
__device__ void arg_reduce(const ArgReduceParams& p) {
  __shared__ float best_values[32];
  __shared__ long long best_indices[32];
  const T* x = reinterpret_cast<const T*>(p.x);
  long long* out = reinterpret_cast<long long*>(p.out);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  for (long long o = blockIdx.x; o < p.outputs; o += gridDim.x) {
    const long long base = arg_offset(o, p.outer_sizes, p.outer_strides, p.outer_rank);
    float best = 0.f;
    long long best_i = -1;  // -1: nothing seen (threads past the end)
    for (long long r = threadIdx.x; r < p.length; r += blockDim.x) {
      const float v = to_float(x[base + arg_offset(r, p.reduced_sizes, p.reduced_strides, p.reduced_rank)]);
      if (best_i < 0 || arg_beats<kMax>(v, r, best, best_i)) {
        best = v;
        best_i = r;
      }
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
      const float v = __shfl_xor_sync(0xffffffffu, best, offset);
      const long long i = __shfl_xor_sync(0xffffffffu, best_i, offset);
      if (i >= 0 && (best_i < 0 || arg_beats<kMax>(v, i, best, best_i))) {
        best = v;
        best_i = i;
      }
    }
    __syncthreads();  // the previous output's combine may still read the slots
    if (lane == 0) {
      best_values[warp] = best;
      best_indices[warp] = best_i;
    }
    __syncthreads();
    if (warp == 0) {
      best = lane < warps ? best_values[lane] : 0.f;
      best_i = lane < warps ? best_indices[lane] : -1;
      for (int offset = 16; offset > 0; offset >>= 1) {
        const float v = __shfl_xor_sync(0xffffffffu, best, offset);
        const long long i = __shfl_xor_sync(0xffffffffu, best_i, offset);
        if (i >= 0 && (best_i < 0 || arg_beats<kMax>(v, i, best, best_i))) {
          best = v;
          best_i = i;
        }
      }
      if (lane == 0) out[o] = best_i;
    }
  }
}

}  // namespace boo
