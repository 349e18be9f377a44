// boo device code: the weight gradient of gpu:conv:wgmma_sm90 — the weight
// face of a regular 2-D (or 1-D) conv on warpgroup tensor cores (sm_90a),
// every operand channels-last:
//   dw[k, r, s, c] = sum_{n, p, q} dy[n, p, q, k] * x[n, p*sh - ph + r*dh, q*sw - pw + s*dw, c]
// as the GEMM  D[m, col] = sum_l A[m, l] * B[l, col]  with m = k (the output
// channels, C::kM of them), col = (r, s, c) (C::kN = R x S x C) and the
// reduction over l = (n, p, q) (C::kL = N x P x Q pixels of dy). C is a
// multiple of 8, so each 8-wide chunk of columns (16 bytes) is 8 consecutive
// channels of one tap: the columns pack the taps' channels without a gap (a
// 64-wide atom column may end one tap and start the next), every copy and
// every 16-byte store of dw finds its chunk's own tap, and no column past
// R x S x C (the last tile's) is read or stored.
//
// Neither operand is contiguous along the reduction: a pixel's dy channels
// (A along M) and a pixel's x channels at a tap (B along N) are. So the
// shared-memory tiles are M- and N-major (wgmma with imm-trans-a/b = 1,
// sm90.cuh): a k-block is 64 pixels l, and each tile is 64-wide atom columns
// of 64 rows (one per pixel) of 128 bytes (64 channels), 128-byte swizzled:
//   A tile (128 x 64): atom column j = output channels m0 + 64 j ... + 63,
//     consumer j's operand;
//   B tile (BN x 64): atom column j = columns n0 + 64 j ... + 63.
// The reduction is long and the output small, so it is split (split K): the
// CTAs of a persistent grid walk units (row tile, column tile, split), each
// over its split's range of k-blocks. With one split the consumers write dw
// as the forward kernel writes y (store_tile); with more, each unit stores
// its fp32 sums in its split's plane of the workspace (kSplits, kM, kN) and a
// second kernel adds the planes in a fixed order (split_k.cuh), converting
// to dw's type: deterministic, no atomics. With C::kFp32Out (a caller's
// epilogue: gpu:conv:fp32_bf16x6) the sums stay fp32, dense (kM, kN) at the
// workspace's start: the one split's plane, or the reduce's.
//
// The generated source defines `struct Cfg` (kM, kN, kC, kL, kSplits, the
// tile, the conv's geometry and every stride as compile-time constants; see
// conv_wgmma_impl.cpp) and instantiates conv_wgmma_weight<Cfg> and, with
// several splits, conv_wgmma_weight_reduce<Cfg>.
#pragma once

#include "boo/conv/conv_wgmma.cuh"
#include "boo/kernels/gemm/split_k.cuh"

