// boo device code: copies between a conv tensor with any strides and a dense
// channels-last buffer, whose channels may be padded with zeros (to 4 or a
// multiple of 8), so that gpu:conv:implicit_gemm loads 16-byte vectors of
// channels where the tensor's layout (NCHW, KCRS, CHWN) or its channel count
// (3, 5, 13, 35, 49, ...) allows only scalar loads.
#pragma once

#include "boo/common/types.cuh"
#include "boo/conv/conv_igemm_params.cuh"

namespace boo {

/// Strided offset of element (outer, c, z, y, x) and the dense padded offset
/// of the same element, from a linear index over the dense buffer
/// [outer][z][y][x][`channels_per_row`].
struct ChannelPadIndex {
  long long strided, dense, channel;
};

__device__ __forceinline__ ChannelPadIndex channel_pad_index(const ConvChannelPadParams& p, long long linear,
                                                             long long channels_per_row) {
  ChannelPadIndex out;
  out.channel = linear % channels_per_row;
  long long rest = linear / channels_per_row;  // (outer, z, y, x) pixel of the dense buffer
  const long long pixel = rest;
  const long long x = rest % p.sizes[3];
  rest /= p.sizes[3];
  const long long y = rest % p.sizes[2];
  rest /= p.sizes[2];
  const long long z = rest % p.sizes[1];
  const long long outer = rest / p.sizes[1];
  out.strided = outer * p.strides[0] + out.channel * p.strides[1] + z * p.strides[2] + y * p.strides[3] +
                x * p.strides[4];
  out.dense = pixel * p.padded_channels + out.channel;
  return out;
}

/// kIntoDense: dense[outer, z, y, x, c] = c < channels ? strided[outer, c, z, y, x] : 0;
/// else strided[outer, c, z, y, x] = dense[outer, z, y, x, c] for c < channels.
template <typename T, bool kIntoDense>
__device__ void conv_copy_channels(const ConvChannelPadParams& p) {
  const long long per_pixel = kIntoDense ? p.padded_channels : p.channels;  // elements written per pixel
  const long long total = p.sizes[0] * p.sizes[1] * p.sizes[2] * p.sizes[3] * per_pixel;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const ChannelPadIndex at = channel_pad_index(p, i, per_pixel);
    if (kIntoDense) {
      reinterpret_cast<T*>(p.dense)[at.dense] =
          at.channel < p.channels ? reinterpret_cast<const T*>(p.strided)[at.strided] : T{};
    } else {
      reinterpret_cast<T*>(p.strided)[at.strided] = reinterpret_cast<const T*>(p.dense)[at.dense];
    }
  }
}

/// The same copies for a tensor whose pixels (or taps) are contiguous, as in
/// NCHW and KCRS: per (outer, 32 channels, 32 pixels) tile, a transpose through
/// shared memory, so that both the strided reads (along pixels) and the dense
/// writes (along channels) are coalesced. Block: 32 x 8 threads (256, x
/// fastest); grid: (pixel tiles, channel tiles, outer in a grid-stride loop).
/// Strided element (o, c, pixel) at o * strides[0] + c * strides[1] + pixel.
template <typename T, bool kIntoDense>
__device__ void conv_transpose_channels(const ConvChannelPadParams& p) {
  __shared__ T tile[32][33];  // [channel][pixel], +1 column against bank conflicts
  const long long pixels = p.sizes[1] * p.sizes[2] * p.sizes[3];
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;  // 32 x 8
  const long long p0 = static_cast<long long>(blockIdx.x) * 32, c0 = static_cast<long long>(blockIdx.y) * 32;
  const T* src = reinterpret_cast<const T*>(kIntoDense ? p.strided : p.dense);
  T* dst = reinterpret_cast<T*>(kIntoDense ? p.dense : p.strided);
  for (long long o = blockIdx.z; o < p.sizes[0]; o += gridDim.z) {
    const long long dense_row = o * pixels;  // first pixel of this outer index in the dense buffer
    if (kIntoDense) {
      // Read along pixels (the strided tensor's contiguous dim), write along channels; padding channels are zeros.
      for (int j = ty; j < 32; j += 8) {
        const long long c = c0 + j, px = p0 + tx;
        tile[j][tx] = c < p.channels && px < pixels ? src[o * p.strides[0] + c * p.strides[1] + px] : T{};
      }
      __syncthreads();
      for (int j = ty; j < 32; j += 8) {
        const long long px = p0 + j, c = c0 + tx;
        if (px < pixels && c < p.padded_channels) dst[(dense_row + px) * p.padded_channels + c] = tile[tx][j];
      }
    } else {
      // Read along channels of the dense buffer, write along pixels; padding channels are left behind.
      for (int j = ty; j < 32; j += 8) {
        const long long px = p0 + j, c = c0 + tx;
        if (px < pixels && c < p.channels) tile[tx][j] = src[(dense_row + px) * p.padded_channels + c];
      }
      __syncthreads();
      for (int j = ty; j < 32; j += 8) {
        const long long c = c0 + j, px = p0 + tx;
        if (c < p.channels && px < pixels) dst[o * p.strides[0] + c * p.strides[1] + px] = tile[j][tx];
      }
    }
    __syncthreads();  // the tile is reused by the next outer index
  }
}

}  // namespace boo
