// boo device code: the weight gradient of gpu:conv:wgmma_sm90 with shifted
// taps (sm_90a), every operand channels-last:
//   dw[k, r, s, c] = sum_{n, p, q} dy[n, p, q, k] * x[n, p*sh - ph + r*dh, q - pw + s*dw, c]
// (stride 1 along W). conv_wgmma_weight.cuh copies x once per tap: an im2col
// box of a tap's 64 channels for each 64 columns of a k-block, so a 3x3 filter
// reads each x pixel nine times from L2, and with at most 64 output channels
// (ResNet's first stage, 225 x 225 stems) the tile is 64 rows by two taps,
// bound by L2 at ~200 TFLOP/s. Here a k-block is a strip of output pixels
// (kStripRows rows of kStripCols, 64 pixels of one image), and the producer
// copies, by one TMA box each,
//   A: dy at the strip: 64 rows of 128 bytes, row i*kStripCols + j output pixel
//      (p0 + i, q0 + j)'s 64 output channels m0 ... (M-major);
//   B: x at the strip's receptive field, one 64-channel slice c0 ... of it:
//      Taps::kBoxH input rows (p0*sh - ph ...) of Taps::kBoxW input columns
//      (q0 - pw ...), row (h, w) of the box at kBoxW*h + w, each 128 bytes;
// pixels outside the image (padding) and past the output (a strip's overhang)
// are the copy engine's zeros, so a strip adds exactly its pixels' products.
// For output pixel (i, j) of the strip and tap (r, s), x's pixel lies at box
// row (i*sh + r*dh)*kBoxW + j + s*dw: sixteen consecutive output pixels of a
// strip row (one wgmma's k16) read sixteen consecutive box rows, so each tap's
// B is the box read from a shifted start, and the S taps of filter row r are
// S atoms along N at 128*dw bytes from one another (sm90.cuh: overlapping
// atoms). Consumer warpgroup r (R of them) issues, per k16, one
// m64n(64 S)k16 wgmma of the strip's dy by filter row r's taps into its 64 x
// 64 S accumulators: the CTA's tile is 64 output channels by every tap of one
// 64-channel slice, and L2 serves x about (kBoxW x kBoxH) / 64 times per
// strip instead of R x S times.
// Units are (row tile of 64 output channels, channel slice, group, split),
// split slowest (conv_wgmma_weight.cuh's WeightUnits). Each unit stores its
// fp32 sums in its split's plane of the workspace, and the weight face's
// reduce (conv_wgmma_weight_reduce) adds the planes in order and writes dw,
// deterministic with any number of splits, one included.
// The generated source defines `struct Cfg` as for conv_wgmma_weight.cuh plus
// kStripRows and kStripCols (the host's rule: C a multiple of 64 per group,
// stride 1 along W, 64 S accumulators within a consumer's registers), and
// instantiates conv_wgmma_weight_taps<Cfg> and conv_wgmma_weight_reduce<Cfg>.
#pragma once

#include "boo/conv/conv_wgmma_weight.cuh"

