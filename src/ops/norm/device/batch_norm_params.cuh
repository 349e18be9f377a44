// boo: the parameter block of the batch norm kernels, shared by host and
// device code (plain integers only, identical layout on both sides).
#pragma once

namespace boo {

/// x, y, dy and dx are [outer][channels][inner] in memory (NormProblem);
/// scale, bias, the statistics and dscale/dbias hold one element per channel.
/// Unused tensors are 0.
struct BatchNormParams {
  unsigned long long x, dy, scale, bias;
  unsigned long long mean_in, variance_in;            ///< inference -r: estimated; training -r: running_*_in
  unsigned long long saved_mean, saved_inv_variance;  ///< training -s: written; backward -s: read
  unsigned long long running_mean, running_variance;  ///< training -r: written
  unsigned long long y, dx, dscale, dbias;
  unsigned long long partials;      ///< workspace: [slices][channels] Sum2 (float pairs)
  unsigned long long coefficients;  ///< workspace: [kChannelCoefficients][channels] float
  long long outer, channels;
  long long rows_per_slice;  ///< outer rows per slice of the sums and apply kernels (gridDim.y slices)
  float eps, momentum;
};

/// The per-channel coefficients the statistics and gradient kernels leave for
/// the others, each an array of `channels` floats in the workspace.
enum ChannelCoefficient : int {
  kCoefMeanHigh = 0,  ///< the mean as high + low (x - high - low keeps the mean's float64 accuracy)
  kCoefMeanLow = 1,
  kCoefInvStd = 2,    ///< 1 / sqrt(var + eps)
  kCoefA = 3,         ///< forward y = (x - mean) * a + b; backward dx = a * dy + b * (x - mean) + c
  kCoefB = 4,
  kCoefC = 5,
  kChannelCoefficients = 6,
};

}  // namespace boo
