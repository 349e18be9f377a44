// boo: registration entries of the batch norm ops.
#pragma once

#include "ops/op_definition.hpp"

namespace boo::ops::norm {

/// bnorm, bnormfp16, bnormbfp16: float32 scale and bias.
const OpDefinition& batch_norm_definition();
/// bnormfp16fp32, bnormbfp16fp32: 16-bit scale and bias, float32 gradients.
const OpDefinition& mixed_batch_norm_definition();

}  // namespace boo::ops::norm
