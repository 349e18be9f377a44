// boo device code: test-only kernels for the executor's fault handling
// (op bootest_*, enabled by BOO_ENABLE_TEST_OPS=1): a correct one, one that
// writes to an unmapped address, one that never returns.
#pragma once

#include "boo/testing/test_op_params.cuh"

namespace boo {

/// y = 2 x, or a fault, or a hang.
__device__ void test_op_kernel(const TestOpParams& p) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (p.behaviour == 1 && i == 0) *reinterpret_cast<volatile float*>(16ull) = 1.f;  // page 0: unmapped
  if (p.behaviour == 2) {
    volatile int forever = 1;
    while (forever) {
    }
  }
  if (i < p.n) reinterpret_cast<float*>(p.y)[i] = 2.f * reinterpret_cast<const float*>(p.x)[i];
}

}  // namespace boo
