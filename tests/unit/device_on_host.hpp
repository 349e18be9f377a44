// boo tests: just enough of CUDA's device language to run device functions
// whose threads work alone (a row group of one thread: no shuffles, no
// barriers reached) on the host, so that their float32 arithmetic is tested
// here. Include before a device header; the build maps boo/kernels/ to
// src/kernels/ for these tests and quiets -Wunknown-pragmas (#pragma unroll).
#pragma once

#include <cmath>

#define __device__
#define __forceinline__ inline

struct HostThreadIndex {
  unsigned x = 0, y = 0, z = 0;
};
inline HostThreadIndex threadIdx;

// Only named by the paths of row groups wider than one thread, which a host
// test never takes: they must compile, and fail loudly if reached.
template <typename T>
T __shfl_xor_sync(unsigned, T, int) {
  std::abort();
}
inline void __syncthreads() { std::abort(); }

// CUDA's rsqrtf is within 2 ulp of 1/sqrt(v) (CUDA C++ Programming Guide,
// mathematical functions); the host's stands at the far end of that bound,
// so that a test passing here passes with the device's.
inline float rsqrtf(float v) {
  float r = 1.0f / std::sqrt(v);
  r = std::nextafter(r, INFINITY);
  return std::nextafter(r, INFINITY);
}
