// boo device code: the mainloop of fp32 GEMMs on the TF32 tensor cores
// (mma.sync m16n8k8): --fp32-math tf32 (one product of TF32-rounded operands),
// and full-precision fp32 as 3xTF32 (kSplit): each operand is split into a
// TF32 high part and a TF32 low part (the rounding error of the high part,
// itself rounded to TF32), and a*b is accumulated as a_lo*b_hi + a_hi*b_lo +
// a_hi*b_hi in fp32. What is dropped (a_lo*b_lo, and the low parts' own
// rounding) is below 2^-21 of |a*b|, under fp32's accumulation error for any
// sum of more than a few terms (docs/tolerances.md).
#pragma once

#include "boo/kernels/arch/sm80.cuh"
#include "boo/kernels/gemm/pipeline.cuh"
#include "boo/kernels/gemm/warp_tile.cuh"

namespace boo {
namespace gemm {

/// Accumulates the CTA's k tiles, then calls epilogue(acc) (warp_tile.cuh says why the
/// accumulators stay here). ldmatrix moves 16-bit elements, so the fragments of the K-major fp32
/// tiles are gathered by scalar loads, each rounded to TF32 as the instruction requires.
/// The TF32 parts of an fp32 value: hi = v rounded to TF32; lo = (v - hi) rounded to TF32 (v - hi is
/// exact in fp32), or nothing without kSplit.
template <bool kSplit>
__device__ __forceinline__ void split_tf32(float v, unsigned& hi, unsigned& lo) {
  hi = to_tf32(v);
  if constexpr (kSplit) lo = to_tf32(v - __uint_as_float(hi));
}

template <class C, class LoaderA, class LoaderB, bool kSplit, class Epilogue>
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
      // (m16 block, A fragment), (n8 block, B fragment): high parts, and low parts with kSplit.
      unsigned a_tf[kMmaM][4], b_tf[kMmaN][2], a_lo[kMmaM][4], b_lo[kMmaN][2];
#pragma unroll
      for (int i = 0; i < kMmaM; ++i) {
        const int m = warp_m * kWarpM + i * 16 + gid;
        split_tf32<kSplit>(tA[TileA::index(m, kk + tid)], a_tf[i][0], a_lo[i][0]);
        split_tf32<kSplit>(tA[TileA::index(m + 8, kk + tid)], a_tf[i][1], a_lo[i][1]);
        split_tf32<kSplit>(tA[TileA::index(m, kk + tid + 4)], a_tf[i][2], a_lo[i][2]);
        split_tf32<kSplit>(tA[TileA::index(m + 8, kk + tid + 4)], a_tf[i][3], a_lo[i][3]);
      }
#pragma unroll
      for (int j = 0; j < kMmaN; ++j) {
        const int n = warp_n * kWarpN + j * 8 + gid;
        split_tf32<kSplit>(tB[TileB::index(n, kk + tid)], b_tf[j][0], b_lo[j][0]);
        split_tf32<kSplit>(tB[TileB::index(n, kk + tid + 4)], b_tf[j][1], b_lo[j][1]);
      }
#pragma unroll
      for (int i = 0; i < kMmaM; ++i)
#pragma unroll
        for (int j = 0; j < kMmaN; ++j) {
          if constexpr (kSplit) {  // the small products first
            mma_tf32_1688(acc[i][j], a_lo[i], b_tf[j]);
            mma_tf32_1688(acc[i][j], a_tf[i], b_lo[j]);
          }
          mma_tf32_1688(acc[i][j], a_tf[i], b_tf[j]);
        }
    }
  }
  pipe.finish();
  epilogue(acc);
}

}  // namespace gemm
}  // namespace boo
