// boo device code: batch norm of channels-last x (gpu:batchnorm:slabs) in two
// launches instead of gpu:batchnorm:columns' three or four. x (y, dy, dx) is
// [rows][channels] in memory (NormProblem's inner 1: NHWC/NDHWC spatial, or
// per activation).
//
// The grid of both kernels is (channel slabs, slices of the rows), about two
// blocks per SM. batch_norm_slab_sums adds its slab's terms over its slice
// (fp32, each thread its rows in order, then a fixed tree over the row lanes)
// into partials[slab][slice][channel of the slab]. batch_norm_slab_apply: each
// block adds its slab's partials over every slice in float64 in a fixed order
// (the same in every block of the slab: redundant, but no launch and no
// counters; the plan keeps a slab's partials small), derives the channels'
// coefficients, and writes y or dx over its slice, walking its rows in reverse
// so that it starts on those the sums read last, still in L2. Slice 0's
// blocks write the saved and running statistics or dscale and dbias.
// Training sums shifted moments (x - K, K the channel's row-0 element, as
// gpu:batchnorm:columns); the backward reads the saved mean and inverse
// variance. Results are the same run to run.
#pragma once

#include "boo/norm/batch_norm.cuh"

namespace boo {

/// Block (slab blockIdx.x, slice blockIdx.y)'s partials from each thread's
/// acc (thread (tx, ty): channel vector tx, row lane ty): the row lanes of a
/// warp (lanes tx, tx + kThreadsX, ...) by butterfly, then the warps in order
/// through scratch ([warp][channel of the slab]).
template <int kVec, int kThreadsX, int kThreadsY>
__device__ __forceinline__ void store_slab_partials(const BatchNormParams& p, Sum2 (&acc)[kVec],
                                                    Sum2 (&scratch)[kThreadsX * kThreadsY / 32][kThreadsX * kVec]) {
  static_assert(kThreadsX * kThreadsY % 32 == 0 && kThreadsX <= 32, "row lanes fill whole warps");
  constexpr int kSlab = kThreadsX * kVec;  // channels of a slab
  constexpr int kWarps = kThreadsX * kThreadsY / 32;
  const int tx = threadIdx.x % kThreadsX, lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
  for (int k = 0; k < kVec; ++k) {
#pragma unroll
    for (int offset = kThreadsX; offset < 32; offset *= 2) {
      acc[k].a += __shfl_xor_sync(0xffffffffu, acc[k].a, offset);
      acc[k].b += __shfl_xor_sync(0xffffffffu, acc[k].b, offset);
    }
  }
  if (lane < kThreadsX) {
#pragma unroll
    for (int k = 0; k < kVec; ++k) scratch[warp][tx * kVec + k] = acc[k];
  }
  __syncthreads();
  for (int t = threadIdx.x; t < kSlab; t += kThreadsX * kThreadsY) {
    Sum2 s{0.f, 0.f};
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      s.a += scratch[w][t].a;
      s.b += scratch[w][t].b;
    }
    reinterpret_cast<Sum2*>(p.partials)[slab_partial_index(blockIdx.x, blockIdx.y, t, gridDim.y, kSlab)] = s;
  }
}

