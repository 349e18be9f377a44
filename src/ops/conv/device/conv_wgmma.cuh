// boo device code: the Hopper forward convolution (gpu:conv:wgmma_sm90) — an
// implicit GEMM on warpgroup tensor cores (wgmma, sm_90a), warp-specialized.
//
// The forward face of a regular 2-D (or 1-D) conv, every operand channels-last:
//   y[n, oh, ow, k] = sum_{r, s, c} x[n, oh*sh - ph + r*dh, ow*sw - pw + s*dw, c] * w[k, r, s, c]
// as the GEMM  D[m, k] = sum_kk A[m, kk] * B[kk, k]  with m = (n, oh, ow) and
// kk = (r, s, c). C is a multiple of 64, so each 64-wide block of kk is one
// filter tap's 64 consecutive channels: a row of the A tile is one output
// pixel's input pixel at that tap (128 contiguous bytes, zeros in the
// padding) and a row of the B tile one output channel's 64 filter channels.
//
// A CTA computes a 128 x BN tile of D with three warpgroups:
//   warpgroup 0 (producer): copies the A and B tiles of each k-block into a
//     ring of STAGES shared-memory stages with 16-byte cp.async, in the
//     128-byte swizzled K-major layout wgmma reads, and signals each stage's
//     `full` barrier once its copies have landed;
//   warpgroups 1 and 2 (consumers): rows 0-63 and 64-127 of the tile; each
//     waits for a stage, issues four m64nBNk16 wgmma on it (fp32 accumulators
//     in registers) and releases it on its `empty` barrier when they are done.
// The epilogue adds the bias, applies the activation (conv_igemm.cuh's
// semantics), stages the tile in shared memory and writes 16-byte vectors.
//
// The generated source defines `struct Cfg` with every size and stride as a
// compile-time constant and instantiates conv_wgmma<Cfg>.
#pragma once

#include "boo/common/mma.cuh"
#include "boo/common/types.cuh"
#include "boo/conv/conv_igemm_params.cuh"
#include "kernels/arch/sm90.cuh"

