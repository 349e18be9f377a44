// boo: gpu:conv:direct — one thread per output element, every signature.
#pragma once

#include "ops/gpu_implementation.hpp"

namespace boo::ops::conv {

/// The direct convolution: correct for every valid ConvSignature (the
/// fallback behind the tensor-core kernels).
const GpuImplementation& direct_implementation();

}  // namespace boo::ops::conv