/// Block (slab blockIdx.x, slice blockIdx.y)'s channel coefficients
/// ([high, low, a, b, c][channel of the slab]) from its slab's partials of
/// every slice, added in float64 in a fixed order (slice group g adds slices
/// g, g + kGroups, ... in order; then the groups in order: the same in every
/// block of the slab). Slice 0 writes the saved or running statistics
/// (kSave, kRunning) or dscale and dbias (kBackward). group_sums is
/// [sum][slice group][channel of the slab].
template <typename T, typename P, int kSlab, int kThreads, bool kBackward, bool kSave, bool kRunning>
__device__ __forceinline__ void slab_coefficients(const BatchNormParams& p,
                                                  double (&group_sums)[2][kThreads / kSlab][kSlab],
                                                  float (&coefficient)[5][kSlab]) {
  static_assert(kThreads % kSlab == 0, "every channel of the slab has the same number of slice groups");
  constexpr int kGroups = kThreads / kSlab;  // slice groups adding one channel's partials
  const long long slices = gridDim.y;
  const double count = static_cast<double>(p.outer);
  {
    const int lane = threadIdx.x % kSlab, group = threadIdx.x / kSlab;
    const Sum2* partials = reinterpret_cast<const Sum2*>(p.partials);
    double s1 = 0, s2 = 0;
    for (long long s = group; s < slices; s += kGroups) {
      const Sum2 v = partials[slab_partial_index(blockIdx.x, s, lane, slices, kSlab)];
      s1 += v.a;
      s2 += v.b;
    }
    group_sums[0][group][lane] = s1;
    group_sums[1][group][lane] = s2;
  }
  __syncthreads();
  for (int t = threadIdx.x; t < kSlab; t += kThreads) {
    double s1 = 0, s2 = 0;
#pragma unroll 4  // narrow slabs have up to 256 groups: unrolled whole, their loads spill
    for (int g = 0; g < kGroups; ++g) {
      s1 += group_sums[0][g][t];
      s2 += group_sums[1][g][t];
    }
    const long long c = static_cast<long long>(blockIdx.x) * kSlab + t;
    float high = 0, low = 0, a = 0, b = 0, cc = 0;
    if (c < p.channels) {
      if (kBackward) {
        high = reinterpret_cast<const float*>(p.saved_mean)[c];
        const GradientCoefficients g = gradient_coefficients(
            s1, s2, reinterpret_cast<const float*>(p.saved_inv_variance)[c], load_as_float<P>(p.scale, c), count);
        a = g.a;
        b = g.b;
        cc = g.c;
        if (blockIdx.y == 0) {
          reinterpret_cast<float*>(p.dscale)[c] = g.dscale;
          reinterpret_cast<float*>(p.dbias)[c] = g.dbias;
        }
      } else {
        const ChannelStatistics st = batch_statistics(s1, s2, count, load_as_float<T>(p.x, c), p.eps);
        const SplitMean m = split_mean(st.mean);
        high = m.high;
        low = m.low;
        a = static_cast<float>(st.invstd * static_cast<double>(load_as_float<P>(p.scale, c)));
        b = load_as_float<P>(p.bias, c);
        if (kSave && blockIdx.y == 0) {
          reinterpret_cast<float*>(p.saved_mean)[c] = m.high;
          reinterpret_cast<float*>(p.saved_inv_variance)[c] = static_cast<float>(st.invstd);
        }
        if (kRunning && blockIdx.y == 0) update_running(p, c, st.mean, st.var, count);
      }
    }
    coefficient[0][t] = high;
    coefficient[1][t] = low;
    coefficient[2][t] = a;
    coefficient[3][t] = b;
    coefficient[4][t] = cc;
  }
  __syncthreads();
}

/// y = (x - mean) * a + b (T), or with kBackward dx = a * dy + b * (x - mean)
/// + c (G), of kVec channels of row r (x and dy as floats) stored as vector
/// r * vectors + vec; the coefficients are [channel of the vector].
template <typename T, typename G, int kVec, bool kBackward>
__device__ __forceinline__ void apply_vector(const BatchNormParams& p, long long vector_index, const float (&x)[kVec],
                                             const float (&dy)[kVec], const float (&high)[kVec],
                                             const float (&low)[kVec], const float (&a)[kVec], const float (&b)[kVec],
                                             const float (&c)[kVec]) {
  float out[kVec];  // [channel of the vector]
#pragma unroll
  for (int k = 0; k < kVec; ++k)
    out[k] = kBackward ? a[k] * dy[k] + b[k] * ((x[k] - high[k]) - low[k]) + c[k]
                       : ((x[k] - high[k]) - low[k]) * a[k] + b[k];
  if (kBackward) store_vector<G, kVec>(p.dx, vector_index, out);
  else store_vector<T, kVec>(p.y, vector_index, out);
}

/// apply_vector over `rows` for channel vector `vec` of row lane ty (of
/// kThreadsY), walking the lane's rows from the last down (the reverse of the
/// sums' order: the rows they read last are still in L2), kUnroll rows' loads
/// in flight.
template <typename T, typename G, int kVec, int kThreadsY, int kUnroll, bool kBackward>
__device__ __forceinline__ void apply_rows_reversed(const BatchNormParams& p, SliceRows rows, int ty, long long vec,
                                                    long long vectors, const float (&high)[kVec],
                                                    const float (&low)[kVec], const float (&a)[kVec],
                                                    const float (&b)[kVec], const float (&c)[kVec]) {
  for (long long row = last_row_of_lane(rows, ty, kThreadsY); row >= rows.first; row -= kThreadsY * kUnroll) {
    float x[kUnroll][kVec], dy[kUnroll][kVec];  // [row of the step][channel of the vector]
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const long long r = row - u * kThreadsY;
      load_vector<T, kVec>(p.x, r * vectors + vec, r >= rows.first, x[u]);
      if (kBackward) load_vector<G, kVec>(p.dy, r * vectors + vec, r >= rows.first, dy[u]);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const long long r = row - u * kThreadsY;
      if (r < rows.first) break;
      apply_vector<T, G, kVec, kBackward>(p, r * vectors + vec, x[u], dy[u], high, low, a, b, c);
    }
  }
}

