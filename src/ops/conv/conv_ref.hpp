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

/// Elements `linear` (logical row-major indices) of result `result_index`
/// only: the reference at a sample of positions, for outputs too large to
/// compute whole.
Result<std::vector<double>> conv_reference_sample(const ConvSignature& sig, const std::vector<base::HostTensor>& args,
                                                  size_t result_index, const std::vector<int64_t>& linear);

}  // namespace boo::ops::conv