namespace boo {
namespace wgmma_conv {

/// The units of the weight face (conv_wgmma.cuh's Units, U): (row tile, column
/// tile, group, split), split slowest, so the CTAs running together read the
/// same pixels (one split's dy and x rows, every group's channels of them)
/// from L2; k-blocks of 64 pixels (the shifted taps' own U: strips of pixels,
/// channel slices as column tiles). Group g's GEMM is group 0's with its
/// operands and result moved (conv_wgmma_slices.cuh's GA, GW, GY: x's
/// channels by g x C/groups, dy's by g x K/groups, dw's rows by g x K/groups).
template <class C, class U = Units<C, (C::kL + kBK<C> - 1) / kBK<C>>>
struct WeightUnits {
  static constexpr int kCount = U::kCount * C::kGroups;
  // unit = (split x kGroups + group) x kTiles + tile; U's unit (split x kTiles + tile) without the group.
  __device__ __forceinline__ static int group(int unit) {
    if constexpr (C::kGroups == 1) return 0;
    else return unit / U::kTiles % C::kGroups;
  }
  __device__ __forceinline__ static int local(int unit) {
    if constexpr (C::kGroups == 1) return unit;
    else return unit / (U::kTiles * C::kGroups) * U::kTiles + unit % U::kTiles;
  }
  __device__ __forceinline__ static int m0(int unit) { return U::m0(local(unit)); }
  __device__ __forceinline__ static int n0(int unit) { return U::n0(local(unit)); }
  __device__ __forceinline__ static int split(int unit) { return U::split(local(unit)); }
  __device__ __forceinline__ static int kb_begin(int unit) { return U::kb_begin(local(unit)); }
  __device__ __forceinline__ static int kb_end(int unit) { return U::kb_end(local(unit)); }
};

/// The producer of the weight face: copies the A (dy) and B (x at each
/// column's tap) rows of every k-block of the CTA's units, one stream of
/// k-blocks through the ring. Thread t copies 16-byte chunk t % 16 (and
/// t % 16 + 16 of B rows wider than 128 columns) of pixel rows t / 16 + 8 j,
/// so a warp's copies cover two pixels' 256 contiguous bytes of dy (and of x
/// within a tap); each thread splits its 8 pixels into (n, p, q) once per
/// k-block, for both operands.
/// With C::kTma (dy dense over its pixels: the host's rule), A is two TMA
/// copies a k-block from `tma_a`, a map of dy as the 2-D matrix {K channels,
/// N x P x Q pixels}, pixel stride YW: thread 0 issues them, the 128 threads
/// copy B as before.
template <class C>
__device__ void produce_weight(const ConvIgemmParams& p, const TmaMap* tma_a, unsigned char* smem,
                               unsigned long long* full, unsigned long long* empty) {
  using T = typename C::T;
  using U = WeightUnits<C>;
  if constexpr (C::kTma) {
    // Two boxes {64 channels, 64 pixels} of 2-byte elements: 64 rows of 128 bytes, an atom column each.
    static_assert(Layout<C>::kAtomColumn == 64 * kBK<C> * sizeof(T) && Layout<C>::kTileA == 2 * Layout<C>::kAtomColumn,
                  "an A tile is two boxes");
    if (threadIdx.x == 0) sm90::prefetch_tensor_map(tma_a);
  }
  constexpr int kColumnChunks = C::BN / 8;                       // 16-byte chunks of a B row
  constexpr int kChunksPerThread = (kColumnChunks + 15) / 16;   // 1 (BN = 128) or 2
  const int chunk = threadIdx.x % 16, row0 = threadIdx.x / 16;
  const T* x = reinterpret_cast<const T*>(p.a);
  const T* dy = reinterpret_cast<const T*>(p.b);
  int it = 0;  // k-blocks issued so far, over all units (announce_stage, conv_wgmma.cuh)
  for (int unit = blockIdx.x; unit < U::kCount; unit += gridDim.x) {
    const int m0 = U::m0(unit), n0 = U::n0(unit), group = U::group(unit);
    // A: output channels m0 + 8 chunk ... + 7 of every pixel (K is a multiple of 8).
    const bool a_cols = C::kM % kBM == 0 || m0 + chunk * 8 < C::kM;
    // B: per column chunk, its tap (r, s) as the offset of x's channels c ... c + 7
    // from the pixel a receptive field starts at, and the tap's reach r*dh, s*dw;
    // bit i of b_cols: chunk i lies in the GEMM.
    int b_shift[kChunksPerThread], b_rh[kChunksPerThread], b_sw[kChunksPerThread];
    unsigned b_cols = 0;
#pragma unroll
    for (int i = 0; i < kChunksPerThread; ++i) {
      const int col = n0 + (chunk + 16 * i) * 8;
      const int tap = col / C::kC, c = col % C::kC, r = tap / C::S, s = tap % C::S;
      b_rh[i] = r * C::DH;
      b_sw[i] = s * C::DW;
      b_shift[i] = b_rh[i] * C::XH + b_sw[i] * C::XW + group * C::GA + c;
      b_cols |= (chunk + 16 * i < kColumnChunks && col < C::kN ? 1u : 0u) << i;
    }
    for (int kb = U::kb_begin(unit); kb < U::kb_end(unit); ++kb) {
      const int stage = it % C::STAGES;
      // Wait until both consumers released what the stage held STAGES k-blocks ago.
      sm90::mbarrier_wait(&empty[stage], ((it / C::STAGES) & 1) ^ 1);
      const unsigned a_tile = sm90::shared_address(smem) + stage * Layout<C>::kTileA;
      const unsigned b_tile = sm90::shared_address(smem) + Layout<C>::kB + stage * Layout<C>::kTileB;
      if constexpr (C::kTma) {
        // A (128 x 64, M-major): atom column j (consumer j's) is the box at (channel m0 + 64 j, pixel kb * 64):
        // pixels kb * 64 ... + 63 as 64 rows of 128 bytes, each that pixel's 64 output channels, 128-byte
        // swizzled as swizzle128_offset places them (atom columns are 1024-byte aligned); channels past K and
        // pixels past N x P x Q read as zeros, as the cp.async path's zero chunks (a box wholly past K, the
        // second of a last row tile of at most 64 rows, is all zeros). The stage's full barrier expects both
        // boxes, kTileA = 2 x 64 x 128 bytes, zeros included: thread 0 adds them to the stage's phase before
        // its own arrival (announce_stage, 128 arrivals as without TMA), so the phase completes only once the
        // 128 threads' B copies and both boxes have landed (the phase is this k-block's: the producer waited
        // for `empty`). The copies write through the async proxy: no fence before the wgmma read them.
        if (threadIdx.x == 0) {
          sm90::mbarrier_expect_tx(&full[stage], Layout<C>::kTileA);
          sm90::tma_load_2d(a_tile, tma_a, group * C::GW + m0, kb * kBK<C>, &full[stage]);
          sm90::tma_load_2d(a_tile + Layout<C>::kAtomColumn, tma_a, group * C::GW + m0 + 64, kb * kBK<C>, &full[stage]);
        }
      }
#pragma unroll
      for (int j = 0; j < kBK<C> / 8; ++j) {
        const int row = row0 + 8 * j, l = kb * kBK<C> + row;
        const bool in = C::kL % kBK<C> == 0 || l < C::kL;  // pixels past the last contribute zeros
        const int n = l / (C::P * C::Q), pq = l % (C::P * C::Q), oh = pq / C::Q, ow = pq % C::Q;
        if constexpr (!C::kTma) {
          // A row `row`, atom column chunk / 8 (consumer chunk / 8's), chunk chunk % 8.
          const bool a_ok = in && a_cols;
          cp_async_vector_at<16>(
              a_tile + (chunk / 8) * Layout<C>::kAtomColumn + sm90::swizzle128_offset(row, chunk % 8),
              dy + (a_ok ? n * C::YN + oh * C::YH + ow * C::YW + group * C::GW + m0 + chunk * 8 : 0), a_ok);
        }
        const int ih = oh * C::SH - C::PH, iw = ow * C::SW - C::PW;
        const int x_pixel = n * C::XN + ih * C::XH + iw * C::XW;
#pragma unroll
        for (int i = 0; i < kChunksPerThread; ++i) {
          const int cc = chunk + 16 * i;  // B row `row`, atom column cc / 8, chunk cc % 8
          if (cc >= kColumnChunks) continue;
          const bool ok = in && ((b_cols >> i) & 1u) &&
                          static_cast<unsigned>(ih + b_rh[i]) < static_cast<unsigned>(C::H) &&
                          static_cast<unsigned>(iw + b_sw[i]) < static_cast<unsigned>(C::W);
          cp_async_vector_at<16>(b_tile + (cc / 8) * Layout<C>::kAtomColumn + sm90::swizzle128_offset(row, cc % 8),
                                 x + (ok ? x_pixel + b_shift[i] : 0), ok);
        }
      }
      announce_stage(full, C::STAGES, it);
    }
  }
  finish_copies();
}

/// The fully-TMA producer of the weight face (C::kTmaX: C a multiple of 64, x as an im2col map; the host's
/// rule, im2col_blocker). A k-block is pixels l0 = kb * 64 ... + 63 of the reduction:
///   A (128 x 64, M-major): dy's two boxes, as produce_weight's;
///   B (BN x 64, N-major): a box per atom column j, columns col = n0 + 64 j ... + 63, one tap's channels
///     c0 = col % C ... + 63 (C a multiple of 64): `tma_b`, x as {C, W, H, N} with the forward face's
///     corners and element strides (produce_tma's im2col A), 64 pixels from l0's (n, p, q) receptive
///     field's first input pixel (c0, q SW - PW, p SH - PH, n), read at the tap's offsets (s DW, r DH):
///     64 rows of 128 bytes, row i pixel l0 + i's 64 channels, which is the M/N-major atom column that
///     produce_weight's cp.async copies build (pixels past N x P x Q run into images past N: zeros).
/// Atom columns past kN (the last column tile's) are not copied: they hold a previous k-block's bytes,
/// which reach only the accumulators of columns that are never stored. One thread issues the stage: it
/// arrives on `full` (one arrival, warp_specialized) expecting the copies' bytes, then issues them.
template <class C>
__device__ void produce_weight_tma(const TmaMap* tma_a, const TmaMap* tma_b, unsigned char* smem,
                                   unsigned long long* full, unsigned long long* empty) {
  using U = WeightUnits<C>;
  static_assert(C::kC % 64 == 0, "an im2col box is 64 channels of one tap");
  static_assert(Layout<C>::kTileA == 2 * Layout<C>::kAtomColumn && C::BN % 64 == 0, "tiles of whole boxes");
  if (threadIdx.x != 0) return;
  sm90::prefetch_tensor_map(tma_a);
  sm90::prefetch_tensor_map(tma_b);
  int it = 0;  // k-blocks issued so far, over all units
  for (int unit = blockIdx.x; unit < U::kCount; unit += gridDim.x) {
    const int m0 = U::m0(unit), n0 = U::n0(unit), group = U::group(unit);
    // The tile's atom columns within kN (a multiple of 64: C is).
    const int boxes = C::kN % C::BN == 0 ? C::BN / 64 : min(C::BN, C::kN - n0) / 64;
    for (int kb = U::kb_begin(unit); kb < U::kb_end(unit); ++kb, ++it) {
      const int stage = it % C::STAGES;
      // Wait until both consumers released what the stage held STAGES k-blocks ago.
      sm90::mbarrier_wait(&empty[stage], ((it / C::STAGES) & 1) ^ 1);
      const unsigned a_tile = sm90::shared_address(smem) + stage * Layout<C>::kTileA;
      const unsigned b_tile = sm90::shared_address(smem) + Layout<C>::kB + stage * Layout<C>::kTileB;
      sm90::mbarrier_arrive_expect_tx(&full[stage], Layout<C>::kTileA + boxes * Layout<C>::kAtomColumn);
      sm90::tma_load_2d(a_tile, tma_a, group * C::GW + m0, kb * kBK<C>, &full[stage]);
      sm90::tma_load_2d(a_tile + Layout<C>::kAtomColumn, tma_a, group * C::GW + m0 + 64, kb * kBK<C>, &full[stage]);
      // The k-block's first pixel's receptive field's first input pixel (may lie in the padding).
      const int l0 = kb * kBK<C>, n = l0 / (C::P * C::Q), pq = l0 % (C::P * C::Q);
      const int h0 = (pq / C::Q) * C::SH - C::PH, w0 = (pq % C::Q) * C::SW - C::PW;
      for (int j = 0; j < boxes; ++j) {
        const int col = n0 + 64 * j, tap = col / C::kC, r = tap / C::S, s = tap % C::S;
        sm90::tma_load_im2col_4d(b_tile + j * Layout<C>::kAtomColumn, tma_b, group * C::GA + col % C::kC, w0, h0, n,
                                 static_cast<unsigned short>(s * C::DW), static_cast<unsigned short>(r * C::DH),
                                 &full[stage]);
      }
    }
  }
}

/// dw's element offset of group `group`'s GEMM element (m, col): output channel group x K/groups + m, tap
/// col / C, channel col % C (of the group's C = C::kC).
template <class C>
__device__ __forceinline__ int weight_offset(int m, int col, int group) {
  const int tap = col / C::kC;
  return group * C::GY + m * C::WK + (tap / C::S) * C::WR + (tap % C::S) * C::WS + col % C::kC;
}

/// The tile as two consumers see it where they split its columns (HalfColumns): BN / 2 wide. Only the
/// epilogue (store_tile, store_partials) reads it; the stages keep C's layout.
template <class C>
struct HalfWidth : C {
  static constexpr int BN = C::BN / 2;
};

/// At most 64 output channels (ResNet's first stage: K = 64), a tile's rows are consumer 0's alone; with
/// 128 or 256 columns the two consumers split the columns instead, each a m64n(BN/2) wgmma on the one A
/// atom column. (Promoted sums keep the row split: their BN is 128 and its second accumulators.) The
/// weight face's units, and the native NCHW forward and data faces' tiles (conv_wgmma_nchw.cuh).
template <class C>
constexpr bool kHalfColumns = C::kM <= 64 && !C::kPromote && (C::BN == 128 || C::BN == 256);

/// HalfColumns' k-block `it`: waits for its stage and issues the four m64n(BN/2)k16 wgmma of consumer
/// `consumer`'s columns n0 + consumer * BN / 2 ... into `acc` as one commit group (issue_kblock's, for
/// half the columns: A is the first atom column (or the first 64 rows of a K-major tile), B starts
/// consumer * BN / 128 atom columns in, or consumer * BN / 2 rows of a K-major tile).
template <class C, bool kAMnMajor, bool kBMnMajor = kAMnMajor>
__device__ __forceinline__ void issue_half_columns(float (&acc)[C::BN / 4], unsigned char* smem,
                                                   unsigned long long* full, int it, int consumer, int accumulate) {
  using L = Layout<C>;
  const int stage = it % C::STAGES;
  sm90::mbarrier_wait(&full[stage], (it / C::STAGES) & 1);
  if constexpr (!FullyTma<C>::value) sm90::fence_proxy_async_shared();  // as issue_kblock: cp.async copies are unfenced
  const unsigned a = sm90::shared_address(smem) + stage * L::kTileA;
  const unsigned b = sm90::shared_address(smem) + L::kB + stage * L::kTileB +
                     consumer * (kBMnMajor ? (C::BN / 128) * L::kAtomColumn : (C::BN / 2) * 128);
  auto descriptor = [](unsigned tile, int k, bool mn_major) {
    return mn_major ? sm90::swizzle128_mn_descriptor(tile + 2048 * k, L::kAtomColumn)
                    : sm90::swizzle128_descriptor(tile + 32 * k);
  };
  sm90::wgmma_fence();
#pragma unroll
  for (int k = 0; k < kBK<C> / 16; ++k)
    sm90::Wgmma<C::BN / 2, C::kType>::template mma<kAMnMajor ? 1 : 0, kBMnMajor ? 1 : 0>(
        acc, descriptor(a, k, kAMnMajor), descriptor(b, k, kBMnMajor), k == 0 ? accumulate : 1);
  sm90::wgmma_commit_group();
}

/// HalfColumns' k-blocks [begin, end) of a tile into `acc` (zeroed here; consume_unit's chain: each stage
/// released once the next k-block's wgmma are issued and its own are done), `it` counting them; `acc` is
/// valid after. The weight face's units and the native NCHW faces' tiles (conv_wgmma_nchw.cuh).
template <class C, bool kAMnMajor, bool kBMnMajor = kAMnMajor>
__device__ __forceinline__ void consume_half_column_kblocks(float (&acc)[C::BN / 4], unsigned char* smem,
                                                            unsigned long long* full, unsigned long long* empty,
                                                            int& it, int begin, int end, int consumer, int lane) {
#pragma unroll
  for (int i = 0; i < C::BN / 4; ++i) acc[i] = 0.f;
  for (int kb = begin; kb < end; ++kb, ++it) {
    issue_half_columns<C, kAMnMajor, kBMnMajor>(acc, smem, full, it, consumer, 1);
    sm90::wgmma_wait_group<1>();
    if (kb != begin && lane == 0) sm90::mbarrier_arrive(&empty[(it - 1) % C::STAGES]);
  }
  finish_tile<HalfWidth<C>>(acc, empty, it, lane);
}

/// HalfColumns' unit: its k-blocks into `acc` (consume_half_column_kblocks), then stored as a BN / 2-wide tile.
template <class C, bool kMnMajor>
__device__ __forceinline__ void consume_half_columns(const ConvIgemmParams& p, unsigned char* smem,
                                                     unsigned long long* full, unsigned long long* empty, int& it,
                                                     int unit, typename C::T* staged, int consumer, int lane) {
  using U = WeightUnits<C>;
  const int m0 = U::m0(unit), n0 = U::n0(unit) + consumer * (C::BN / 2), group = U::group(unit);
  float acc[C::BN / 4];
  consume_half_column_kblocks<C, kMnMajor>(acc, smem, full, empty, it, U::kb_begin(unit), U::kb_end(unit), consumer,
                                           lane);
  // store_tile and store_partials place consumer c's rows at m0 + 64 c: both consumers' rows are m0's.
  if constexpr (C::kSplits == 1 && !C::kFp32Out)
    store_tile<HalfWidth<C>>(acc, p, staged, consumer, m0 - 64 * consumer, n0,
                             [group](int m, int col) { return weight_offset<C>(m, col, group); });
  else
    store_partials<HalfWidth<C>>(acc, p, U::split(unit), consumer, m0 - 64 * consumer, n0, group);
}

/// The weight face's consumer warp groups: each unit's k-blocks into registers, then its tile (or, split,
/// its partials) stored, while the producer fills the stages for the next unit. kMnMajor: M/N-major tiles
/// (channels-last operands) or K-major ones (conv_wgmma_nchw's planar operands).
template <class C, bool kMnMajor>
__device__ __forceinline__ void consume_weight_units(const ConvIgemmParams& p, unsigned char* smem,
                                                     unsigned long long* full, unsigned long long* empty,
                                                     int consumer) {
  // consumer: output channels m0 + 64 * consumer ... (HalfColumns: columns n0 + BN / 2 * consumer ...)
  using T = typename C::T;
  using L = Layout<C>;
  using U = WeightUnits<C>;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  T* staged = reinterpret_cast<T*>(smem + L::kStaging) + consumer * L::kStagingRows * L::kOutPitch;
  int it = 0;  // k-blocks consumed so far, over all units
  for (int unit = blockIdx.x; unit < U::kCount; unit += gridDim.x) {
    if constexpr (kHalfColumns<C>) {
      consume_half_columns<C, kMnMajor>(p, smem, full, empty, it, unit, staged, consumer, lane);
      continue;
    }
    const int m0 = U::m0(unit), n0 = U::n0(unit), begin = U::kb_begin(unit), end = U::kb_end(unit);
    // Fewer than 128 output channels, 64-192 columns (promoted, or not HalfColumns' widths): consumer 1's
    // rows are past K; it only passes the stages on, and consumer 0 keeps the tensor cores busy alone.
    if (C::kM % kBM != 0 && m0 + 64 * consumer >= C::kM) {
      for (int kb = begin; kb < end; ++kb, ++it) {
        sm90::mbarrier_wait(&full[it % C::STAGES], (it / C::STAGES) & 1);
        if (lane == 0) sm90::mbarrier_arrive(&empty[it % C::STAGES]);
      }
      continue;
    }
    float acc[C::BN / 2];
#pragma unroll
    for (int i = 0; i < C::BN / 2; ++i) acc[i] = 0.f;
    consume_unit<C, kMnMajor>(acc, smem, full, empty, it, begin, end, consumer, lane);
    if constexpr (C::kSplits == 1 && !C::kFp32Out)
      store_tile<C>(acc, p, staged, consumer, m0, n0,
                    [group = U::group(unit)](int m, int col) { return weight_offset<C>(m, col, group); });
    else
      store_partials<C>(acc, p, U::split(unit), consumer, m0, n0, U::group(unit));
  }
}

/// The weight-face kernel body. Grid: at most one CTA per SM, each taking the units of WeightUnits<C>.
/// `tma_a`: with C::kTma, dy's map (ConvWgmmaParams::tma_a), else unused; `tma_b`: with C::kTmaX, x's
/// im2col map (ConvWgmmaParams::tma_b), else unused.
template <class C>
__device__ void conv_wgmma_weight(const ConvIgemmParams& p, const TmaMap* tma_a = nullptr,
                                  const TmaMap* tma_b = nullptr) {
  static_assert(sizeof(typename C::T) == 2, "M/N-major tiles: 16-bit types only (TF32 wgmma reads K-major ones)");
  warp_specialized<C>(
      [&](unsigned char* smem, unsigned long long* full, unsigned long long* empty) {
        if constexpr (FullyTma<C>::value)
          produce_weight_tma<C>(tma_a, tma_b, smem, full, empty);
        else
          produce_weight<C>(p, tma_a, smem, full, empty);
      },
      [&](unsigned char* smem, unsigned long long* full, unsigned long long* empty, int consumer) {
        consume_weight_units<C, true>(p, smem, full, empty, consumer);
      });
}

/// dw's element offsets for split_k_reduce (epilogue.cuh's OutputMap): group g's element (m, col); no bias.
template <class C>
struct WeightOutput {
  __device__ static int out_offset(int m, int col, int g, int& channel) {
    channel = g * C::kM + m;
    return weight_offset<C>(m, col, g);
  }
};

/// Adds the kSplits planes of fp32 sums of every dw element in split order and
/// writes it as dw's type. Grid-stride, one thread per element.
template <class C>
__device__ void conv_wgmma_weight_reduce(const ConvIgemmParams& p) {
  gemm::split_k_reduce<C, WeightOutput<C>>(p);
}

}  // namespace wgmma_conv
}  // namespace boo
