// boo device code: the float64 reference group norm (gpu:groupnorm:reference).
//
// The CPU reference (src/ops/norm/groupnorm_ref.cpp) on the GPU: every value
// is the same expression over the same terms in the same order, each product
// rounded before it is added (the CPU reference is compiled with
// -ffp-contract=off), so the two agree bit for bit. Row sums (statistics,
// dx's terms) run in one thread per row, the parameter gradients in one
// thread per channel over the samples, then the spatial elements.
#pragma once

#include "boo/kernels/types.cuh"
#include "boo/norm/group_norm_ref_params.cuh"

namespace boo {
namespace group_norm_ref {

template <typename T>
__device__ __forceinline__ double load(unsigned long long base, long long offset) {
  return static_cast<double>(load_as_float<T>(base, offset));
}

/// The storage offset of logical element row * cols + col of x (y, dy, dx).
__device__ __forceinline__ long long offset(const GroupNormRefParams& p, long long row, long long col) {
  long long linear = row * p.cols + col, off = 0;
  for (int d = p.rank - 1; d >= 0; --d) {
    off += (linear % p.shape[d]) * p.strides[d];
    linear /= p.shape[d];
  }
  return off;
}

__device__ __forceinline__ double* row_terms(const GroupNormRefParams& p, int which) {
  return reinterpret_cast<double*>(p.row_terms) + which * p.rows;
}
enum RowTerm : int { kMean = 0, kRstd = 1, kMeanG = 2, kMeanGx = 3 };

/// The channel of element col of row: the group's first channel plus col / spatial.
__device__ __forceinline__ long long channel(const GroupNormRefParams& p, long long row, long long col) {
  return (row % p.groups) * (p.channels / p.groups) + col / p.spatial;
}

template <typename T>
__device__ __forceinline__ double weight_at(const GroupNormRefParams& p, long long c) {
  return p.weight ? load<T>(p.weight, c) : 1.0;
}

template <typename T>
__device__ __forceinline__ double xhat(const GroupNormRefParams& p, long long row, long long col) {
  return __dmul_rn(__dsub_rn(load<T>(p.x, offset(p, row, col)), row_terms(p, kMean)[row]), row_terms(p, kRstd)[row]);
}

/// g = dy * weight of element (row, col).
template <typename T>
__device__ __forceinline__ double g(const GroupNormRefParams& p, long long row, long long col) {
  return __dmul_rn(load<T>(p.dy, offset(p, row, col)), weight_at<T>(p, channel(p, row, col)));
}

}  // namespace group_norm_ref

#define BOO_GROUP_NORM_REF_LOOP(i, n) \
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<long long>(gridDim.x) * blockDim.x)

/// Each row's mean and rstd: computed from x (kForward: the sum, then the
/// squared deviations; mean and rstd are written), or read from the given
/// statistics. One thread per row.
template <typename T, bool kForward>
__device__ void group_norm_reference_stats(const GroupNormRefParams& p) {
  BOO_GROUP_NORM_REF_LOOP(r, p.rows) {
    double mean = 0, rstd = 0;
    if (kForward) {
      const double n = static_cast<double>(p.cols);
      double sum = 0;
      for (long long j = 0; j < p.cols; ++j) sum = __dadd_rn(sum, group_norm_ref::load<T>(p.x, group_norm_ref::offset(p, r, j)));
      mean = sum / n;
      double sq = 0;
      for (long long j = 0; j < p.cols; ++j) {
        const double d = __dsub_rn(group_norm_ref::load<T>(p.x, group_norm_ref::offset(p, r, j)), mean);
        sq = __dadd_rn(sq, __dmul_rn(d, d));
      }
      rstd = 1.0 / sqrt(__dadd_rn(sq / n, p.eps));
      reinterpret_cast<double*>(p.mean_out)[r] = mean;
      reinterpret_cast<double*>(p.rstd_out)[r] = rstd;
    } else {
      mean = group_norm_ref::load<float>(p.mean_in, r);
      rstd = group_norm_ref::load<float>(p.rstd_in, r);
    }
    group_norm_ref::row_terms(p, group_norm_ref::kMean)[r] = mean;
    group_norm_ref::row_terms(p, group_norm_ref::kRstd)[r] = rstd;
  }
}

