// boo: the parameter block of the float64 reference layer and RMS norm
// kernels (gpu:<op>:reference), shared by host and device code (plain
// integers and doubles only, identical layout on both sides).
#pragma once

namespace boo {

/// x's rank at most this (the planner leaves higher ranks to the CPU reference).
constexpr int kNormRefMaxRank = 8;

/// `rows` rows of `cols` elements. Tensors are row-major [rows, cols] but x
/// (strided by its shape and strides: a permuted layer norm input); weight
/// and bias are [cols], the statistics [rows] float32.
struct NormRefParams {
  unsigned long long x, dy, weight, bias;  ///< inputs in the signature dtype; 0 where absent
  unsigned long long x2;                   ///< add-layernorm: x is x + x2 (x2 strided like x); else 0
  unsigned long long mean_in, rstd_in;     ///< the given statistics of a backward, or 0
  unsigned long long y, mean_out, rstd_out, dx, dweight, dbias;  ///< float64 results; 0 where not asked
  /// Float64 workspace [4][rows]: mean and rstd of every row (computed or
  /// given), then dx's mean(g) and mean(g * xhat).
  unsigned long long row_terms;
  long long rows, cols;
  double eps;
  int x_rank;
  int unused_padding;
  long long x_shape[kNormRefMaxRank], x_strides[kNormRefMaxRank];
};

}  // namespace boo
