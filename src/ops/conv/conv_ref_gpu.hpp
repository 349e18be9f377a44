// boo: gpu:conv:reference — the float64 CPU reference's sums as GPU kernels.
#pragma once

#include "ops/gpu_reference.hpp"

namespace boo::ops::conv {

/// Every conv signature, every result, whole or at sampled positions
/// (device/conv_ref.cuh).
const GpuReference& gpu_reference();

}  // namespace boo::ops::conv
