// boo: gpu:conv:small_c_data and gpu:conv:small_c_forward — the data and
// forward faces of convs with few A channels.
#pragma once

#include "ops/gpu_implementation.hpp"

namespace boo::ops::conv {

/// Data faces (a regular conv's backward-data, a transposed conv's forward)
/// whose result has at most 4 channels, one group, 2-D, dilation 1: FFMA sums
/// in registers over the taps of each stride phase, dy read about once
/// through shared memory. fp32 with rows contiguous (NCHW-like); fp16/bf16 in
/// any layout (channel vectors of a channels-last dy) where the cost model
/// puts FFMA ahead of the tensor-core tier. Listed before
/// gpu:conv:implicit_gemm, whose GEMM N would be those few channels.
const GpuImplementation& small_c_data_implementation();

/// Forward faces (a regular conv's forward, a transposed conv's
/// backward-data; fp32, and fp16/bf16 with filters up to 3x3) whose A has at most 4 channels, one group, 2-D, dilation 1,
/// rows contiguous (NCHW-like): a network's stem. A is read once into shared
/// memory, B written once along its rows, the sums FFMA in registers. Listed
/// before gpu:conv:implicit_gemm, whose reduction would be those few
/// channels' taps and whose NCHW operands it would stage.
const GpuImplementation& small_c_forward_implementation();

}  // namespace boo::ops::conv
