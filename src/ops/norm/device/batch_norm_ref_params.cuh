// boo: the parameter block of the float64 reference batch norm kernels
// (gpu:batchnorm:reference), shared by host and device code (plain integers
// and doubles only, identical layout on both sides).
#pragma once

namespace boo {

/// x, y, dy and dx have x's shape and strides (rank 4 or 5); scale, bias,
/// the given statistics and the parameter-shaped results ([1, C, 1...] or
/// [1, C, spatial...]) the parameters' shape and strides. Statistic p of
/// logical element i is (i % (C * S)) / S (spatial) or i % (C * S).
struct BatchNormRefParams {
  unsigned long long x, dy, scale, bias;                ///< inputs in their dtypes; 0 where absent
  unsigned long long given_mean, given_variance;        ///< inference -r: estimated (float32)
  unsigned long long saved_mean_in, saved_inv_in;       ///< backward -s (float32)
  unsigned long long running_mean_in, running_variance_in;  ///< training -r (float32)
  unsigned long long y, dx, dscale, dbias;              ///< float64 results; 0 where not asked
  unsigned long long saved_mean, saved_inv, running_mean, running_variance;
  /// Float64 workspace [5][stats]: mean, invstd, the variance, sum(dy) and sum(dy * xhat).
  unsigned long long stat_terms;
  long long total, stats, channels, spatial;
  double eps, momentum;
  int rank, spatial_mode;
  long long x_shape[5], x_strides[5], p_shape[5], p_strides[5];
};

}  // namespace boo
