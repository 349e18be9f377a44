// boo device code: the float64 reference batch norm (gpu:batchnorm:reference).
//
// The CPU reference (src/ops/norm/batchnorm_ref.cpp) on the GPU: every value
// is the same expression over the same terms in the same order, each product
// rounded before it is added (the CPU reference is compiled with
// -ffp-contract=off), so the two agree bit for bit. The CPU adds each
// statistic's terms in increasing logical order of x's elements; here one
// thread per statistic visits its elements in that order.
#pragma once

#include "boo/kernels/types.cuh"
#include "boo/norm/batch_norm_ref_params.cuh"

namespace boo {
namespace batch_norm_ref {

template <typename T>
__device__ __forceinline__ double load(unsigned long long base, long long offset) {
  return static_cast<double>(load_as_float<T>(base, offset));
}

/// The storage offset of logical element `linear` of a tensor of `shape` and `strides`.
__device__ __forceinline__ long long offset(const long long* shape, const long long* strides, int rank,
                                            long long linear) {
  long long off = 0;
  for (int d = rank - 1; d >= 0; --d) {
    off += (linear % shape[d]) * strides[d];
    linear /= shape[d];
  }
  return off;
}
__device__ __forceinline__ long long x_at(const BatchNormRefParams& p, long long i) {
  return offset(p.x_shape, p.x_strides, p.rank, i);
}
__device__ __forceinline__ long long p_at(const BatchNormRefParams& p, long long s) {
  return offset(p.p_shape, p.p_strides, p.rank, s);
}

__device__ __forceinline__ double* terms(const BatchNormRefParams& p, int which) {
  return reinterpret_cast<double*>(p.stat_terms) + which * p.stats;
}
enum StatTerm : int { kMean = 0, kInvStd = 1, kVar = 2, kSumDy = 3, kSumDyXhat = 4 };

/// Statistic s's elements: the i-th in increasing logical order.
__device__ __forceinline__ long long element(const BatchNormRefParams& p, long long s, long long k) {
  const long long cs = p.channels * p.spatial;
  if (!p.spatial_mode) return k * cs + s;                     // per activation: one per sample
  return (k / p.spatial) * cs + s * p.spatial + k % p.spatial;  // spatial: samples, then the plane
}

}  // namespace batch_norm_ref

#define BOO_BATCH_NORM_REF_LOOP(i, n) \
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<long long>(gridDim.x) * blockDim.x)

/// Each statistic's mean and invstd: from the given estimated statistics
/// (kSource 1), the saved ones (2), or the batch (0: the sum, then the squared
/// deviations; with kSave and kRunning the saved and running results). One
/// thread per statistic.
template <typename T, int kSource, bool kSave, bool kRunning>
__device__ void batch_norm_reference_stats(const BatchNormRefParams& p) {
  using namespace batch_norm_ref;
  const long long count = p.total / p.stats;
  const double m = static_cast<double>(count);
  BOO_BATCH_NORM_REF_LOOP(s, p.stats) {
    double mean = 0, invstd = 0, var = 0;
    if (kSource == 1) {
      mean = load<float>(p.given_mean, p_at(p, s));
      invstd = 1 / sqrt(__dadd_rn(load<float>(p.given_variance, p_at(p, s)), p.eps));
    } else if (kSource == 2) {
      mean = load<float>(p.saved_mean_in, p_at(p, s));
      invstd = load<float>(p.saved_inv_in, p_at(p, s));
    } else {
      for (long long k = 0; k < count; ++k) mean = __dadd_rn(mean, load<T>(p.x, x_at(p, element(p, s, k))));
      mean /= m;
      for (long long k = 0; k < count; ++k) {
        const double d = __dsub_rn(load<T>(p.x, x_at(p, element(p, s, k))), mean);
        var = __dadd_rn(var, __dmul_rn(d, d));
      }
      var /= m;
      invstd = 1 / sqrt(__dadd_rn(var, p.eps));
    }
    terms(p, kMean)[s] = mean;
    terms(p, kInvStd)[s] = invstd;
    terms(p, kVar)[s] = var;
    if (kSave) {
      reinterpret_cast<double*>(p.saved_mean)[p_at(p, s)] = mean;
      reinterpret_cast<double*>(p.saved_inv)[p_at(p, s)] = invstd;
    }
    if (kRunning) {
      const double f = p.momentum;
      reinterpret_cast<double*>(p.running_mean)[p_at(p, s)] =
          __dadd_rn(__dmul_rn(1 - f, load<float>(p.running_mean_in, p_at(p, s))), __dmul_rn(f, mean));
      reinterpret_cast<double*>(p.running_variance)[p_at(p, s)] =
          __dadd_rn(__dmul_rn(1 - f, load<float>(p.running_variance_in, p_at(p, s))),
                    __dmul_rn(__dmul_rn(f, var), m) / (m - 1));
    }
  }
}

