// boo device code: copies between a conv tensor with any strides and a dense
// channels-last buffer, whose channels may be padded with zeros (to 4 or a
// multiple of 8), so that gpu:conv:implicit_gemm loads 16-byte vectors of
// channels where the tensor's layout (NCHW, KCRS, CHWN) or its channel count
// (3, 5, 13, 35, 49, ...) allows only scalar loads.
#pragma once

#include "boo/kernels/types.cuh"
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
  out.strided = p.origin + outer * p.strides[0] + out.channel * p.strides[1] + z * p.strides[2] + y * p.strides[3] +
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
/// NCHW and KCRS: per (outer, channels, pixels) tile, a transpose through
/// shared memory, so that both the strided reads and writes (along pixels)
/// and the dense ones (along channels) are coalesced. Strided element
/// (o, c, pixel) at origin + o * strides[0] + c * strides[1] + pixel.
/// Block: 32 x 8 threads (256, x fastest); grid: (pixel tiles, channel tiles,
/// outer in a grid-stride loop). kPairs (16-bit types, where the host found
/// every offset even): each thread moves two adjacent elements as one 32-bit
/// access, over 64 x 64 tiles; else one element over 32 x 32 tiles.
template <typename T, bool kIntoDense, bool kPairs>
__device__ void conv_transpose_channels(const ConvChannelPadParams& p) {
  constexpr int kTile = kPairs ? 64 : 32;   // channels and pixels per tile
  constexpr int kPer = kPairs ? 2 : 1;      // elements per access
  __shared__ T tile[kTile][kTile + 2];      // [channel][pixel]; +2 keeps rows 4-byte aligned and spreads banks
  const long long pixels = p.sizes[1] * p.sizes[2] * p.sizes[3];
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;  // 32 x 8
  const long long p0 = static_cast<long long>(blockIdx.x) * kTile, c0 = static_cast<long long>(blockIdx.y) * kTile;
  const long long dense_channels = kIntoDense ? p.padded_channels : p.channels;  // channels each side moves
  const T* src = reinterpret_cast<const T*>(kIntoDense ? p.strided : p.dense);
  T* dst = reinterpret_cast<T*>(kIntoDense ? p.dense : p.strided);
  // An access of kPer elements: one T, or a pair as one 32-bit word.
  struct alignas(kPer * sizeof(T)) Run {
    T v[kPer];
  };
  for (long long o = blockIdx.z; o < p.sizes[0]; o += gridDim.z) {
    const long long dense_row = o * pixels;  // first pixel of this outer index in the dense buffer
    if (kIntoDense) {
      // Read runs along pixels, write runs along channels; padding channels are zeros.
      for (int j = ty; j < kTile; j += 8) {
        const long long c = c0 + j, px = p0 + kPer * tx;
        Run r{};
        if (c < p.channels && px < pixels) r = *reinterpret_cast<const Run*>(src + p.origin + o * p.strides[0] + c * p.strides[1] + px);
        for (int e = 0; e < kPer; ++e) tile[j][kPer * tx + e] = r.v[e];
      }
      __syncthreads();
      for (int j = ty; j < kTile; j += 8) {
        const long long px = p0 + j, c = c0 + kPer * tx;
        Run r;
        for (int e = 0; e < kPer; ++e) r.v[e] = tile[kPer * tx + e][j];
        if (px < pixels && c < dense_channels) *reinterpret_cast<Run*>(dst + (dense_row + px) * p.padded_channels + c) = r;
      }
    } else {
      // Read runs along the dense buffer's channels, write runs along pixels; padding channels stay behind.
      for (int j = ty; j < kTile; j += 8) {
        const long long px = p0 + j, c = c0 + kPer * tx;
        if (px < pixels && c < p.padded_channels) {
          const Run r = *reinterpret_cast<const Run*>(src + (dense_row + px) * p.padded_channels + c);
          for (int e = 0; e < kPer; ++e) tile[kPer * tx + e][j] = r.v[e];
        }
      }
      __syncthreads();
      for (int j = ty; j < kTile; j += 8) {
        const long long c = c0 + j, px = p0 + kPer * tx;
        Run r;
        for (int e = 0; e < kPer; ++e) r.v[e] = tile[j][kPer * tx + e];
        if (c < p.channels && px < pixels) *reinterpret_cast<Run*>(dst + p.origin + o * p.strides[0] + c * p.strides[1] + px) = r;
      }
    }
    __syncthreads();  // the tile is reused by the next outer index
  }
}

}  // namespace boo
