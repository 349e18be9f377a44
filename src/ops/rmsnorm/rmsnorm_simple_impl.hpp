// boo: gpu:rmsnorm:simple — a block per row, every rmsnorm signature.
#pragma once

#include "ops/gpu_implementation.hpp"

namespace boo::ops::rmsnorm {

const GpuImplementation& simple_implementation();

}  // namespace boo::ops::rmsnorm
