// boo device code: the Hopper forward convolution (gpu:conv:wgmma_sm90) — an
// implicit GEMM on warpgroup tensor cores (wgmma, sm_90a), warp-specialized.
//
// The forward face of a regular 2-D (or 1-D) conv, every operand channels-last:
//   y[n, oh, ow, k] = sum_{r, s, c} x[n, oh*sh - ph + r*dh, ow*sw - pw + s*dw, c] * w[k, r, s, c]
// as the GEMM  D[m, k] = sum_kk A[m, kk] * B[kk, k]  with m = (n, oh, ow) and
// kk = (r, s, c), packed: the 64-wide k-blocks run through the R x S x C
// reduction without a gap, so a block may end one tap's channels and start the
// next tap's. C is a multiple of 8, so each 16-byte chunk (8 kk) of a tile row
// is 8 consecutive channels of one tap: a row of the A tile is one output
// pixel's input pixels at the chunks' taps (zeros in the padding) and a row of
// the B tile one output channel's filter channels at the same (tap, channel)s.
// Only the last k-block can reach past R x S x C; its chunks there are zeros
// in both tiles, so the sums stay exact. (With C a multiple of 64 a block is
// one tap's 64 channels. Packing, rather than padding every tap's channels to
// a multiple of 64, wastes at most one k-block's tail over the whole
// reduction: C = 144, 3x3: 21 k-blocks, not 27.) Those are 16-bit types' numbers; fp32 read as TF32
// (--fp32-math tf32) has k-blocks of 32 columns, 4 a chunk, the same bytes (kBK, kChunk), and loads by TMA
// only (its copy rounds to TF32).
//
// A CTA computes a 128 x BN tile of D with three warpgroups:
//   warpgroup 0 (producer): copies the A and B tiles of each k-block into a
//     ring of STAGES shared-memory stages with 16-byte cp.async, in the
//     128-byte swizzled K-major layout wgmma reads, and signals each stage's
//     `full` barrier once its copies have landed (with C::kTma, gated: B, the
//     filter, is one TMA copy a k-block instead, the same bytes in the same
//     layout; produce; with C::kTmaX, gated, A too, as a plain matrix or
//     by an im2col map: then one thread issues both boxes, produce_tma);
//   warpgroups 1 and 2 (consumers): rows 0-63 and 64-127 of the tile; each
//     waits for a stage, issues four m64nBNk16 wgmma on it (m64nBNk8 for TF32; fp32 accumulators
//     in registers) and releases it on its `empty` barrier when they are done.
// The epilogue adds the bias, applies the activation (conv_igemm.cuh's
// semantics), stages the tile in shared memory and writes 16-byte vectors
// (or, with C::kFp32Out, stores the fp32 sums for a caller's epilogue),
// while the producer already fills the stages for the CTA's next tile: the
// grid is persistent (at most one CTA per SM, each walking its tiles).
// Where the tiles are too few to fill the SMs, the host may split the
// reduction (split K, C::kSplits > 1): the CTAs walk units (tile, split), each
// storing its split's fp32 sums in the workspace, and a second kernel
// (conv_wgmma_split.cuh) adds them in a fixed order and applies the epilogue.
//
// The generated source defines `struct Cfg` with every size and stride as a
// compile-time constant and instantiates conv_wgmma<Cfg>. The weight face
// (conv_wgmma_weight.cuh) shares the frame (warp_specialized), the consumers'
// k-block step (consume_kblock, finish_tile) and the epilogue (store_tile).
#pragma once

#include "boo/kernels/arch/sm80.cuh"
#include "boo/kernels/types.cuh"
#include "boo/conv/conv_igemm_params.cuh"
#include "boo/conv/conv_wgmma_params.cuh"
#include "boo/kernels/arch/sm90.cuh"
#include "boo/kernels/arch/sm90_cluster.cuh"
#include "boo/conv/conv_wgmma_slices.cuh"

