// boo device code: simple, correct RMS normalization (gpu:rmsnorm:simple).
// One block per row for the row-wise passes, one thread per column for the
// dweight column sums (rows summed in order: deterministic). Float statistics.
#pragma once

#include "boo/kernels/types.cuh"
#include "boo/rmsnorm/rmsnorm_params.cuh"

namespace boo {

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
