// boo device code: copies between a conv tensor with any strides and a dense
// channels-last buffer whose channels are padded with zeros to a multiple of
// 8, so that gpu:conv:implicit_gemm loads 16-byte vectors of channels where
// the real channel count (3, 5, 13, 35, 49, ...) allows only scalar loads.
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

}  // namespace boo
