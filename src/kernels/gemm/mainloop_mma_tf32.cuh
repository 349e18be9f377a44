// boo device code: the mainloop of fp32 GEMMs on the TF32 tensor cores
// (mma.sync m16n8k8; --fp32-math tf32).
#pragma once

#include "boo/kernels/arch/sm80.cuh"
#include "boo/kernels/gemm/pipeline.cuh"
#include "boo/kernels/gemm/warp_tile.cuh"

namespace boo {
namespace gemm {

/// Accumulates the CTA's k tiles, then calls epilogue(acc) (warp_tile.cuh says why the
/// accumulators stay here). ldmatrix moves 16-bit elements, so the fragments of the K-major fp32
/// tiles are gathered by scalar loads, each rounded to TF32 as the instruction requires.
template <class C, class LoaderA, class LoaderB, class Epilogue>
__device__ void mainloop_mma_tf32(unsigned char* smem, const typename C::T* a_src, const typename C::T* b_src,
                                  const CtaTile<C>& cta, int warp_m, int warp_n, int lane, Epilogue&& epilogue) {
  using T = typename C::T;
  using I = Index<C>;
  using TileA = typename Pipeline<C, LoaderA, LoaderB>::TileA;
  using TileB = typename Pipeline<C, LoaderA, LoaderB>::TileB;
  constexpr int kWarpM = WarpTile<C>::kWarpM, kWarpN = WarpTile<C>::kWarpN;
  constexpr int kMmaM = WarpTile<C>::kMmaM, kMmaN = WarpTile<C>::kMmaN;
  static_assert(C::BK % 8 == 0 && kWarpM % 16 == 0 && kWarpN % 16 == 0, "tile shape");

  Accumulators<C> acc = {};
  LoaderA a_loader;
  LoaderB b_loader;
  Pipeline<C, LoaderA, LoaderB> pipe(smem, a_loader, b_loader, a_src, b_src, cta);
  pipe.start();
  for (I kt = cta.kt_begin; kt < cta.kt_end; ++kt) {
    const int stage = pipe.wait_and_refill(kt);
    const T* tA = pipe.tile_a(stage);  // (BM, BK)
    const T* tB = pipe.tile_b(stage);  // (BN, BK)
#pragma unroll
    for (int kk = 0; kk < C::BK; kk += 8) {
      // The m16n8k8 fragments: lane 4 * gid + tid holds rows gid and gid + 8, k tid and tid + 4.
      const int gid = lane >> 2, tid = lane & 3;
      unsigned a_tf[kMmaM][4], b_tf[kMmaN][2];  // (m16 block, A fragment), (n8 block, B fragment)
#pragma unroll
      for (int i = 0; i < kMmaM; ++i) {
        const int m = warp_m * kWarpM + i * 16 + gid;
        a_tf[i][0] = to_tf32(tA[TileA::index(m, kk + tid)]);
        a_tf[i][1] = to_tf32(tA[TileA::index(m + 8, kk + tid)]);
        a_tf[i][2] = to_tf32(tA[TileA::index(m, kk + tid + 4)]);
        a_tf[i][3] = to_tf32(tA[TileA::index(m + 8, kk + tid + 4)]);
      }
#pragma unroll
      for (int j = 0; j < kMmaN; ++j) {
        const int n = warp_n * kWarpN + j * 8 + gid;
        b_tf[j][0] = to_tf32(tB[TileB::index(n, kk + tid)]);
        b_tf[j][1] = to_tf32(tB[TileB::index(n, kk + tid + 4)]);
      }
#pragma unroll
      for (int i = 0; i < kMmaM; ++i)
#pragma unroll
        for (int j = 0; j < kMmaN; ++j) mma_tf32_1688(acc[i][j], a_tf[i], b_tf[j]);
    }
  }
  pipe.finish();
  epilogue(acc);
}

}  // namespace gemm
}  // namespace boo
