// boo: registration entry of the rmsnorm op (MIOpen's t5layernorm commands).
#pragma once

#include "ops/op_definition.hpp"

namespace boo::ops::rmsnorm {

/// The rmsnorm op's definition (flags, parser, inputs, CPU reference).
const OpDefinition& definition();

}  // namespace boo::ops::rmsnorm
