// boo: gpu:conv:pointwise — memory-bound pointwise convs of planar tensors.
#pragma once

#include "ops/gpu_implementation.hpp"

namespace boo::ops::conv {

/// Pointwise convs (1x1, stride 1, no padding, groups 1; 1-, 2- and 3-D,
/// regular or transposed) of NCHW-like tensors (each channel's pixels
/// contiguous), every face, fp32/fp16/bf16, bias and activation fused, where
/// they are memory-bound: their multiply-adds at the mma.sync (16-bit) or
/// FFMA (fp32) rate take no longer than reading and writing the tensors at
/// copy bandwidth, so a kernel that streams the tensors once runs at the
/// bound no tier can beat. No staged copies: tiles of pixel columns (spanning
/// images) against the filter in shared memory (device/conv_pointwise.cuh).
const GpuImplementation& pointwise_implementation();

}  // namespace boo::ops::conv
