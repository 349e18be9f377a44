// boo device code: direct convolution, one thread per output element.
//
// The correct-for-every-signature fallback (gpu:conv:direct): any layout via
// strides, groups, 1/2/3-D, stride/padding/dilation, transposed, bias and
// activation epilogue, float accumulation. The faces mirror the CPU
// reference (src/ops/conv/conv_ref.cpp).
#pragma once

#include "boo/kernels/types.cuh"
#include "boo/conv/conv_direct_params.cuh"

namespace boo {

/// Splits a row-major linear index over (e0, e1, s[0], s[1], s[2]), in I's arithmetic: the faces
/// below take their index type I, int where every tensor has fewer than 2^31 elements (the host's
/// choice: 32-bit division is several times cheaper, and these kernels are bound by their index math).
template <typename I>
__device__ __forceinline__ void unravel5(I linear, I e0, I e1, const long long* s, I* out) {
  out[4] = linear % static_cast<I>(s[2]);
  linear /= static_cast<I>(s[2]);
  out[3] = linear % static_cast<I>(s[1]);
  linear /= static_cast<I>(s[1]);
  out[2] = linear % static_cast<I>(s[0]);
  linear /= static_cast<I>(s[0]);
  out[1] = linear % e1;
  out[0] = linear / e1;
}

template <typename I>
__device__ __forceinline__ I offset5(const long long* strides, I i0, I i1, I z, I y, I x) {
  return i0 * static_cast<I>(strides[0]) + i1 * static_cast<I>(strides[1]) + z * static_cast<I>(strides[2]) +
         y * static_cast<I>(strides[3]) + x * static_cast<I>(strides[4]);
}

/// B[n, kb, o] = epilogue(sum A * W): regular forward, transposed backward-data. kFp32Out: the
/// sums unrounded at p.b instead, for a caller's epilogue (ConvProblem::fp32_result): dense fp32
/// (groups, N x pixels, channels of a group), kAct 0 and no bias. kResidual: the epilogue adds
/// p.residual's element (B's strides: z has y's layout) after the bias, before the activation.
template <typename I, typename T, int kAct, bool kBias, bool kFp32Out = false, bool kResidual = false>
__device__ void conv_forward_face(const ConvFaceParams& p) {
  const I total = p.n * p.cb * p.b_size[0] * p.b_size[1] * p.b_size[2];
  const I cb_per_group = p.cb / p.groups, ca_per_group = p.ca / p.groups;
  for (I linear = blockIdx.x * static_cast<I>(blockDim.x) + threadIdx.x; linear < total;
       linear += static_cast<I>(gridDim.x) * blockDim.x) {
    I i[5];  // (n, kb, oz, oy, ox)
    unravel5<I>(linear, p.n, p.cb, p.b_size, i);
    const I c0 = (i[1] / cb_per_group) * ca_per_group;
    float acc = 0.f;
    for (I rz = 0; rz < p.f_size[0]; ++rz) {
      const I iz = i[2] * p.stride[0] - p.pad[0] + rz * p.dil[0];
      if (iz < 0 || iz >= p.a_size[0]) continue;
      for (I ry = 0; ry < p.f_size[1]; ++ry) {
        const I iy = i[3] * p.stride[1] - p.pad[1] + ry * p.dil[1];
        if (iy < 0 || iy >= p.a_size[1]) continue;
        for (I rx = 0; rx < p.f_size[2]; ++rx) {
          const I ix = i[4] * p.stride[2] - p.pad[2] + rx * p.dil[2];
          if (ix < 0 || ix >= p.a_size[2]) continue;
          for (I c = 0; c < ca_per_group; ++c) {
            acc += load_as_float<T>(p.a, offset5(p.a_strides, i[0], c0 + c, iz, iy, ix)) *
                   load_as_float<T>(p.w, offset5(p.w_strides, i[1], c, rz, ry, rx));
          }
        }
      }
    }
    if constexpr (kFp32Out) {
      const I pixels = p.b_size[0] * p.b_size[1] * p.b_size[2];
      const I m = i[0] * pixels + (i[2] * p.b_size[1] + i[3]) * p.b_size[2] + i[4];
      reinterpret_cast<float*>(p.b)[((i[1] / cb_per_group) * p.n * pixels + m) * cb_per_group + i[1] % cb_per_group] =
          acc;
    } else {
      if (kBias) acc += load_as_float<T>(p.bias, i[1]);
      if constexpr (kResidual) acc += load_as_float<T>(p.residual, offset5(p.b_strides, i[0], i[1], i[2], i[3], i[4]));
      acc = activate<kAct>(acc, p.act_alpha, p.act_lo, p.act_hi);
      store_from_float<T>(p.b, offset5(p.b_strides, i[0], i[1], i[2], i[3], i[4]), acc);
    }
  }
}

/// A[n, ca, i] = epilogue(sum over (kb, r) with o*stride = i + pad - r*dil of B * W):
/// regular backward-data, transposed forward (kResidual: its epilogue adds p.residual's element,
/// A's strides: z has y's layout).
template <typename I, typename T, int kAct, bool kBias, bool kResidual = false>
__device__ void conv_data_face(const ConvFaceParams& p) {
  const I total = p.n * p.ca * p.a_size[0] * p.a_size[1] * p.a_size[2];
  const I cb_per_group = p.cb / p.groups, ca_per_group = p.ca / p.groups;
  for (I linear = blockIdx.x * static_cast<I>(blockDim.x) + threadIdx.x; linear < total;
       linear += static_cast<I>(gridDim.x) * blockDim.x) {
    I i[5];  // (n, ca, iz, iy, ix)
    unravel5<I>(linear, p.n, p.ca, p.a_size, i);
    const I g = i[1] / ca_per_group, c = i[1] % ca_per_group;
    const I s0 = p.stride[0], s1 = p.stride[1], s2 = p.stride[2];
    float acc = 0.f;
    for (I rz = 0; rz < p.f_size[0]; ++rz) {
      const I tz = i[2] + p.pad[0] - rz * p.dil[0];
      if (tz < 0 || tz % s0 != 0 || tz / s0 >= p.b_size[0]) continue;
      for (I ry = 0; ry < p.f_size[1]; ++ry) {
        const I ty = i[3] + p.pad[1] - ry * p.dil[1];
        if (ty < 0 || ty % s1 != 0 || ty / s1 >= p.b_size[1]) continue;
        for (I rx = 0; rx < p.f_size[2]; ++rx) {
          const I tx = i[4] + p.pad[2] - rx * p.dil[2];
          if (tx < 0 || tx % s2 != 0 || tx / s2 >= p.b_size[2]) continue;
          for (I kb = g * cb_per_group; kb < (g + 1) * cb_per_group; ++kb) {
            acc += load_as_float<T>(p.b, offset5<I>(p.b_strides, i[0], kb, tz / s0, ty / s1, tx / s2)) *
                   load_as_float<T>(p.w, offset5(p.w_strides, kb, c, rz, ry, rx));
          }
        }
      }
    }
    if (kBias) acc += load_as_float<T>(p.bias, i[1]);
    if constexpr (kResidual) acc += load_as_float<T>(p.residual, offset5(p.a_strides, i[0], i[1], i[2], i[3], i[4]));
    acc = activate<kAct>(acc, p.act_alpha, p.act_lo, p.act_hi);
    store_from_float<T>(p.a, offset5(p.a_strides, i[0], i[1], i[2], i[3], i[4]), acc);
  }
}

/// W[kb, c, r] = sum over (n, o) of A[n, g*cpg + c, o*stride - pad + r*dil] * B[n, kb, o]: backward-weight.
/// One block per weight element: its threads split the (n, o) positions and
/// the block sum adds them in a fixed order (deterministic). A thread per
/// element would leave a small filter (depthwise, 2 channels) to a handful of
/// threads, each walking every position. With kPartials the positions are
/// also split over gridDim.y blocks (a filter of a few weights would leave
/// most SMs idle and each thread a long chain of loads): block y sums its
/// share into the fp32 partials at p.w (gridDim.y x weights, split-major),
/// which conv_weight_partials_sum adds in order.
template <typename I, typename T, bool kPartials = false>
__device__ void conv_weight_face(const ConvFaceParams& p) {
  __shared__ float scratch[32];
  const I ca_per_group = p.ca / p.groups, cb_per_group = p.cb / p.groups;
  const I total = p.cb * ca_per_group * p.f_size[0] * p.f_size[1] * p.f_size[2];
  const I positions = p.b_size[0] * p.b_size[1] * p.b_size[2];  // output pixels per image
  const I wide = p.b_size[2], high = p.b_size[1];
  // This block's positions [begin, end): all, or (kPartials) split y's share.
  const I all = p.n * positions, share = kPartials ? (all + gridDim.y - 1) / gridDim.y : all;
  const I begin = kPartials ? blockIdx.y * share : 0, end = kPartials && begin + share < all ? begin + share : all;
  // The trip count depends on the block only: every thread reaches block_sum.
  for (I linear = blockIdx.x; linear < total; linear += gridDim.x) {
    I i[5];  // (kb, c, rz, ry, rx)
    unravel5<I>(linear, p.cb, ca_per_group, p.f_size, i);
    const I ch = (i[0] / cb_per_group) * ca_per_group + i[1];
    float acc = 0.f;
    for (I j = begin + threadIdx.x; j < end; j += blockDim.x) {
      const I n = j / positions, o = j % positions;
      const I ox = o % wide, oy = (o / wide) % high, oz = o / (wide * high);
      const I iz = oz * p.stride[0] - p.pad[0] + i[2] * p.dil[0];
      const I iy = oy * p.stride[1] - p.pad[1] + i[3] * p.dil[1];
      const I ix = ox * p.stride[2] - p.pad[2] + i[4] * p.dil[2];
      if (iz < 0 || iz >= p.a_size[0] || iy < 0 || iy >= p.a_size[1] || ix < 0 || ix >= p.a_size[2]) continue;
      acc += load_as_float<T>(p.a, offset5(p.a_strides, n, ch, iz, iy, ix)) *
             load_as_float<T>(p.b, offset5(p.b_strides, n, i[0], oz, oy, ox));
    }
    acc = block_sum(acc, scratch);
    if (threadIdx.x == 0) {
      if constexpr (kPartials)
        reinterpret_cast<float*>(p.w)[static_cast<long long>(blockIdx.y) * total + linear] = acc;
      else
        store_from_float<T>(p.w, offset5(p.w_strides, i[0], i[1], i[2], i[3], i[4]), acc);
    }
  }
}

/// W[kb, c, r] = the sum of conv_weight_face<..., true>'s kSplits partials of
/// the weight (p.a: kSplits x weights fp32, split-major), added in split order
/// (deterministic). A thread per weight.
template <typename I, typename T, int kSplits>
__device__ void conv_weight_partials_sum(const ConvFaceParams& p) {
  const I ca_per_group = p.ca / p.groups;
  const I total = p.cb * ca_per_group * p.f_size[0] * p.f_size[1] * p.f_size[2];
  const float* partials = reinterpret_cast<const float*>(p.a);
  for (I linear = blockIdx.x * blockDim.x + threadIdx.x; linear < total; linear += gridDim.x * blockDim.x) {
    float acc = 0.f;
#pragma unroll
    for (int s = 0; s < kSplits; ++s) acc += partials[static_cast<long long>(s) * total + linear];
    I i[5];  // (kb, c, rz, ry, rx)
    unravel5<I>(linear, p.cb, ca_per_group, p.f_size, i);
    store_from_float<T>(p.w, offset5(p.w_strides, i[0], i[1], i[2], i[3], i[4]), acc);
  }
}

/// bias[k] = sum of B[n, k, o] over n and o (the bias gradient; B = dy).
/// One block per channel.
template <typename T>
__device__ void conv_bias_gradient(const ConvFaceParams& p) {
  __shared__ float scratch[32];
  const long long positions = p.b_size[0] * p.b_size[1] * p.b_size[2];
  for (long long k = blockIdx.x; k < p.cb; k += gridDim.x) {
    float acc = 0.f;
    for (long long j = threadIdx.x; j < p.n * positions; j += blockDim.x) {
      const long long n = j / positions, o = j % positions;
      const long long ox = o % p.b_size[2], oy = (o / p.b_size[2]) % p.b_size[1], oz = o / (p.b_size[2] * p.b_size[1]);
      acc += load_as_float<T>(p.b, offset5(p.b_strides, n, k, oz, oy, ox));
    }
    acc = block_sum(acc, scratch);
    if (threadIdx.x == 0) store_from_float<T>(p.bias, k, acc);
  }
}

}  // namespace boo
