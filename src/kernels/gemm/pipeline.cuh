// boo device code: the multistage cp.async pipeline of the mma.sync GEMMs --
// operand tiles stream from global to shared memory STAGES - 1 tiles ahead of
// the warps' math on the oldest one -- and the CTA's place in the GEMM grid.
//
// The op supplies the two operand loader types (where an element of its GEMM
// lives in its tensors); the pipeline owns the shared-memory stages and the
// order of copies and barriers. A loader of operand A (rows) or B (columns) is
// default-constructible and has
//   init(row0, g, k_first)        once: the CTA's first row (or column), group and k
//   load(smem, gmem, row0, k0, g) issue the copies of the tile at k0 into `smem`
// and is asked for the k tiles in order, BK apart, starting at k_first.
#pragma once

#include "boo/kernels/arch/sm80.cuh"
#include "boo/kernels/gemm/tile.cuh"

namespace boo {
namespace gemm {

/// The CTA's place in the grid (M tiles x N tiles, groups, K splits): its first output row and
/// column, its group, and its range [kt_begin, kt_end) of k tiles.
template <class C>
struct CtaTile {
  using I = Index<C>;
  I row0, col0, g, kt_begin, kt_end;

  __device__ CtaTile() {
    // N tiles fastest: the CTAs that share an A tile (the large activation
    // operand) run together, so it is read from DRAM once and from L2 after.
    constexpr I kTilesN = static_cast<I>((C::kN + C::BN - 1) / C::BN);
    const I tile_n = static_cast<I>(blockIdx.x) % kTilesN, tile_m = static_cast<I>(blockIdx.x) / kTilesN;
    g = static_cast<I>(blockIdx.y);
    row0 = tile_m * C::BM;
    col0 = tile_n * C::BN;
    // Split z takes k tiles [K*z/S, K*(z+1)/S): every split gets a share, within one tile of the others.
    constexpr I kTilesK = static_cast<I>((C::kK + C::BK - 1) / C::BK);
    kt_begin = kTilesK * static_cast<I>(blockIdx.z) / C::kSplits;
    kt_end = kTilesK * (static_cast<I>(blockIdx.z) + 1) / C::kSplits;
  }
};

/// The stages of one CTA. `smem` (the dynamic shared memory) holds STAGES A tiles, then STAGES
/// B tiles. A mainloop calls start() once, wait_and_refill(kt) before its math on tile kt, and
/// finish() after the last.
template <class C, class LoaderA, class LoaderB>
struct Pipeline {
  using T = typename C::T;
  using I = Index<C>;
  using TileA = Tile<C, C::BM, C::kAMode>;
  using TileB = Tile<C, C::BN, C::kBMode>;

  T* sA;  // (STAGES, TileA::kElems)
  T* sB;  // (STAGES, TileB::kElems)
  LoaderA& a_loader;
  LoaderB& b_loader;
  const T* a_src;  // the tensors the loaders read
  const T* b_src;
  const CtaTile<C>& cta;

  __device__ Pipeline(unsigned char* smem, LoaderA& a_loader, LoaderB& b_loader, const T* a_src, const T* b_src,
                      const CtaTile<C>& cta)
      : sA(reinterpret_cast<T*>(smem)),
        sB(sA + C::STAGES * TileA::kElems),
        a_loader(a_loader),
        b_loader(b_loader),
        a_src(a_src),
        b_src(b_src),
        cta(cta) {}

  /// Initialises the loaders at the CTA's first k tile and puts STAGES - 1 tiles in flight. A
  /// commit group per stage even when empty, so that wait_and_refill's cp_async_wait<STAGES - 2>
  /// always means "the oldest stage has landed".
  __device__ void start() {
    a_loader.init(cta.row0, cta.g, cta.kt_begin * C::BK);
    b_loader.init(cta.col0, cta.g, cta.kt_begin * C::BK);
    for (int s = 0; s < C::STAGES - 1; ++s) {
      if (cta.kt_begin + s < cta.kt_end) load_stage(s, cta.kt_begin + s);
      cp_async_commit();
    }
  }

  /// Waits until tile kt is in shared memory for every thread, then issues the copies of tile
  /// kt + STAGES - 1 into the stage that tile kt - 1 used. Returns tile kt's stage.
  __device__ int wait_and_refill(I kt) {
    cp_async_wait<C::STAGES - 2>();
    __syncthreads();  // tile kt is visible to all; stage (kt-1) is free to overwrite
    const I next = kt + C::STAGES - 1;
    if (next < cta.kt_end) load_stage(static_cast<int>((next - cta.kt_begin) % C::STAGES), next);
    cp_async_commit();
    return static_cast<int>((kt - cta.kt_begin) % C::STAGES);
  }

  __device__ const T* tile_a(int stage) const { return sA + stage * TileA::kElems; }  // (BM, BK)
  __device__ const T* tile_b(int stage) const { return sB + stage * TileB::kElems; }  // (BN, BK)

  /// After the last tile: no copy is left in flight (the epilogue may reuse the shared memory
  /// once every warp is past its math).
  __device__ void finish() { cp_async_wait<0>(); }

 private:
  __device__ void load_stage(int stage, I kt) {
    a_loader.load(sA + stage * TileA::kElems, a_src, cta.row0, kt * C::BK, cta.g);
    b_loader.load(sB + stage * TileB::kElems, b_src, cta.col0, kt * C::BK, cta.g);
  }
};

}  // namespace gemm
}  // namespace boo