/// y = xhat * weight + bias (weight 1 and bias 0 where absent). One thread per element.
template <typename T>
__device__ void group_norm_reference_y(const GroupNormRefParams& p) {
  BOO_GROUP_NORM_REF_LOOP(i, p.rows * p.cols) {
    const long long r = i / p.cols, j = i % p.cols, c = group_norm_ref::channel(p, r, j);
    const double bias = p.bias ? group_norm_ref::load<T>(p.bias, c) : 0.0;
    reinterpret_cast<double*>(p.y)[group_norm_ref::offset(p, r, j)] =
        __dadd_rn(__dmul_rn(group_norm_ref::xhat<T>(p, r, j), group_norm_ref::weight_at<T>(p, c)), bias);
  }
}

/// dx's row terms: mean(g) and mean(g * xhat). One thread per row.
template <typename T>
__device__ void group_norm_reference_dx_terms(const GroupNormRefParams& p) {
  BOO_GROUP_NORM_REF_LOOP(r, p.rows) {
    double mean_g = 0, mean_gx = 0;
    for (long long j = 0; j < p.cols; ++j) {
      const double g = group_norm_ref::g<T>(p, r, j);
      mean_g = __dadd_rn(mean_g, g);
      mean_gx = __dadd_rn(mean_gx, __dmul_rn(g, group_norm_ref::xhat<T>(p, r, j)));
    }
    const double n = static_cast<double>(p.cols);
    group_norm_ref::row_terms(p, group_norm_ref::kMeanG)[r] = mean_g / n;
    group_norm_ref::row_terms(p, group_norm_ref::kMeanGx)[r] = mean_gx / n;
  }
}

/// dx = rstd * ((g - mean(g)) - xhat * mean(g * xhat)). One thread per element.
template <typename T>
__device__ void group_norm_reference_dx(const GroupNormRefParams& p) {
  BOO_GROUP_NORM_REF_LOOP(i, p.rows * p.cols) {
    const long long r = i / p.cols, j = i % p.cols;
    const double centred = __dsub_rn(group_norm_ref::g<T>(p, r, j), group_norm_ref::row_terms(p, group_norm_ref::kMeanG)[r]);
    const double along_x =
        __dmul_rn(group_norm_ref::xhat<T>(p, r, j), group_norm_ref::row_terms(p, group_norm_ref::kMeanGx)[r]);
    reinterpret_cast<double*>(p.dx)[group_norm_ref::offset(p, r, j)] =
        __dmul_rn(group_norm_ref::row_terms(p, group_norm_ref::kRstd)[r], __dsub_rn(centred, along_x));
  }
}

/// dweight[c] = sum over samples, then spatial, of dy * xhat; dbias[c] of dy. One thread per channel.
template <typename T>
__device__ void group_norm_reference_param_grads(const GroupNormRefParams& p) {
  BOO_GROUP_NORM_REF_LOOP(c, p.channels) {
    const long long cpg = p.channels / p.groups, g = c / cpg, first = (c % cpg) * p.spatial;
    double dw = 0, db = 0;
    for (long long n = 0; n < p.samples; ++n) {
      const long long r = n * p.groups + g;
      for (long long s = 0; s < p.spatial; ++s) {
        const double d = group_norm_ref::load<T>(p.dy, group_norm_ref::offset(p, r, first + s));
        dw = __dadd_rn(dw, __dmul_rn(d, group_norm_ref::xhat<T>(p, r, first + s)));
        db = __dadd_rn(db, d);
      }
    }
    if (p.dweight) reinterpret_cast<double*>(p.dweight)[c] = dw;
    if (p.dbias) reinterpret_cast<double*>(p.dbias)[c] = db;
  }
}

#undef BOO_GROUP_NORM_REF_LOOP

}  // namespace boo
