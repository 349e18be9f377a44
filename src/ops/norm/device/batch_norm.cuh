// boo device code: batch normalization (gpu:batchnorm:columns), the column
// reductions of the norm family. x is [outer][channels][inner] in memory
// (kInner 1: channels last, or per activation; kInner > 1: NC(D)HW planes).
//
// Training: batch_norm_sums adds each channel's shifted moments (x - K,
// (x - K)^2, K the channel's first element: no cancellation where the mean is
// far from 0) over slices of the rows into the workspace; batch_norm_statistics
// adds a channel's slices in order in float64 and writes the statistics (saved,
// running) and the channel's coefficients; batch_norm_apply writes y.
// Backward: the statistics (from the saved ones, or the batch's as above),
// then batch_norm_sums of (dy, dy * (x - mean)), batch_norm_gradients
// (dscale, dbias, dx's coefficients) and batch_norm_apply for dx.
// Every sum has a fixed order: results are the same run to run.
#pragma once

#include "boo/kernels/reduce/channel_sums.cuh"
#include "boo/kernels/reduce/shifted_sums.cuh"
#include "boo/kernels/reduce/vectors.cuh"
#include "boo/norm/batch_norm_params.cuh"

namespace boo {

/// Coefficient array `which` ([channels] floats) of the workspace.
__device__ __forceinline__ float* coefficients(const BatchNormParams& p, int which) {
  return reinterpret_cast<float*>(p.coefficients) + which * p.channels;
}

/// kVec coefficients of array `which` from channel `first` (kVec consecutive channels).
template <int kVec>
__device__ __forceinline__ void load_coefficients(const BatchNormParams& p, int which, long long first,
                                                  float (&out)[kVec]) {
#pragma unroll
  for (int k = 0; k < kVec; ++k) out[k] = coefficients(p, which)[first + k];
}

/// Partial sums per channel: (x - K, (x - K)^2) with K the channel's first
/// element (kGradients false), or (dy, dy * (x - mean)) (kGradients true).
/// T: x's element type, G: dy's.
template <typename T, typename G, int kVec, int kThreadsX, int kThreadsY, long long kInner, bool kGradients>
__device__ void batch_norm_sums(const BatchNormParams& p) {
  Sum2* partials = reinterpret_cast<Sum2*>(p.partials);
  if constexpr (kInner == 1) {
    const long long vectors = p.channels / kVec;  // channel vectors per row
    const long long vec = static_cast<long long>(blockIdx.x) * kThreadsX + threadIdx.x % kThreadsX;
    const bool owner = vec < vectors;
    float centre[kVec], low[kVec];  // [channel of the vector]: K, or the mean as high + low
    if (kGradients) {
      if (owner) {
        load_coefficients<kVec>(p, kCoefMeanHigh, vec * kVec, centre);
        load_coefficients<kVec>(p, kCoefMeanLow, vec * kVec, low);
      }
    } else {
      load_vector<T, kVec>(p.x, vec, owner, centre);  // row 0
    }
    auto terms = [&](long long row, long long v, Sum2 (&acc)[kVec]) {
      add_shifted_vector<T, G, kVec, kGradients>(p.x, p.dy, row * vectors + v, centre, low, acc);
    };
    channels_last_partial_sums<kVec, kThreadsX, kThreadsY>(terms, p.outer, vectors, p.rows_per_slice, partials);
  } else {
    const long long channel = blockIdx.x;
    const float centre = kGradients ? coefficients(p, kCoefMeanHigh)[channel]
                                    : load_as_float<T>(p.x, channel * kInner);  // row 0's first element
    const float low = kGradients ? coefficients(p, kCoefMeanLow)[channel] : 0.f;
    auto terms = [&](long long vector_index, Sum2& acc) {
      add_shifted_vector<T, G, kVec, kGradients>(p.x, p.dy, vector_index, centre, low, acc);
    };
    plane_partial_sums<kVec, kThreadsX * kThreadsY, kInner>(terms, p.outer, p.channels, p.rows_per_slice, partials);
  }
}

/// Where batch_norm_statistics takes a channel's mean and variance from.
enum StatisticsSource : int {
  kStatsBatch = 0,      ///< the batch: the slices' shifted moments
  kStatsEstimated = 1,  ///< inference -r: mean_in, variance_in
  kStatsSaved = 2,      ///< backward -s: saved_mean, saved_inv_variance
};

/// A channel's batch statistics in float64 from its shifted moment sums
/// (s1 = sum(x - K), s2 = sum((x - K)^2) over `count` elements, K = centre).
struct ChannelStatistics {
  double mean, var, invstd;
};
__device__ __forceinline__ ChannelStatistics batch_statistics(double s1, double s2, double count, float centre,
                                                              float eps) {
  const double shift = s1 / count;
  double var = s2 / count - shift * shift;
  var = var > 0 ? var : 0;
  return ChannelStatistics{static_cast<double>(centre) + shift, var, 1.0 / sqrt(var + static_cast<double>(eps))};
}

/// The mean as high + low floats (x - high - low keeps the mean's float64 accuracy).
struct SplitMean {
  float high, low;
};
__device__ __forceinline__ SplitMean split_mean(double mean) {
  const float high = static_cast<float>(mean);
  return SplitMean{high, static_cast<float>(mean - static_cast<double>(high))};
}

/// MIOpen's running-statistics update of channel c (variance unbiased).
__device__ __forceinline__ void update_running(const BatchNormParams& p, long long c, double mean, double var,
                                               double count) {
  const double f = p.momentum;
  const double mean_in = reinterpret_cast<const float*>(p.mean_in)[c];
  const double var_in = reinterpret_cast<const float*>(p.variance_in)[c];
  reinterpret_cast<float*>(p.running_mean)[c] = static_cast<float>((1 - f) * mean_in + f * mean);
  reinterpret_cast<float*>(p.running_variance)[c] = static_cast<float>((1 - f) * var_in + f * var * count / (count - 1));
}

/// dx = a * dy + b * (x - mean) + c for a channel with sums sum(dy) and
/// sum(dy * (x - mean)) over `count` elements; dscale and dbias alongside.
struct GradientCoefficients {
  float a, b, c, dscale, dbias;
};
__device__ __forceinline__ GradientCoefficients gradient_coefficients(double sum_dy, double sum_dyx, double invstd,
                                                                      float scale, double count) {
  const double a = static_cast<double>(scale) * invstd;
  return GradientCoefficients{static_cast<float>(a), static_cast<float>(-a * invstd * invstd * sum_dyx / count),
                              static_cast<float>(-a * sum_dy / count), static_cast<float>(invstd * sum_dyx),
                              static_cast<float>(sum_dy)};
}

/// One thread per channel: the channel's statistics, in float64, into the
/// coefficients (the mean as high + low, invstd; with kForward the forward's
/// a = invstd * scale and b = bias), and with kSave / kRunning the saved
/// statistics and the running ones (variance unbiased, MIOpen's update).
/// T: x's element type (for K), P: scale's and bias'.
template <typename T, typename P, int kSource, bool kForward, bool kSave, bool kRunning>
__device__ void batch_norm_statistics(const BatchNormParams& p, long long inner, long long slices) {
  const long long c = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= p.channels) return;
  const double count = static_cast<double>(p.outer) * static_cast<double>(inner);
  double mean = 0, var = 0, invstd = 0;
  if (kSource == kStatsBatch) {
    const Sum2* partials = reinterpret_cast<const Sum2*>(p.partials);  // [slices][channels]
    double s1 = 0, s2 = 0;
    for (long long s = 0; s < slices; ++s) {
      s1 += partials[s * p.channels + c].a;
      s2 += partials[s * p.channels + c].b;
    }
    const ChannelStatistics st = batch_statistics(s1, s2, count, load_as_float<T>(p.x, c * inner), p.eps);
    mean = st.mean;
    var = st.var;
    invstd = st.invstd;
  } else if (kSource == kStatsEstimated) {
    mean = reinterpret_cast<const float*>(p.mean_in)[c];
    invstd = 1.0 / sqrt(static_cast<double>(reinterpret_cast<const float*>(p.variance_in)[c]) + p.eps);
  } else {
    mean = reinterpret_cast<const float*>(p.saved_mean)[c];
    invstd = reinterpret_cast<const float*>(p.saved_inv_variance)[c];
  }
  const SplitMean m = split_mean(mean);
  coefficients(p, kCoefMeanHigh)[c] = m.high;
  coefficients(p, kCoefMeanLow)[c] = m.low;
  coefficients(p, kCoefInvStd)[c] = static_cast<float>(invstd);
  if (kForward) {
    coefficients(p, kCoefA)[c] = static_cast<float>(invstd * static_cast<double>(load_as_float<P>(p.scale, c)));
    coefficients(p, kCoefB)[c] = load_as_float<P>(p.bias, c);
  }
  if (kSave) {
    reinterpret_cast<float*>(p.saved_mean)[c] = m.high;
    reinterpret_cast<float*>(p.saved_inv_variance)[c] = static_cast<float>(invstd);
  }
  if (kRunning) update_running(p, c, mean, var, count);
}