/// Partial sums of block (slab blockIdx.x, slice blockIdx.y): (x - K,
/// (x - K)^2) (kGradients false) or (dy, dy * (x - saved mean)) (kGradients).
/// Thread (tx, ty) owns channel vector blockIdx.x * kThreadsX + tx (kVec
/// channels) and adds rows first + ty, + kThreadsY, ... of its slice,
/// kUnroll rows' loads in flight. T: x's element type, G: dy's.
template <typename T, typename G, int kVec, int kThreadsX, int kThreadsY, int kUnroll, bool kGradients>
__device__ void batch_norm_slab_sums(const BatchNormParams& p) {
  static_assert(kThreadsX * kThreadsY % 32 == 0 && kThreadsX <= 32, "row lanes fill whole warps");
  __shared__ Sum2 scratch[kThreadsX * kThreadsY / 32][kThreadsX * kVec];  // [warp][channel of the slab]
  const int tx = threadIdx.x % kThreadsX, ty = threadIdx.x / kThreadsX;
  const long long vectors = p.channels / kVec;               // channel vectors per row
  const long long vec = static_cast<long long>(blockIdx.x) * kThreadsX + tx;
  const bool owner = vec < vectors;
  float centre[kVec], low[kVec];  // [channel of the vector]: K, or the saved mean (low 0)
#pragma unroll
  for (int k = 0; k < kVec; ++k) low[k] = 0.f;
  if (kGradients) {
#pragma unroll
    for (int k = 0; k < kVec; ++k)
      centre[k] = owner ? reinterpret_cast<const float*>(p.saved_mean)[vec * kVec + k] : 0.f;
  } else {
    load_vector<T, kVec>(p.x, vec, owner, centre);  // row 0
  }
  Sum2 acc[kVec];  // [channel of the vector]
#pragma unroll
  for (int k = 0; k < kVec; ++k) acc[k] = Sum2{0.f, 0.f};
  const SliceRows rows = slice_rows(blockIdx.y, p.rows_per_slice, p.outer);
  if (owner) {
    for (long long row = rows.first + ty; row < rows.last; row += kThreadsY * kUnroll) {
      float x[kUnroll][kVec], dy[kUnroll][kVec];  // [row of the step][channel of the vector]
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const long long r = row + u * kThreadsY;
        load_vector<T, kVec>(p.x, r * vectors + vec, r < rows.last, x[u]);
        if (kGradients) load_vector<G, kVec>(p.dy, r * vectors + vec, r < rows.last, dy[u]);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (row + u * kThreadsY >= rows.last) break;
#pragma unroll
        for (int k = 0; k < kVec; ++k) add_shifted_terms<kGradients>(x[u][k], dy[u][k], centre[k], low[k], acc[k]);
      }
    }
  }
  store_slab_partials<kVec, kThreadsX, kThreadsY>(p, acc, scratch);
}

/// Block (slab blockIdx.x, slice blockIdx.y) after batch_norm_slab_sums: its
/// slab's channel coefficients from the partials of every slice (float64),
/// then y = (x - mean) * a + b (T), or with kBackward dx = a * dy + b * (x -
/// mean) + c (G), over its slice. kSave / kRunning: slice 0 writes the saved
/// or running statistics. P: scale's and bias' element type.
template <typename T, typename G, typename P, int kVec, int kThreadsX, int kThreadsY, int kUnroll, bool kBackward,
          bool kSave, bool kRunning>
__device__ void batch_norm_slab_apply(const BatchNormParams& p) {
  constexpr int kThreads = kThreadsX * kThreadsY;
  constexpr int kSlab = kThreadsX * kVec;                     // channels of a slab
  __shared__ double group_sums[2][kThreads / kSlab][kSlab];  // [sum][slice group][channel of the slab]
  __shared__ float coefficient[5][kSlab];                     // [high, low, a, b, c][channel of the slab]
  slab_coefficients<T, P, kSlab, kThreads, kBackward, kSave, kRunning>(p, group_sums, coefficient);
  const int tx = threadIdx.x % kThreadsX, ty = threadIdx.x / kThreadsX;
  const long long vectors = p.channels / kVec;
  const long long vec = static_cast<long long>(blockIdx.x) * kThreadsX + tx;
  if (vec >= vectors) return;
  float high[kVec], low[kVec], a[kVec], b[kVec], c[kVec];  // [channel of the vector]
#pragma unroll
  for (int k = 0; k < kVec; ++k) {
    high[k] = coefficient[0][tx * kVec + k];
    low[k] = coefficient[1][tx * kVec + k];
    a[k] = coefficient[2][tx * kVec + k];
    b[k] = coefficient[3][tx * kVec + k];
    c[k] = coefficient[4][tx * kVec + k];
  }
  apply_rows_reversed<T, G, kVec, kThreadsY, kUnroll, kBackward>(
      p, slice_rows(blockIdx.y, p.rows_per_slice, p.outer), ty, vec, vectors, high, low, a, b, c);
}

}  // namespace boo
