// boo: registration entry of the conv op.
#pragma once

#include "ops/op_definition.hpp"

namespace boo::ops::conv {

/// The conv op's definition (flags, parser, CPU reference).
const OpDefinition& definition();

}  // namespace boo::ops::conv
