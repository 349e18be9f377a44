// boo device code: the mainloop of fp32 GEMMs on the CUDA cores (FFMA), the
// default for fp32: full precision.
#pragma once

#include "boo/kernels/gemm/pipeline.cuh"
#include "boo/kernels/gemm/warp_tile.cuh"

namespace boo {
namespace gemm {

/// Accumulates the CTA's k tiles, then calls epilogue(acc) (warp_tile.cuh says why the
/// accumulators stay here). One k at a time, each thread updates the elements that mma.sync's
/// accumulator layout gives it, so the epilogue is the tensor-core paths'.
///
/// Two-level sums where a thread has at most 32 accumulators (warp tiles of 32x32): each k
/// tile's BK products go into a fresh fp32 sum (tile_acc), which is then added to the running
/// one (acc). A single FMA chain over a slice of L terms rounds against a running sum of size
/// sqrt(L) at every step, so its error grows like L; blocked by BK it grows like L / sqrt(BK)
/// (5.7x less at BK = 32). The planner gives long fp32 reductions (weight gradients over
/// N*H*W = 200k-800k terms, in slices of up to 4096) such warp tiles (docs/tolerances.md, "fp32
/// weight gradients": issue 17's lines went from 1.3-1.6x cuDNN's error spread to 0.2-0.35x in a
/// CPU emulation). Cost: one FADD per BK FMAs and a second set of accumulators, which 64x32 warp
/// tiles (64 accumulators, 255 registers already) have no room for: they keep one FMA chain.
template <class C, class LoaderA, class LoaderB, class Epilogue>
__device__ void mainloop_ffma(unsigned char* smem, const typename C::T* a_src, const typename C::T* b_src,
                              const CtaTile<C>& cta, int warp_m, int warp_n, int lane, Epilogue&& epilogue) {
  using T = typename C::T;
  using I = Index<C>;
  using TileA = typename Pipeline<C, LoaderA, LoaderB>::TileA;
  using TileB = typename Pipeline<C, LoaderA, LoaderB>::TileB;
  constexpr int kWarpM = WarpTile<C>::kWarpM, kWarpN = WarpTile<C>::kWarpN;
  constexpr int kMmaM = WarpTile<C>::kMmaM, kMmaN = WarpTile<C>::kMmaN;
  static_assert(C::BK % 8 == 0 && kWarpM % 16 == 0 && kWarpN % 16 == 0, "tile shape");
  constexpr bool kTwoLevel = kMmaM * kMmaN * 4 <= 32;

  Accumulators<C> acc = {};
  LoaderA a_loader;
  LoaderB b_loader;
  Pipeline<C, LoaderA, LoaderB> pipe(smem, a_loader, b_loader, a_src, b_src, cta);
  pipe.start();
  for (I kt = cta.kt_begin; kt < cta.kt_end; ++kt) {
    const int stage = pipe.wait_and_refill(kt);
    const T* tA = pipe.tile_a(stage);  // (BM, BK)
    const T* tB = pipe.tile_b(stage);  // (BN, BK)
    // This k tile's BK products (two-level sums), or the running sums themselves.
    Accumulators<C> tile_acc = {};
    Accumulators<C>& sums = kTwoLevel ? tile_acc : acc;
#pragma unroll
    for (int kk = 0; kk < C::BK; kk += 8) {
      // Lane 4 * gid + tid holds rows gid and gid + 8, columns 2 * tid and 2 * tid + 1 of each block.
      const int gid = lane >> 2, tid = lane & 3;
#pragma unroll
      for (int k8 = 0; k8 < 8; ++k8) {
        float a_row[kMmaM][2], b_col[kMmaN][2];  // (m16 block, row gid / gid + 8), (n8 block, column)
#pragma unroll
        for (int i = 0; i < kMmaM; ++i) {
          const int m = warp_m * kWarpM + i * 16 + gid;
          a_row[i][0] = tA[TileA::index(m, kk + k8)];
          a_row[i][1] = tA[TileA::index(m + 8, kk + k8)];
        }
#pragma unroll
        for (int j = 0; j < kMmaN; ++j) {
          const int n = warp_n * kWarpN + j * 8 + tid * 2;
          b_col[j][0] = tB[TileB::index(n, kk + k8)];
          b_col[j][1] = tB[TileB::index(n + 1, kk + k8)];
        }
#pragma unroll
        for (int i = 0; i < kMmaM; ++i)
#pragma unroll
          for (int j = 0; j < kMmaN; ++j)
#pragma unroll
            for (int q = 0; q < 4; ++q)
              sums[i][j][q] = fmaf(a_row[i][q >> 1], b_col[j][q & 1], sums[i][j][q]);
      }
    }
    if constexpr (kTwoLevel) {
#pragma unroll
      for (int i = 0; i < kMmaM; ++i)
#pragma unroll
        for (int j = 0; j < kMmaN; ++j)
#pragma unroll
          for (int q = 0; q < 4; ++q) acc[i][j][q] += tile_acc[i][j][q];
    }
  }
  pipe.finish();
  epilogue(acc);
}

}  // namespace gemm
}  // namespace boo