namespace boo {
namespace wgmma_conv {

constexpr int kBM = 128;               ///< rows (output pixels) of a CTA tile
/// GEMM k per stage: one 128-byte row of the reduction per tile row, 64 columns of a 16-bit type (every
/// face) or 32 of fp32 read as TF32 (this file's kernel only, the forward and data faces: TF32 wgmma reads
/// K-major operands).
template <class C>
constexpr int kBK = 128 / static_cast<int>(sizeof(typename C::T));
/// Elements per 16-byte chunk of a tile row (a cp.async copy, a stored vector): 8 of a 16-bit type, 4 of fp32.
template <class C>
constexpr int kChunk = 16 / static_cast<int>(sizeof(typename C::T));

/// A Cfg member that the host emits only where it differs from `fallback`, so
/// that the generated source (and the cache key) of every kernel without it
/// stays as it was: Name<C>::value is C::member where the Cfg has it, else
/// `fallback`.
#define BOO_CFG_OPTION(Name, member, type, fallback) \
  template <class C, class = void>                   \
  struct Name {                                      \
    static constexpr type value = fallback;          \
  };                                                 \
  template <class C>                                 \
  struct Name<C, decltype(void(C::member))> {        \
    static constexpr type value = C::member;         \
  }

/// Whether the Cfg loads x by TMA as well as the plain operand (C::kTmaX,
/// emitted only where set): the producer is then one thread issuing every box
/// of a k-block (the forward face's produce_tma, the weight face's
/// produce_weight_tma).
BOO_CFG_OPTION(FullyTma, kTmaX, bool, false);

/// Whether the fully-TMA forward producer's A map (x) is an im2col one
/// (C::kIm2colX, emitted only with kTmaX): see produce_tma. (The weight face's x
/// is always one.)
BOO_CFG_OPTION(Im2colX, kIm2colX, bool, false);

/// Whether the Cfg stores y by TMA (C::kTmaY, emitted only where set): the
/// forward face of one group without stride phases, split K, fp32 sums or
/// residual, y a plain matrix {K channels, pixels} (store_tile_tma).
BOO_CFG_OPTION(TmaStore, kTmaY, bool, false);

/// Whether the Cfg stores y element by element (C::kElementStores, emitted only
/// where set): output channels that are not a multiple of 8 (from 64,
/// groups 1: the host's rule) leave y's rows unaligned to 16-byte vectors, so
/// store_tile copies the staged rows out with consecutive threads on
/// consecutive elements (a warp's store is 64 contiguous bytes) and reads the
/// residual so too.
BOO_CFG_OPTION(ElementStores, kElementStores, bool, false);

/// Elements per access along the native NCHW path's pixels (C::kPixelVector,
/// emitted only where not 8): 4 where an image's pixels or the planar
/// strides are not a multiple of 8 (14 x 14 images: 196 pixels), so its
/// cp.async loads and store_tile's stores move 8-byte vectors (two per
/// 16-byte chunk of a tile's row).
BOO_CFG_OPTION(PixelVector, kPixelVector, int, 8);

/// Whether the fully-TMA producer's B tile is N-major (C::kBNMajor, emitted only
/// where set): the 1x1 data face at stride 1 reads the filter where it
/// lies, W[k][c] with c contiguous (the host's rule), BN / 64 atom columns of 64
/// k rows x 64 channels, each one box, issued to the wgmma as an N-major B.
BOO_CFG_OPTION(BNMajor, kBNMajor, bool, false);

/// Whether the fully-TMA producer's B tile comes from the data face's flipped
/// filter copy, [tap][c][kb] (C::kBTaps, emitted only where set): a k-block
/// is one tap's 64 kb (C a multiple of 64: the host's rule), the box {64 kb,
/// BN rows c, that tap} of a 4-D map {kb, c, taps, 1}.
BOO_CFG_OPTION(BTaps, kBTaps, bool, false);

/// The stride-phased data face by TMA (C::kPhasePadH, kPhasePadW, emitted
/// only there: groups 1, dy's channels a multiple of 64): one im2col map of dy
/// serves every phase (conv_wgmma_slices.cuh). Its bounding box is the phases'
/// P x Q grid from the lower corner -kPhasePad (the largest padding pad' of a
/// phase with taps), so a phase of padding pad' reads its tap j at the im2col
/// offset j + kPhasePad - pad'; its taps are the flipped filter's (tap0 + U j):
/// boxes of a 4-D map {kb, c, S, R} of the flipped copy (BTaps), or of the
/// filter in place (InPlaceTaps).
BOO_CFG_OPTION(PhasePadH, kPhasePadH, int, 0);
BOO_CFG_OPTION(PhasePadW, kPhasePadW, int, 0);

/// Whether the data face of several taps (or stride phases) reads the filter
/// where it lies (C::kBInPlaceTaps, emitted only with kBNMajor): W[k][r][s][c]
/// as a 4-D map {C, S, R, K}, a k-block one tap's 64 k (kC a multiple of 64:
/// the host's rule), its B tile BN / 64 N-major boxes {64 c, 64 k} of the
/// unflipped tap (R-1-r', S-1-s') of the flipped filter's tap (r', s'),
/// without the flipped copy.
BOO_CFG_OPTION(InPlaceTaps, kBInPlaceTaps, bool, false);

/// CTAs per cluster (C::kClusterM, emitted only where above 1): the
/// fully-TMA forward face's clusters of CTAs on neighbouring row tiles of one
/// column tile, each loading 1 / kClusterM of the B (filter) tile and
/// multicasting it to all, so that L2 serves each B tile once per cluster
/// (produce_tma). A CTA releases a stage to every producer of its cluster
/// (release_stage): each one writes into every CTA's stage.
BOO_CFG_OPTION(ClusterM, kClusterM, int, 1);

/// Registers per thread after the frame's reallocation (setmaxnreg): the
/// producer gives its share of the launch's 384 x 168 to the consumers'
/// accumulators. Tiles of 192 and 256 columns keep BN / 2 accumulators per
/// consumer thread and need 224, which leaves the producer 56; at 128 columns
/// and below (BN / 2 accumulators, twice that with promoted sums) 208 hold the
/// consumers, and the producer's 88 keep its per-row state and the stages' in
/// flight without spills. A fully-TMA producer (FullyTma) keeps no per-row
/// state: 40 (CUTLASS's warp-specialized producer's), the consumers 232.
template <class C>
struct Registers {
  static constexpr int kProducer = FullyTma<C>::value ? 40 : C::BN > 128 ? 56 : 88;
  static constexpr int kConsumer = FullyTma<C>::value ? 232 : C::BN > 128 ? 224 : 208;
  static_assert(128 * kProducer + 256 * kConsumer <= 384 * 168, "within the launch's registers");
};

/// Shared memory of the kernel, in bytes, from its 1024-byte aligned start:
/// STAGES x (A tile, B tile), the epilogue's staging, then the barriers. The
/// plan adds 1 KiB of slack for aligning the dynamic shared memory's start.
template <class C>
struct Layout {
  static constexpr unsigned kTileA = kBM * 128, kTileB = C::BN * 128;
  /// An M/N-major tile (the weight face's) is atom columns of 64 K rows x 64
  /// elements of M (or N), one after another; a K-major one's 64 rows are the same bytes.
  static constexpr unsigned kAtomColumn = 64 * 128;
  static constexpr unsigned kB = C::STAGES * kTileA;  ///< first B tile
  /// The epilogue stages 32 rows x BN of each consumer's output at a time
  /// (rows padded by 16 bytes: conflict-free), apart from the operand stages
  /// so that the producer fills them for the next tile meanwhile.
  static constexpr int kOutPitch = C::BN + kChunk<C>;
  static constexpr unsigned kStaging = C::STAGES * (kTileA + kTileB);
  static constexpr unsigned kStagingRows = 32;
  static constexpr unsigned kBarriers = kStaging + 2 * kStagingRows * kOutPitch * sizeof(typename C::T);
};

/// The order of a GEMM's kTilesM x kTilesN tiles over a persistent grid: in
/// bands of kBandRows row tiles, a band column by column with its row tiles
/// fastest, so that the ~132 CTAs running together cover about kBandRows x 8
/// tiles and read each A row tile and each B column tile from L2 after the
/// first. (Row by row, a wide B, e.g. a GEMM's 28672 columns, was streamed
/// from device memory once per row tile; column by column, a tall A, e.g. an
/// 8192 x 8192 GEMM's, once per pair of columns: 1.8x the DRAM traffic.)
template <int kTilesM, int kTilesN>
struct Bands {
  static constexpr int kBandRows = 16;
  /// Tile `tile`'s band's first row tile, the band's row tiles (the last band may have fewer).
  __device__ __forceinline__ static int band_first(int tile) { return tile / (kBandRows * kTilesN) * kBandRows; }
  __device__ __forceinline__ static int band_rows(int tile) {
    const int left = kTilesM - band_first(tile);
    return left < kBandRows ? left : kBandRows;
  }
  /// Tile `tile`'s row tile and column tile.
  __device__ __forceinline__ static int row(int tile) {
    return band_first(tile) + (tile - band_first(tile) * kTilesN) % band_rows(tile);
  }
  __device__ __forceinline__ static int column(int tile) {
    return (tile - band_first(tile) * kTilesN) / band_rows(tile);
  }
};

/// The units of a persistent grid (at most one CTA per SM): CTA blockIdx.x
/// takes unit blockIdx.x, then every gridDim.x-th. A unit is (row tile of
/// kUnitRows, column tile, split), split slowest (a cluster's unit: its CTAs'
/// row tiles of kBM, ClusterM): with C::kSplits > 1 (split K) each of a
/// tile's splits sums its own range of the kKBlocks k-blocks into fp32
/// partials (the host makes every split non-empty); unsplit, a unit is a
/// tile. Within a split, tiles go in Bands.
template <class C, int KBlocks, int kUnitRows = kBM>
struct Units {
  static constexpr int kTilesN = (C::kN + C::BN - 1) / C::BN;
  static constexpr int kTilesM = (C::kM + kUnitRows - 1) / kUnitRows;
  static constexpr int kTiles = kTilesM * kTilesN;
  static constexpr int kCount = kTiles * C::kSplits;
  static constexpr int kKBlocks = KBlocks;
  static constexpr int kPerSplit = (kKBlocks + C::kSplits - 1) / C::kSplits;
  static_assert((C::kSplits - 1) * kPerSplit < kKBlocks, "every split has k-blocks");
  // Unsplit, unit < kTiles: the tile is the unit, and its k-blocks are constants (the compiler
  // then sees the k-block loops' bounds as the unsplit kernels always had them).
  __device__ __forceinline__ static int split(int unit) {
    if constexpr (C::kSplits == 1) return 0;
    else return unit / kTiles;
  }
  __device__ __forceinline__ static int tile(int unit) {
    if constexpr (C::kSplits == 1) return unit;
    else return unit % kTiles;
  }
  __device__ __forceinline__ static int m0(int unit) { return Bands<kTilesM, kTilesN>::row(tile(unit)) * kUnitRows; }
  __device__ __forceinline__ static int n0(int unit) { return Bands<kTilesM, kTilesN>::column(tile(unit)) * C::BN; }
  __device__ __forceinline__ static int kb_begin(int unit) {
    if constexpr (C::kSplits == 1) return 0;
    else return split(unit) * kPerSplit;
  }
  __device__ __forceinline__ static int kb_end(int unit) {
    if constexpr (C::kSplits == 1) {
      return kKBlocks;
    } else {
      const int end = kb_begin(unit) + kPerSplit;
      return end < kKBlocks ? end : kKBlocks;
    }
  }
};

/// The forward kernel's units: the packed (r, s, c) reduction's length and
/// its k-blocks, the last one possibly partial (a stride phase's:
/// Slice::reduced, at most this). With groups or stride phases each slice
/// (conv_wgmma_slices.cuh) is a GEMM of kPerSlice tiles, the slices one after
/// another; split K runs one slice only (groups 1, no phases: the host's rule).
/// With clusters (ClusterM) a unit is the cluster's: CTA rank r of cluster c
/// takes row tile r of units c, c + clusters, ... (first_unit, unit_stride).
template <class C>
struct Tiles : Units<C, (C::R * C::S * C::kC + kBK<C> - 1) / kBK<C>, kBM * ClusterM<C>::value> {
  using U = Units<C, (C::R * C::S * C::kC + kBK<C> - 1) / kBK<C>, kBM * ClusterM<C>::value>;
  static constexpr int kCluster = ClusterM<C>::value;
  static constexpr int kReduced = C::R * C::S * C::kC;
  static constexpr int kPerSlice = U::kTiles;
  static constexpr int kSlices = C::kGroups * C::kPhases;
  static constexpr int kCount = U::kCount * kSlices;
  static_assert(C::kSplits == 1 || kSlices == 1, "split K runs groups 1 without stride phases");
  __device__ __forceinline__ static int local(int unit) { return kSlices == 1 ? unit : unit % kPerSlice; }
  __device__ __forceinline__ static int slice(int unit) { return kSlices == 1 ? 0 : unit / kPerSlice; }
  // (A 1-D grid's clusters are kCluster consecutive CTAs, ranked in order.)
  __device__ __forceinline__ static int first_unit() { return static_cast<int>(blockIdx.x) / kCluster; }
  __device__ __forceinline__ static int unit_stride() { return static_cast<int>(gridDim.x) / kCluster; }
  /// This CTA's first row (past kM for the last unit's surplus CTAs: zeros loaded, nothing stored).
  __device__ __forceinline__ static int m0(int unit) {
    return U::m0(local(unit)) + static_cast<int>(blockIdx.x) % kCluster * kBM;
  }
  __device__ __forceinline__ static int n0(int unit) { return U::n0(local(unit)); }
  /// The unit's k-blocks end: its split's; a phase's own (none for a phase without taps).
  __device__ __forceinline__ static int kb_end(int unit, const Slice& s) {
    if constexpr (C::kPhases == 1) return U::kb_end(unit);
    else return (s.reduced + kBK<C> - 1) / kBK<C>;
  }
};

/// y's element offset of GEMM element (m, k): output pixel m = (n, p, q), output channel k.
template <class C>
__device__ __forceinline__ int forward_offset(int m, int k) {
  const int n = m / (C::P * C::Q), pq = m % (C::P * C::Q);
  return n * C::YN + (pq / C::Q) * C::YH + (pq % C::Q) * C::YW + k;
}

/// After a producer thread issued its copies of k-block `it` (counted over
/// all its units) into stage it % STAGES: the hardware arrives on the
/// stage's `full` barrier once the thread's copies have landed
/// (cp.async.mbarrier.arrive.noinc), and the thread issues on, bounded by the
/// `empty` barriers only, so every free stage keeps filling. (Waiting for its
/// own copies before arriving kept the weight face's warps half their time on
/// the barriers; announced by the hardware it ran 0.79x the time, H100,
/// docs/perf/2026-11-26-session5-h100x4.md.) The consumers fence the async
/// proxy after their wait (issue_kblock).
__device__ __forceinline__ void announce_stage(unsigned long long* full, int stages, int& it) {
  sm90::cp_async_mbarrier_arrive_noinc(&full[it % stages]);
  ++it;
}

/// After a producer thread's last k-block: every stage is announced already,
/// but the thread waits for its copies (and so for the arrivals they trigger)
/// before it exits: nothing promises that an exited thread's copies and
/// arrivals still complete.
__device__ __forceinline__ void finish_copies() { sm90::cp_async_wait_all(); }

/// The producer: copies the A (im2col rows) and B (filter rows) tiles of every
/// k-block of the CTA's units, one stream of k-blocks through the ring.
/// Thread t copies 16-byte chunk t % 8 of rows t / 8 + 16 j, so a warp's
/// copies cover four whole 128-byte rows; the chunk's kChunk reduction columns
/// (one tap's channels: kC is a multiple of 8) are the same in every row, so
/// each thread finds its tap and channel once a k-block.
/// With C::kTma (a dense KRSC filter, groups 1, no stride phases: the host's
/// rule), B is one TMA copy a k-block from `tma_b`, a map of the filter as the
/// 2-D matrix {R x S x C packed (r, s, c) columns, K rows}, row stride WK:
/// thread 0 issues it, the 128 threads copy A as before.
template <class C>
__device__ void produce(const ConvIgemmParams& p, const TmaMap* tma_b, unsigned char* smem,
                        unsigned long long* full, unsigned long long* empty) {
  using T = typename C::T;
  static_assert(ClusterM<C>::value == 1, "clusters multicast TMA boxes: the fully-TMA producer's");
  constexpr int kReduced = Tiles<C>::kReduced;
  const int chunk = threadIdx.x % 8, row0 = threadIdx.x / 8;
  const T* x = reinterpret_cast<const T*>(p.a);
  if constexpr (C::kTma) {
    static_assert(C::kGroups == 1 && C::kPhases == 1, "the filter map is one group's, without stride phases");
    // One box {kBK reduction columns, BN filter rows}: BN rows of 128 bytes, the B tile.
    static_assert(Layout<C>::kTileB == C::BN * kBK<C> * sizeof(T), "a B tile is one box");
    if (threadIdx.x == 0) sm90::prefetch_tensor_map(tma_b);
  }
  int it = 0;  // k-blocks issued so far, over all units
  for (int unit = blockIdx.x; unit < Tiles<C>::kCount; unit += gridDim.x) {
    const int m0 = Tiles<C>::m0(unit), n0 = Tiles<C>::n0(unit);
    const Slice sl = slice_of<C>(Tiles<C>::slice(unit));
    const int reduced = sl.reduced;
    const T* w = reinterpret_cast<const T*>(p.w) + sl.w + (n0 + row0) * C::WK;
    // Per A row, computed once a unit: the offset of its receptive field's
    // first input pixel (which may lie in the padding) and that pixel's (h, w)
    // as two 16-bit halves; bit j of a_rows: row j lies in the GEMM. Two
    // registers a row keep the producer within its registers.
    int a_base[kBM / 16];
    unsigned a_hw[kBM / 16], a_rows = 0;
#pragma unroll
    for (int j = 0; j < kBM / 16; ++j) {
      const int m = m0 + row0 + 16 * j;
      const int n = m / (C::P * C::Q), pq = m % (C::P * C::Q);
      const int ih = (pq / C::Q) * C::SH - sl.pad_h, iw = (pq % C::Q) * C::SW - sl.pad_w;
      a_base[j] = sl.a + n * C::XN + ih * C::XH + iw * C::XW;
      a_hw[j] = (static_cast<unsigned>(ih) << 16) | (static_cast<unsigned>(iw) & 0xFFFFu);
      a_rows |= (m < C::kM ? 1u : 0u) << j;
    }
    // (Unsplit, the loop starts at a literal 0: through kb_begin's call NVVM loses kb's range, and with it
    // the folding of the tap arithmetic in 1-D convs: 1-D forward line of focus.txt, PTX compared.)
    for (int kb = C::kSplits == 1 ? 0 : Tiles<C>::kb_begin(unit); kb < Tiles<C>::kb_end(unit, sl); ++kb) {
      const int stage = it % C::STAGES;
      // Wait until both consumers released what the stage held STAGES k-blocks ago.
      sm90::mbarrier_wait(&empty[stage], ((it / C::STAGES) & 1) ^ 1);
      // This thread's chunk: reduction columns kk ..., channels c ... of tap (r, s), kChunk of each;
      // past the reduction's end (the last k-block only) it is zeros.
      const int kk = kb * kBK<C> + chunk * kChunk<C>;
      const bool live = (C::kPhases == 1 && kReduced % kBK<C> == 0) || kk < reduced;
      const int tap = kk / C::kC, c = kk % C::kC;
      const int r = tap / sl.taps_w, s = tap % sl.taps_w;
      const int a_shift = r * C::DH * C::XH + s * C::DW * C::XW + c;
      const unsigned a_tile = sm90::shared_address(smem) + stage * Layout<C>::kTileA;
#pragma unroll
      for (int j = 0; j < kBM / 16; ++j) {
        const int ih = static_cast<int>(a_hw[j]) >> 16, iw = static_cast<int>(a_hw[j] << 16) >> 16;
        const bool ok = live && ((a_rows >> j) & 1u) &&
                        static_cast<unsigned>(ih + r * C::DH) < static_cast<unsigned>(C::H) &&
                        static_cast<unsigned>(iw + s * C::DW) < static_cast<unsigned>(C::W);
        cp_async_vector_at<16>(a_tile + sm90::swizzle128_offset(row0 + 16 * j, chunk),
                               x + (ok ? a_base[j] + a_shift : 0), ok);
      }
      const unsigned b_tile = sm90::shared_address(smem) + Layout<C>::kB + stage * Layout<C>::kTileB;
      if constexpr (C::kTma) {
        // B (BN x 64, K-major): the box at (column kb * 64, row n0): filter rows n0 ... n0 + BN - 1, each
        // its 64 packed (r, s, c) columns as 128 bytes, 128-byte swizzled as swizzle128_offset places
        // them (the tile is 1024-byte aligned); columns past R x S x C and rows past K read as zeros,
        // as the cp.async path's zero chunks. The stage's full barrier expects the whole box,
        // kTileB = BN x 128 bytes, zeros included: thread 0 adds them to the stage's phase before its
        // own arrival (announce_stage, 128 arrivals as without TMA), so the phase completes only once
        // the 128 threads' A copies and this box have landed. (The phase is this k-block's: the
        // producer waited for `empty`, so the consumers saw the stage's previous phase complete.)
        // The copy writes through the async proxy: no fence before the wgmma read it.
        if (threadIdx.x == 0) {
          sm90::mbarrier_expect_tx(&full[stage], Layout<C>::kTileB);
          sm90::tma_load_2d(b_tile, tma_b, kb * kBK<C>, n0, &full[stage]);
        }
      } else {
        const int b_shift = r * C::WR + s * C::WS + c;
#pragma unroll
        for (int j = 0; j < C::BN / 16; ++j) {
          const bool ok = live && (C::kN % C::BN == 0 || n0 + row0 + 16 * j < C::kN);
          cp_async_vector_at<16>(b_tile + sm90::swizzle128_offset(row0 + 16 * j, chunk),
                                 ok ? w + 16 * j * C::WK + b_shift : reinterpret_cast<const T*>(p.w), ok);
        }
      }
      announce_stage(full, C::STAGES, it);
    }
  }
  finish_copies();
}

/// The fully-TMA producer (C::kTmaX, gated; groups 1, no stride phases: the
/// host's rule). A k-block is two boxes:
///   A (128 x 64, K-major), from `tma_a`, either
///     plain (a 1x1 filter at stride 1 without padding over pixels evenly
///     spaced in memory): x as the 2-D matrix {C channels, N x P x Q pixels},
///     box {64, 128} at (kb * 64, m0): the tile's 128 output pixels' (their
///     input pixels') 64 channels; or
///     im2col (C::kIm2colX: C a multiple of 64, so that k-block kb is
///     channels c0 ... c0 + 63 of one tap (r, s)): x as {C, W, H, N} with
///     corners {-PW, -PH} and {PW - (S-1) DW, PH - (R-1) DH} and element
///     strides {1, SW, SH, 1}, so that its bounding box's positions are the
///     output pixels' receptive fields' first input pixels; 128 pixels from
///     the tile's first output pixel (n, p, q) of m0, at (c0, q SW - PW,
///     p SH - PH, n), read at the tap's offsets (s DW, r DH): rows past M run
///     into images past N, zeros;
///   B (BN x 64, K-major): `tma_b` at (kb * 64, n0), as produce's; in a
///     cluster (ClusterM), CTA rank r loads rows r BN / kClusterM ... of it
///     (the map's box) and multicasts them to every CTA of the cluster; or
///     (BNMajor: the data face's filter in place) N-major, BN / 64 boxes
///     {64 channels, 64 k} of `tma_b` at (n0 + 64 j, kb * 64), one per atom column; or
///     (BTaps: the data face's flipped copy) the box at (kb, n0, tap) of k-block kb's tap;
/// Channels past C and rows past M or K read as zeros (the cp.async path's
/// zero chunks), each row 128 bytes, 128-byte swizzled as swizzle128_offset
/// places them (the tiles are 1024-byte aligned): the stage is byte for byte
/// the cp.async producer's. One thread issues both: it arrives on the stage's
/// `full` barrier (initialized to one arrival, warp_specialized) expecting
/// the two boxes' bytes, zeros included (the whole B tile, its cluster's
/// parts too), then issues them; the phase completes once all have landed (their writes are async-proxy: the
/// consumers need no fence). The other 127 threads of the warpgroup have
/// nothing to do and leave (their registers already given to the consumers).
template <class C>
__device__ void produce_tma(const TmaMap* tma_a, const TmaMap* tma_b, unsigned char* smem, unsigned long long* full,
                            unsigned long long* empty) {
  static_assert(C::kPhases == 1 ||
                    (C::kGroups == 1 && (BTaps<C>::value || InPlaceTaps<C>::value) && Im2colX<C>::value),
                "stride phases: the data face of one group by its filter's map and dy's im2col map");
  static_assert(!InPlaceTaps<C>::value || (BNMajor<C>::value && C::kC % kBK<C> == 0 && C::kGroups == 1),
                "the filter in place with its taps: N-major boxes of one tap's 64 k");
  static_assert(C::kGroups == 1 || (C::kC % kBK<C> == 0 && ClusterM<C>::value == 1 && !BNMajor<C>::value),
                "a group's whole 64-channel boxes of x and its part of the filter, a box per CTA");
  static_assert(Im2colX<C>::value ? C::kC % kBK<C> == 0 || (C::R == 1 && C::S == 1) : C::R == 1 && C::S == 1,
                "an im2col A's k-blocks are one tap's channels (a 1x1 filter's last one partial: TMA fills the "
                "channels past kC with zeros); a plain A is a 1x1 filter's");
  static_assert(Layout<C>::kTileA == kBM * kBK<C> * sizeof(typename C::T) &&
                    Layout<C>::kTileB == C::BN * kBK<C> * sizeof(typename C::T),
                "a tile is one box");
  constexpr int kCluster = ClusterM<C>::value;
  static_assert(C::BN % (8 * kCluster) == 0, "a CTA's part of the B tile is whole 1024-byte swizzle atoms");
  if (threadIdx.x != 0) return;
  sm90::prefetch_tensor_map(tma_a);
  sm90::prefetch_tensor_map(tma_b);
  int it = 0;  // k-blocks issued so far, over all units
  for (int unit = Tiles<C>::first_unit(); unit < Tiles<C>::kCount; unit += Tiles<C>::unit_stride()) {
    const int m0 = Tiles<C>::m0(unit), n0 = Tiles<C>::n0(unit);
    // The unit's group: its x channels from sl.a (channels are contiguous: an element offset is a channel's),
    // its filter rows from sl.bias (its first output channel), or in the data face's flipped copy (rows a
    // group's channels) its kb columns from sl.w. A box's rows past the group's kN are the next group's filter
    // rows (or the map's zeros): their sums are never stored.
    const Slice sl = slice_of<C>(Tiles<C>::slice(unit));
    // (im2col) The tile's first output pixel's receptive field's first input pixel (may lie in the padding);
    // with stride phases, the map's lower corner from the tile's first pixel, and the phase's taps.
    const int n = m0 / (C::P * C::Q), pq = m0 % (C::P * C::Q);
    int h0 = (pq / C::Q) * C::SH - C::PH, w0 = (pq % C::Q) * C::SW - C::PW;
    PhaseDim phase_h{}, phase_w{};
    if constexpr (C::kPhases > 1) {
      const int phase = Tiles<C>::slice(unit);
      phase_h = phase_dim(phase / C::UW, C::UH, C::FR, C::DPH, C::OH);
      phase_w = phase_dim(phase % C::UW, C::UW, C::FS, C::DPW, C::OW);
      h0 = pq / C::Q - PhasePadH<C>::value;
      w0 = pq % C::Q - PhasePadW<C>::value;
    }
    for (int kb = Tiles<C>::kb_begin(unit); kb < Tiles<C>::kb_end(unit, sl); ++kb, ++it) {
      const int stage = it % C::STAGES;
      // Wait until both consumers (of every CTA of the cluster) released what the stage held STAGES
      // k-blocks ago.
      sm90::mbarrier_wait(&empty[stage], ((it / C::STAGES) & 1) ^ 1);
      const unsigned a_tile = sm90::shared_address(smem) + stage * Layout<C>::kTileA;
      const unsigned b_tile = sm90::shared_address(smem) + Layout<C>::kB + stage * Layout<C>::kTileB;
      sm90::mbarrier_arrive_expect_tx(&full[stage], Layout<C>::kTileA + Layout<C>::kTileB);
      if constexpr (C::kPhases > 1) {
        // The phase's tap (jh, jw) of dy at offset j + kPhasePad - pad', and the copy's tap0 + U j.
        const int tap = kb * kBK<C> / C::kC, c0 = kb * kBK<C> % C::kC;
        const int jh = tap / phase_w.taps, jw = tap % phase_w.taps;
        sm90::tma_load_im2col_4d(a_tile, tma_a, c0, w0, h0, n,
                                 static_cast<unsigned short>(jw + PhasePadW<C>::value - phase_w.pad),
                                 static_cast<unsigned short>(jh + PhasePadH<C>::value - phase_h.pad), &full[stage]);
        const int r_flipped = phase_h.tap0 + C::UH * jh, s_flipped = phase_w.tap0 + C::UW * jw;
        if constexpr (InPlaceTaps<C>::value) {
#pragma unroll
          for (int j = 0; j < C::BN / 64; ++j)  // atom column j: channels n0 + 64 j ..., the tap's k c0 ...
            sm90::tma_load_4d(b_tile + j * Layout<C>::kAtomColumn, tma_b, n0 + 64 * j, C::FS - 1 - s_flipped,
                              C::FR - 1 - r_flipped, c0, &full[stage]);
        } else {
          sm90::tma_load_4d(b_tile, tma_b, c0, n0, s_flipped, r_flipped, &full[stage]);
        }
        continue;  // (both of the k-block's boxes: the B loads below are the unphased faces')
      } else if constexpr (Im2colX<C>::value) {
        const int tap = kb * kBK<C> / C::kC, c0 = kb * kBK<C> % C::kC;
        const int r = tap / C::S, s = tap % C::S;
        sm90::tma_load_im2col_4d(a_tile, tma_a, sl.a + c0, w0, h0, n, static_cast<unsigned short>(s * C::DW),
                                 static_cast<unsigned short>(r * C::DH), &full[stage]);
      } else {
        sm90::tma_load_2d(a_tile, tma_a, sl.a + kb * kBK<C>, m0, &full[stage]);
      }
      if constexpr (BNMajor<C>::value) {
        static_assert(kCluster == 1, "an N-major B tile is BN / 64 boxes, not a cluster's parts");
        if constexpr (InPlaceTaps<C>::value) {
          // The flipped filter's tap (r', s') of the k-block is W's (R-1-r', S-1-s'), its k from k0.
          const int tap = kb * kBK<C> / C::kC, k0 = kb * kBK<C> % C::kC;
#pragma unroll
          for (int j = 0; j < C::BN / 64; ++j)  // atom column j: channels n0 + 64 j ..., the tap's k k0 ...
            sm90::tma_load_4d(b_tile + j * Layout<C>::kAtomColumn, tma_b, n0 + 64 * j, C::S - 1 - tap % C::S,
                              C::R - 1 - tap / C::S, k0, &full[stage]);
        } else {
#pragma unroll
          for (int j = 0; j < C::BN / 64; ++j)  // atom column j: channels n0 + 64 j ..., k rows kb * 64 ...
            sm90::tma_load_2d(b_tile + j * Layout<C>::kAtomColumn, tma_b, n0 + 64 * j, kb * kBK<C>, &full[stage]);
        }
      } else if constexpr (BTaps<C>::value) {
        static_assert(kCluster == 1 && C::kC % kBK<C> == 0, "one tap's box a k-block, not a cluster's parts");
        sm90::tma_load_4d(b_tile, tma_b, sl.w + kb * kBK<C> % C::kC, n0, kb * kBK<C> / C::kC, 0, &full[stage]);
      } else if constexpr (kCluster == 1) {
        sm90::tma_load_2d(b_tile, tma_b, kb * kBK<C>, sl.bias + n0, &full[stage]);
      } else {
        const int part = static_cast<int>(blockIdx.x) % kCluster;
        sm90::tma_load_2d_multicast(b_tile + part * (Layout<C>::kTileB / kCluster), tma_b, kb * kBK<C>,
                                    n0 + part * (C::BN / kCluster), &full[stage], (1u << kCluster) - 1u);
      }
    }
  }
}

/// Synchronizes the 128 threads of consumer warpgroup `consumer` (0 or 1).
__device__ __forceinline__ void consumer_sync(int consumer) {
  if (consumer == 0)
    sm90::named_barrier_sync<1, 128>();
  else
    sm90::named_barrier_sync<2, 128>();
}

/// A consumer's epilogue: its 64 rows (m0 + 64 * consumer ...) x BN columns
/// of accumulators (Wgmma's layout), bias, residual and activation applied
/// (C::kBias, C::kResidual: p.residual's elements at the output's offsets,
/// C::kAct: epilogue.cuh's semantics), staged 32 rows at a time in its part
/// of the staging and written as 16-byte vectors: kChunk columns col ... of
/// row m at element offset offset(m, col) of p.out (rows below C::kM, chunks
/// starting below C::kN: where kN is not a multiple of 8, the last chunk is
/// stored whole into a copy whose channels are padded to one, or with
/// ElementStores each element below kN alone (the host's rule); a stride
/// phase's offset is negative for the rows past its extent, which are not
/// stored). The bias of column col is
/// bias0 + col's (a group's first channel, conv_wgmma_slices.cuh).
template <class C, class Offset>
__device__ __forceinline__ void store_tile(const float (&acc)[C::BN / 2], const ConvIgemmParams& p,
                                           typename C::T* staged, int consumer, int m0, int n0, Offset offset,
                                           int bias0 = 0) {
  using T = typename C::T;
  using L = Layout<C>;
  const int thread = static_cast<int>(threadIdx.x) % 128, lane = thread % 32, warp = thread / 32;
  T* out = reinterpret_cast<T*>(p.out);
  constexpr int kVectorsPerRow = C::BN / kChunk<C>;  // 16-byte vectors
  // The stores' vectors: 16 bytes, or on the native path PixelVector's elements (4: 8 bytes).
  constexpr int kStoreVector = PixelVector<C>::value < kChunk<C> ? PixelVector<C>::value : kChunk<C>;
  constexpr int kStoresPerRow = C::BN / kStoreVector;
  static_assert(kStoreVector == kChunk<C> || (kStoreVector * sizeof(T) == 8 && !C::kResidual),
                "8-byte stores: no residual reads");
  // ElementStores: a pass's 32 rows x BN elements, element v of them at (v / BN, v % BN).
  constexpr int kPassElements = static_cast<int>(L::kStagingRows) * C::BN;
#pragma unroll
  for (int pass = 0; pass < 2; ++pass) {
    consumer_sync(consumer);  // the staging's previous rows are stored
    if constexpr (C::kResidual && ElementStores<C>::value) {
#pragma unroll 4
      for (int v = thread; v < kPassElements; v += 128) {
        const int row = v / C::BN, col = v % C::BN;
        const int m = m0 + consumer * 64 + pass * 32 + row, k = n0 + col;
        if (m >= C::kM || k >= C::kN) continue;
        if constexpr (C::kPhases > 1)
          if (offset(m, k) < 0) continue;
        staged[row * L::kOutPitch + col] = reinterpret_cast<const T*>(p.residual)[offset(m, k)];
      }
      consumer_sync(consumer);
    } else if constexpr (C::kResidual) {
      // The pass's 32 x BN residuals (z laid out as the output) into the staging with the store loop's
      // coalesced 16-byte reads, so that each thread below adds its elements' from shared memory.
#pragma unroll 4
      for (int v = thread; v < static_cast<int>(L::kStagingRows) * kVectorsPerRow; v += 128) {
        const int row = v / kVectorsPerRow, col = (v % kVectorsPerRow) * kChunk<C>;
        const int m = m0 + consumer * 64 + pass * 32 + row, k = n0 + col;
        if (m >= C::kM || k >= C::kN) continue;
        if constexpr (C::kPhases > 1)
          if (offset(m, k) < 0) continue;  // a stride phase's row past its extent
        *reinterpret_cast<uint4*>(staged + row * L::kOutPitch + col) =
            *reinterpret_cast<const uint4*>(reinterpret_cast<const T*>(p.residual) + offset(m, k));
      }
      consumer_sync(consumer);
    }
    if (warp / 2 == pass) {
#pragma unroll
      for (int j = 0; j < C::BN / 8; ++j) {
        const int col = j * 8 + (lane % 4) * 2;
        float bias[2] = {0.f, 0.f};
        if constexpr (C::kBias) {
#pragma unroll
          for (int q = 0; q < 2; ++q)
            if (n0 + col + q < C::kN) bias[q] = load_as_float<T>(p.bias, bias0 + n0 + col + q);
        }
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int row = (warp % 2) * 16 + lane / 4 + half * 8;
#pragma unroll
          for (int q = 0; q < 2; ++q) {
            T& at = staged[row * L::kOutPitch + col + q];
            float v = acc[4 * j + 2 * half + q] + bias[q];
            // The residual, added before the activation so that each result is rounded once (elements
            // outside the GEMM hold what the staging held: never stored).
            if constexpr (C::kResidual) v += to_float(at);
            at = from_float<T>(activate<C::kAct>(v, p.act_alpha, p.act_lo, p.act_hi));
          }
        }
      }
    }
    consumer_sync(consumer);  // the pass's rows are staged
    if constexpr (ElementStores<C>::value) {
#pragma unroll 4
      for (int v = thread; v < kPassElements; v += 128) {
        const int row = v / C::BN, col = v % C::BN;
        const int m = m0 + consumer * 64 + pass * 32 + row, k = n0 + col;
        if (m >= C::kM || k >= C::kN) continue;
        if constexpr (C::kPhases > 1)
          if (offset(m, k) < 0) continue;  // a stride phase's row past its extent
        out[offset(m, k)] = staged[row * L::kOutPitch + col];
      }
    } else {
#pragma unroll 4
      for (int v = thread; v < static_cast<int>(L::kStagingRows) * kStoresPerRow; v += 128) {
        const int row = v / kStoresPerRow, col = (v % kStoresPerRow) * kStoreVector;
        const int m = m0 + consumer * 64 + pass * 32 + row, k = n0 + col;
        if (m >= C::kM || k >= C::kN) continue;
        if constexpr (C::kPhases > 1)
          if (offset(m, k) < 0) continue;  // a stride phase's row past its extent
        if constexpr (kStoreVector == kChunk<C>)
          *reinterpret_cast<uint4*>(out + offset(m, k)) =
              *reinterpret_cast<const uint4*>(staged + row * L::kOutPitch + col);
        else
          *reinterpret_cast<uint2*>(out + offset(m, k)) =
              *reinterpret_cast<const uint2*>(staged + row * L::kOutPitch + col);
      }
    }
  }
}

/// Stores a consumer's 64 x BN fp32 sums (Wgmma's accumulator layout) in
/// split `split`'s plane of the workspace, row-major (kGroups, kM, kN) as
/// split_k.cuh's reduce reads it, group `group`'s rows: split-K
/// partials, or the forward face's unrounded sums for a caller's epilogue
/// (C::kFp32Out). Each thread's two adjacent columns as one
/// 8-byte store (a warp's stores fill 32-byte sectors).
template <class C>
__device__ __forceinline__ void store_partials(const float (&acc)[C::BN / 2], const ConvIgemmParams& p, int split,
                                               int consumer, int m0, int n0, int group = 0) {
  const int thread = static_cast<int>(threadIdx.x) % 128, lane = thread % 32, warp = thread / 32;
  float* plane = reinterpret_cast<float*>(p.workspace) + (split * C::kGroups + group) * (C::kM * C::kN);
#pragma unroll
  for (int j = 0; j < C::BN / 8; ++j) {
    const int col = n0 + j * 8 + (lane % 4) * 2;  // even: where kN is even too, col + 1 < kN
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int m = m0 + consumer * 64 + warp * 16 + lane / 4 + half * 8;
      if (m >= C::kM || col >= C::kN) continue;
      if constexpr (C::kN % 2 == 0) {
        float2 v;
        v.x = acc[4 * j + 2 * half];
        v.y = acc[4 * j + 2 * half + 1];
        *reinterpret_cast<float2*>(plane + m * C::kN + col) = v;
      } else {  // (an odd row pitch: the pair is not 8-byte aligned, and its second may lie past kN)
        plane[m * C::kN + col] = acc[4 * j + 2 * half];
        if (col + 1 < C::kN) plane[m * C::kN + col + 1] = acc[4 * j + 2 * half + 1];
      }
    }
  }
}

