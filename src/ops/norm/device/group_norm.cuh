// boo device code: group normalization (gpu:groupnorm:groups). A group of a
// sample is a row of C / groups * spatial elements; there are few of them
// (N * groups: 64 for an SD-UNet block at batch 2), so each is reduced by
// many blocks, as batch norm's columns are: per-(sample, channel) partial
// sums over pieces of the planes (NC(D)HW) or slices of the spatial rows
// (channels last), kernels/reduce/channel_sums.cuh; one warp per group
// adds its channels' partials in a fixed order in float64 (statistics, or
// dx's coefficients); one elementwise pass writes y or dx from
// per-(sample, channel) coefficients.
//
// Forward: group_norm_sums of (x - K, (x - K)^2), K the group's first
// element (no cancellation where the mean is far from 0),
// group_norm_statistics, group_norm_apply. Backward: the statistics (the
// forward's, or the saved ones), group_norm_sums of (dy, dy * (x - mean)),
// group_norm_gradients, group_norm_param_grads (dweight, dbias: one warp
// per channel over the samples' partials), group_norm_apply for dx.
#pragma once

#include "boo/kernels/reduce/channel_sums.cuh"
#include "boo/kernels/reduce/shifted_sums.cuh"
#include "boo/kernels/reduce/vectors.cuh"
#include "boo/norm/group_norm_params.cuh"

namespace boo {
namespace group_norm {

/// Coefficient array `which` ([N * C] floats) of the workspace.
__device__ __forceinline__ float* coefficients(const GroupNormParams& p, int which) {
  return reinterpret_cast<float*>(p.coefficients) + which * p.samples * p.channels;
}

/// The storage offset of x's element (sample n, channel c, spatial 0).
template <bool kChannelsLast>
__device__ __forceinline__ long long first_offset(const GroupNormParams& p, long long n, long long c) {
  return kChannelsLast ? n * p.spatial * p.channels + c : (n * p.channels + c) * p.spatial;
}

/// Partial sums of (sample n, channel c), piece or slice k.
template <bool kChannelsLast>
__device__ __forceinline__ Sum2 partial(const GroupNormParams& p, long long n, long long c, long long k) {
  const Sum2* partials = reinterpret_cast<const Sum2*>(p.partials);
  return kChannelsLast ? partials[(n * p.slices_per_sample + k) * p.channels + c]
                       : partials[(n * p.channels + c) * p.pieces + k];
}

template <bool kChannelsLast>
__device__ __forceinline__ long long parts(const GroupNormParams& p) {
  return kChannelsLast ? p.slices_per_sample : p.pieces;
}

}  // namespace group_norm

/// Partial sums per (sample, channel): (x - K, (x - K)^2) with K the first
/// element of the channel's group (kGradients false), or (dy, dy * (x - mean))
/// (kGradients true), by the block at `place`. Channels last: the block row
/// place.y is slice place.y % slices_per_sample of sample place.y /
/// slices_per_sample (a slice never crosses samples: rows_per_slice divides
/// spatial). Planes: block place.x is piece place.x % pieces, of kPiece
/// elements, of plane place.x / pieces.
template <typename T, int kVec, int kThreadsX, int kThreadsY, bool kChannelsLast, long long kPiece, bool kGradients>
__device__ void group_norm_sums(const GroupNormParams& p, BlockIndex place = this_block()) {
  Sum2* partials = reinterpret_cast<Sum2*>(p.partials);
  const long long cpg = p.channels / p.groups;
  if constexpr (kChannelsLast) {
    const long long vectors = p.channels / kVec;  // channel vectors per spatial row
    const long long vec = place.x * kThreadsX + threadIdx.x % kThreadsX;
    const long long n = place.y / p.slices_per_sample;
    float centre[kVec], low[kVec];  // [channel of the vector]: K, or the mean as high + low
    if (vec < vectors) {
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        const long long c = vec * kVec + k;
        if (kGradients) {
          centre[k] = group_norm::coefficients(p, kGroupMeanHigh)[n * p.channels + c];
          low[k] = group_norm::coefficients(p, kGroupMeanLow)[n * p.channels + c];
        } else {
          centre[k] = load_as_float<T>(p.x, group_norm::first_offset<true>(p, n, c / cpg * cpg));
          low[k] = 0.f;
        }
      }
    }
    auto terms = [&](long long row, long long v, Sum2 (&acc)[kVec]) {
      add_shifted_vector<T, T, kVec, kGradients>(p.x, p.dy, row * vectors + v, centre, low, acc);
    };
    channels_last_partial_sums<kVec, kThreadsX, kThreadsY>(terms, p.samples * p.spatial, vectors, p.rows_per_slice,
                                                           partials, place);
  } else {
    const long long plane = place.x / p.pieces;  // n * C + c
    const long long n = plane / p.channels, c = plane % p.channels;
    const float centre = kGradients ? group_norm::coefficients(p, kGroupMeanHigh)[plane]
                                    : load_as_float<T>(p.x, group_norm::first_offset<false>(p, n, c / cpg * cpg));
    const float low = kGradients ? group_norm::coefficients(p, kGroupMeanLow)[plane] : 0.f;
    auto terms = [&](long long vector_index, Sum2& acc) {
      add_shifted_vector<T, T, kVec, kGradients>(p.x, p.dy, vector_index, centre, low, acc);
    };
    // The pieces as the "channels" of one outer row: block b sums piece b.
    plane_partial_sums<kVec, kThreadsX * kThreadsY, kPiece>(terms, 1, p.samples * p.channels * p.pieces, 1, partials,
                                                            place);
  }
}

