// boo: the float64 CPU reference of a signature, on tensors in host memory.
//
//   auto parsed = boo::parse_command("conv -n 1 -c 2 -H 4 -W 4 -k 3 -y 3 -x 3 -p 1 -q 1 -F 1");
//   boo::Status st = boo::run_reference(*parsed->signature, args, results);   // host TensorRefs
//
// The reference every GPU result is checked against: each element summed in
// double precision, then rounded once to the result's dtype. No GPU needed.
#pragma once

#include <span>

#include "boo/signature.hpp"
#include "boo/status.hpp"
#include "boo/tensor.hpp"

namespace boo {

/// Runs the CPU reference of `sig` over `args` and writes `results`, all in
/// host memory. Tensors follow sig.arguments() and sig.results() as
/// Launchable::launch's do: shapes and dtypes must match, strides must be the
/// signature's (those of size-1 dimensions are free). INVALID_ARGUMENT names a
/// tensor that does not; RESOURCE_EXHAUSTED when the reference's float64
/// results do not fit in host memory.
Status run_reference(const OpSignature& sig, std::span<const TensorRef> args, std::span<const TensorRef> results);

}  // namespace boo