/// store_tile's epilogue with y stored by TMA (TmaStore): the consumer's 64
/// rows in two passes of 32, each staged as BN / kBK boxes of 32 rows x kBK
/// columns (128-byte rows: 4 KiB, the 128-byte swizzle of `tma_y`'s map: a
/// row's 16-byte chunk c at c ^ (row % 8)), which one thread then stores with the copy
/// engine and does not wait for: the consumer goes on to its next tile while
/// the copies drain, and only the next pass that refills the staging waits
/// until they have read it. (With plain stores the threads wait for the
/// tile's 64 KiB to leave the SM: a fifth of a 128 x 256 tile's time at K =
/// 1024.) Rows past C::kM and columns past C::kN are outside the map: the copy
/// skips them, boxes wholly past them too (skipping those by a test per box measured up to 1.18x the time of
/// 64-column tiles, H200). `staged`: the consumer's 32 x BN staging, 1024-byte aligned. `tma_y` is 3-D,
/// {columns, rows, images}: the channels-last y's one image of every pixel (`image` 0), or on the native NCHW
/// path an image's channel rows of pixels (conv_wgmma_nchw.cuh: its tiles never straddle two images).
template <class C>
__device__ __forceinline__ void store_tile_tma(const float (&acc)[C::BN / 2], const ConvIgemmParams& p,
                                               unsigned char* staged, const TmaMap* tma_y, int consumer, int m0,
                                               int n0, int image = 0) {
  using T = typename C::T;
  constexpr int kBox = kBK<C>;  // a box's columns: one 128-byte swizzled row
  static_assert(C::BN % kBox == 0, "whole boxes");
  // A thread's two adjacent results, stored as one 4-byte (16-bit types) or 8-byte (fp32) word.
  using Pair = typename Select<sizeof(T) == 2, unsigned, uint2>::type;
  const int thread = static_cast<int>(threadIdx.x) % 128, lane = thread % 32, warp = thread / 32;
#pragma unroll
  for (int pass = 0; pass < 2; ++pass) {
    // The previous pass's (or tile's) copies have read the staging.
    if (thread == 0) sm90::bulk_wait_group_read<0>();
    consumer_sync(consumer);
    if (warp / 2 == pass) {
#pragma unroll
      for (int j = 0; j < C::BN / 8; ++j) {
        const int col = j * 8 + (lane % 4) * 2;
        float bias[2] = {0.f, 0.f};
        if constexpr (C::kBias) {
#pragma unroll
          for (int q = 0; q < 2; ++q)
            if (n0 + col + q < C::kN) bias[q] = load_as_float<T>(p.bias, n0 + col + q);
        }
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int row = (warp % 2) * 16 + lane / 4 + half * 8;  // of the pass's 32
          // Box col / kBox, its row `row`, chunk (col % kBox) / kChunk swizzled, the pair's bytes in it.
          const unsigned offset = (col / kBox) * 4096u + row * 128u +
                                  ((((col % kBox) / kChunk<C>) ^ (row % 8)) * 16u) +
                                  (col % kChunk<C>) * static_cast<unsigned>(sizeof(T));
          T pair[2];
#pragma unroll
          for (int q = 0; q < 2; ++q)
            pair[q] = from_float<T>(activate<C::kAct>(acc[4 * j + 2 * half + q] + bias[q], p.act_alpha, p.act_lo,
                                                      p.act_hi));
          *reinterpret_cast<Pair*>(staged + offset) = *reinterpret_cast<const Pair*>(pair);
        }
      }
    }
    sm90::fence_proxy_async_shared();  // the staging's writes, before the copy engine reads them
    consumer_sync(consumer);
    if (thread == 0) {
#pragma unroll
      for (int box = 0; box < C::BN / kBox; ++box)
        sm90::tma_store_3d(tma_y, sm90::shared_address(staged) + box * 4096u, n0 + box * kBox,
                           m0 + consumer * 64 + pass * 32, image);
      sm90::bulk_commit_group();
    }
  }
}

