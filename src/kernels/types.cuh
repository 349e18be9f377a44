// boo device code: element types, conversions, activations and reductions.
// NVRTC-clean: includes nothing (no CUDA headers), so kernels compile with
// NVRTC alone, without the toolkit's include directory.
#pragma once

namespace boo {

/// A if kCond, else B (std::conditional; NVRTC has no <type_traits> without the toolkit headers).
template <bool kCond, class A, class B>
struct Select {
  using type = A;
};
template <class A, class B>
struct Select<false, A, B> {
  using type = B;
};

/// Index arithmetic in 32 bits when every tensor has fewer than 2^31 elements (C::kIdx32):
/// 64-bit division and multiplication cost several instructions each.
template <class C>
using Index = typename Select<C::kIdx32, int, long long>::type;

/// 16-bit float storage types; arithmetic happens in float.
struct bf16 {
  unsigned short bits;
};
struct f16 {
  unsigned short bits;
};

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(bf16 v) { return __uint_as_float(static_cast<unsigned>(v.bits) << 16); }
__device__ __forceinline__ float to_float(f16 v) {
  float out;
  asm("cvt.f32.f16 %0, %1;" : "=f"(out) : "h"(v.bits));
  return out;
}

template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ bf16 from_float<bf16>(float v) {
  bf16 out;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(out.bits) : "f"(v));
  return out;
}
template <>
__device__ __forceinline__ f16 from_float<f16>(float v) {
  f16 out;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(out.bits) : "f"(v));
  return out;
}

template <typename T>
__device__ __forceinline__ float load_as_float(unsigned long long base, long long offset) {
  return to_float(reinterpret_cast<const T*>(base)[offset]);
}
template <typename T>
__device__ __forceinline__ void store_from_float(unsigned long long base, long long offset, float v) {
  reinterpret_cast<T*>(base)[offset] = from_float<T>(v);
}

/// Activation codes; the host's Activation::Kind uses the same numbering.
enum ActivationCode : int {
  kActNone = 0,
  kActRelu = 1,
  kActSigmoid = 2,
  kActTanh = 3,
  kActSilu = 4,
  kActGelu = 5,
  kActGeluTanh = 6,
  kActLeakyRelu = 7,
  kActClamp = 8,
};

/// f(v) for activation kAct; `alpha` is leaky_relu's slope, [lo, hi] clamp's range.
template <int kAct>
__device__ __forceinline__ float activate(float v, float alpha, float lo, float hi) {
  if (kAct == kActRelu) return v > 0.f ? v : 0.f;
  if (kAct == kActSigmoid) return 1.f / (1.f + expf(-v));
  if (kAct == kActTanh) return tanhf(v);
  if (kAct == kActSilu) return v / (1.f + expf(-v));
  if (kAct == kActGelu) return 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
  if (kAct == kActGeluTanh) return 0.5f * v * (1.f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));
  if (kAct == kActLeakyRelu) return v >= 0.f ? v : alpha * v;
  if (kAct == kActClamp) return fminf(fmaxf(v, lo), hi);
  return v;
}

/// Sum of `v` over the thread block. Every thread gets the result.
/// @pre blockDim.x is a multiple of 32 and at most 1024; `scratch` holds 32 floats.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  const int warps = blockDim.x >> 5;
  v = lane < warps ? scratch[lane] : 0.f;
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

}  // namespace boo
