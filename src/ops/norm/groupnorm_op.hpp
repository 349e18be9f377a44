// boo: registration entry of the group norm op.
#pragma once

#include "ops/op_definition.hpp"

namespace boo::ops::norm {

/// The groupnorm op (MIOpenDriver's groupnorm commands): flags, parser, inputs, CPU reference.
const OpDefinition& group_norm_definition();

}  // namespace boo::ops::norm
