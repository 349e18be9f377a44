// boo: test-only ops for the executor's fault handling (enabled by BOO_ENABLE_TEST_OPS=1).
#pragma once

#include "ops/op_definition.hpp"

namespace boo::ops::testing {

/// Tokens bootest_ok, bootest_fault, bootest_hang with flag -n (elements):
/// y = 2x, or (CPU) abort / (GPU) an illegal address, or a hang.
const OpDefinition& definition();

}  // namespace boo::ops::testing
