// boo device code: simple, correct layer and RMS normalization
// (gpu:layernorm:simple, gpu:rmsnorm:simple), for every signature the row
// kernels decline. One block per row for the row-wise passes, one thread per
// column for the column sums of dweight/dbias (rows summed in order:
// deterministic). Statistics in float.
#pragma once

#include "boo/kernels/types.cuh"
#include "boo/norm/norm_simple_params.cuh"

namespace boo {

/// Storage offset of x element (row, col).
__device__ __forceinline__ long long layernorm_x_offset(const LayerNormParams& p, long long row, long long col) {
  long long linear = row * p.cols + col, offset = 0;
  for (int d = p.rank - 1; d >= 0; --d) {
    offset += (linear % p.shape[d]) * p.x_strides[d];
    linear /= p.shape[d];
  }
  return offset;
}

/// x at (row, col), plus x2 there for add-layernorm (p.x2 set; x2 is strided like x).
template <typename T>
__device__ __forceinline__ float layernorm_x(const LayerNormParams& p, long long row, long long col) {
  const long long offset = layernorm_x_offset(p, row, col);
  const float x = load_as_float<T>(p.x, offset);
  return p.x2 ? x + load_as_float<T>(p.x2, offset) : x;
}

/// Storage offset of element (row, col) of y, dy or dx: x's (kLikeX: MIOpen's
/// --layout stores them all alike) or row-major.
template <bool kLikeX>
__device__ __forceinline__ long long layernorm_y_offset(const LayerNormParams& p, long long row, long long col) {
  return kLikeX ? layernorm_x_offset(p, row, col) : row * p.cols + col;
}

/// y = (x - mean) * rstd * weight + bias; mean and rstd (float32) per row. Two
/// passes over x (the corrected two-pass algorithm).
template <typename T, bool kLikeX, bool kWeight, bool kBias>
__device__ void layernorm_forward(const LayerNormParams& p) {
  __shared__ float scratch[32];
  for (long long row = blockIdx.x; row < p.rows; row += gridDim.x) {
    float sum = 0.f;
    for (long long col = threadIdx.x; col < p.cols; col += blockDim.x)
      sum += layernorm_x<T>(p, row, col);
    const float centre = block_sum(sum, scratch) / static_cast<float>(p.cols);
    // The deviations' mean is the float32 mean's rounding error, taken out of
    // every (x - mean) (see RowStats in kernels/reduce/row_stats.cuh).
    float dev = 0.f, sq = 0.f;
    for (long long col = threadIdx.x; col < p.cols; col += blockDim.x) {
      const float d = layernorm_x<T>(p, row, col) - centre;
      dev += d;
      sq += d * d;
    }
    const float residual = block_sum(dev, scratch) / static_cast<float>(p.cols);
    const float variance = block_sum(sq, scratch) / static_cast<float>(p.cols) - residual * residual;
    const float rstd = rsqrtf(variance + p.eps);
    const float mean = centre + residual;
    for (long long col = threadIdx.x; col < p.cols; col += blockDim.x) {
      float v = ((layernorm_x<T>(p, row, col) - centre) - residual) * rstd;
      if (kWeight) v *= load_as_float<T>(p.weight, col);
      if (kBias) v += load_as_float<T>(p.bias, col);
      store_from_float<T>(p.y, layernorm_y_offset<kLikeX>(p, row, col), v);
    }
    if (threadIdx.x == 0) {
      reinterpret_cast<float*>(p.mean)[row] = mean;
      reinterpret_cast<float*>(p.rstd)[row] = rstd;
    }
  }
}

/// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * weight, xhat = (x - mean) * rstd.
template <typename T, bool kLikeX, bool kWeight>
__device__ void layernorm_backward_data(const LayerNormParams& p) {
  __shared__ float scratch[32];
  for (long long row = blockIdx.x; row < p.rows; row += gridDim.x) {
    const float mean = reinterpret_cast<const float*>(p.mean)[row];
    const float rstd = reinterpret_cast<const float*>(p.rstd)[row];
    float sum_g = 0.f, sum_gx = 0.f;
    for (long long col = threadIdx.x; col < p.cols; col += blockDim.x) {
      float g = load_as_float<T>(p.dy, layernorm_y_offset<kLikeX>(p, row, col));
      if (kWeight) g *= load_as_float<T>(p.weight, col);
      const float xhat = (layernorm_x<T>(p, row, col) - mean) * rstd;
      sum_g += g;
      sum_gx += g * xhat;
    }
    const float mean_g = block_sum(sum_g, scratch) / static_cast<float>(p.cols);
    const float mean_gx = block_sum(sum_gx, scratch) / static_cast<float>(p.cols);
    for (long long col = threadIdx.x; col < p.cols; col += blockDim.x) {
      float g = load_as_float<T>(p.dy, layernorm_y_offset<kLikeX>(p, row, col));
      if (kWeight) g *= load_as_float<T>(p.weight, col);
      const float xhat = (layernorm_x<T>(p, row, col) - mean) * rstd;
      store_from_float<T>(p.dx, layernorm_y_offset<kLikeX>(p, row, col), rstd * (g - mean_g - xhat * mean_gx));
    }
  }
}

/// dweight[col] = sum over rows of dy * xhat; dbias[col] = sum over rows of dy.
template <typename T, bool kLikeX, bool kWeightGrad, bool kBiasGrad>
__device__ void layernorm_backward_params(const LayerNormParams& p) {
  for (long long col = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; col < p.cols;
       col += static_cast<long long>(gridDim.x) * blockDim.x) {
    float dw = 0.f, db = 0.f;
    for (long long row = 0; row < p.rows; ++row) {
      const float dy = load_as_float<T>(p.dy, layernorm_y_offset<kLikeX>(p, row, col));
      if (kWeightGrad) {
        const float mean = reinterpret_cast<const float*>(p.mean)[row];
        const float rstd = reinterpret_cast<const float*>(p.rstd)[row];
        dw += dy * (layernorm_x<T>(p, row, col) - mean) * rstd;
      }
      db += dy;
    }
    if (kWeightGrad) store_from_float<T>(p.dweight, col, dw);
    if (kBiasGrad) store_from_float<T>(p.dbias, col, db);
  }
}

/// y[row, :] = x * rstd * weight, rstd = rsqrt(mean(x^2) + eps), rstd[row] in float32.
template <typename T, bool kWeight>
__device__ void rmsnorm_forward(const RmsNormParams& p) {
  __shared__ float scratch[32];
  for (long long row = blockIdx.x; row < p.rows; row += gridDim.x) {
    const long long base = row * p.cols;
    float sq = 0.f;
    for (long long col = threadIdx.x; col < p.cols; col += blockDim.x) {
      const float v = load_as_float<T>(p.x, base + col);
      sq += v * v;
    }
    const float rstd = rsqrtf(block_sum(sq, scratch) / static_cast<float>(p.cols) + p.eps);
    for (long long col = threadIdx.x; col < p.cols; col += blockDim.x) {
      float v = load_as_float<T>(p.x, base + col) * rstd;
      if (kWeight) v *= load_as_float<T>(p.weight, col);
      store_from_float<T>(p.y, base + col, v);
    }
    if (threadIdx.x == 0) reinterpret_cast<float*>(p.rstd)[row] = rstd;
  }
}

/// dx[row, :] = rstd * (g - xhat * mean(g * xhat)), g = dy * weight, xhat = x * rstd.
template <typename T, bool kWeight>
__device__ void rmsnorm_backward_data(const RmsNormParams& p) {
  __shared__ float scratch[32];
  for (long long row = blockIdx.x; row < p.rows; row += gridDim.x) {
    const long long base = row * p.cols;
    const float rstd = reinterpret_cast<const float*>(p.rstd)[row];
    float sum_gx = 0.f;
    for (long long col = threadIdx.x; col < p.cols; col += blockDim.x) {
      float g = load_as_float<T>(p.dy, base + col);
      if (kWeight) g *= load_as_float<T>(p.weight, col);
      sum_gx += g * load_as_float<T>(p.x, base + col) * rstd;
    }
    const float mean_gx = block_sum(sum_gx, scratch) / static_cast<float>(p.cols);
    for (long long col = threadIdx.x; col < p.cols; col += blockDim.x) {
      float g = load_as_float<T>(p.dy, base + col);
      if (kWeight) g *= load_as_float<T>(p.weight, col);
      const float xhat = load_as_float<T>(p.x, base + col) * rstd;
      store_from_float<T>(p.dx, base + col, rstd * (g - xhat * mean_gx));
    }
  }
}

/// dweight[col] = sum over rows of dy * x * rstd.
template <typename T>
__device__ void rmsnorm_backward_weight(const RmsNormParams& p) {
  for (long long col = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; col < p.cols;
       col += static_cast<long long>(gridDim.x) * blockDim.x) {
    float dw = 0.f;
    for (long long row = 0; row < p.rows; ++row)
      dw += load_as_float<T>(p.dy, row * p.cols + col) * load_as_float<T>(p.x, row * p.cols + col) *
            reinterpret_cast<const float*>(p.rstd)[row];
    store_from_float<T>(p.dweight, col, dw);
  }
}

}  // namespace boo
