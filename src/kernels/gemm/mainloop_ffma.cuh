// boo device code: the mainloop of fp32 GEMMs on the CUDA cores (FFMA), the
// default for fp32: full precision.
#pragma once

#include "boo/kernels/gemm/pipeline.cuh"
#include "boo/kernels/gemm/warp_tile.cuh"

namespace boo {
namespace gemm {

/// One side (rows of A or columns of B) of a thread's FFMA outputs in its warp's tile: kExtent
/// rows or columns over kLanes lanes, kCount = kExtent / kLanes each. Placed so that the thread's
/// operand loads are vectors that fill the shared-memory banks:
///  - MN-major tile (a k line holds the rows contiguously): runs of 4 rows, so one 16-byte load
///    per run and k; the 8 lanes of a quarter warp read 8 consecutive runs, 128 bytes.
///  - K-major tile (a row holds its k contiguously): rows l + kLanes * e, each read kFfmaChunk k
///    at a time (one 8-byte load); the tile's padded pitch puts the lanes' rows in distinct banks.
template <int kExtent, int kLanes, bool kMnMajor>
struct FfmaSide {
  static constexpr int kCount = kExtent / kLanes;
  static_assert(kExtent % (4 * kLanes) == 0, "whole runs of 4 per lane");
  __device__ static int at(int e, int l) { return kMnMajor ? e / 4 * (4 * kLanes) + 4 * l + e % 4 : l + kLanes * e; }
};

/// The k of one operand load and one round of FMAs: two, so that a thread's 8x8 outputs, its
/// operands and the addresses fit the 128 registers two CTAs of 256 threads leave each.
constexpr int kFfmaChunk = 2;

/// The thread's operands of k0 .. k0 + kFfmaChunk - 1: frag[e][kk] is side row (or column)
/// Side::at(e, l) of the warp's tile, which starts at `base` in the shared tile.
template <class TileT, class Side>
__device__ void load_ffma_operand(float (&frag)[Side::kCount][kFfmaChunk], const float* tile, int base, int l,
                                  int k0) {
  if constexpr (TileT::kKMajor) {
#pragma unroll
    for (int e = 0; e < Side::kCount; ++e) {
      const float2 v = *reinterpret_cast<const float2*>(tile + TileT::index(base + Side::at(e, l), k0));
      frag[e][0] = v.x;
      frag[e][1] = v.y;
    }
  } else {
#pragma unroll
    for (int kk = 0; kk < kFfmaChunk; ++kk)
#pragma unroll
      for (int run = 0; run < Side::kCount / 4; ++run) {
        const float4 v = *reinterpret_cast<const float4*>(tile + TileT::index(base + Side::at(4 * run, l), k0 + kk));
        frag[4 * run + 0][kk] = v.x;
        frag[4 * run + 1][kk] = v.y;
        frag[4 * run + 2][kk] = v.z;
        frag[4 * run + 3][kk] = v.w;
      }
  }
}

/// Accumulates the CTA's k tiles, then calls epilogue(acc) (warp_tile.cuh says why the
/// accumulators stay here). The lanes form an 8 x 4 grid over the warp's tile (lane % 8 along
/// rows, lane / 8 along columns), each thread computing kWarpM / 8 x 8 outputs (FfmaSide places
/// them). Each output's products are added in k order, one FMA each. Before the epilogue the
/// outputs pass through shared memory into mma.sync's accumulator layout, which every epilogue
/// reads (one round trip per tile, against an FMA chain of the tile's whole k).
///
/// Why this layout: a thread that loads R + C operands per k for R x C FMAs is bound by
/// shared memory's return of one register per lane per cycle (four FFMA per cycle per SM
/// against one register), so the loads must be few instructions that each return whole
/// vectors: MN-major tiles by 16-byte loads along M or N, K-major ones by 8-byte loads along k.
/// (mma.sync's own layout gives each thread rows 8 apart: element loads only.)
///
/// Two-level sums where a thread has at most 32 outputs (warp tiles of 32x32): each k tile's BK
/// products go into a fresh fp32 sum (tile_acc), which is then added to the running one (acc).
/// A single FMA chain over a slice of L terms rounds against a running sum of size sqrt(L) at
/// every step, so its error grows like L; blocked by BK it grows like L / sqrt(BK) (5.7x less at
/// BK = 32). The planner gives long fp32 reductions (weight gradients over N*H*W = 200k-800k
/// terms, in slices of up to 4096) such warp tiles (docs/tolerances.md, "fp32 weight
/// gradients": issue 17's lines went from 1.3-1.6x cuDNN's error spread to 0.2-0.35x in a CPU
/// emulation). Cost: one FADD per BK FMAs and a second set of accumulators, which 64x32 warp
/// tiles (64 outputs) have no room for: they keep one FMA chain.
template <class C, class LoaderA, class LoaderB, class Epilogue>
__device__ void mainloop_ffma(unsigned char* smem, const typename C::T* a_src, const typename C::T* b_src,
                              const CtaTile<C>& cta, int warp_m, int warp_n, int lane, Epilogue&& epilogue) {
  using T = typename C::T;
  using I = Index<C>;
  using TileA = typename Pipeline<C, LoaderA, LoaderB>::TileA;
  using TileB = typename Pipeline<C, LoaderA, LoaderB>::TileB;
  constexpr int kWarpM = WarpTile<C>::kWarpM, kWarpN = WarpTile<C>::kWarpN;
  using Rows = FfmaSide<kWarpM, 8, !TileA::kKMajor>;
  using Cols = FfmaSide<kWarpN, 4, !TileB::kKMajor>;
  constexpr int kRows = Rows::kCount, kCols = Cols::kCount;
  static_assert(sizeof(T) == 4 && C::BK % kFfmaChunk == 0, "fp32 tiles of whole chunks");
  static_assert(kRows * kCols == WarpTile<C>::kMmaM * WarpTile<C>::kMmaN * 4, "the accumulators' elements");
  constexpr bool kTwoLevel = kRows * kCols <= 32;
  constexpr int kPitchC = C::BN + 4;  // the output tile in shared memory, padded as store_tile_vectorized's
  static_assert(C::BM * kPitchC <= C::STAGES * (TileA::kElems + TileB::kElems), "the tile fits the stages");

  const int lane_m = lane % 8, lane_n = lane / 8;
  const int row0 = warp_m * kWarpM, col0 = warp_n * kWarpN;  // the warp's tile in the CTA's
  float acc[kRows][kCols] = {};
  LoaderA a_loader;
  LoaderB b_loader;
  Pipeline<C, LoaderA, LoaderB> pipe(smem, a_loader, b_loader, a_src, b_src, cta);
  pipe.start();
  for (I kt = cta.kt_begin; kt < cta.kt_end; ++kt) {
    const int stage = pipe.wait_and_refill(kt);
    const T* tA = pipe.tile_a(stage);  // (BM, BK)
    const T* tB = pipe.tile_b(stage);  // (BN, BK)
    // This k tile's BK products (two-level sums), or the running sums themselves.
    float tile_acc[kRows][kCols] = {};
    float(&sums)[kRows][kCols] = kTwoLevel ? tile_acc : acc;
#pragma unroll
    for (int k0 = 0; k0 < C::BK; k0 += kFfmaChunk) {
      float a[kRows][kFfmaChunk], b[kCols][kFfmaChunk];
      load_ffma_operand<TileA, Rows>(a, tA, row0, lane_m, k0);
      load_ffma_operand<TileB, Cols>(b, tB, col0, lane_n, k0);
#pragma unroll
      for (int kk = 0; kk < kFfmaChunk; ++kk)
#pragma unroll
        for (int e = 0; e < kRows; ++e)
#pragma unroll
          for (int f = 0; f < kCols; ++f) sums[e][f] = fmaf(a[e][kk], b[f][kk], sums[e][f]);
    }
    if constexpr (kTwoLevel) {
#pragma unroll
      for (int e = 0; e < kRows; ++e)
#pragma unroll
        for (int f = 0; f < kCols; ++f) acc[e][f] += tile_acc[e][f];
    }
  }
  pipe.finish();

  // Into mma.sync's layout: row i*16 + lane/4 (+8 for q >= 2), column j*8 + 2*(lane%4) (+1 for odd q).
  __syncthreads();  // every warp is done reading the operand tiles
  float* sC = reinterpret_cast<float*>(smem);  // (BM, kPitchC)
#pragma unroll
  for (int e = 0; e < kRows; ++e)
#pragma unroll
    for (int f = 0; f < kCols; ++f)
      sC[(row0 + Rows::at(e, lane_m)) * kPitchC + col0 + Cols::at(f, lane_n)] = acc[e][f];
  __syncwarp();  // each warp reads back only its own tile
  Accumulators<C> out;
#pragma unroll
  for (int i = 0; i < WarpTile<C>::kMmaM; ++i)
#pragma unroll
    for (int j = 0; j < WarpTile<C>::kMmaN; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q)
        out[i][j][q] = sC[(row0 + i * 16 + lane / 4 + q / 2 * 8) * kPitchC + col0 + j * 8 + lane % 4 * 2 + q % 2];
  epilogue(out);
}

}  // namespace gemm
}  // namespace boo