namespace boo {
namespace wgmma_conv {

constexpr int kBM = 128;               ///< rows (output pixels) of a CTA tile
constexpr int kBK = 64;                ///< GEMM k per stage: 64 channels of one tap, 128 bytes a row
constexpr int kThreads = 384;          ///< one producer and two consumer warpgroups
constexpr int kConsumerWarps = 8;      ///< arrivals that release a stage (one per consumer warp)
constexpr int kProducerRegisters = 56; ///< registers per thread: the producer gives its share
constexpr int kConsumerRegisters = 224;///< to the consumers' accumulators (128 x 56 + 256 x 224 <= 64 Ki)

/// Shared memory of the kernel, in bytes, from its 1024-byte aligned start:
/// STAGES x (A tile, B tile), then the barriers. The plan adds 1 KiB of slack
/// for aligning the dynamic shared memory's start.
template <class C>
struct Layout {
  static constexpr unsigned kTileA = kBM * 128, kTileB = C::BN * 128;
  static constexpr unsigned kB = C::STAGES * kTileA;                   ///< first B tile
  static constexpr unsigned kBarriers = C::STAGES * (kTileA + kTileB); ///< full[STAGES], empty[STAGES]
  /// The epilogue's staging: each consumer's 64 x BN tile, rows padded by 16 bytes (conflict-free).
  static constexpr int kOutPitch = C::BN + 8;
  static_assert(2 * 64 * kOutPitch * 2 <= kBarriers, "the output tile fits in the operand stages");
};

/// The producer: copies the A (im2col rows) and B (filter rows) tiles of every
/// k-block into the stages. Thread t copies 16-byte chunk t % 8 of rows
/// t / 8 + 16 j, so a warp's copies cover four whole 128-byte rows.
template <class C>
__device__ void produce(const ConvIgemmParams& p, unsigned char* smem, unsigned long long* full,
                        unsigned long long* empty, int m0, int n0) {
  using T = typename C::T;
  constexpr int kChannelBlocks = C::kC / kBK;
  constexpr int kKBlocks = C::R * C::S * kChannelBlocks;
  // A stage is announced only when its copies have landed, kLag k-blocks
  // later, so that kLag + 1 stages of copies are in flight at once.
  constexpr int kLag = C::STAGES - 2;
  const int chunk = threadIdx.x % 8, row0 = threadIdx.x / 8;
  const T* x = reinterpret_cast<const T*>(p.a);
  const T* w = reinterpret_cast<const T*>(p.w) + (n0 + row0) * C::WK + chunk * 8;
  // Per A row, computed once: the offset of its receptive field's first input
  // pixel (which may lie in the padding) and that pixel's (h, w) as two 16-bit
  // halves; bit j of a_rows: row j lies in the GEMM. Two registers a row keep
  // the producer within its registers.
  int a_base[kBM / 16];
  unsigned a_hw[kBM / 16], a_rows = 0;
#pragma unroll
  for (int j = 0; j < kBM / 16; ++j) {
    const int m = m0 + row0 + 16 * j;
    const int n = m / (C::P * C::Q), pq = m % (C::P * C::Q);
    const int ih = (pq / C::Q) * C::SH - C::PH, iw = (pq % C::Q) * C::SW - C::PW;
    a_base[j] = n * C::XN + ih * C::XH + iw * C::XW + chunk * 8;
    a_hw[j] = (static_cast<unsigned>(ih) << 16) | (static_cast<unsigned>(iw) & 0xFFFFu);
    a_rows |= (m < C::kM ? 1u : 0u) << j;
  }
  for (int kb = 0; kb < kKBlocks + kLag; ++kb) {
    if (kb < kKBlocks) {
      const int stage = kb % C::STAGES;
      // Wait until both consumers released what the stage held STAGES k-blocks ago.
      sm90::mbarrier_wait(&empty[stage], ((kb / C::STAGES) & 1) ^ 1);
      const int tap = kb / kChannelBlocks, c = (kb % kChannelBlocks) * kBK;
      const int r = tap / C::S, s = tap % C::S;
      const int a_shift = r * C::DH * C::XH + s * C::DW * C::XW + c;
      const unsigned a_tile = sm90::shared_address(smem) + stage * Layout<C>::kTileA;
#pragma unroll
      for (int j = 0; j < kBM / 16; ++j) {
        const int ih = static_cast<int>(a_hw[j]) >> 16, iw = static_cast<int>(a_hw[j] << 16) >> 16;
        const bool ok = ((a_rows >> j) & 1u) && static_cast<unsigned>(ih + r * C::DH) < static_cast<unsigned>(C::H) &&
                        static_cast<unsigned>(iw + s * C::DW) < static_cast<unsigned>(C::W);
        cp_async_vector_at<16>(a_tile + sm90::swizzle128_offset(row0 + 16 * j, chunk),
                               x + (ok ? a_base[j] + a_shift : 0), ok);
      }
      const unsigned b_tile = sm90::shared_address(smem) + Layout<C>::kB + stage * Layout<C>::kTileB;
      const int b_shift = r * C::WR + s * C::WS + c;
#pragma unroll
      for (int j = 0; j < C::BN / 16; ++j) {
        const bool ok = C::kN % C::BN == 0 || n0 + row0 + 16 * j < C::kN;
        cp_async_vector_at<16>(b_tile + sm90::swizzle128_offset(row0 + 16 * j, chunk),
                               ok ? w + 16 * j * C::WK + b_shift : reinterpret_cast<const T*>(p.w), ok);
      }
    }
    cp_async_commit();  // an empty group past the last k-block keeps the count uniform
    if (kb >= kLag) {
      cp_async_wait<kLag>();  // this thread's copies of k-block kb - kLag have landed
      // wgmma reads them through the async proxy: order the writes before the barrier.
      sm90::fence_proxy_async_shared();
      sm90::mbarrier_arrive(&full[(kb - kLag) % C::STAGES]);
    }
  }
}

/// The kernel body. Grid: one CTA per 128 x BN output tile, N tiles fastest
/// (the CTAs sharing an A tile run together and read it from L2).
template <class C>
__device__ void conv_wgmma(const ConvIgemmParams& p) {
  using T = typename C::T;
  using L = Layout<C>;
  constexpr int kTilesN = (C::kN + C::BN - 1) / C::BN;
  constexpr int kKBlocks = C::R * C::S * (C::kC / kBK);
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  // The 128-byte swizzle is a function of address bits 4-9: tiles start 1024-byte aligned.
  unsigned char* smem = smem_raw + ((1024u - (sm90::shared_address(smem_raw) & 1023u)) & 1023u);
  auto* full = reinterpret_cast<unsigned long long*>(smem + L::kBarriers);
  unsigned long long* empty = full + C::STAGES;

  const int tile_n = static_cast<int>(blockIdx.x) % kTilesN, tile_m = static_cast<int>(blockIdx.x) / kTilesN;
  const int m0 = tile_m * kBM, n0 = tile_n * C::BN;
  if (threadIdx.x == 0) {
    for (int s = 0; s < C::STAGES; ++s) {
      sm90::mbarrier_init(&full[s], 128);  // every producer thread, once its copies landed
      sm90::mbarrier_init(&empty[s], kConsumerWarps);
    }
    sm90::fence_barrier_init();
  }
  __syncthreads();

  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  if (warpgroup == 0) {
    sm90::lower_registers<kProducerRegisters>();
    produce<C>(p, smem, full, empty, m0, n0);
    return;
  }
  sm90::raise_registers<kConsumerRegisters>();
  const int consumer = warpgroup - 1;  // A rows 64 * consumer ...
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32 % 4;
  float acc[C::BN / 2];
#pragma unroll
  for (int i = 0; i < C::BN / 2; ++i) acc[i] = 0.f;

  for (int kb = 0; kb < kKBlocks; ++kb) {
    const int stage = kb % C::STAGES;
    sm90::mbarrier_wait(&full[stage], (kb / C::STAGES) & 1);
    const unsigned a = sm90::shared_address(smem) + stage * L::kTileA + consumer * 64 * 128;
    const unsigned b = sm90::shared_address(smem) + L::kB + stage * L::kTileB;
    sm90::wgmma_fence();
#pragma unroll
    for (int k = 0; k < kBK / 16; ++k)
      sm90::Wgmma<C::BN, C::kType>::mma(acc, sm90::swizzle128_descriptor(a + 32 * k),
                                         sm90::swizzle128_descriptor(b + 32 * k), 1);
    sm90::wgmma_commit_group();
    // The previous k-block's wgmma are done: its stage may be refilled.
    sm90::wgmma_wait_group<1>();
    if (kb > 0 && lane == 0) sm90::mbarrier_arrive(&empty[(kb - 1) % C::STAGES]);
  }
  sm90::wgmma_wait_group<0>();
#pragma unroll
  for (int i = 0; i < C::BN / 2; ++i) sm90::pin_register(acc[i]);

  // Epilogue. Both consumers are done reading every stage (and the producer's
  // last copies landed before the last `full`): the stages hold the output.
  sm90::named_barrier_sync<1, 256>();
  T* staged = reinterpret_cast<T*>(smem) + consumer * 64 * L::kOutPitch;
#pragma unroll
  for (int j = 0; j < C::BN / 8; ++j) {
    const int col = j * 8 + (lane % 4) * 2;
    float bias[2] = {0.f, 0.f};
    if constexpr (C::kBias) {
      if (n0 + col < C::kN) bias[0] = load_as_float<T>(p.bias, n0 + col);
      if (n0 + col + 1 < C::kN) bias[1] = load_as_float<T>(p.bias, n0 + col + 1);
    }
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = warp * 16 + lane / 4 + half * 8;
#pragma unroll
      for (int q = 0; q < 2; ++q)
        staged[row * L::kOutPitch + col + q] = from_float<T>(
            activate<C::kAct>(acc[4 * j + 2 * half + q] + bias[q], p.act_alpha, p.act_lo, p.act_hi));
    }
  }
  if (consumer == 0)
    sm90::named_barrier_sync<2, 128>();
  else
    sm90::named_barrier_sync<3, 128>();
  T* y = reinterpret_cast<T*>(p.out);
  const int thread = static_cast<int>(threadIdx.x) % 128;
  constexpr int kVectorsPerRow = C::BN / 8;
#pragma unroll 4
  for (int v = thread; v < 64 * kVectorsPerRow; v += 128) {
    const int row = v / kVectorsPerRow, col = (v % kVectorsPerRow) * 8;
    const int m = m0 + consumer * 64 + row, k = n0 + col;
    if (m >= C::kM || k >= C::kN) continue;
    const int n = m / (C::P * C::Q), pq = m % (C::P * C::Q);
    const int offset = n * C::YN + (pq / C::Q) * C::YH + (pq % C::Q) * C::YW + k;
    *reinterpret_cast<uint4*>(y + offset) = *reinterpret_cast<const uint4*>(staged + row * L::kOutPitch + col);
  }
}

}  // namespace wgmma_conv
}  // namespace boo
