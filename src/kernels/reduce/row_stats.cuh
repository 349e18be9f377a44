// boo device code: the statistics of a row normalization (layer norm, RMS
// norm; group norm's groups are rows too) from a row held in registers by a
// group of threads. NVRTC-clean: includes nothing but boo's device code.
#pragma once

#include "boo/kernels/reduce/group_sum.cuh"

namespace boo {

/// A row's mean (0 when not centered) and rstd = 1 / sqrt(variance + eps).
struct RowStats {
  float mean, rstd;
};

/// The statistics of a row of `count` elements spread over a group of
/// kThreads threads (see group_sum2): each thread holds kPerThread vectors of
/// kVec elements, its vector i being vector lane + i * kThreads of the row;
/// vectors at or past `vectors` hold zeros and are left out. Two passes over
/// the registers: the mean, then the squared deviations from it (no
/// cancellation, unlike E[x^2] - mean^2). Not kCentered: mean 0 and the mean
/// of the squares (RMS norm).
/// @pre every thread of the block calls it (see group_sum2).
template <int kThreads, int kPerThread, int kVec, bool kCentered>
__device__ __forceinline__ RowStats two_pass_row_stats(const float (&x)[kPerThread][kVec], int lane, int vectors,
                                                       float count, float eps, Sum2* scratch) {
  float mean = 0.f;
  if (kCentered) {
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < kPerThread; ++i)
#pragma unroll
      for (int k = 0; k < kVec; ++k) sum += x[i][k];
    mean = group_sum2<kThreads>(Sum2{sum, 0.f}, scratch).a / count;
  }
  float squares = 0.f;
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    if (lane + i * kThreads < vectors) {
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        const float d = x[i][k] - mean;
        squares += d * d;
      }
    }
  }
  return RowStats{mean, rsqrtf(group_sum2<kThreads>(Sum2{squares, 0.f}, scratch).a / count + eps)};
}

}  // namespace boo
