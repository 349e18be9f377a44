// boo device code: the statistics of a row normalization (layer norm, RMS
// norm; group norm's groups are rows too) from a row held in registers by a
// group of threads. NVRTC-clean: includes nothing but boo's device code.
#pragma once

#include "boo/kernels/reduce/group_sum.cuh"

namespace boo {

/// A row's statistics: its mean as centre + residual (residual = 0 when not
/// centered) and rstd = 1 / sqrt(variance + eps).
///
/// Why the residual: the float32 mean carries a rounding error of up to an ulp
/// of the row's sum divided by its length, and y = (x - mean) * rstd
/// multiplies that error by rstd (up to 1 / sqrt(eps)). On short rows whose
/// values happen to lie close together (6 elements of U(-1, 1) with a spread
/// of 0.05: rstd ~ 20) that alone exceeded fp32's tolerance (issue 19:
/// `layernorm -X 32x32x6x6x6 -o 4`, |err| 1.7e-6 at y = 0.034). The residual,
/// the mean of x - centre, is that rounding error measured in the second
/// pass; (x - centre) - residual is then accurate to an ulp of itself (the
/// corrected two-pass algorithm of Chan, Golub and LeVeque).
struct RowStats {
  float centre, residual, rstd;

  /// (x - mean) * rstd, with the mean's rounding error taken out.
  __device__ __forceinline__ float normalize(float x) const { return ((x - centre) - residual) * rstd; }
  /// The mean rounded once to float32 (what the forward saves).
  __device__ __forceinline__ float mean() const { return centre + residual; }
};

/// The statistics of a row of `count` elements spread over a group of
/// kThreads threads (see group_sum2): each thread holds kPerThread vectors of
/// kVec elements, its vector i being vector lane + i * kThreads of the row;
/// vectors at or past `vectors` hold zeros and are left out. Two passes over
/// the registers: the centre (the float32 mean), then the deviations from it
/// and their squares in one reduction (no cancellation, unlike
/// E[x^2] - mean^2): variance = mean(d^2) - residual^2 with residual = mean(d).
/// Not kCentered: centre and residual 0 and the mean of the squares (RMS norm).
/// @pre every thread of the block calls it (see group_sum2).
template <int kThreads, int kPerThread, int kVec, bool kCentered>
__device__ __forceinline__ RowStats two_pass_row_stats(const float (&x)[kPerThread][kVec], int lane, int vectors,
                                                       float count, float eps, Sum2* scratch) {
  float centre = 0.f;
  if (kCentered) {
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < kPerThread; ++i)
#pragma unroll
      for (int k = 0; k < kVec; ++k) sum += x[i][k];
    centre = group_sum2<kThreads>(Sum2{sum, 0.f}, scratch).a / count;
  }
  float deviations = 0.f, squares = 0.f;
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    if (lane + i * kThreads < vectors) {
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        const float d = x[i][k] - centre;
        if (kCentered) deviations += d;  // RMS norm: no mean, no residual to measure
        squares += d * d;
      }
    }
  }
  const Sum2 sums = group_sum2<kThreads>(Sum2{deviations, squares}, scratch);
  const float residual = kCentered ? sums.a / count : 0.f;
  const float variance = sums.b / count - residual * residual;
  return RowStats{centre, residual, rsqrtf(variance + eps)};
}

}  // namespace boo
