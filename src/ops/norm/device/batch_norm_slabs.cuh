// boo device code: batch norm of channels-last x (gpu:batchnorm:slabs) in
// three launches. x (y, dy, dx) is [rows][channels] in memory (NormProblem's
// inner 1: NHWC/NDHWC spatial, or per activation).
//
// The grid of the sums and apply kernels is (channel slabs, slices of the
// rows), about two blocks per SM, a slab as wide as a row allows (up to 32
// vectors: whole 128-byte lines per warp and row). batch_norm_slab_sums adds
// its slab's terms over its slice (fp32, each thread its rows in order, then a
// fixed tree over the row lanes) into partials[slab][slice][channel of the
// slab]. batch_norm_slab_coefficients adds each channel's partials over the
// slices in float64 in a fixed order (slice groups, then the groups in order),
// spread over the GPU 32 channels a block, and writes the channels'
// coefficients to the workspace and the saved and running statistics, or
// dscale and dbias. batch_norm_slab_apply writes y or dx over its slice,
// walking its rows in reverse so that it starts on those the sums read last,
// still in L2. Training sums shifted moments (x - K, K the channel's row-0
// element, as gpu:batchnorm:columns); the backward reads the saved mean and
// inverse variance. Results are the same run to run.
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

/// Channel c's coefficients of y = ((x - high) - low) * a + b, or with
/// kBackward of dx = a * dy + b * ((x - high) - low) + cc, from its sums over
/// every row (float64: (x - K, (x - K)^2), or with kBackward (dy, dy * (x -
/// saved mean))). A `writer` also writes the saved or running statistics
/// (kSave, kRunning) or dscale and dbias (kBackward).
struct SlabCoefficients {
  float high, low, a, b, cc;
};
template <typename T, typename P, bool kBackward, bool kSave, bool kRunning>
__device__ __forceinline__ SlabCoefficients channel_coefficients(const BatchNormParams& p, long long c, double s1,
                                                                 double s2, bool writer) {
  const double count = static_cast<double>(p.outer);
  if (kBackward) {
    const GradientCoefficients g = gradient_coefficients(
        s1, s2, reinterpret_cast<const float*>(p.saved_inv_variance)[c], load_as_float<P>(p.scale, c), count);
    if (writer) {
      reinterpret_cast<float*>(p.dscale)[c] = g.dscale;
      reinterpret_cast<float*>(p.dbias)[c] = g.dbias;
    }
    return SlabCoefficients{reinterpret_cast<const float*>(p.saved_mean)[c], 0.f, g.a, g.b, g.c};
  }
  const ChannelStatistics st = batch_statistics(s1, s2, count, load_as_float<T>(p.x, c), p.eps);
  const SplitMean m = split_mean(st.mean);
  if (kSave && writer) {
    reinterpret_cast<float*>(p.saved_mean)[c] = m.high;
    reinterpret_cast<float*>(p.saved_inv_variance)[c] = static_cast<float>(st.invstd);
  }
  if (kRunning && writer) update_running(p, c, st.mean, st.var, count);
  const float a = static_cast<float>(st.invstd * static_cast<double>(load_as_float<P>(p.scale, c)));
  return SlabCoefficients{m.high, m.low, a, load_as_float<P>(p.bias, c), 0.f};
}

