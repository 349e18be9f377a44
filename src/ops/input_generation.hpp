// boo: the deterministic inputs every backend and test runs a signature on.
// BOO's driver seeds them (default 10) so that two runs, two backends or a
// forward and a backward command see the same values.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "base/host_tensor.hpp"

namespace boo::ops {

/// How test inputs are made.
struct InputOptions {
  uint64_t seed = 10;            ///< BOO's driver seed
  std::optional<double> splat;   ///< --splat-input-value: every element = this value
};

/// The random stream of an argument: a hash of its name, so that "x" holds
/// the same values in a forward and a backward command of the same shape.
uint64_t input_stream(std::string_view name);
/// Fills `tensor` with deterministic uniform values in [-1, 1) of `stream`.
void fill_uniform(base::HostTensor& tensor, uint64_t seed, uint64_t stream);
/// Sets every element of `tensor` to `value`.
void fill_splat(base::HostTensor& tensor, double value);

}  // namespace boo::ops