/// One thread per channel, after batch_norm_sums of the gradients:
/// dbias = sum(dy), dscale = invstd * sum(dy * (x - mean)), and dx's
/// coefficients a = scale * invstd, b = -a * invstd^2 * sum(dy * (x - mean)) / M,
/// c = -a * sum(dy) / M.
template <typename P>
__device__ void batch_norm_gradients(const BatchNormParams& p, long long inner, long long slices) {
  const long long c = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= p.channels) return;
  const double count = static_cast<double>(p.outer) * static_cast<double>(inner);
  const Sum2* partials = reinterpret_cast<const Sum2*>(p.partials);  // [slices][channels]
  double sum_dy = 0, sum_dyx = 0;
  for (long long s = 0; s < slices; ++s) {
    sum_dy += partials[s * p.channels + c].a;
    sum_dyx += partials[s * p.channels + c].b;
  }
  const GradientCoefficients g = gradient_coefficients(sum_dy, sum_dyx, coefficients(p, kCoefInvStd)[c],
                                                       load_as_float<P>(p.scale, c), count);
  reinterpret_cast<float*>(p.dscale)[c] = g.dscale;
  reinterpret_cast<float*>(p.dbias)[c] = g.dbias;
  coefficients(p, kCoefA)[c] = g.a;
  coefficients(p, kCoefB)[c] = g.b;
  coefficients(p, kCoefC)[c] = g.c;
}

