// boo: the CPU reference convolution.
#pragma once

#include <vector>

#include "base/host_tensor.hpp"
#include "boo/conv.hpp"

namespace boo::ops::conv {

/// Computes every result of `sig` (y, dx, dw, db as its directions select)
/// from `args` (as sig.arguments()), accumulating in double precision.
/// Results are float64 tensors with the shapes and layouts of sig.results().
Result<std::vector<base::HostTensor>> conv_reference(const ConvSignature& sig,
                                                     const std::vector<base::HostTensor>& args);

}  // namespace boo::ops::conv