namespace boo {
namespace wgmma_conv {

/// The shifted taps' geometry, shared memory and frame (warp_specialized's F).
template <class C>
struct Taps {
  static_assert(C::kStripRows * C::kStripCols == kBK<C> && C::kStripCols % 16 == 0,
                "a strip is 64 output pixels, rows of whole k16 slices");
  static_assert(C::kC % 64 == 0 && C::SW == 1, "64-channel slices of x, consecutive pixels along W");
  static constexpr int kBatch = C::kL / (C::P * C::Q);
  static constexpr int kStripsH = (C::P + C::kStripRows - 1) / C::kStripRows;
  static constexpr int kStripsW = (C::Q + C::kStripCols - 1) / C::kStripCols;
  static constexpr int kKBlocks = kBatch * kStripsH * kStripsW;
  /// x's box: the strip's receptive field, input columns by input rows.
  static constexpr int kBoxW = C::kStripCols + (C::S - 1) * C::DW;
  static constexpr int kBoxH = (C::kStripRows - 1) * C::SH + (C::R - 1) * C::DH + 1;
  static_assert(kBoxW <= 256 && kBoxH <= 256, "a TMA box is at most 256 elements along a dim");
  static constexpr unsigned kBoxBytes = kBoxW * kBoxH * 128;
  /// A stage: the A tile (the strip's dy), then the B tile (x's box), each 1024-byte aligned.
  static constexpr unsigned kTileA = kBK<C> * 128;
  static constexpr unsigned kTileB = (kBoxBytes + 1023) / 1024 * 1024;
  static constexpr unsigned kStage = kTileA + kTileB;
  // warp_specialized's frame: one consumer per filter row, the ring's barriers after the stages; the
  // producer (one thread issuing TMA boxes) keeps 40 registers, the consumers share the rest of the
  // launch's 65536 (128 x (R + 1) threads), at most 232.
  static constexpr unsigned kBarriers = C::STAGES * kStage;
  static constexpr int kConsumers = C::R;
  static constexpr int kProducerRegisters = 40;
  static constexpr int kConsumerRegisters = (512 - kProducerRegisters) / kConsumers / 8 * 8 > 232
                                                ? 232
                                                : (512 - kProducerRegisters) / kConsumers / 8 * 8;
  static_assert(C::S * 32 + 48 <= kConsumerRegisters, "a consumer's 64 x 64 S accumulators fit its registers");
};

/// The Cfg as Units sees the shifted taps' tiles: 64 output channels by one 64-channel slice of x.
template <class C>
struct ChannelSlices : C {
  static constexpr int kN = C::kC;
  static constexpr int BN = 64;
};

template <class C>
using TapUnits = WeightUnits<C, Units<ChannelSlices<C>, Taps<C>::kKBlocks, 64>>;

/// The Cfg as store_partials sees one tap's sums: 64 columns of the (tap, channel) GEMM.
template <class C>
struct TapWidth : C {
  static constexpr int BN = 64;
};

/// The producer: one thread issues each k-block's two boxes (dy's strip, x's receptive field of it) into
/// the ring, on the stage's `full` barrier expecting both boxes' bytes, zeros included.
/// `tma_dy`: dy as {K, Q, P, N}, box {64, kStripCols, kStripRows, 1}; `tma_x`: x as {C, W, H, N}, box
/// {64, kBoxW, kBoxH, 1}; both 128-byte swizzled.
template <class C>
__device__ void produce_taps(const TmaMap* tma_dy, const TmaMap* tma_x, unsigned char* smem, unsigned long long* full,
                             unsigned long long* empty) {
  using K = Taps<C>;
  using U = TapUnits<C>;
  if (threadIdx.x != 0) return;
  sm90::prefetch_tensor_map(tma_dy);
  sm90::prefetch_tensor_map(tma_x);
  int it = 0;  // k-blocks issued so far, over all units
  for (int unit = blockIdx.x; unit < U::kCount; unit += gridDim.x) {
    const int m0 = U::m0(unit), c0 = U::n0(unit), group = U::group(unit);
    for (int kb = U::kb_begin(unit); kb < U::kb_end(unit); ++kb, ++it) {
      const int stage = it % C::STAGES;
      // Wait until every consumer released what the stage held STAGES k-blocks ago.
      sm90::mbarrier_wait(&empty[stage], ((it / C::STAGES) & 1) ^ 1);
      const unsigned a_tile = sm90::shared_address(smem) + stage * K::kStage, b_tile = a_tile + K::kTileA;
      const int n = kb / (K::kStripsH * K::kStripsW), p0 = kb / K::kStripsW % K::kStripsH * C::kStripRows,
                q0 = kb % K::kStripsW * C::kStripCols;
      sm90::mbarrier_arrive_expect_tx(&full[stage], K::kTileA + K::kBoxBytes);
      sm90::tma_load_4d(a_tile, tma_dy, group * C::GW + m0, q0, p0, n, &full[stage]);
      sm90::tma_load_4d(b_tile, tma_x, group * C::GA + c0, q0 - C::PW, p0 * C::SH - C::PH, n, &full[stage]);
    }
  }
}

/// Consumer warpgroup `r` (filter row r): per unit, the 64 x 64 S sums of output channels m0 ... by taps
/// (r, 0 ... S-1) of channels c0 ..., accumulated over the unit's strips, then stored as fp32 partials.
template <class C>
__device__ void consume_taps(const ConvIgemmParams& p, unsigned char* smem, unsigned long long* full,
                             unsigned long long* empty, int r) {
  using K = Taps<C>;
  using U = TapUnits<C>;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  int it = 0;  // k-blocks consumed so far, over all units
  for (int unit = blockIdx.x; unit < U::kCount; unit += gridDim.x) {
    const int begin = U::kb_begin(unit), end = U::kb_end(unit);
    float acc[C::S * 32];  // Wgmma<64 S>'s layout: atom s (tap (r, s)) is acc[32 s ...], Wgmma<64>'s
#pragma unroll
    for (int i = 0; i < C::S * 32; ++i) acc[i] = 0.f;
    for (int kb = begin; kb < end; ++kb, ++it) {
      const int stage = it % C::STAGES;
      sm90::mbarrier_wait(&full[stage], (it / C::STAGES) & 1);
      const unsigned a = sm90::shared_address(smem) + stage * K::kStage, b = a + K::kTileA;
      sm90::wgmma_fence();
#pragma unroll
      for (int k = 0; k < kBK<C> / 16; ++k) {
        // k16 slice k: strip pixels 16 k ... + 15, strip row i, columns j0 ... + 15.
        const int i = 16 * k / C::kStripCols, j0 = 16 * k % C::kStripCols;
        const unsigned x_row = (i * C::SH + r * C::DH) * K::kBoxW + j0;
        sm90::Wgmma<C::S * 64, C::kType>::template mma<1, 1>(
            acc, sm90::swizzle128_mn_descriptor(a + 16 * k * 128, K::kTileA),
            sm90::swizzle128_mn_descriptor(b + x_row * 128, 128 * C::DW), 1);
      }
      sm90::wgmma_commit_group();
      // The previous k-block's wgmma are done: its stage may be refilled (the unit's first k-block's
      // predecessor was released after the previous unit).
      sm90::wgmma_wait_group<1>();
      if (kb != begin && lane == 0) sm90::mbarrier_arrive(&empty[(it - 1) % C::STAGES]);
    }
    sm90::wgmma_wait_group<0>();
    if (end > begin && lane == 0) sm90::mbarrier_arrive(&empty[(it - 1) % C::STAGES]);
#pragma unroll
    for (int i = 0; i < C::S * 32; ++i) sm90::pin_register(acc[i]);
    // Tap (r, s)'s 64 x 64 sums are dw's columns (r S + s) C + c0 ... of rows m0 ...
#pragma unroll
    for (int s = 0; s < C::S; ++s) {
      float atom[32];
#pragma unroll
      for (int i = 0; i < 32; ++i) atom[i] = acc[32 * s + i];
      store_partials<TapWidth<C>>(atom, p, U::split(unit), 0, U::m0(unit), (r * C::S + s) * C::kC + U::n0(unit),
                                  U::group(unit));
    }
  }
}

/// The shifted-taps weight-face kernel body. Grid: at most one CTA per SM, each taking the units of
/// TapUnits<C>; block: 128 x (R + 1) threads. `tma_dy`, `tma_x`: ConvWgmmaParams::tma_a and tma_b.
template <class C>
__device__ void conv_wgmma_weight_taps(const ConvIgemmParams& p, const TmaMap* tma_dy, const TmaMap* tma_x) {
  static_assert(sizeof(typename C::T) == 2, "M/N-major tiles: 16-bit types only (TF32 wgmma reads K-major ones)");
  static_assert(FullyTma<C>::value, "one producer thread issues the boxes: the full barriers take one arrival");
  warp_specialized<C, Taps<C>>(
      [&](unsigned char* smem, unsigned long long* full, unsigned long long* empty) {
        produce_taps<C>(tma_dy, tma_x, smem, full, empty);
      },
      [&](unsigned char* smem, unsigned long long* full, unsigned long long* empty, int consumer) {
        consume_taps<C>(p, smem, full, empty, consumer);
      });
}

}  // namespace wgmma_conv
}  // namespace boo
