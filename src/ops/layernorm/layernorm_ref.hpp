// boo: the CPU reference layer normalization.
#pragma once

#include <vector>

#include "base/host_tensor.hpp"
#include "boo/layernorm.hpp"

namespace boo::ops::layernorm {

/// Computes every result of `sig` from `args` (as sig.arguments()) in double
/// precision. Results are float64 tensors shaped as sig.results().
/// Forward: mean = sum(x)/n, var = sum((x-mean)^2)/n (biased, two-pass),
/// rstd = 1/sqrt(var + eps), y = (x - mean) * rstd * weight + bias.
/// Backward uses the given mean and rstd, as a kernel would:
/// xhat = (x - mean) * rstd, g = dy * weight,
/// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), dweight = sum_rows dy * xhat,
/// dbias = sum_rows dy.
Result<std::vector<base::HostTensor>> layernorm_reference(const LayerNormSignature& sig,
                                                          const std::vector<base::HostTensor>& args);

}  // namespace boo::ops::layernorm
