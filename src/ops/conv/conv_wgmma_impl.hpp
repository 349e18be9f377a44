// boo: gpu:conv:wgmma_sm90 — the Hopper tensor-core convolution.
#pragma once

#include "ops/gpu_implementation.hpp"

namespace boo::ops::conv {

/// Implicit GEMM on Hopper's warpgroup tensor cores (wgmma, sm_90a) for the
/// compute-bound convs it does well, one direction at a time: the forward
/// face (bias and activation fused), the data face at stride 1 and the
/// weight face (split K); bf16/fp16, 1-D or 2-D, groups 1, the GEMM's
/// reduced channels (the weight face's input channels) a multiple of 8, its
/// output channels a multiple of 8, at least 4096 output pixels and 128
/// output channels. Operands whose channels are not contiguous are staged,
/// except in pointwise convs of NCHW activations (read natively:
/// conv_wgmma_native.hpp).
/// Declines everything else (gpu:conv:implicit_gemm runs it).
const GpuImplementation& wgmma_sm90_implementation();

}  // namespace boo::ops::conv
