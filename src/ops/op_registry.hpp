// boo: the registered ops. One op = one folder under src/ops/ that defines an
// OpDefinition, plus one line in registry.cpp; there is no central switch over ops.
#pragma once

#include <span>
#include <string_view>

#include "ops/op_definition.hpp"

namespace boo::ops {

/// Every registered op, in registration order.
std::span<const OpDefinition* const> all_ops();

/// The op named `name` (OpSignature::op_name(), e.g. "conv"), or nullptr when
/// no registered op has that name.
const OpDefinition* find_op(std::string_view name);

}  // namespace boo::ops
