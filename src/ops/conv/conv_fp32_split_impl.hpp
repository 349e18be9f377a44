// boo: gpu:conv:fp32_bf16x6 — strict fp32 convs on bf16 tensor cores.
#pragma once

#include "ops/gpu_implementation.hpp"

namespace boo::ops::conv {

/// A full-precision fp32 conv (not --fp32-math tf32) as one bf16 conv on
/// gpu:conv:wgmma_sm90 whose reduction is six times longer: each fp32 operand
/// split exactly into three bf16 parts, the six products that matter summed
/// in fp32 (device/conv_fp32_split.cuh says why that is as accurate as
/// FFMA). One direction at a time, regular (not transposed) 1-D and 2-D convs
/// of groups 1, any layouts, channels padded to multiples of 8; where the
/// bf16 conv's tier takes the sextupled conv and the cost model puts it ahead
/// of FFMA. Declines everything else (gpu:conv:implicit_gemm runs it).
const GpuImplementation& fp32_bf16x6_implementation();

}  // namespace boo::ops::conv
