// boo: gpu:conv:small_c_data — the data face of convs with few A channels.
#pragma once

#include "ops/gpu_implementation.hpp"

namespace boo::ops::conv {

/// fp32 data faces (a regular conv's backward-data, a transposed conv's
/// forward) whose result has at most 4 channels, one group, 2-D, dilation 1,
/// rows contiguous (NCHW-like): FFMA sums in registers over the taps of each
/// stride phase, dy read about once through shared memory. Listed before
/// gpu:conv:implicit_gemm, whose GEMM N would be those few channels.
const GpuImplementation& small_c_data_implementation();

}  // namespace boo::ops::conv
