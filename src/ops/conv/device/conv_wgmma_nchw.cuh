// boo device code: gpu:conv:wgmma_sm90's native path for pointwise convs
// (1x1, stride 1, no padding) whose activations are planar (NCHW, NCDHW:
// each channel's pixels contiguous), read and written where they lie,
// without the staged channels-last copies.
//
// In a planar layout a pointwise conv is one GEMM per image, every operand
// contiguous along a GEMM dimension (the relation's names, conv_problem.hpp;
// the data face's relation has A and B swapped and W transposed, so that
// both read: out = W * in):
//   forward and data faces (conv_wgmma_nchw), image n:
//     out[n][m][hw] = sum_k w(m, k) * in[n][k][hw]
//       M = the output channels (C::kM), N = the image's pixels (C::kN =
//       C::kHW), K = the reduced channels (C::kK);
//       A = w(m, k) at m * WK + k * WC: K-major where WC = 1 (the forward
//         face's KCRS filter), M-major where WK = 1 (the data face's
//         transposed view of it; C::kAMnMajor);
//       B = in[n][k][hw] (p.a): N-major, each K row kHW contiguous pixels;
//         or, with C::kBKMajor (in channels-last: a GEMM's B stored n x k),
//         K-major, each pixel's kK channels contiguous, pixels XP apart;
//       D = out[n][m][hw] (p.out) row-major: vectors of PixelVector pixels.
//   weight face (conv_wgmma_nchw_weight):
//     dw[m][c] = sum_{n, hw} dy[n][m][hw] * x[n][c][hw]
//       M = dy's channels (C::kM), N = x's channels (C::kN), the reduction
//       over l = (n, hw) (C::kL = images x pixels), split as the
//       channels-last weight face's (WeightUnits, split_k.cuh's reduce);
//       A = dy (p.b) and B = x (p.a): both K-major, a row's 64 pixels of a
//       k-block contiguous within each 8-pixel chunk's copies (kHW is a
//       multiple of the copies' PixelVector pixels, so a copy never straddles
//       two images).
// The tiles are those of conv_wgmma.cuh (128 x BN, 64-wide k-blocks,
// 128-byte swizzle; M/N-major tiles as the weight face's atom columns), the
// frame (warp_specialized), the k-block step (consume_kblock) and the
// epilogue (store_tile, or store_tile_tma beside the TMA producer; a bias per
// output channel is per row here, added to the accumulators before it) are shared. Partial tiles: rows past kM,
// pixels past kHW (a multiple of PixelVector: a vector is all in or all out) and K past
// kK (the last k-block's rows) are zero-filled on load and skipped on store.
//
// The generated source defines `struct Cfg` (conv_wgmma_impl.cpp's members
// and conv_wgmma_native.cpp's: kImages, kHW, kK, XC, YC, WC, kAMnMajor).
#pragma once

#include "boo/conv/conv_wgmma_weight.cuh"