/// Where group_norm_statistics takes a group's mean and rstd from.
enum GroupStatisticsSource : int {
  kGroupStatsBatch = 0,  ///< the partial sums of the shifted moments; mean and rstd are written
  kGroupStatsSaved = 1,  ///< the given mean and rstd (a backward alone)
};

namespace group_norm {

/// Sum of `v` over the 32 lanes of a warp by butterfly shuffles: every lane
/// gets the same sum (each step adds a pair in both orders, and IEEE addition
/// commutes), so the result does not depend on which lane reads it.
/// @pre the whole warp calls it.
__device__ __forceinline__ double warp_sum(double v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

/// The warp's (a, b) sums over the partials of sample n's channels [c0, c0 + count), each partial's a and b
/// scaled by `scale(c)` (a float's value as float64, kept as a float until it multiplies), in a fixed order:
/// lane l adds items l, l + 32, ... of the channels' parts, ordered as the partials lie in memory (channels
/// last: part-major; planes: channel-major) so that a warp's loads are contiguous, then the lanes' sums are
/// added by warp_sum. A lane loads kBatch items (and their scales) before it adds them (in the same order): one
/// load at a time left it waiting on L2 for each of the 40 items of an SD-UNet group at 64x64 channels last (24
/// us of the forward's 45, H100).
template <bool kChannelsLast, class Scale>
__device__ __forceinline__ void warp_partial_sums(const GroupNormParams& p, long long n, long long c0, long long count,
                                                  int lane, Scale scale, double& a, double& b) {
  constexpr int kBatch = 8;
  const long long per = parts<kChannelsLast>(p);
  // The items' memory order as (slow, fast) digits, advanced by 32 items a step without dividing
  // (a 64-bit division per item cost more than its load).
  const long long fast = kChannelsLast ? count : per, slow = kChannelsLast ? per : count;
  const long long step_slow = 32 / fast, step_fast = 32 % fast;
  long long f = lane % fast, q = lane / fast;
  a = 0;
  b = 0;
  if (slow * fast <= 32) {
    // At most one item a lane (a planar group of up to 32 channels, one partial each): one load, the
    // same sum (the batch's first add into zeros), without the batch's seven idle loads.
    if (q < slow) {
      const long long c = c0 + (kChannelsLast ? f : q), k = kChannelsLast ? q : f;
      const Sum2 s = partial<kChannelsLast>(p, n, c, k);
      const double w = static_cast<double>(static_cast<float>(scale(c)));
      a = w * static_cast<double>(s.a);
      b = w * static_cast<double>(s.b);
    }
    q = slow;  // (skips the batched loop)
  }
  while (q < slow) {
    Sum2 s[kBatch];      // [item of the batch]
    float w[kBatch];     // [item of the batch]: its channel's scale
    bool valid[kBatch];  // [item of the batch]
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      valid[i] = q < slow;
      const long long c = c0 + (kChannelsLast ? f : q), k = kChannelsLast ? q : f;
      s[i] = valid[i] ? partial<kChannelsLast>(p, n, c, k) : Sum2{0.f, 0.f};
      w[i] = valid[i] ? static_cast<float>(scale(c)) : 0.f;
      q += step_slow;
      f += step_fast;
      if (f >= fast) {
        f -= fast;
        ++q;
      }
    }
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      if (!valid[i]) break;
      a += static_cast<double>(w[i]) * static_cast<double>(s[i].a);
      b += static_cast<double>(w[i]) * static_cast<double>(s[i].b);
    }
  }
  a = warp_sum(a);
  b = warp_sum(b);
}

}  // namespace group_norm