/// Waits for k-block `it`'s stage (`it` counted over all of the consumer's tiles)
/// and issues the four m64nBNk16 (TF32: m64nBNk8) wgmma on it into `acc` as one commit group (K-major
/// tiles for the forward faces; M- and N-major ones, kAMnMajor and kBMnMajor, for the
/// weight face: each stage's A tile is then two 64-row atom columns, one per consumer,
/// and its B tile BN / 64 of them, every one 64 K rows of 128 bytes;
/// conv_wgmma_nchw.cuh mixes the two). `accumulate` 0: the first overwrites `acc`.
/// Returns the stage.
template <class C, bool kAMnMajor, bool kBMnMajor>
__device__ __forceinline__ int issue_kblock(float (&acc)[C::BN / 2], unsigned char* smem, unsigned long long* full,
                                            int it, int consumer, int accumulate) {
  using L = Layout<C>;
  const int stage = it % C::STAGES;
  sm90::mbarrier_wait(&full[stage], (it / C::STAGES) & 1);
  // The producer's copies were written through the generic proxy and announced by the hardware
  // (announce_stage), unfenced: the wgmma read them through the async proxy. (A fully-TMA
  // producer's copies are async-proxy writes already.)
  if constexpr (!FullyTma<C>::value) sm90::fence_proxy_async_shared();
  const unsigned a = sm90::shared_address(smem) + stage * L::kTileA + consumer * 64 * 128;
  const unsigned b = sm90::shared_address(smem) + L::kB + stage * L::kTileB;
  // The k-th wgmma's K of a tile (32 bytes of the type: sm90::Wgmma): 32 bytes into each K-major row;
  // 16 K rows (two 8-row atoms, 2048 bytes) into an M/N-major tile (16-bit types only), atom columns
  // L::kAtomColumn apart.
  auto descriptor = [](unsigned tile, int k, bool mn_major) {
    return mn_major ? sm90::swizzle128_mn_descriptor(tile + 2048 * k, L::kAtomColumn)
                    : sm90::swizzle128_descriptor(tile + 32 * k);
  };
  sm90::wgmma_fence();
#pragma unroll
  for (int k = 0; k < 128 / 32; ++k)
    sm90::Wgmma<C::BN, C::kType>::template mma<kAMnMajor ? 1 : 0, kBMnMajor ? 1 : 0>(
        acc, descriptor(a, k, kAMnMajor), descriptor(b, k, kBMnMajor), k == 0 ? accumulate : 1);
  sm90::wgmma_commit_group();
  return stage;
}

