// boo device code: the float64 reference layer and RMS norm
// (gpu:layernorm:reference, gpu:rmsnorm:reference).
//
// The CPU reference (src/ops/norm/norm_ref.cpp) on the GPU: every value is
// the same expression over the same terms in the same order, each product
// rounded before it is added (__dmul_rn and friends are never fused into an
// fma; the CPU reference is compiled with -ffp-contract=off), so the two
// agree bit for bit. Row sums run in one thread per row, column sums (the
// parameter gradients) in one thread per column over the CPU's 64 chunks of
// rows, then the chunks in order.
#pragma once

#include "boo/kernels/types.cuh"
#include "boo/norm/norm_ref_params.cuh"

namespace boo {
namespace norm_ref {

template <typename T>
__device__ __forceinline__ double load(unsigned long long base, long long offset) {
  return static_cast<double>(load_as_float<T>(base, offset));
}

/// x[row, col]: the storage offset of logical index row * cols + col; plus
/// x2's element for add-layernorm, as the CPU reference adds them.
template <typename T>
__device__ double load_x(const NormRefParams& p, long long row, long long col) {
  long long linear = row * p.cols + col, offset = 0;
  for (int d = p.x_rank - 1; d >= 0; --d) {
    offset += (linear % p.x_shape[d]) * p.x_strides[d];
    linear /= p.x_shape[d];
  }
  return p.x2 ? __dadd_rn(load<T>(p.x, offset), load<T>(p.x2, offset)) : load<T>(p.x, offset);
}

__device__ __forceinline__ double* row_terms(const NormRefParams& p, int which) {
  return reinterpret_cast<double*>(p.row_terms) + which * p.rows;
}
enum RowTerm : int { kMean = 0, kRstd = 1, kMeanG = 2, kMeanGx = 3 };

template <typename T>
__device__ __forceinline__ double weight_at(const NormRefParams& p, long long col) {
  return p.weight ? load<T>(p.weight, col) : 1.0;
}

/// xhat = (x - mean) * rstd of element (row, col).
template <typename T>
__device__ __forceinline__ double xhat(const NormRefParams& p, long long row, long long col) {
  return __dmul_rn(__dsub_rn(load_x<T>(p, row, col), row_terms(p, kMean)[row]), row_terms(p, kRstd)[row]);
}

}  // namespace norm_ref

/// Each row's mean (0 for RMS norm) and rstd: computed from x (kForward:
/// sum, then the squared deviations, rstd = 1 / sqrt(var + eps); the results
/// mean and rstd are written), or read from the given statistics. One thread per row.
template <typename T, bool kRms, bool kForward>
__device__ void norm_reference_stats(const NormRefParams& p) {
  for (long long r = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; r < p.rows;
       r += static_cast<long long>(gridDim.x) * blockDim.x) {
    double mean = 0, rstd = 0;
    if (kForward) {
      const double n = static_cast<double>(p.cols);
      if (!kRms) {
        double sum = 0;
        for (long long j = 0; j < p.cols; ++j) sum = __dadd_rn(sum, norm_ref::load_x<T>(p, r, j));
        mean = sum / n;
      }
      double sq = 0;
      for (long long j = 0; j < p.cols; ++j) {
        const double d = __dsub_rn(norm_ref::load_x<T>(p, r, j), mean);
        sq = __dadd_rn(sq, __dmul_rn(d, d));
      }
      rstd = 1.0 / sqrt(__dadd_rn(sq / n, p.eps));
      if (p.mean_out) reinterpret_cast<double*>(p.mean_out)[r] = mean;
      reinterpret_cast<double*>(p.rstd_out)[r] = rstd;
    } else {
      if (p.mean_in) mean = norm_ref::load<float>(p.mean_in, r);
      if (p.rstd_in) rstd = norm_ref::load<float>(p.rstd_in, r);
    }
    norm_ref::row_terms(p, norm_ref::kMean)[r] = mean;
    norm_ref::row_terms(p, norm_ref::kRstd)[r] = rstd;
  }
}

/// y = xhat * weight + bias (weight 1 and bias 0 where absent). One thread per element.
template <typename T>
__device__ void norm_reference_y(const NormRefParams& p) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < p.rows * p.cols;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long r = i / p.cols, j = i % p.cols;
    const double bias = p.bias ? norm_ref::load<T>(p.bias, j) : 0.0;
    reinterpret_cast<double*>(p.y)[i] =
        __dadd_rn(__dmul_rn(norm_ref::xhat<T>(p, r, j), norm_ref::weight_at<T>(p, j)), bias);
  }
}