/// One warp per (sample, group) `row` (n * groups + g), `lane` its lane: the
/// group's statistics in float64 (its channels' partials added by
/// warp_partial_sums), and each of its channels' coefficients, a lane per
/// channel: the mean as high + low and rstd, and with kForward y's
/// a = rstd * weight and b = bias. A group's statistics are a reduction of
/// cpg x parts partials (1280 for an SD-UNet group at 64x64): a thread per
/// group adding them serially left the GPU waiting on one dependent chain.
/// @pre the whole warp calls it with the same row.
template <typename T, bool kChannelsLast, int kSource, bool kForward, bool kAffine>
__device__ void group_norm_statistics(const GroupNormParams& p,
                                      long long row = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32,
                                      int lane = static_cast<int>(threadIdx.x % 32)) {
  if (row >= p.samples * p.groups) return;
  const long long n = row / p.groups, g = row % p.groups, cpg = p.channels / p.groups;
  double mean = 0, rstd = 0;
  if (kSource == kGroupStatsBatch) {
    const double count = static_cast<double>(cpg) * static_cast<double>(p.spatial);
    double s1 = 0, s2 = 0;
    group_norm::warp_partial_sums<kChannelsLast>(p, n, g * cpg, cpg, lane, [](long long) { return 1.0; }, s1, s2);
    const double shift = s1 / count;
    mean = static_cast<double>(load_as_float<T>(p.x, group_norm::first_offset<kChannelsLast>(p, n, g * cpg))) + shift;
    double var = s2 / count - shift * shift;
    var = var > 0 ? var : 0;
    rstd = 1.0 / sqrt(var + static_cast<double>(p.eps));
    if (lane == 0) {
      reinterpret_cast<float*>(p.mean)[row] = static_cast<float>(mean);
      reinterpret_cast<float*>(p.rstd)[row] = static_cast<float>(rstd);
    }
  } else {
    mean = reinterpret_cast<const float*>(p.mean)[row];
    rstd = reinterpret_cast<const float*>(p.rstd)[row];
  }
  const float high = static_cast<float>(mean), low = static_cast<float>(mean - static_cast<double>(high));
  for (long long c = g * cpg + lane; c < (g + 1) * cpg; c += 32) {
    const long long i = n * p.channels + c;
    group_norm::coefficients(p, kGroupMeanHigh)[i] = high;
    group_norm::coefficients(p, kGroupMeanLow)[i] = low;
    group_norm::coefficients(p, kGroupInvStd)[i] = static_cast<float>(rstd);
    if (kForward) {
      const double w = kAffine ? static_cast<double>(load_as_float<T>(p.weight, c)) : 1.0;
      group_norm::coefficients(p, kGroupA)[i] = static_cast<float>(rstd * w);
      group_norm::coefficients(p, kGroupB)[i] = kAffine ? load_as_float<T>(p.bias, c) : 0.f;
    }
  }
}

/// One warp per (sample, group) `row`, after group_norm_sums of the
/// gradients: with g = dy * weight, mean(g) and mean(g * xhat) over the group
/// from its partials (warp_partial_sums, each scaled by its channel's
/// weight), and dx's coefficients a = rstd * weight,
/// b = -rstd^2 * mean(g * xhat), c = -rstd * mean(g), a lane per channel.
/// @pre the whole warp calls it with the same row.
template <typename T, bool kChannelsLast, bool kAffine>
__device__ void group_norm_gradients(const GroupNormParams& p,
                                     long long row = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32,
                                     int lane = static_cast<int>(threadIdx.x % 32)) {
  if (row >= p.samples * p.groups) return;  // row: n * groups + g
  const long long n = row / p.groups, g = row % p.groups, cpg = p.channels / p.groups;
  const double count = static_cast<double>(cpg) * static_cast<double>(p.spatial);
  const double rstd = group_norm::coefficients(p, kGroupInvStd)[n * p.channels + g * cpg];
  auto weight = [&p](long long c) { return kAffine ? static_cast<double>(load_as_float<T>(p.weight, c)) : 1.0; };
  double sum_g = 0, sum_gx = 0;  // sum(g), sum(g * (x - mean))
  group_norm::warp_partial_sums<kChannelsLast>(p, n, g * cpg, cpg, lane, weight, sum_g, sum_gx);
  const double mean_g = sum_g / count, mean_gx = rstd * sum_gx / count;
  for (long long c = g * cpg + lane; c < (g + 1) * cpg; c += 32) {
    const long long i = n * p.channels + c;
    group_norm::coefficients(p, kGroupA)[i] = static_cast<float>(rstd * weight(c));
    group_norm::coefficients(p, kGroupB)[i] = static_cast<float>(-rstd * rstd * mean_gx);
    group_norm::coefficients(p, kGroupC)[i] = static_cast<float>(-rstd * mean_g);
  }
}

