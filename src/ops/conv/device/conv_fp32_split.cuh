// boo device code: gpu:conv:fp32_bf16x6's own kernels around the bf16 conv.
//
// A strict-fp32 conv runs on bf16 tensor cores by splitting each fp32 operand
// value v into three bf16 parts, v = hi + mid + lo exactly (hi: v truncated to
// bf16's 8 significant bits; mid: the remainder truncated likewise; lo: what
// is left, at most 8 more bits, rounded), and summing the six products that
// matter, hi*hi + hi*mid + mid*hi + mid*mid + hi*lo + lo*hi, each exact in
// fp32 and accumulated in fp32 by the tensor cores. The three dropped products
// (mid*lo, lo*mid, lo*lo) are below 2^-24 |a b| each: the size of one fp32
// rounding of the product FFMA itself makes. A non-finite value goes whole into hi: an Inf multiplied by
// the other operand's zero mid or lo part gives NaN where FFMA gives Inf (docs/tolerances.md).
//
// The six products are one bf16 conv whose reduction is six times longer: the
// operands' six segments pair up along it (segment s of A with segment s of
// B), A's segments holding the parts (hi, hi, mid, mid, hi, lo) and B's
// (hi, mid, hi, mid, lo, hi). conv_split_fp32 writes those segments; the bf16
// conv (gpu:conv:wgmma_sm90 with fp32 sums) reduces over them; the host copies
// the sums out to the result's layout (conv_channel_pad.cuh), after
// conv_sums_epilogue where the forward conv has a bias or an activation.
#pragma once

#include "boo/kernels/types.cuh"
#include "boo/conv/conv_fp32_split_params.cuh"

namespace boo {

/// v's part `part` (0 hi, 1 mid, 2 lo) as bf16. Non-finite values go whole into hi.
__device__ __forceinline__ bf16 fp32_part(float v, int part) {
  auto truncated = [](float f) { return __uint_as_float(__float_as_uint(f) & 0xffff0000u); };
  const bool finite = (__float_as_uint(v) & 0x7f800000u) != 0x7f800000u;
  const float hi = truncated(v);
  const float rest = v - hi;  // exact: hi holds v's leading bits
  const float mid = finite ? truncated(rest) : 0.f;
  bf16 out;
  if (part == 0) {
    out.bits = static_cast<unsigned short>(__float_as_uint(hi) >> 16);
  } else if (part == 1) {
    out.bits = static_cast<unsigned short>(__float_as_uint(mid) >> 16);
  } else {
    out = from_float<bf16>(finite ? rest - mid : 0.f);  // exact too: at most 8 bits are left
  }
  return out;
}

/// Writes the six bf16 segments of an fp32 tensor (ConvSplitParams). Per (outer row, 32 channels,
/// 32 pixels) tile through shared memory: kPixelsFast (the tensor's pixels or taps contiguous, as
/// in NCHW and KCRS) reads along pixels, else along channels; the buffer is written along channels.
/// Block: 32 x 8 threads; grid: (pixel tiles, channel tiles of `padded`, rows in a grid-stride loop).
template <bool kPixelsFast>
__device__ void conv_split_fp32(const ConvSplitParams& p) {
  __shared__ float tile[32][33];  // [channel][pixel]; +1 spreads the banks
  const long long pixels = p.sizes[1] * p.sizes[2] * p.sizes[3];
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;  // 32 x 8
  const long long p0 = static_cast<long long>(blockIdx.x) * 32, c0 = static_cast<long long>(blockIdx.y) * 32;
  const float* src = reinterpret_cast<const float*>(p.src);
  bf16* dst = reinterpret_cast<bf16*>(p.dst);
  for (long long o = blockIdx.z; o < p.sizes[0]; o += gridDim.z) {
    for (int j = ty; j < 32; j += 8) {
      const int ci = kPixelsFast ? j : tx, pi = kPixelsFast ? tx : j;  // tile channel and pixel
      const long long c = c0 + ci, px = p0 + pi;
      float v = 0.f;
      if (o < p.outer && c < p.channels && px < pixels) {
        const long long x = px % p.sizes[3], y = px / p.sizes[3] % p.sizes[2], z = px / (p.sizes[3] * p.sizes[2]);
        v = src[o * p.strides[0] + c * p.strides[1] + z * p.strides[2] + y * p.strides[3] + x * p.strides[4]];
      }
      tile[ci][pi] = v;
    }
    __syncthreads();
    for (int j = ty; j < 32; j += 8) {
      const long long px = p0 + j, c = c0 + tx;
      if (px >= pixels || c >= p.padded) continue;
      const float v = tile[tx][j];
      bf16* out = dst + o * p.outer_stride + px * p.pixel_stride + c;
#pragma unroll
      for (int s = 0; s < 6; ++s) out[s * p.seg_stride] = fp32_part(v, (p.pattern >> (2 * s)) & 3);
    }
    __syncthreads();  // the tile is reused by the next row
  }
}

/// sums[e] = activation(sums[e] + bias[c]) in place, c = e % channels_padded below `channels` (the
/// padded channels are left: never copied out). Grid-stride, one thread an element.
template <bool kBias, int kAct>
__device__ void conv_sums_epilogue(const ConvSumsEpilogueParams& p) {
  float* sums = reinterpret_cast<float*>(p.sums);
  const float* bias = reinterpret_cast<const float*>(p.bias);
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < p.elements;
       e += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long c = e % p.channels_padded;
    if (c >= p.channels) continue;
    float v = sums[e];
    if constexpr (kBias) v += bias[c];
    sums[e] = activate<kAct>(v, p.act_alpha, p.act_lo, p.act_hi);
  }
}

}  // namespace boo
