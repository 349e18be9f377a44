// boo: gpu:conv:wgmma_sm90 — the Hopper tensor-core forward convolution.
#pragma once

#include "ops/gpu_implementation.hpp"

namespace boo::ops::conv {

/// Implicit GEMM on Hopper's warpgroup tensor cores (wgmma, sm_90a) for the
/// compute-bound forward convs it does well: bf16/fp16, 1-D or 2-D, groups 1,
/// x, w and y channels-last, C a multiple of 64, K a multiple of 8, at least
/// 4096 output pixels and 128 output channels; bias and activation fused.
/// Declines everything else (gpu:conv:implicit_gemm runs it).
const GpuImplementation& wgmma_sm90_implementation();

}  // namespace boo::ops::conv
