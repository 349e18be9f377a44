// boo: the CPU reference layer and RMS normalization.
#pragma once

#include <vector>

#include "base/host_tensor.hpp"
#include "boo/norm.hpp"

namespace boo::ops::norm {

/// Computes every result of `sig` from `args` (as sig.arguments()) in double
/// precision. Results are float64 tensors shaped as sig.results().
/// Add-layernorm: x + x2 in place of x throughout.
/// Forward: mean = sum(x)/n (layer norm; 0 for RMS norm),
/// var = sum((x-mean)^2)/n (two passes), rstd = 1/sqrt(var + eps),
/// xhat = (x - mean) * rstd, y = xhat * weight + bias.
/// Backward, with the given mean and rstd as a kernel would (or, with RMS
/// norm's -F 0, the forward's): g = dy * weight,
/// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) (RMS norm: without mean(g)),
/// dweight = sum over rows of dy * xhat, dbias = sum over rows of dy.
/// What the forward computes: every result, or the per-row statistics alone (mean and rstd: what a
/// backward's generated arguments need; y is then left unwritten).
enum class NormForwardParts { kAll, kStatistics };
Result<std::vector<base::HostTensor>> norm_reference(const NormSignature& sig,
                                                     const std::vector<base::HostTensor>& args,
                                                     NormForwardParts parts = NormForwardParts::kAll);

/// RMS norm: the rms over all elements of rstd * |dy * weight|, the first of
/// the two terms whose difference is dx (their difference keeps only
/// eps * rstd^2 of the part of dy along x, so short rows cancel). 0 without dx.
Result<double> rms_dx_term_rms(const NormSignature& sig, const std::vector<base::HostTensor>& args);

}  // namespace boo::ops::norm
