// boo device code: the terms the column reductions of the norm family add
// (batch norm's channels, group norm's (sample, channel) planes): a centre's
// shifted moments for the statistics, the gradient sums for dx's
// coefficients. One place, so both norms add the same terms in the same
// order. NVRTC-clean: includes nothing but boo's device code.
#pragma once

#include "boo/kernels/reduce/group_sum.cuh"
#include "boo/kernels/reduce/vectors.cuh"

namespace boo {

/// One element's terms added into acc: (x - K, (x - K)^2) with centre = K
/// (kGradients false), or (dy, dy * ((x - high) - low)) with the mean as
/// centre = high plus low (kGradients true). dy and low are read only with
/// kGradients (the moments' callers leave them unset).
template <bool kGradients>
__device__ __forceinline__ void add_shifted_terms(const float& x, const float& dy, const float& centre, const float& low,
                                                  Sum2& acc) {
  if (kGradients) {
    acc.a += dy;
    acc.b += dy * ((x - centre) - low);
  } else {
    const float d = x - centre;
    acc.a += d;
    acc.b += d * d;
  }
}

/// Channels last: vector `vector_index` of x (T) and, with kGradients, of dy
/// (G) holds kVec consecutive channels of one row; centre, low and acc are
/// [channel of the vector], each element adding into its own channel's sums.
template <typename T, typename G, int kVec, bool kGradients>
__device__ __forceinline__ void add_shifted_vector(unsigned long long x_base, unsigned long long dy_base,
                                                   long long vector_index, const float (&centre)[kVec],
                                                   const float (&low)[kVec], Sum2 (&acc)[kVec]) {
  float x[kVec], dy[kVec];  // [channel of the vector]
  load_vector<T, kVec>(x_base, vector_index, true, x);
  if (kGradients) load_vector<G, kVec>(dy_base, vector_index, true, dy);
#pragma unroll
  for (int k = 0; k < kVec; ++k) add_shifted_terms<kGradients>(x[k], dy[k], centre[k], low[k], acc[k]);
}

/// Planes: vector `vector_index` of x (T) and, with kGradients, of dy (G)
/// holds kVec consecutive elements of one channel's plane, all adding into
/// that channel's acc in element order.
template <typename T, typename G, int kVec, bool kGradients>
__device__ __forceinline__ void add_shifted_vector(unsigned long long x_base, unsigned long long dy_base,
                                                   long long vector_index, float centre, float low, Sum2& acc) {
  float x[kVec], dy[kVec];  // [element of the vector]
  load_vector<T, kVec>(x_base, vector_index, true, x);
  if (kGradients) load_vector<G, kVec>(dy_base, vector_index, true, dy);
#pragma unroll
  for (int k = 0; k < kVec; ++k) add_shifted_terms<kGradients>(x[k], dy[k], centre, low, acc);
}

}  // namespace boo
