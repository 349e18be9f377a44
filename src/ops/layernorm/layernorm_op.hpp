// boo: registration entry of the layernorm op.
#pragma once

#include "ops/op_definition.hpp"

namespace boo::ops::layernorm {

/// The layernorm op's definition (flags, parser, inputs, CPU reference).
const OpDefinition& definition();

}  // namespace boo::ops::layernorm