/// Statistic of logical element i.
__device__ __forceinline__ long long batch_norm_ref_stat_of(const BatchNormRefParams& p, long long i) {
  const long long cs = i % (p.channels * p.spatial);
  return p.spatial_mode ? cs / p.spatial : cs;
}

/// y = (x - mean) * invstd * scale + bias. One thread per element.
template <typename T, typename P>
__device__ void batch_norm_reference_y(const BatchNormRefParams& p) {
  using namespace batch_norm_ref;
  BOO_BATCH_NORM_REF_LOOP(i, p.total) {
    const long long s = batch_norm_ref_stat_of(p, i);
    const double centred = __dmul_rn(__dsub_rn(load<T>(p.x, x_at(p, i)), terms(p, kMean)[s]), terms(p, kInvStd)[s]);
    reinterpret_cast<double*>(p.y)[x_at(p, i)] =
        __dadd_rn(__dmul_rn(centred, load<P>(p.scale, p_at(p, s))), load<P>(p.bias, p_at(p, s)));
  }
}

/// sum(dy) (dbias) and sum(dy * (x - mean) * invstd) (dscale) of each statistic. One thread per statistic.
template <typename T, typename G>
__device__ void batch_norm_reference_grad_sums(const BatchNormRefParams& p) {
  using namespace batch_norm_ref;
  const long long count = p.total / p.stats;
  BOO_BATCH_NORM_REF_LOOP(s, p.stats) {
    double sum_dy = 0, sum_dy_xhat = 0;
    for (long long k = 0; k < count; ++k) {
      const long long i = element(p, s, k);
      const double dy = load<G>(p.dy, x_at(p, i));
      sum_dy = __dadd_rn(sum_dy, dy);
      sum_dy_xhat = __dadd_rn(
          sum_dy_xhat, __dmul_rn(__dmul_rn(dy, __dsub_rn(load<T>(p.x, x_at(p, i)), terms(p, kMean)[s])),
                                 terms(p, kInvStd)[s]));
    }
    terms(p, kSumDy)[s] = sum_dy;
    terms(p, kSumDyXhat)[s] = sum_dy_xhat;
    reinterpret_cast<double*>(p.dscale)[p_at(p, s)] = sum_dy_xhat;
    reinterpret_cast<double*>(p.dbias)[p_at(p, s)] = sum_dy;
  }
}

/// dx = scale * invstd * (dy - sum(dy) / m - xhat * sum(dy * xhat) / m). One thread per element.
template <typename T, typename G, typename P>
__device__ void batch_norm_reference_dx(const BatchNormRefParams& p) {
  using namespace batch_norm_ref;
  const double m = static_cast<double>(p.total / p.stats);
  BOO_BATCH_NORM_REF_LOOP(i, p.total) {
    const long long s = batch_norm_ref_stat_of(p, i);
    const double invstd = terms(p, kInvStd)[s];
    const double xhat = __dmul_rn(__dsub_rn(load<T>(p.x, x_at(p, i)), terms(p, kMean)[s]), invstd);
    const double inner = __dsub_rn(__dsub_rn(load<G>(p.dy, x_at(p, i)), terms(p, kSumDy)[s] / m),
                                   __dmul_rn(xhat, terms(p, kSumDyXhat)[s]) / m);
    reinterpret_cast<double*>(p.dx)[x_at(p, i)] = __dmul_rn(__dmul_rn(load<P>(p.scale, p_at(p, s)), invstd), inner);
  }
}

#undef BOO_BATCH_NORM_REF_LOOP

}  // namespace boo