/// A consumer warp's release of `stage` (by its lane 0): to this CTA's
/// producer, and in a cluster (ClusterM) to every CTA's, each of which writes
/// part of the stage's B tile into this CTA.
template <class C>
__device__ __forceinline__ void release_stage(unsigned long long* empty, int stage) {
  if constexpr (ClusterM<C>::value == 1) {
    sm90::mbarrier_arrive(&empty[stage]);
  } else {
#pragma unroll
    for (int rank = 0; rank < ClusterM<C>::value; ++rank) sm90::mbarrier_arrive_cluster(&empty[stage], rank);
  }
}

/// One consumer's k-block `it`: its wgmma into the tile's accumulators and,
/// once the previous k-block's wgmma are done, the release of that one's stage,
/// unless `first`: the previous k-block was the last of an earlier tile and
/// released by finish_tile.
template <class C, bool kAMnMajor, bool kBMnMajor = kAMnMajor>
__device__ __forceinline__ void consume_kblock(float (&acc)[C::BN / 2], unsigned char* smem, unsigned long long* full,
                                               unsigned long long* empty, int it, int consumer, int lane, bool first) {
  issue_kblock<C, kAMnMajor, kBMnMajor>(acc, smem, full, it, consumer, 1);
  // The previous k-block's wgmma are done: its stage may be refilled.
  sm90::wgmma_wait_group<1>();
  if (!first && lane == 0) release_stage<C>(empty, (it - 1) % C::STAGES);
}