/// Block (slab blockIdx.x, slice blockIdx.y)'s channel coefficients
/// ([high, low, a, b, c][channel of the slab]) from its slab's partials of
/// every slice, added in float64 in a fixed order (slice group g adds slices
/// g, g + kGroups, ... in order; then the groups in order: the same in every
/// block of the slab). Slice 0 writes the saved or running statistics
/// (kSave, kRunning) or dscale and dbias (kBackward). group_sums is
/// [sum][slice group][channel of the slab]. gpu:batchnorm:resident's, after
/// its grid barrier.
template <typename T, typename P, int kSlab, int kThreads, bool kBackward, bool kSave, bool kRunning>
__device__ __forceinline__ void slab_coefficients(const BatchNormParams& p,
                                                  double (&group_sums)[2][kThreads / kSlab][kSlab],
                                                  float (&coefficient)[5][kSlab]) {
  static_assert(kThreads % kSlab == 0, "every channel of the slab has the same number of slice groups");
  constexpr int kGroups = kThreads / kSlab;  // slice groups adding one channel's partials
  const long long slices = gridDim.y;
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
    SlabCoefficients k{0.f, 0.f, 0.f, 0.f, 0.f};
    if (c < p.channels)
      k = channel_coefficients<T, P, kBackward, kSave, kRunning>(p, c, s1, s2, blockIdx.y == 0);
    coefficient[0][t] = k.high;
    coefficient[1][t] = k.low;
    coefficient[2][t] = k.a;
    coefficient[3][t] = k.b;
    coefficient[4][t] = k.cc;
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
/// in flight, packed until used.
template <typename T, typename G, int kVec, int kThreadsY, int kUnroll, bool kBackward>
__device__ __forceinline__ void apply_rows_reversed(const BatchNormParams& p, SliceRows rows, int ty, long long vec,
                                                    long long vectors, const float (&high)[kVec],
                                                    const float (&low)[kVec], const float (&a)[kVec],
                                                    const float (&b)[kVec], const float (&c)[kVec]) {
  for (long long row = last_row_of_lane(rows, ty, kThreadsY); row >= rows.first; row -= kThreadsY * kUnroll) {
    Vec<T, kVec> xv[kUnroll];  // [row of the step]
    Vec<G, kVec> dyv[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const long long r = row - u * kThreadsY;
      xv[u] = load_packed<T, kVec>(p.x, r * vectors + vec, r >= rows.first);
      if (kBackward) dyv[u] = load_packed<G, kVec>(p.dy, r * vectors + vec, r >= rows.first);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const long long r = row - u * kThreadsY;
      if (r < rows.first) break;
      float x[kVec], dy[kVec];  // [channel of the vector]
      to_floats(xv[u], x);
      if (kBackward) to_floats(dyv[u], dy);
      apply_vector<T, G, kVec, kBackward>(p, r * vectors + vec, x, dy, high, low, a, b, c);
    }
  }
}

/// Partial sums of block (slab blockIdx.x, slice blockIdx.y): (x - K,
/// (x - K)^2) (kGradients false) or (dy, dy * (x - saved mean)) (kGradients).
/// Thread (tx, ty) owns channel vector blockIdx.x * kThreadsX + tx (kVec
/// channels) and adds rows first + ty, + kThreadsY, ... of its slice,
/// kUnroll rows' loads in flight, packed until used. T: x's element type,
/// G: dy's.
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
      Vec<T, kVec> xv[kUnroll];  // [row of the step]
      Vec<G, kVec> dyv[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const long long r = row + u * kThreadsY;
        xv[u] = load_packed<T, kVec>(p.x, r * vectors + vec, r < rows.last);
        if (kGradients) dyv[u] = load_packed<G, kVec>(p.dy, r * vectors + vec, r < rows.last);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (row + u * kThreadsY >= rows.last) break;
        float x[kVec], dy[kVec];  // [channel of the vector]
        to_floats(xv[u], x);
        if (kGradients) to_floats(dyv[u], dy);
#pragma unroll
        for (int k = 0; k < kVec; ++k) add_shifted_terms<kGradients>(x[k], dy[k], centre[k], low[k], acc[k]);
      }
    }
  }
  store_slab_partials<kVec, kThreadsX, kThreadsY>(p, acc, scratch);
}

