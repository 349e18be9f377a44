// boo device code: the seeded test inputs of src/ops/input_generation.cpp,
// generated on the GPU.
//
// The same counter-based hash as the host's (src/base/random.hpp): element i
// of stream s under seed k is a pure function of (k, s, i), so the GPU writes
// exactly the bytes the CPU does (uniform values in [-1, 1) with 24 random
// bits, exact in float; rounded to bf16/fp16 to nearest even, as the host's
// conversions round).
#pragma once

#include "boo/kernels/types.cuh"
#include "boo/kernels/random/seeded_inputs_params.cuh"

namespace boo {

__device__ __forceinline__ unsigned long long splitmix64(unsigned long long x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// Uniform in [-1, 1), exactly representable as a float (24 random bits): base::uniform_pm1.
__device__ __forceinline__ float uniform_pm1(unsigned long long seed, unsigned long long stream,
                                             unsigned long long index) {
  const unsigned long long h = splitmix64(seed ^ splitmix64(stream * 0x632be59bd9b4e019ull ^ splitmix64(index)));
  return static_cast<float>(static_cast<long long>(h >> 40) - (1ll << 23)) * (1.0f / 8388608.0f);
}

/// Element i (logical row-major) of the tensor at its strided offset; one thread per element (grid-stride).
template <typename T>
__device__ void seeded_inputs(const SeededInputParams& p) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < p.numel;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    long long linear = i, offset = 0;
    for (int d = p.rank - 1; d >= 0; --d) {
      offset += (linear % p.shape[d]) * p.strides[d];
      linear /= p.shape[d];
    }
    const float v = p.splat ? p.value : uniform_pm1(p.seed, p.stream, static_cast<unsigned long long>(i));
    store_from_float<T>(p.out, offset, v);
  }
}

}  // namespace boo