namespace boo {
namespace wgmma_conv {

/// The forward and data faces' tiles: (image, row tile, pixel tile), an
/// image's in Bands, so the CTAs running together share the pixel tiles of one
/// image (a conv's large operand; its w is small, at most a band of row tiles,
/// and stays in L2) and, where w is a tall GEMM operand, its band's row tiles.
template <class C>
struct PlanarTiles {
  static constexpr int kTilesM = (C::kM + kBM - 1) / kBM;
  static constexpr int kTilesN = (C::kN + C::BN - 1) / C::BN;
  static constexpr int kCount = C::kImages * kTilesM * kTilesN;
  using Order = Bands<kTilesM, kTilesN>;
  __device__ static int image(int tile) { return tile / (kTilesM * kTilesN); }
  __device__ static int m0(int tile) { return Order::row(tile % (kTilesM * kTilesN)) * kBM; }
  __device__ static int n0(int tile) { return Order::column(tile % (kTilesM * kTilesN)) * C::BN; }
};

/// Whether the Cfg's `in` lies channels-last (C::kBKMajor, emitted only where
/// set): B tiles K-major, loaded by TMA only (produce_planar_tma).
BOO_CFG_OPTION(BKMajor, kBKMajor, bool, false);

/// Whether the Cfg keeps the consumers on a tile's two 64-row halves where it has at most 64 rows
/// (C::kConsumersSplitRows, emitted only where set: BOO_WGMMA_NATIVE_HALF_COLUMNS=0, for A/B runs);
/// else they split its columns (kHalfColumns).
BOO_CFG_OPTION(RowSplit, kConsumersSplitRows, bool, false);

/// C for store_tile when the bias is per row (added by the caller): no column bias.
template <class C>
struct RowBias : C {
  static constexpr bool kBias = false;
};

/// The producer of the forward and data faces: per k-block (64 reduced
/// channels k0 ...), the A tile (128 x 64 of w) and the B tile (64 K rows x
/// BN pixels of the image). Thread t copies 16-byte chunk t % 8 of tile rows
/// t / 8 + 16 j: a warp's copies are four whole 128-byte rows. An M/N-major
/// tile's rows are K rows t / 8 + 16 (j % 4) of atom column j / 4, so every
/// copy's address is a per-k-block base plus a compile-time offset (the
/// producer runs in Registers<C>::kProducer registers).
template <class C>
__device__ void produce_planar(const ConvIgemmParams& p, unsigned char* smem, unsigned long long* full,
                               unsigned long long* empty) {
  using T = typename C::T;
  using L = Layout<C>;
  static_assert(!BKMajor<C>::value, "a channels-last `in` loads by TMA (produce_planar_tma)");
  constexpr int kKBlocks = (C::kK + kBK<C> - 1) / kBK<C>;
  const int chunk = threadIdx.x % 8, row0 = threadIdx.x / 8;
  const T* w = reinterpret_cast<const T*>(p.w);
  const T* in = reinterpret_cast<const T*>(p.a);
  // This thread's chunk of tile row row0 (either major-ness): its other rows lie 16 rows (2048 bytes) apart
  // in the same swizzle phase (row & 7), the M/N-major tiles' next atom column L::kAtomColumn further.
  const unsigned row_offset = sm90::swizzle128_offset(row0, chunk);
  int it = 0;  // k-blocks issued so far, over all tiles
  for (int tile = blockIdx.x; tile < PlanarTiles<C>::kCount; tile += gridDim.x) {
    const int m0 = PlanarTiles<C>::m0(tile), n0 = PlanarTiles<C>::n0(tile);
    // in[n][row0][n0 + 8 chunk]: the k-block's first B row of this thread, less k0 * XC.
    const T* pixels = in + PlanarTiles<C>::image(tile) * C::XN + row0 * C::XC + n0 + chunk * 8;
    // w's element of this thread's first A row (less k0's offset): K-major (m0 + row0, 8 chunk), M-major (m0 + 8 chunk, row0).
    const T* weights = w + (C::kAMnMajor ? (m0 + chunk * 8) * C::WK + row0 * C::WC : (m0 + row0) * C::WK + chunk * 8 * C::WC);
    for (int kb = 0; kb < kKBlocks; ++kb) {
      const int stage = it % C::STAGES;
      // Wait until both consumers released what the stage held STAGES k-blocks ago.
      sm90::mbarrier_wait(&empty[stage], ((it / C::STAGES) & 1) ^ 1);
      const int k0 = kb * kBK<C>;
      const unsigned a_tile = sm90::shared_address(smem) + stage * L::kTileA + row_offset;
      const unsigned b_tile = sm90::shared_address(smem) + L::kB + stage * L::kTileB + row_offset;
      const T* a_src = weights + k0 * C::WC;
      const T* b_src = pixels + k0 * C::XC;
#pragma unroll
      for (int j = 0; j < kBM / 16; ++j) {
        if constexpr (C::kAMnMajor) {
          // Atom column j / 4 (consumer j / 4's rows), K row row0 + 16 (j % 4): w(m ... m + 7, k).
          const int m = m0 + (j / 4) * 64 + chunk * 8, k = k0 + row0 + 16 * (j % 4);
          const bool ok = m < C::kM && (C::kK % kBK<C> == 0 || k < C::kK);  // kM is a multiple of 8
          cp_async_vector_at<16>(a_tile + (j / 4) * L::kAtomColumn + (j % 4) * 16 * 128,
                                 ok ? a_src + (j / 4) * 64 * C::WK + 16 * (j % 4) * C::WC : w, ok);
        } else {
          // Row row0 + 16 j (output channel m), chunk: w(m, k ... k + 7).
          const int m = m0 + row0 + 16 * j, k = k0 + chunk * 8;
          const bool ok = m < C::kM && (C::kK % kBK<C> == 0 || k < C::kK);  // kK is a multiple of 8
          cp_async_vector_at<16>(a_tile + 16 * j * 128, ok ? a_src + 16 * j * C::WK : w, ok);
        }
      }
#pragma unroll
      for (int j = 0; j < C::BN / 16; ++j) {
        // Atom column j / 4 (pixels n0 + 64 (j / 4) ...), K row row0 + 16 (j % 4): in[n][k][col ... col + 7],
        // as 16 / kV-byte copies of kV pixels, each all inside the image or all past it.
        constexpr int kV = PixelVector<C>::value;
        const int k = k0 + row0 + 16 * (j % 4), col = (j / 4) * 64 + chunk * 8;
#pragma unroll
        for (int h = 0; h < 8 / kV; ++h) {
          const bool ok = (C::kK % kBK<C> == 0 || k < C::kK) && (C::kN % C::BN == 0 || n0 + col + h * kV < C::kN);
          cp_async_vector_at<2 * kV>(b_tile + (j / 4) * L::kAtomColumn + (j % 4) * 16 * 128 + h * 2 * kV,
                                     ok ? b_src + 16 * (j % 4) * C::XC + (j / 4) * 64 + h * kV : in, ok);
        }
      }
      announce_stage(full, C::STAGES, it);
    }
  }
  finish_copies();
}

/// produce_planar by TMA (FullyTma), one thread issuing a k-block's boxes:
///   the A tile, w K-major: one box {64 reduced channels, 128 output channels} of `tma_w` (w as {K, M},
///     rows WK apart); M-major (kAMnMajor, the data face's transposed view): two boxes {64 output
///     channels, 64 reduced channels}, one per atom column (w as {M, K}, rows WC apart);
///   the B tile, in planar: BN / 64 boxes {64 pixels, 64 channel rows, the tile's image} of `tma_x`,
///     one per atom column (x as {kHW pixels, kK channel rows, kImages}, rows XC and images XN apart:
///     the channel rows past kK are the image's own zeros); in channels-last
///     (BKMajor): one box {64 channels, BN pixels} (x as {kK channels, kImages x kHW pixels}, evenly
///     spaced: the host's rule).
/// Rows, channels and pixels past the tensors are the copy engine's zeros; a stage expects its boxes'
/// whole bytes.
template <class C>
__device__ void produce_planar_tma(const TmaMap* tma_w, const TmaMap* tma_x, unsigned char* smem,
                                   unsigned long long* full, unsigned long long* empty) {
  using L = Layout<C>;
  static_assert(C::BN % 64 == 0, "B tiles of whole atom columns");
  constexpr int kKBlocks = (C::kK + kBK<C> - 1) / kBK<C>;
  if (threadIdx.x != 0) return;
  sm90::prefetch_tensor_map(tma_w);
  sm90::prefetch_tensor_map(tma_x);
  int it = 0;  // k-blocks issued so far, over all tiles
  for (int tile = blockIdx.x; tile < PlanarTiles<C>::kCount; tile += gridDim.x) {
    const int m0 = PlanarTiles<C>::m0(tile), n0 = PlanarTiles<C>::n0(tile);
    for (int kb = 0; kb < kKBlocks; ++kb, ++it) {
      const int stage = it % C::STAGES;
      // Wait until both consumers released what the stage held STAGES k-blocks ago.
      sm90::mbarrier_wait(&empty[stage], ((it / C::STAGES) & 1) ^ 1);
      const unsigned a_tile = sm90::shared_address(smem) + stage * L::kTileA;
      const unsigned b_tile = sm90::shared_address(smem) + L::kB + stage * L::kTileB;
      sm90::mbarrier_arrive_expect_tx(&full[stage], L::kTileA + L::kTileB);
      if constexpr (C::kAMnMajor) {
#pragma unroll
        for (int j = 0; j < kBM / 64; ++j)
          sm90::tma_load_2d(a_tile + j * L::kAtomColumn, tma_w, m0 + 64 * j, kb * kBK<C>, &full[stage]);
      } else {
        sm90::tma_load_2d(a_tile, tma_w, kb * kBK<C>, m0, &full[stage]);
      }
      if constexpr (BKMajor<C>::value) {
        sm90::tma_load_2d(b_tile, tma_x, kb * kBK<C>, PlanarTiles<C>::image(tile) * C::kHW + n0, &full[stage]);
      } else {
#pragma unroll
        for (int j = 0; j < C::BN / 64; ++j)
          sm90::tma_load_3d(b_tile + j * L::kAtomColumn, tma_x, n0 + 64 * j, kb * kBK<C>, PlanarTiles<C>::image(tile),
                            &full[stage]);
      }
    }
  }
}

/// Adds each output channel's bias to a consumer's accumulators (Wgmma's layout: this thread's rows
/// m0 + 16 warp + lane / 4 + 8 half), before store_tile's activation.
template <class C>
__device__ __forceinline__ void add_row_bias(float (&acc)[C::BN / 2], const ConvIgemmParams& p, int m0, int warp,
                                             int lane) {
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int m = m0 + warp * 16 + lane / 4 + 8 * half;
    const float bias = m < C::kM ? load_as_float<typename C::T>(p.bias, m) : 0.f;
#pragma unroll
    for (int j = 0; j < C::BN / 8; ++j) {
      acc[4 * j + 2 * half] += bias;
      acc[4 * j + 2 * half + 1] += bias;
    }
  }
}

/// The forward and data faces' kernel body. Grid: at most one CTA per SM, each taking the tiles of PlanarTiles<C>.
/// `tma_w`, `tma_x`: with FullyTma<C>, w's and x's maps (produce_planar_tma), else unused;
/// `tma_y`: with TmaStore<C>, the result's, {kHW pixels, kM channel rows, kImages} (store_tile_tma), else unused.
template <class C>
__device__ void conv_wgmma_nchw(const ConvIgemmParams& p, const TmaMap* tma_w = nullptr, const TmaMap* tma_x = nullptr,
                                const TmaMap* tma_y = nullptr) {
  static_assert(sizeof(typename C::T) == 2, "16-bit types only: planar operands are M/N-major tiles, which TF32 wgmma cannot read");
  using T = typename C::T;
  using L = Layout<C>;
  constexpr int kKBlocks = (C::kK + kBK<C> - 1) / kBK<C>;
  warp_specialized<C>(
      [&](unsigned char* smem, unsigned long long* full, unsigned long long* empty) {
        if constexpr (FullyTma<C>::value)
          produce_planar_tma<C>(tma_w, tma_x, smem, full, empty);
        else
          produce_planar<C>(p, smem, full, empty);
      },
      [&](unsigned char* smem, unsigned long long* full, unsigned long long* empty, int consumer) {
        // consumer: output channels m0 + 64 * consumer ...
        const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) % 128 / 32;
        T* staged = reinterpret_cast<T*>(smem + L::kStaging) + consumer * L::kStagingRows * L::kOutPitch;
        // store_tile_tma's staging: 32 rows x BN unpadded, in 4 KiB boxes.
        unsigned char* boxes = smem + L::kStaging + consumer * L::kStagingRows * C::BN * sizeof(T);
        int it = 0;  // k-blocks consumed so far, over all tiles
        for (int tile = blockIdx.x; tile < PlanarTiles<C>::kCount; tile += gridDim.x) {
          const int m0 = PlanarTiles<C>::m0(tile), n0 = PlanarTiles<C>::n0(tile), image = PlanarTiles<C>::image(tile);
          auto offset = [image](int m, int hw) { return image * C::YN + m * C::YC + hw; };
          if constexpr (kHalfColumns<C> && !RowSplit<C>::value) {
            // At most 64 output channels: both consumers on the tile's rows, consumer c on its columns
            // n0 + c BN / 2 ... (as the weight face's HalfColumns), so both share the epilogue.
            float acc[C::BN / 4];
            consume_half_column_kblocks<C, C::kAMnMajor, !BKMajor<C>::value>(acc, smem, full, empty, it, 0, kKBlocks,
                                                                             consumer, lane);
            if constexpr (C::kBias) add_row_bias<HalfWidth<C>>(acc, p, m0, warp, lane);
            // store_tile places consumer c's rows at m0 + 64 c: both consumers' are m0's.
            if constexpr (TmaStore<C>::value)
              store_tile_tma<RowBias<HalfWidth<C>>>(acc, p, boxes, tma_y, consumer, m0 - 64 * consumer,
                                                    n0 + consumer * (C::BN / 2), image);
            else
              store_tile<RowBias<HalfWidth<C>>>(acc, p, staged, consumer, m0 - 64 * consumer,
                                                n0 + consumer * (C::BN / 2), offset);
          } else {
            float acc[C::BN / 2];
#pragma unroll
            for (int i = 0; i < C::BN / 2; ++i) acc[i] = 0.f;
            for (int kb = 0; kb < kKBlocks; ++kb, ++it)
              consume_kblock<C, C::kAMnMajor, !BKMajor<C>::value>(acc, smem, full, empty, it, consumer, lane, kb == 0);
            finish_tile<C>(acc, empty, it, lane);
            if constexpr (C::kBias) add_row_bias<C>(acc, p, m0 + consumer * 64, warp, lane);
            // Epilogue (activation, vectors along the pixels), while the producer fills the stages for the next tile.
            if constexpr (TmaStore<C>::value)
              store_tile_tma<RowBias<C>>(acc, p, boxes, tma_y, consumer, m0, n0, image);
            else
              store_tile<RowBias<C>>(acc, p, staged, consumer, m0, n0, offset);
          }
        }
        // The last tile's copies read the staging until they are done: shared memory outlives them.
        if constexpr (TmaStore<C>::value)
          if (threadIdx.x % 128 == 0) sm90::bulk_wait_group<0>();
      });
}

