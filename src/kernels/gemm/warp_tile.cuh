// boo device code: how the CTA tile is divided among warps, and the
// accumulator layout that every mainloop (mainloop_mma_f16, mainloop_mma_tf32,
// mainloop_ffma) fills and the epilogue reads.
#pragma once

#include "boo/kernels/gemm/tile.cuh"

namespace boo {
namespace gemm {

/// A warp's share of the (BM, BN) CTA tile. Warps form a (WARPS_M, WARPS_N) grid, warp_m
/// fastest; each warp computes (kWarpM, kWarpN) as (kMmaM, kMmaN) blocks of mma.sync's 16x8 output.
template <class C>
struct WarpTile {
  static constexpr int kWarpM = C::BM / C::WARPS_M, kWarpN = C::BN / C::WARPS_N;
  static constexpr int kMmaM = kWarpM / 16, kMmaN = kWarpN / 8;
};

/// One thread's accumulators, (m16 block i, n8 block j, q): mma.sync's C fragment, so (i, j, q)
/// holds warp-tile row i*16 + lane/4 (+8 for q >= 2) and column j*8 + 2*(lane%4) (+1 for odd q).
/// The FFMA path keeps the same layout, so that one epilogue serves every math path.
///
/// The accumulators, like the operand loaders, are locals of the mainloop, updated only there,
/// and the epilogue gets them as its callback's argument. When a callee updates this loop-carried
/// state through a reference, NVVM promotes it to registers later and in another order, and
/// ptxas then emits different machine code for the same arithmetic (found by comparing the PTX
/// of every kernel the planner emits, with the math in a function of its own).
template <class C>
using Accumulators = float[WarpTile<C>::kMmaM][WarpTile<C>::kMmaN][4];

}  // namespace gemm
}  // namespace boo