/// y = (x - mean) * a + b (forward, T), or dx = a * dy + b * (x - mean) + c
/// (kBackward, G), over the grid of batch_norm_sums: a channels-last thread
/// keeps its channels' coefficients in registers over its rows; a plane's
/// block its channel's.
template <typename T, typename G, int kVec, int kThreadsX, int kThreadsY, long long kInner, bool kBackward>
__device__ void batch_norm_apply(const BatchNormParams& p) {
  const Slice slice = slice_of_block(p.outer, p.rows_per_slice);
  auto apply = [&](long long vector_index, const float (&high)[kVec], const float (&low)[kVec],
                   const float (&a)[kVec], const float (&b)[kVec], const float (&c)[kVec]) {
    float x[kVec], out[kVec];  // [element of the vector]
    load_vector<T, kVec>(p.x, vector_index, true, x);
    if (kBackward) {
      float dy[kVec];
      load_vector<G, kVec>(p.dy, vector_index, true, dy);
#pragma unroll
      for (int k = 0; k < kVec; ++k) out[k] = a[k] * dy[k] + b[k] * ((x[k] - high[k]) - low[k]) + c[k];
      store_vector<G, kVec>(p.dx, vector_index, out);
    } else {
#pragma unroll
      for (int k = 0; k < kVec; ++k) out[k] = ((x[k] - high[k]) - low[k]) * a[k] + b[k];
      store_vector<T, kVec>(p.y, vector_index, out);
    }
  };
  float high[kVec], low[kVec], a[kVec], b[kVec], c[kVec];  // [element of the vector]: its channel's
  if constexpr (kInner == 1) {
    const long long vectors = p.channels / kVec;
    const long long vec = static_cast<long long>(blockIdx.x) * kThreadsX + threadIdx.x % kThreadsX;
    if (vec >= vectors) return;
    load_coefficients<kVec>(p, kCoefMeanHigh, vec * kVec, high);
    load_coefficients<kVec>(p, kCoefMeanLow, vec * kVec, low);
    load_coefficients<kVec>(p, kCoefA, vec * kVec, a);
    load_coefficients<kVec>(p, kCoefB, vec * kVec, b);
    if (kBackward) load_coefficients<kVec>(p, kCoefC, vec * kVec, c);
    for (long long row = slice.first + threadIdx.x / kThreadsX; row < slice.last; row += kThreadsY)
      apply(row * vectors + vec, high, low, a, b, c);
  } else {
    constexpr long long kInnerVectors = kInner / kVec;  // vectors per plane
    const long long channel = blockIdx.x;
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      high[k] = coefficients(p, kCoefMeanHigh)[channel];
      low[k] = coefficients(p, kCoefMeanLow)[channel];
      a[k] = coefficients(p, kCoefA)[channel];
      b[k] = coefficients(p, kCoefB)[channel];
      c[k] = kBackward ? coefficients(p, kCoefC)[channel] : 0.f;
    }
    const long long count = (slice.last - slice.first) * kInnerVectors;
    for (long long i = threadIdx.x; i < count; i += kThreadsX * kThreadsY) {
      const long long row = slice.first + i / kInnerVectors;
      apply((row * p.channels + channel) * kInnerVectors + i % kInnerVectors, high, low, a, b, c);
    }
  }
}

}  // namespace boo
