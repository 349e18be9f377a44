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

/// The tier's modelled time (us, its tiling cost model at its best tiling and
/// split) of a 16-bit GEMM of m x n outputs over k-long sums, operands read as
/// 16-byte K vectors: what gpu:conv:wgmma_sm90 weighs its own model against
/// for convs below its size floor.
double implicit_gemm_modelled_us(long long m, long long n, long long k, const ArchSpec& arch);

}  // namespace boo::ops::conv
