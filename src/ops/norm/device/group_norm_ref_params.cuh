// boo: the parameter block of the float64 reference group norm kernels
// (gpu:groupnorm:reference), shared by host and device code (plain integers
// and doubles only, identical layout on both sides).
#pragma once

namespace boo {

/// `rows` = N * groups rows of `cols` = C / groups * spatial elements in x's
/// logical order. x, dy, y and dx share x's shape and strides (rank 3 to 5);
/// weight, bias, dweight and dbias are [C]; the statistics [rows] (given:
/// float32; results: float64).
struct GroupNormRefParams {
  unsigned long long x, dy, weight, bias;  ///< inputs in the signature dtype; 0 where absent
  unsigned long long mean_in, rstd_in;     ///< the given statistics of a backward alone, or 0
  unsigned long long y, mean_out, rstd_out, dx, dweight, dbias;  ///< float64 results; 0 where not asked
  /// Float64 workspace [4][rows]: mean and rstd of every row (computed or
  /// given), then dx's mean(g) and mean(g * xhat).
  unsigned long long row_terms;
  long long rows, cols, samples, channels, groups, spatial;
  double eps;
  int rank;
  int unused_padding;
  long long shape[5], strides[5];
};

}  // namespace boo
