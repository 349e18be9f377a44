// boo: gpu:layernorm:simple — a block per row, every layernorm signature.
#pragma once

#include "ops/gpu_implementation.hpp"

namespace boo::ops::layernorm {

const GpuImplementation& simple_implementation();

}  // namespace boo::ops::layernorm
