// boo: registration entries of the norm ops.
#pragma once

#include "ops/op_definition.hpp"

namespace boo::ops::norm {

/// The layernorm op (MIOpenDriver's layernorm commands): flags, parser, inputs, CPU reference.
const OpDefinition& layer_norm_definition();
/// The addlayernorm op (MIOpenDriver's addlayernorm commands: y = LN(x + x2)).
const OpDefinition& add_layer_norm_definition();
/// The rmsnorm op (MIOpenDriver's t5layernorm commands).
const OpDefinition& rms_norm_definition();

}  // namespace boo::ops::norm