/// consume_kblock with the sums promoted (C::kPromote, ConvProblem::promote_sums): the k-block's
/// four wgmma overwrite `part`, which once they are done is added into `acc` with FADD (rounded to
/// nearest), and the k-block's stage is released at once. The tensor cores add each product into
/// their accumulator truncated, not rounded, so one accumulator's error grows with its chain of
/// k16 steps; promoted, a chain is one k-block. Costs the wait for each k-block's wgmma (the other
/// consumer's keep the tensor cores busy meanwhile) and BN / 2 more registers (BN = 128 only).
template <class C, bool kAMnMajor, bool kBMnMajor = kAMnMajor>
__device__ __forceinline__ void consume_kblock_promoted(float (&acc)[C::BN / 2], float (&part)[C::BN / 2],
                                                        unsigned char* smem, unsigned long long* full,
                                                        unsigned long long* empty, int it, int consumer, int lane) {
  const int stage = issue_kblock<C, kAMnMajor, kBMnMajor>(part, smem, full, it, consumer, 0);
  sm90::wgmma_wait_group<0>();
  if (lane == 0) release_stage<C>(empty, stage);
#pragma unroll
  for (int i = 0; i < C::BN / 2; ++i) {
    sm90::pin_register(part[i]);
    acc[i] += part[i];
  }
}

