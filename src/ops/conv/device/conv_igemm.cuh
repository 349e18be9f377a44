// boo device code: the general tensor-core implicit-GEMM convolution
// (gpu:conv:implicit_gemm), mma.sync + ldmatrix + cp.async, multistage.
//
// Every conv direction is a GEMM per group, one face of the conv relation
// (face.cuh). This kernel composes the face's operand loaders
// (operand_loaders.cuh) with the GEMM mainloop and epilogue
// (src/kernels/gemm/). The generated source defines `struct Cfg` with every
// size, stride and tile parameter as a compile-time constant (divisions by
// constants, no runtime shape arguments) and instantiates the kernels below
// with it.
#pragma once

#include "boo/conv/conv_igemm_params.cuh"
#include "boo/conv/face.cuh"
#include "boo/conv/operand_loaders.cuh"
#include "boo/kernels/gemm/epilogue.cuh"
#include "boo/kernels/gemm/mainloop.cuh"
#include "boo/kernels/gemm/split_k.cuh"
#include "boo/kernels/gemm/warp_tile.cuh"

namespace boo {
namespace igemm {

/// The implicit-GEMM kernel body. Grid: (M tiles x N tiles, groups, K splits).
template <class C>
__device__ void conv_igemm(const ConvIgemmParams& p) {
  using T = typename C::T;
  extern __shared__ __align__(16) unsigned char smem_raw[];  // the pipeline's stages, then the output tile
  const gemm::CtaTile<C> cta;
  // The GEMM's operands in the relation's tensors: forward x and w, data dy and w, weight dy and x.
  const T* a_src = reinterpret_cast<const T*>(C::kFace == 0 ? p.a : p.b);
  const T* b_src = reinterpret_cast<const T*>(C::kFace == 2 ? p.a : p.w);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_m = warp % C::WARPS_M, warp_n = warp / C::WARPS_M;

  gemm::mainloop<C, OperandLoader<C, true>, OperandLoader<C, false>>(
      smem_raw, a_src, b_src, cta, warp_m, warp_n, lane, [&](const gemm::Accumulators<C>& acc) {
                      // Split-K partials, or the unrounded sums a caller's epilogue reads (C::kFp32Out).
                      if constexpr (C::kSplits > 1 || C::kFp32Out)
                        gemm::store_partials<C>(acc, p, cta.row0, cta.col0, cta.g, warp_m, warp_n, lane);
                      else if constexpr (C::kVecOut)
                        gemm::store_tile_vectorized<C, Face<C>>(acc, p, smem_raw, cta.row0, cta.col0, cta.g, warp_m,
                                                                warp_n, lane);
                      else
                        gemm::store_tile_elements<C, Face<C>>(acc, p, cta.row0, cta.col0, cta.g, warp_m, warp_n, lane);
                    });
}

/// Sums the split-K partials and writes the output (with the epilogue), or with C::kFp32Out
/// their fp32 sum over split 0's plane. One thread per element.
template <class C>
__device__ void conv_igemm_reduce(const ConvIgemmParams& p) {
  gemm::split_k_reduce<C, Face<C>>(p);
}

}  // namespace igemm
}  // namespace boo
