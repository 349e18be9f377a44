// boo: the CPU reference group normalization.
#pragma once

#include <vector>

#include "base/host_tensor.hpp"
#include "boo/groupnorm.hpp"

namespace boo::ops::norm {

/// Computes every result of `sig` from `args` (as sig.arguments()) in double
/// precision; results are float64 tensors shaped as sig.results(). A group of
/// a sample is a row of M = C / groups * spatial elements in x's logical
/// order (element j: channel g * C / groups + j / spatial). Forward, per row:
/// mean = sum(x) / M, var = sum((x - mean)^2) / M (two passes), rstd =
/// 1 / sqrt(var + eps), y = (x - mean) * rstd * weight[c] + bias[c].
/// Backward (the given statistics, or the forward's): g = dy * weight[c],
/// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) over the row;
/// dweight[c] = sum over n, then spatial, of dy * xhat; dbias[c] likewise of dy.
Result<std::vector<base::HostTensor>> group_norm_reference(const GroupNormSignature& sig,
                                                           const std::vector<base::HostTensor>& args);

}  // namespace boo::ops::norm
