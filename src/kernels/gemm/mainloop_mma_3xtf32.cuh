// boo device code: the mainloop of full-precision fp32 GEMMs on the TF32 tensor
// cores with error compensation ("3xTF32", mma.sync m16n8k8).
#pragma once

#include "boo/kernels/arch/sm80.cuh"
#include "boo/kernels/gemm/pipeline.cuh"
#include "boo/kernels/gemm/warp_tile.cuh"

namespace boo {
namespace gemm {

/// An fp32 value as TF32 high and low parts: v = big + small + e, big = v rounded to TF32,
/// small = (v - big) rounded to TF32 (the difference is exact in fp32), so |e| <= 2^-22 |v|.
struct Tf32Split {
  unsigned big, small;
};
__device__ __forceinline__ Tf32Split split_tf32(float v) {
  const unsigned big = to_tf32(v);
  return {big, to_tf32(v - __uint_as_float(big))};
}

/// Accumulates the CTA's k tiles, then calls epilogue(acc) (warp_tile.cuh says why the
/// accumulators stay here). Each product a * b is a_big * b_big + a_big * b_small + a_small * b_big
/// (the dropped a_small * b_small is below 2^-22 |a b|): three MMAs, the small cross terms first so
/// that they are added while the sum is smallest. The operands' representation error is then a
/// few units of fp32's last place per product, as FFMA's rounding is.
///
/// Sums in three levels. The tensor cores align each MMA's addends (its products and the
/// accumulator passed in) to the largest and truncate them, and truncate the result (Fasi et al.,
/// 2021): a bias against the accumulator's last place that a chain of MMAs over a k tile would
/// add up. So each k8 step's three MMAs start from zero, and only their sum (8 terms, its error
/// against those terms' size) is added to the k tile's sum in fp32, rounding to nearest; that sum
/// is then added to the running one, as mainloop_ffma.cuh's two-level sums do. Emulated under
/// that truncation model, the error spread is at most FFMA's in the same order on 576-400k-term
/// sums (tests/unit/fp32_wgrad_accumulation_test.cpp; docs/tolerances.md, "3xTF32"). The planner
/// gives this path warp tiles of at most 32x32 (32 accumulators, twice).
template <class C, class LoaderA, class LoaderB, class Epilogue>
__device__ void mainloop_mma_3xtf32(unsigned char* smem, const typename C::T* a_src, const typename C::T* b_src,
                                    const CtaTile<C>& cta, int warp_m, int warp_n, int lane, Epilogue&& epilogue) {
  using T = typename C::T;
  using I = Index<C>;
  using TileA = typename Pipeline<C, LoaderA, LoaderB>::TileA;
  using TileB = typename Pipeline<C, LoaderA, LoaderB>::TileB;
  constexpr int kWarpM = WarpTile<C>::kWarpM, kWarpN = WarpTile<C>::kWarpN;
  constexpr int kMmaM = WarpTile<C>::kMmaM, kMmaN = WarpTile<C>::kMmaN;
  static_assert(C::BK % 8 == 0 && kWarpM % 16 == 0 && kWarpN % 16 == 0, "tile shape");
  static_assert(kMmaM * kMmaN * 4 <= 32, "two-level sums: warp tiles of at most 32x32 (the planner's max_bn)");

  Accumulators<C> acc = {};
  LoaderA a_loader;
  LoaderB b_loader;
  Pipeline<C, LoaderA, LoaderB> pipe(smem, a_loader, b_loader, a_src, b_src, cta);
  pipe.start();
  for (I kt = cta.kt_begin; kt < cta.kt_end; ++kt) {
    const int stage = pipe.wait_and_refill(kt);
    const T* tA = pipe.tile_a(stage);  // (BM, BK)
    const T* tB = pipe.tile_b(stage);  // (BN, BK)
    Accumulators<C> tile_acc = {};     // this k tile's products
    // One k8 step at a time: unrolled, the steps' split fragments were all live at once and
    // spilled beside the scalar loaders' precomputed rows (NvrtcTest.FullPrecisionFp32VariantsCompileWithoutSpills).
#pragma unroll 1
    for (int kk = 0; kk < C::BK; kk += 8) {
      // The m16n8k8 fragments: lane 4 * gid + tid holds rows gid and gid + 8, k tid and tid + 4.
      const int gid = lane >> 2, tid = lane & 3;
      // B's split fragments for the whole step; A's one m16 block at a time, which keeps the
      // registers of its split parts few (the scalar loaders' precomputed rows spilled otherwise).
      unsigned b_big[kMmaN][2], b_small[kMmaN][2];  // (n8 block, B fragment)
#pragma unroll
      for (int j = 0; j < kMmaN; ++j) {
        const int n = warp_n * kWarpN + j * 8 + gid;
        const float v[2] = {tB[TileB::index(n, kk + tid)], tB[TileB::index(n, kk + tid + 4)]};
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const Tf32Split s = split_tf32(v[e]);
          b_big[j][e] = s.big;
          b_small[j][e] = s.small;
        }
      }
#pragma unroll
      for (int i = 0; i < kMmaM; ++i) {
        const int m = warp_m * kWarpM + i * 16 + gid;
        const float v[4] = {tA[TileA::index(m, kk + tid)], tA[TileA::index(m + 8, kk + tid)],
                            tA[TileA::index(m, kk + tid + 4)], tA[TileA::index(m + 8, kk + tid + 4)]};
        unsigned a_big[4], a_small[4];  // the m16 block's A fragment
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const Tf32Split s = split_tf32(v[e]);
          a_big[e] = s.big;
          a_small[e] = s.small;
        }
#pragma unroll
        for (int j = 0; j < kMmaN; ++j) {
          float step[4] = {};  // this k8 step's sums (the 16x8 C fragment)
          mma_tf32_1688(step, a_big, b_small[j]);
          mma_tf32_1688(step, a_small, b_big[j]);
          mma_tf32_1688(step, a_big, b_big[j]);
#pragma unroll
          for (int q = 0; q < 4; ++q) tile_acc[i][j][q] += step[q];
        }
      }
    }
#pragma unroll
    for (int i = 0; i < kMmaM; ++i)
#pragma unroll
      for (int j = 0; j < kMmaN; ++j)
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[i][j][q] += tile_acc[i][j][q];
  }
  pipe.finish();
  epilogue(acc);
}

}  // namespace gemm
}  // namespace boo
