// boo device code: the mainloop of the mma.sync GEMMs, by math path (C::kMath):
// 0 bf16/fp16 tensor cores, 1 TF32 tensor cores, 2 FFMA, 3 3xTF32 (full-precision
// fp32 on TF32 tensor cores), each over the same multistage pipeline (pipeline.cuh).
#pragma once

#include "boo/kernels/gemm/mainloop_ffma.cuh"
#include "boo/kernels/gemm/mainloop_mma_3xtf32.cuh"
#include "boo/kernels/gemm/mainloop_mma_f16.cuh"
#include "boo/kernels/gemm/mainloop_mma_tf32.cuh"
#include "boo/kernels/gemm/pipeline.cuh"

namespace boo {
namespace gemm {

/// acc = A[the CTA's rows, its k tiles] * B[its k tiles, its columns], then epilogue(acc).
/// LoaderA and LoaderB are the op's operand loaders (pipeline.cuh), reading a_src and b_src; the
/// mainloop owns them (warp_tile.cuh says why). `smem` is the dynamic shared memory.
template <class C, class LoaderA, class LoaderB, class Epilogue>
__device__ void mainloop(unsigned char* smem, const typename C::T* a_src, const typename C::T* b_src,
                         const CtaTile<C>& cta, int warp_m, int warp_n, int lane, Epilogue&& epilogue) {
  static_assert(C::WARPS_M * C::WARPS_N * 32 == C::kThreads, "thread count");
  if constexpr (C::kMath == 0)
    mainloop_mma_f16<C, LoaderA, LoaderB>(smem, a_src, b_src, cta, warp_m, warp_n, lane, epilogue);
  else if constexpr (C::kMath == 1)
    mainloop_mma_tf32<C, LoaderA, LoaderB>(smem, a_src, b_src, cta, warp_m, warp_n, lane, epilogue);
  else if constexpr (C::kMath == 2)
    mainloop_ffma<C, LoaderA, LoaderB>(smem, a_src, b_src, cta, warp_m, warp_n, lane, epilogue);
  else
    mainloop_mma_3xtf32<C, LoaderA, LoaderB>(smem, a_src, b_src, cta, warp_m, warp_n, lane, epilogue);
}

}  // namespace gemm
}  // namespace boo
