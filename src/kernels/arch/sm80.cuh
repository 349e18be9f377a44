// boo device code: the PTX of the sm_80 generation (Ampere, and Hopper's
// compatible path) that the mma.sync GEMMs use -- cp.async, ldmatrix, mma.sync
// and the TF32 conversion -- one wrapper per instruction form, named after it.
// Later tiers' instructions (sm_90's wgmma, TMA) get their own file beside this
// one. NVRTC-clean (no includes).
#pragma once

namespace boo {

__device__ __forceinline__ unsigned smem_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// Asynchronous global->shared copy of kBytes (16, 8 or 4) to the shared-memory address `smem`;
/// copies zeros when !valid (src-size 0), which is how padding and out-of-range rows are filled.
/// 16-byte copies bypass L1 (.cg); narrower ones cannot (.ca).
template <int kBytes>
__device__ __forceinline__ void cp_async_vector_at(unsigned smem, const void* gmem, bool valid) {
  static_assert(kBytes == 16 || kBytes == 8 || kBytes == 4, "cp.async copies 4, 8 or 16 bytes");
  if constexpr (kBytes == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem), "l"(gmem), "r"(valid ? 16 : 0));
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(smem), "l"(gmem), "n"(kBytes),
                 "r"(valid ? kBytes : 0));
  }
}

/// The same to a shared-memory pointer.
template <int kBytes>
__device__ __forceinline__ void cp_async_vector(void* smem, const void* gmem, bool valid) {
  cp_async_vector_at<kBytes>(smem_address(smem), gmem, valid);
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

/// Four 8x8 b16 matrices from shared memory; lane l gives the address of row (l % 8) of matrix (l / 8),
/// and r[i] gets its two elements of matrix i (row lane / 4, columns 2 * (lane % 4) and + 1).
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void* smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(smem)));
}

/// Same, each matrix transposed.
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const void* smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_address(smem)));
}

/// D(16x8, f32) += A(16x16, bf16, row) * B(16x8, bf16, col).
__device__ __forceinline__ void mma_bf16_16816(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/// D(16x8, f32) += A(16x16, f16, row) * B(16x8, f16, col).
__device__ __forceinline__ void mma_f16_16816(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/// D(16x8, f32) += A(16x8, tf32, row) * B(8x8, tf32, col).
__device__ __forceinline__ void mma_tf32_1688(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/// float -> tf32 (round to nearest, ties away), as the bits of a float.
__device__ __forceinline__ unsigned to_tf32(float v) {
  unsigned out;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(out) : "f"(v));
  return out;
}

}  // namespace boo
