// boo: the CPU reference RMS normalization.
#pragma once

#include <vector>

#include "base/host_tensor.hpp"
#include "boo/rmsnorm.hpp"

namespace boo::ops::rmsnorm {

/// Computes every result of `sig` from `args` (as sig.arguments()) in double
/// precision; results are float64 tensors shaped as sig.results().
/// Forward: rstd = 1/sqrt(sum(x^2)/n + eps), y = x * rstd * weight.
/// Backward (with the given rstd, or the forward's with -F 0):
/// g = dy * weight, xhat = x * rstd, dx = rstd * (g - xhat * mean(g * xhat)),
/// dweight = sum over rows of dy * xhat.
Result<std::vector<base::HostTensor>> rmsnorm_reference(const RmsNormSignature& sig,
                                                        const std::vector<base::HostTensor>& args);

/// The rms over all elements of rstd * |dy * weight|, the first of the two
/// terms whose difference is dx (their difference keeps only eps * rstd^2 of
/// the part of dy along x, so short rows cancel). 0 without dx.
Result<double> rmsnorm_dx_term_rms(const RmsNormSignature& sig, const std::vector<base::HostTensor>& args);

}  // namespace boo::ops::rmsnorm