/// After a tile's last k-block `it - 1`: waits for its wgmma, releases its
/// stage (where it `consumed` one) and pins the accumulators (valid from here on).
/// (The wait is unconditional: behind a branch ptxas serializes every wgmma
/// of the kernel, warning C7518.)
template <class C>
__device__ __forceinline__ void finish_tile(float (&acc)[C::BN / 2], unsigned long long* empty, int it, int lane,
                                            bool consumed = true) {
  sm90::wgmma_wait_group<0>();
  if (consumed && lane == 0) release_stage<C>(empty, (it - 1) % C::STAGES);  // the tile's last k-block
#pragma unroll
  for (int i = 0; i < C::BN / 2; ++i) sm90::pin_register(acc[i]);
}

/// A unit's k-blocks [begin, end) into `acc` (zeroed by the caller), `it` counting them: the
/// tensor cores' chain over the unit, or (C::kPromote) promoted per k-block. `acc` is valid after.
template <class C, bool kAMnMajor, bool kBMnMajor = kAMnMajor>
__device__ __forceinline__ void consume_unit(float (&acc)[C::BN / 2], unsigned char* smem, unsigned long long* full,
                                             unsigned long long* empty, int& it, int begin, int end, int consumer,
                                             int lane) {
  if constexpr (C::kPromote) {
    static_assert(C::kFp32Out, "promoted sums are for a caller's fp32 epilogue");
    float part[C::BN / 2];
    for (int kb = begin; kb < end; ++kb, ++it)
      consume_kblock_promoted<C, kAMnMajor, kBMnMajor>(acc, part, smem, full, empty, it, consumer, lane);
  } else {
    for (int kb = begin; kb < end; ++kb, ++it)
      consume_kblock<C, kAMnMajor, kBMnMajor>(acc, smem, full, empty, it, consumer, lane, kb == begin);
    // (A stride phase without taps consumed nothing: its zeros are stored as they are.)
    finish_tile<C>(acc, empty, it, lane, C::kPhases == 1 || end > begin);
  }
}