/// After batch_norm_slab_sums (slabs of kSlab channels, ceil(outer /
/// rows_per_slice) slices): channel blockIdx.x * 32 + lane's sums over every
/// slice, in float64 in a fixed order (slice group g, the thread's warp, adds
/// slices g, g + kGroups, ... in order; then the groups in order), into its
/// coefficients in the workspace (high, low, a, b, c as gpu:batchnorm:columns'
/// arrays) and the saved or running statistics (kSave, kRunning) or dscale and
/// dbias (kBackward). Spread over ceil(channels / 32) blocks, so the partials
/// of one slab are not added by every apply block of it; kThreads / 32 slice
/// groups keep few loads in each thread's chain.
template <typename T, typename P, int kSlab, int kThreads, bool kBackward, bool kSave, bool kRunning>
__device__ void batch_norm_slab_coefficients(const BatchNormParams& p) {
  static_assert(kThreads % 32 == 0, "slice groups are whole warps");
  constexpr int kGroups = kThreads / 32;
  __shared__ double group_sums[2][kGroups][32];  // [sum][slice group][channel of the block]
  const int lane = threadIdx.x % 32, group = threadIdx.x / 32;
  const long long c = static_cast<long long>(blockIdx.x) * 32 + lane;
  const long long slices = (p.outer + p.rows_per_slice - 1) / p.rows_per_slice;
  double s1 = 0, s2 = 0;
  if (c < p.channels) {
    const Sum2* partials = reinterpret_cast<const Sum2*>(p.partials);
#pragma unroll 8
    for (long long s = group; s < slices; s += kGroups) {
      const Sum2 v = partials[slab_partial_index(c / kSlab, s, c % kSlab, slices, kSlab)];
      s1 += v.a;
      s2 += v.b;
    }
  }
  group_sums[0][group][lane] = s1;
  group_sums[1][group][lane] = s2;
  __syncthreads();
  if (group != 0 || c >= p.channels) return;
  for (int g = 1; g < kGroups; ++g) {
    s1 += group_sums[0][g][lane];
    s2 += group_sums[1][g][lane];
  }
  const SlabCoefficients k = channel_coefficients<T, P, kBackward, kSave, kRunning>(p, c, s1, s2, true);
  coefficients(p, kCoefMeanHigh)[c] = k.high;
  coefficients(p, kCoefMeanLow)[c] = k.low;
  coefficients(p, kCoefA)[c] = k.a;
  coefficients(p, kCoefB)[c] = k.b;
  coefficients(p, kCoefC)[c] = k.cc;
}

/// Block (slab blockIdx.x, slice blockIdx.y) after
/// batch_norm_slab_coefficients: y = (x - mean) * a + b (T), or with kBackward
/// dx = a * dy + b * (x - mean) + c (G), over its slice, each thread's
/// channels' coefficients in registers.
template <typename T, typename G, int kVec, int kThreadsX, int kThreadsY, int kUnroll, bool kBackward>
__device__ void batch_norm_slab_apply(const BatchNormParams& p) {
  const int tx = threadIdx.x % kThreadsX, ty = threadIdx.x / kThreadsX;
  const long long vectors = p.channels / kVec;
  const long long vec = static_cast<long long>(blockIdx.x) * kThreadsX + tx;
  if (vec >= vectors) return;
  float high[kVec], low[kVec], a[kVec], b[kVec], c[kVec];  // [channel of the vector]
  load_coefficients<kVec>(p, kCoefMeanHigh, vec * kVec, high);
  load_coefficients<kVec>(p, kCoefMeanLow, vec * kVec, low);
  load_coefficients<kVec>(p, kCoefA, vec * kVec, a);
  load_coefficients<kVec>(p, kCoefB, vec * kVec, b);
  load_coefficients<kVec>(p, kCoefC, vec * kVec, c);
  apply_rows_reversed<T, G, kVec, kThreadsY, kUnroll, kBackward>(
      p, slice_rows(blockIdx.y, p.rows_per_slice, p.outer), ty, vec, vectors, high, low, a, b, c);
}

}  // namespace boo
