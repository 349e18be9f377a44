// boo: gpu:conv:implicit_gemm — the general tensor-core convolution.
#pragma once

#include "ops/gpu_implementation.hpp"

namespace boo::ops::conv {

/// Implicit GEMM on mma.sync tensor cores (bf16/fp16; TF32 with --fp32-math
/// tf32; full-precision fp32 on FFMA) for every layout, group count, rank, stride,
/// dilation and padding, regular or transposed, all directions; bias and
/// activation fused; split-K for long reductions. Declines depthwise-like
/// group shapes (gpu:conv:depthwise or gpu:conv:direct runs those).
const GpuImplementation& implicit_gemm_implementation();

}  // namespace boo::ops::conv