/// One warp per channel `c`, after group_norm_sums of the gradients:
/// dbias = sum(dy) and dweight = sum over samples of rstd * sum(dy * (x - mean)),
/// each sample's partials added by warp_partial_sums in sample order.
/// @pre the whole warp calls it with the same c.
template <typename T, bool kChannelsLast>
__device__ void group_norm_param_grads(const GroupNormParams& p,
                                       long long c = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32,
                                       int lane = static_cast<int>(threadIdx.x % 32)) {
  if (c >= p.channels) return;
  double db = 0, dw = 0;
  for (long long n = 0; n < p.samples; ++n) {
    double dy = 0, dyx = 0;
    group_norm::warp_partial_sums<kChannelsLast>(p, n, c, 1, lane, [](long long) { return 1.0; }, dy, dyx);
    db += dy;
    dw += static_cast<double>(group_norm::coefficients(p, kGroupInvStd)[n * p.channels + c]) * dyx;
  }
  if (lane == 0) {
    store_from_float<T>(p.dweight, c, static_cast<float>(dw));
    store_from_float<T>(p.dbias, c, static_cast<float>(db));
  }
}

/// y = (x - mean) * a + b (forward), or dx = a * dy + b * (x - mean) + c
/// (kBackward), by the block at `place` of group_norm_sums' grid: a channels-last thread keeps
/// its channel vector's coefficients (of the block's sample) in registers
/// over its rows; a piece's block its plane's.
template <typename T, int kVec, int kThreadsX, int kThreadsY, bool kChannelsLast, long long kPiece, bool kBackward>
__device__ void group_norm_apply(const GroupNormParams& p, BlockIndex place = this_block()) {
  auto apply = [&](long long vector_index, const float (&high)[kVec], const float (&low)[kVec],
                   const float (&a)[kVec], const float (&b)[kVec], const float (&c)[kVec]) {
    float x[kVec], out[kVec];  // [element of the vector]
    load_vector<T, kVec>(p.x, vector_index, true, x);
    if (kBackward) {
      float dy[kVec];
      load_vector<T, kVec>(p.dy, vector_index, true, dy);
#pragma unroll
      for (int k = 0; k < kVec; ++k) out[k] = a[k] * dy[k] + b[k] * ((x[k] - high[k]) - low[k]) + c[k];
      store_vector<T, kVec>(p.dx, vector_index, out);
    } else {
#pragma unroll
      for (int k = 0; k < kVec; ++k) out[k] = ((x[k] - high[k]) - low[k]) * a[k] + b[k];
      store_vector<T, kVec>(p.y, vector_index, out);
    }
  };
  float high[kVec], low[kVec], a[kVec], b[kVec], c[kVec];  // [element of the vector]: its (sample, channel)'s
  auto load = [&](long long first, int k) {
    high[k] = group_norm::coefficients(p, kGroupMeanHigh)[first];
    low[k] = group_norm::coefficients(p, kGroupMeanLow)[first];
    a[k] = group_norm::coefficients(p, kGroupA)[first];
    b[k] = group_norm::coefficients(p, kGroupB)[first];
    c[k] = kBackward ? group_norm::coefficients(p, kGroupC)[first] : 0.f;
  };
  if constexpr (kChannelsLast) {
    const long long vectors = p.channels / kVec;
    const long long vec = place.x * kThreadsX + threadIdx.x % kThreadsX;
    if (vec >= vectors) return;
    const long long n = place.y / p.slices_per_sample;
#pragma unroll
    for (int k = 0; k < kVec; ++k) load(n * p.channels + vec * kVec + k, k);
    const Slice slice = slice_of_block(p.samples * p.spatial, p.rows_per_slice, place);
    for (long long row = slice.first + threadIdx.x / kThreadsX; row < slice.last; row += kThreadsY)
      apply(row * vectors + vec, high, low, a, b, c);
  } else {
    constexpr long long kPieceVectors = kPiece / kVec;  // vectors per piece
    const long long plane = place.x / p.pieces;
#pragma unroll
    for (int k = 0; k < kVec; ++k) load(plane, k);
    const long long first = place.x * kPieceVectors;  // pieces tile the planes
    for (long long i = threadIdx.x; i < kPieceVectors; i += kThreadsX * kThreadsY)
      apply(first + i, high, low, a, b, c);
  }
}

}  // namespace boo
