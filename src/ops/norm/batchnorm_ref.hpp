// boo: the CPU reference batch normalization.
#pragma once

#include <vector>

#include "base/host_tensor.hpp"
#include "boo/batchnorm.hpp"

namespace boo::ops::norm {

/// The batch's statistics of x per statistic (a channel, or an activation
/// with -m 0), in double precision: mean = sum(x)/M, var = sum((x - mean)^2)/M
/// (two passes), invstd = 1/sqrt(var + eps). batch_norm_reference's, and a
/// backward's saved statistics as the driver's inputs.
struct BatchStatistics {
  std::vector<double> mean, var, invstd;
};
BatchStatistics batch_statistics_of(const BatchNormSignature& sig, const base::HostTensor& x);

/// Every result of `sig` from `args` (as sig.arguments()), in double
/// precision; float64 tensors shaped and laid out as sig.results(). Per
/// statistic (a channel, or an activation with -m 0) over its M elements:
/// mean = sum(x)/M, var = sum((x - mean)^2)/M (two passes), invstd =
/// 1/sqrt(var + eps), y = (x - mean) * invstd * scale + bias; inference from
/// the estimated statistics where given. Running statistics
/// r = (1 - momentum) * r_in + momentum * batch (variance times M/(M-1)).
/// Backward (with the saved statistics, or the batch's recomputed from x):
/// dbias = sum(dy), dscale = sum(dy * xhat),
/// dx = scale * invstd * (dy - dbias/M - xhat * dscale/M).
Result<std::vector<base::HostTensor>> batch_norm_reference(const BatchNormSignature& sig,
                                                           const std::vector<base::HostTensor>& args);

}  // namespace boo::ops::norm