/// What warp_specialized takes of a kernel: where its ring's barriers lie (from
/// the aligned start of shared memory), its consumer warpgroups, and the
/// registers per thread of each role. The GEMM kernels': Layout and Registers,
/// two consumers (the weight face's shifted taps have their own:
/// conv_wgmma_weight_taps.cuh).
template <class C>
struct GemmFrame {
  static constexpr unsigned kBarriers = Layout<C>::kBarriers;
  static constexpr int kConsumers = 2;
  static constexpr int kProducerRegisters = Registers<C>::kProducer;
  static constexpr int kConsumerRegisters = Registers<C>::kConsumer;
};

/// The frame of the kernels: aligns the shared memory, initializes the ring's
/// barriers, then runs produce(smem, full, empty) in warpgroup 0 and
/// consume(smem, full, empty, consumer) in warpgroups 1 ... F::kConsumers
/// (consumer 0, 1, ...), registers moved from the first to the others. A stage
/// is released once every consumer warp arrived on its `empty` barrier. In a
/// cluster (ClusterM) every CTA's barriers are initialized before any CTA
/// copies into or arrives on them.
template <class C, class F = GemmFrame<C>, class Produce, class Consume>
__device__ __forceinline__ void warp_specialized(Produce produce, Consume consume) {
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  // The 128-byte swizzle is a function of address bits 4-9: tiles start 1024-byte aligned.
  unsigned char* smem = smem_raw + ((1024u - (sm90::shared_address(smem_raw) & 1023u)) & 1023u);
  auto* full = reinterpret_cast<unsigned long long*>(smem + F::kBarriers);
  unsigned long long* empty = full + C::STAGES;
  if (threadIdx.x == 0) {
    for (int s = 0; s < C::STAGES; ++s) {
      // Every producer thread, once its copies landed; with C::kTma also the TMA box's bytes (expect_tx).
      // A fully-TMA producer's one thread, with both boxes' bytes (produce_tma).
      sm90::mbarrier_init(&full[s], FullyTma<C>::value ? 1 : 128);
      sm90::mbarrier_init(&empty[s], 4 * F::kConsumers * ClusterM<C>::value);
    }
    sm90::fence_barrier_init();
  }
  if constexpr (ClusterM<C>::value == 1)
    __syncthreads();
  else
    sm90::cluster_sync();

  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  if (warpgroup == 0) {
    sm90::lower_registers<F::kProducerRegisters>();
    produce(smem, full, empty);
    return;
  }
  sm90::raise_registers<F::kConsumerRegisters>();
  consume(smem, full, empty, warpgroup - 1);
}

/// The forward kernel body. Grid: at most one CTA per SM, each taking the units of Tiles<C>.
/// `tma_b`: with C::kTma, the filter's map (ConvWgmmaParams::tma_b), else unused;
/// `tma_a`: with C::kTmaX, x's (ConvWgmmaParams::tma_a), else unused;
/// `tma_y`: with C::kTmaY, y's (ConvWgmmaStoreParams::tma_y), else unused.
template <class C>
__device__ void conv_wgmma(const ConvIgemmParams& p, const TmaMap* tma_b = nullptr, const TmaMap* tma_a = nullptr,
                           const TmaMap* tma_y = nullptr) {
  using T = typename C::T;
  using L = Layout<C>;
  using U = Tiles<C>;
  warp_specialized<C>(
      [&](unsigned char* smem, unsigned long long* full, unsigned long long* empty) {
        if constexpr (FullyTma<C>::value)
          produce_tma<C>(tma_a, tma_b, smem, full, empty);
        else
          produce<C>(p, tma_b, smem, full, empty);
      },
      [&](unsigned char* smem, unsigned long long* full, unsigned long long* empty, int consumer) {
        // consumer: A rows 64 * consumer ...
        const int lane = static_cast<int>(threadIdx.x) % 32;
        T* staged = reinterpret_cast<T*>(smem + L::kStaging) + consumer * L::kStagingRows * L::kOutPitch;
        int it = 0;  // k-blocks consumed so far, over all units
        for (int unit = U::first_unit(); unit < U::kCount; unit += U::unit_stride()) {
          const int m0 = U::m0(unit), n0 = U::n0(unit);
          const Slice sl = slice_of<C>(U::slice(unit));
          const int begin = U::kb_begin(unit), end = U::kb_end(unit, sl);
          float acc[C::BN / 2];
#pragma unroll
          for (int i = 0; i < C::BN / 2; ++i) acc[i] = 0.f;
          consume_unit<C, false, BNMajor<C>::value>(acc, smem, full, empty, it, begin, end, consumer, lane);
          // Epilogue, while the producer fills the stages for the next unit. Split K stores the
          // unit's fp32 partials; conv_wgmma_split.cuh's reduce adds them and applies the epilogue.
          if constexpr (C::kFp32Out || C::kSplits > 1)
            store_partials<C>(acc, p, U::split(unit), consumer, m0, n0);
          else if constexpr (TmaStore<C>::value)
            store_tile_tma<C>(acc, p, smem + L::kStaging + consumer * L::kStagingRows * C::BN * sizeof(T), tma_y,
                              consumer, m0, n0);
          else
            store_tile<C>(acc, p, staged, consumer, m0, n0, [&sl](int m, int k) {
              const int n = m / (C::P * C::Q), pq = m % (C::P * C::Q), ph = pq / C::Q, pw = pq % C::Q;
              if (C::kPhases > 1 && (ph >= sl.rows_h || pw >= sl.rows_w)) return -1;
              return n * C::YN + ph * C::YH + pw * C::YW + k + sl.out;
            }, sl.bias);
        }
        // The last tile's copies read the staging until they are done: shared memory outlives them.
        if constexpr (TmaStore<C>::value)
          if (threadIdx.x % 128 == 0) sm90::bulk_wait_group<0>();
        // The other CTAs of the cluster still arrive on this one's `empty` barriers until their last
        // k-block: its shared memory outlives their arrivals.
        if constexpr (ClusterM<C>::value > 1) sm90::cluster_sync();
      });
}

}  // namespace wgmma_conv
}  // namespace boo
