// boo: gpu:layernorm:simple — a block per row, every layernorm signature.
#pragma once

#include "boo/layernorm.hpp"
#include "ops/gpu_implementation.hpp"

namespace boo::ops::layernorm {

using LayerNormProblem = SignatureProblem<LayerNormSignature>;

const GpuImplementation& simple_implementation();

}  // namespace boo::ops::layernorm
