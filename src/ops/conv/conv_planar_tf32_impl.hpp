// boo: gpu:conv:planar_tf32 — fp32 1x1 convs of planar tensors on the TF32
// tensor cores.
#pragma once

#include "ops/gpu_implementation.hpp"

namespace boo::ops::conv {

/// The forward face of fp32 1x1 convs (any stride, no padding, groups 1;
/// 1-, 2- and 3-D) of NCHW-like activations (each channel's pixels
/// contiguous) on sm_90a's TF32 wgmma, reading and writing the tensors where
/// they lie (no staged copies), at full precision: 3xTF32, each operand split
/// into TF32 high and low parts, the three significant products summed in
/// fp32 (--fp32-math tf32 stays on gpu:conv:implicit_gemm). Bias, residual
/// and activation fused. Needs the input channels a multiple of 4 and the
/// filter's contiguous (KCRS) with 16-byte aligned rows; FFMA
/// (gpu:conv:implicit_gemm) runs the rest. device/conv_planar_tf32.cuh.
const GpuImplementation& planar_tf32_implementation();

}  // namespace boo::ops::conv
