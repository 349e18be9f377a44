// boo device code: vectors of kVec elements moved by one load or store
// instruction (16 bytes where the element count allows), converted to and
// from float: how the row and column reductions read and write tensors.
// NVRTC-clean: includes nothing but boo's device code.
#pragma once

#include "boo/kernels/types.cuh"

namespace boo {

/// kVec elements of T moved by one load or store instruction.
template <typename T, int kVec>
struct alignas(sizeof(T) * kVec) Vec {
  T v[kVec];
};

/// Loads vector `vector_index` (of kVec elements) into floats (zeros when `valid` is false).
template <typename T, int kVec>
__device__ __forceinline__ void load_vector(unsigned long long base, long long vector_index, bool valid,
                                            float (&out)[kVec]) {
  if (valid) {
    const Vec<T, kVec> v = reinterpret_cast<const Vec<T, kVec>*>(base)[vector_index];
#pragma unroll
    for (int k = 0; k < kVec; ++k) out[k] = to_float(v.v[k]);
  } else {
#pragma unroll
    for (int k = 0; k < kVec; ++k) out[k] = 0.f;
  }
}

/// Vector `vector_index` as loaded (zeros when `valid` is false): kept packed
/// while in flight (16 bytes are 4 registers whatever T is), widened with
/// to_floats where it is used.
template <typename T, int kVec>
__device__ __forceinline__ Vec<T, kVec> load_packed(unsigned long long base, long long vector_index, bool valid) {
  return valid ? reinterpret_cast<const Vec<T, kVec>*>(base)[vector_index] : Vec<T, kVec>{};
}

/// A packed vector's elements as floats.
template <typename T, int kVec>
__device__ __forceinline__ void to_floats(const Vec<T, kVec>& v, float (&out)[kVec]) {
#pragma unroll
  for (int k = 0; k < kVec; ++k) out[k] = to_float(v.v[k]);
}

/// Stores kVec floats as vector `vector_index` of T.
template <typename T, int kVec>
__device__ __forceinline__ void store_vector(unsigned long long base, long long vector_index, const float (&in)[kVec]) {
  Vec<T, kVec> v;
#pragma unroll
  for (int k = 0; k < kVec; ++k) v.v[k] = from_float<T>(in[k]);
  reinterpret_cast<Vec<T, kVec>*>(base)[vector_index] = v;
}

}  // namespace boo