/// The producer of the weight face: per k-block (64 of the pixels l), the A
/// tile (128 of dy's channels x 64 pixels) and the B tile (BN of x's channels
/// x 64 pixels), both K-major. Thread t copies 16-byte chunk t % 8 (pixels l
/// ... l + 7 of the k-block, one image's) of tile rows t / 8 + 16 j: it finds
/// its pixels' image once per k-block, and a warp's copies are four rows'
/// 128 bytes (contiguous where the k-block lies in one image).
template <class C>
__device__ void produce_planar_weight(const ConvIgemmParams& p, unsigned char* smem, unsigned long long* full,
                                      unsigned long long* empty) {
  using T = typename C::T;
  using L = Layout<C>;
  using U = WeightUnits<C>;
  const int chunk = threadIdx.x % 8, row0 = threadIdx.x / 8;
  const T* x = reinterpret_cast<const T*>(p.a);
  const T* dy = reinterpret_cast<const T*>(p.b);
  int it = 0;  // k-blocks issued so far, over all units
  for (int unit = blockIdx.x; unit < U::kCount; unit += gridDim.x) {
    const int m0 = U::m0(unit), n0 = U::n0(unit);
    // Bit j: this thread's A (B) row row0 + 16 j lies in the GEMM (one register each, within the producer's).
    unsigned a_rows = 0, b_rows = 0;
#pragma unroll
    for (int j = 0; j < kBM / 16; ++j) a_rows |= (m0 + row0 + 16 * j < C::kM ? 1u : 0u) << j;
#pragma unroll
    for (int j = 0; j < C::BN / 16; ++j) b_rows |= (n0 + row0 + 16 * j < C::kN ? 1u : 0u) << j;
    const int a_first = (m0 + row0) * C::YC, b_first = (n0 + row0) * C::XC;
    for (int kb = U::kb_begin(unit); kb < U::kb_end(unit); ++kb) {
      const int stage = it % C::STAGES;
      // Wait until both consumers released what the stage held STAGES k-blocks ago.
      sm90::mbarrier_wait(&empty[stage], ((it / C::STAGES) & 1) ^ 1);
      // This thread's chunk of rows row0 + 16 j (2048 bytes apart in the same swizzle phase).
      const unsigned a_tile = sm90::shared_address(smem) + stage * L::kTileA + sm90::swizzle128_offset(row0, chunk);
      const unsigned b_tile = sm90::shared_address(smem) + L::kB + stage * L::kTileB + sm90::swizzle128_offset(row0, chunk);
      // The chunk's pixels as 16 / kV-byte copies of kV, each inside one image (kHW a multiple of kV).
      constexpr int kV = PixelVector<C>::value;
#pragma unroll
      for (int h = 0; h < 8 / kV; ++h) {
        const int l = kb * kBK<C> + chunk * 8 + h * kV;
        const bool in = C::kL % kBK<C> == 0 || l < C::kL;  // pixels past the last contribute zeros
        const int image = l / C::kHW, hw = l % C::kHW;
        const T* dy_pixels = dy + (in ? image * C::YN + hw + a_first : 0);  // dy[n][m0 + row0][hw]
        const T* x_pixels = x + (in ? image * C::XN + hw + b_first : 0);    // x[n][n0 + row0][hw]
#pragma unroll
        for (int j = 0; j < kBM / 16; ++j) {
          const bool ok = in && ((a_rows >> j) & 1u);
          cp_async_vector_at<2 * kV>(a_tile + 16 * j * 128 + h * 2 * kV, ok ? dy_pixels + 16 * j * C::YC : dy, ok);
        }
#pragma unroll
        for (int j = 0; j < C::BN / 16; ++j) {
          const bool ok = in && ((b_rows >> j) & 1u);
          cp_async_vector_at<2 * kV>(b_tile + 16 * j * 128 + h * 2 * kV, ok ? x_pixels + 16 * j * C::XC : x, ok);
        }
      }
      announce_stage(full, C::STAGES, it);
    }
  }
  finish_copies();
}

/// The weight face's kernel body (K-major tiles; otherwise conv_wgmma_weight's).
/// Grid: at most one CTA per SM, each taking the units of WeightUnits<C>;
/// with several splits, conv_wgmma_weight_reduce<C> sums the partials.
template <class C>
__device__ void conv_wgmma_nchw_weight(const ConvIgemmParams& p) {
  static_assert(sizeof(typename C::T) == 2, "16-bit types only: planar operands are M/N-major tiles, which TF32 wgmma cannot read");
  warp_specialized<C>(
      [&](unsigned char* smem, unsigned long long* full, unsigned long long* empty) {
        produce_planar_weight<C>(p, smem, full, empty);
      },
      [&](unsigned char* smem, unsigned long long* full, unsigned long long* empty, int consumer) {
        consume_weight_units<C, false>(p, smem, full, empty, consumer);
      });
}

}  // namespace wgmma_conv
}  // namespace boo