/// dx's row terms: mean(g) (0 for RMS norm) and mean(g * xhat), g = dy * weight. One thread per row.
template <typename T, bool kRms>
__device__ void norm_reference_dx_terms(const NormRefParams& p) {
  for (long long r = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; r < p.rows;
       r += static_cast<long long>(gridDim.x) * blockDim.x) {
    double mean_g = 0, mean_gx = 0;
    for (long long j = 0; j < p.cols; ++j) {
      const double g = __dmul_rn(norm_ref::load<T>(p.dy, r * p.cols + j), norm_ref::weight_at<T>(p, j));
      mean_g = __dadd_rn(mean_g, g);
      mean_gx = __dadd_rn(mean_gx, __dmul_rn(g, norm_ref::xhat<T>(p, r, j)));
    }
    const double n = static_cast<double>(p.cols);
    norm_ref::row_terms(p, norm_ref::kMeanG)[r] = kRms ? 0.0 : mean_g / n;
    norm_ref::row_terms(p, norm_ref::kMeanGx)[r] = mean_gx / n;
  }
}

/// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)). One thread per element.
template <typename T>
__device__ void norm_reference_dx(const NormRefParams& p) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < p.rows * p.cols;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long r = i / p.cols, j = i % p.cols;
    const double g = __dmul_rn(norm_ref::load<T>(p.dy, i), norm_ref::weight_at<T>(p, j));
    const double centred = __dsub_rn(g, norm_ref::row_terms(p, norm_ref::kMeanG)[r]);
    const double along_x = __dmul_rn(norm_ref::xhat<T>(p, r, j), norm_ref::row_terms(p, norm_ref::kMeanGx)[r]);
    reinterpret_cast<double*>(p.dx)[i] = __dmul_rn(norm_ref::row_terms(p, norm_ref::kRstd)[r], __dsub_rn(centred, along_x));
  }
}

/// dweight = sum over rows of dy * xhat, dbias = sum over rows of dy, each
/// summed over the CPU reference's min(rows, 64) chunks of rows, then the
/// chunks in order. One thread per column.
template <typename T>
__device__ void norm_reference_param_grads(const NormRefParams& p) {
  const long long chunks = p.rows < 64 ? p.rows : 64;
  for (long long j = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; j < p.cols;
       j += static_cast<long long>(gridDim.x) * blockDim.x) {
    double dw = 0, db = 0;
    for (long long chunk = 0; chunk < chunks; ++chunk) {
      double part_dw = 0, part_db = 0;
      for (long long r = p.rows * chunk / chunks; r < p.rows * (chunk + 1) / chunks; ++r) {
        const double dy = norm_ref::load<T>(p.dy, r * p.cols + j);
        if (p.dweight) part_dw = __dadd_rn(part_dw, __dmul_rn(dy, norm_ref::xhat<T>(p, r, j)));
        part_db = __dadd_rn(part_db, dy);
      }
      dw = __dadd_rn(dw, part_dw);
      db = __dadd_rn(db, part_db);
    }
    if (p.dweight) reinterpret_cast<double*>(p.dweight)[j] = dw;
    if (p.dbias) reinterpret_cast<double*>(p.dbias)[j] = db;
  }
}

}  // namespace boo
