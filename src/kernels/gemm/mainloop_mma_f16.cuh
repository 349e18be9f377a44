// boo device code: the mainloop of the bf16/fp16 GEMMs on the tensor cores
// (mma.sync m16n8k16, fragments by ldmatrix).
#pragma once

#include "boo/kernels/arch/sm80.cuh"
#include "boo/kernels/gemm/pipeline.cuh"
#include "boo/kernels/gemm/warp_tile.cuh"

namespace boo {
namespace gemm {

/// Accumulates the CTA's k tiles, then calls epilogue(acc) (warp_tile.cuh says why the
/// accumulators stay here). Within a stage, the fragments of k16 step kk + 16 are loaded before
/// step kk's mma are issued (two fragment buffers), so ldmatrix latency overlaps tensor-core work.
template <class C, class LoaderA, class LoaderB, class Epilogue>
__device__ void mainloop_mma_f16(unsigned char* smem, const typename C::T* a_src, const typename C::T* b_src,
                                 const CtaTile<C>& cta, int warp_m, int warp_n, int lane, Epilogue&& epilogue) {
  using T = typename C::T;
  using I = Index<C>;
  using TileA = typename Pipeline<C, LoaderA, LoaderB>::TileA;
  using TileB = typename Pipeline<C, LoaderA, LoaderB>::TileB;
  constexpr int kWarpM = WarpTile<C>::kWarpM, kWarpN = WarpTile<C>::kWarpN;
  constexpr int kMmaM = WarpTile<C>::kMmaM, kMmaN = WarpTile<C>::kMmaN;
  static_assert(C::BK % 16 == 0 && kWarpM % 16 == 0 && kWarpN % 16 == 0, "tile shape");

  Accumulators<C> acc = {};
  LoaderA a_loader;
  LoaderB b_loader;
  Pipeline<C, LoaderA, LoaderB> pipe(smem, a_loader, b_loader, a_src, b_src, cta);
  pipe.start();
  for (I kt = cta.kt_begin; kt < cta.kt_end; ++kt) {
    const int stage = pipe.wait_and_refill(kt);
    const T* tA = pipe.tile_a(stage);  // (BM, BK)
    const T* tB = pipe.tile_b(stage);  // (BN, BK)
    unsigned a_frag[2][kMmaM][4];  // (buffer, m16 block, A fragment)
    unsigned b_frag[2][kMmaN][2];  // (buffer, n8 block, B fragment)
    auto load_fragments = [&](int buf, int kk) {
#pragma unroll
      for (int i = 0; i < kMmaM; ++i) {
        const int m = warp_m * kWarpM + i * 16;
        // The four 8x8 matrices of the 16x16 A fragment in mma.sync's order (rows 0-7 and 8-15
        // at k 0-7, then at k 8-15); lane l gives the address of row l % 8 of matrix l / 8.
        if constexpr (TileA::kKMajor)
          ldmatrix_x4(a_frag[buf][i], tA + TileA::index(m + (lane & 15), kk + (lane >> 4) * 8));
        else
          ldmatrix_x4_trans(a_frag[buf][i],
                            tA + TileA::index(m + ((lane >> 3) & 1) * 8, kk + (lane & 7) + (lane >> 4) * 8));
      }
#pragma unroll
      for (int j = 0; j < kMmaN; j += 2) {
        const int n = warp_n * kWarpN + j * 8;
        unsigned r[4];  // (n8 block j: k 0-7, k 8-15; block j + 1: k 0-7, k 8-15)
        if constexpr (TileB::kKMajor)
          ldmatrix_x4(r, tB + TileB::index(n + (lane & 7) + (lane >> 4) * 8, kk + ((lane >> 3) & 1) * 8));
        else
          ldmatrix_x4_trans(r, tB + TileB::index(n + (lane >> 4) * 8, kk + (lane & 7) + ((lane >> 3) & 1) * 8));
        b_frag[buf][j][0] = r[0];
        b_frag[buf][j][1] = r[1];
        b_frag[buf][j + 1][0] = r[2];
        b_frag[buf][j + 1][1] = r[3];
      }
    };
    load_fragments(0, 0);
#pragma unroll
    for (int kk = 0; kk < C::BK; kk += 16) {
      const int buf = (kk / 16) % 2;
      if (kk + 16 < C::BK) load_fragments(buf ^ 1, kk + 16);
#pragma unroll
      for (int i = 0; i < kMmaM; ++i)
#pragma unroll
        for (int j = 0; j < kMmaN; ++j) {
          if constexpr (C::kHalf) mma_f16_16816(acc[i][j], a_frag[buf][i], b_frag[buf][j]);
          else mma_bf16_16816(acc[i][j], a_frag[buf][i], b_frag[buf][j]);
        }
    }
  }
  pipe.finish();
  epilogue(acc);
}

}  // namespace gemm
}  // namespace boo
