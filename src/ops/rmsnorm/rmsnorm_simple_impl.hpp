// boo: gpu:rmsnorm:simple — a block per row, every rmsnorm signature.
#pragma once

#include "boo/rmsnorm.hpp"
#include "ops/gpu_implementation.hpp"

namespace boo::ops::rmsnorm {

using RmsNormProblem = SignatureProblem<RmsNormSignature>;

const GpuImplementation& simple_implementation();

}  // namespace boo::ops::rmsnorm
