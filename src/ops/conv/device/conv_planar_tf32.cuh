// boo device code: gpu:conv:planar_tf32 — the forward face of fp32 1x1 convs
// (any stride, no padding, groups 1) of planar activations (NCHW, NCDHW) on
// the TF32 tensor cores at full precision (3xTF32), read and written where
// they lie.
//
// Over the output pixels of every image, m = (n, hw), hw = (d, h, w):
//   y[n][k][hw] = sum_c x[n][c][d * sd, h * sh, w * sw] * w[k][c]
// is the GEMM D[m][k] = sum_c A[m][c] * B[k][c], M = N * HW (C::kM),
// N = the output channels (C::kN), K = the input channels (C::kK):
//   A = x: wgmma takes a TF32 A from registers, so its shared-memory tile may
//     lie as x does (channel rows of contiguous pixels, which no TF32 operand
//     read from shared memory may: those must be K-major); each consumer
//     thread loads its fragment from there and splits it into TF32 parts.
//   B = w (KCRS, each output channel's input channels contiguous: K-major):
//     the producer splits it into TF32 high and low tiles as it stores them.
// Each product is a_big b_big + a_big b_small + a_small b_big (the dropped
// a_small b_small is below 2^-22 |a b|), the small terms first, as
// mainloop_mma_3xtf32.cuh's; a k-block's chain of wgmma starts from zero and
// its sums are added into the running ones in fp32 (promoted: the tensor
// cores truncate their adds, docs/tolerances.md).
//
// A CTA computes 128 pixels x BN output channels of D per tile, persistent
// over the tiles, with three warpgroups: the producer copies each k-block (32
// input channels) of x with cp.async and stores w's split tiles into a ring
// of C::STAGES stages; consumers 0 and 1 take pixel rows 0-63 and 64-127.
// The wgmma row order is permuted so that a thread's two rows (r, r + 8 of
// its warp's 16) are two adjacent pixels: its A fragment is two 8-byte loads
// per k8 step, and its results two adjacent pixels of a channel, written as
// one 8-byte store (where HW is even) with no staging.
//
// The generated source defines `struct Cfg`: kM, kN, kK (the GEMM), kHW
// (output pixels per image), kOHW and kOW (output pixels per plane and per
// row), XN, XC (x's image and channel strides), XD, XH, XW (x's steps between
// the input pixels of adjacent output pixels: its strides times the conv's),
// YN, YC (y's), WK (w's output-channel stride; its input channels are
// contiguous), BN (32, 64, 96 or 128), STAGES, kVecX (stride 1 and HW, XN and
// XC multiples of 4: 16-byte copies of x, else 4-byte ones), kPairs (HW, YN
// and YC even: 8-byte stores of pixel pairs, else 4-byte ones), kBias,
// kResidual (z laid out as y), kAct.
#pragma once

#include "boo/kernels/arch/sm80.cuh"
#include "boo/kernels/arch/sm90.cuh"
#include "boo/kernels/arch/sm90_tf32.cuh"
#include "boo/kernels/types.cuh"
#include "boo/conv/conv_igemm_params.cuh"

namespace boo {
namespace planar_tf32 {

constexpr int kBM = 128;        ///< pixels per tile: two consumers of 64
constexpr int kBK = 32;         ///< input channels per k-block: one 128-byte row of fp32 per B row
constexpr int kAPitch = kBM + 8;  ///< floats between A's channel rows: a warp's 8-byte fragment loads are conflict-free
constexpr int kConsumerWarps = 8;

/// Shared memory, from its 1024-byte aligned start: per stage the B tiles
/// (high, then low; BN rows of 128 bytes, 128-byte swizzled, as
/// wgmma reads them) and the A tile (32 channel rows x kAPitch floats), then
/// the barriers.
template <class C>
struct Layout {
  static constexpr unsigned kTileB = C::BN * 128;
  static constexpr unsigned kA = 2 * kTileB;
  static constexpr unsigned kStage = kA + kBK * kAPitch * 4;
  static_assert(kStage % 1024 == 0, "every stage's B tiles start 1024-byte aligned (the swizzle's period)");
  static constexpr unsigned kBarriers = C::STAGES * kStage;  ///< full[STAGES], then empty[STAGES]
};

/// Tiles (pixel tile, channel tile), channel tiles fastest: the CTAs running
/// together read one pixel tile of x (the large operand) from L2 after the first.
template <class C>
struct Tiles {
  static constexpr int kTilesN = (C::kN + C::BN - 1) / C::BN;
  static constexpr int kCount = (C::kM + kBM - 1) / kBM * kTilesN;
  __device__ static int m0(int tile) { return tile / kTilesN * kBM; }
  __device__ static int n0(int tile) { return tile % kTilesN * C::BN; }
};

/// Stores four 32-bit words at the shared-memory address `at` (16-byte aligned).
__device__ __forceinline__ void st_shared_v4(unsigned at, const unsigned (&v)[4]) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(at), "r"(v[0]), "r"(v[1]), "r"(v[2]), "r"(v[3])
               : "memory");
}

/// x's element offset, in channel 0, of the input pixel that output pixel m (over all images) reads.
template <class C>
__device__ __forceinline__ long long pixel_offset(int m) {
  const int hw = m % C::kHW;
  return static_cast<long long>(m / C::kHW) * C::XN + static_cast<long long>(hw / C::kOHW) * C::XD +
         static_cast<long long>(hw % C::kOHW / C::kOW) * C::XH + static_cast<long long>(hw % C::kOW) * C::XW;
}

/// The producer: per k-block (input channels k0 ... k0 + 31), x's 32 channel
/// rows of the tile's 128 pixels by cp.async (zeros past kM and kK), and w's
/// BN x 32 block split into TF32 parts, stored swizzled. The stage's `full`
/// barrier takes each thread's cp.async completion and its arrival after its
/// stores (256 arrivals).
template <class C>
__device__ void produce(const ConvIgemmParams& p, unsigned char* smem, unsigned long long* full,
                        unsigned long long* empty) {
  using L = Layout<C>;
  constexpr int kKBlocks = (C::kK + kBK - 1) / kBK;
  const int t = static_cast<int>(threadIdx.x);
  const float* x = reinterpret_cast<const float*>(p.a);
  const float* w = reinterpret_cast<const float*>(p.w);
  // w's 16-byte chunk t % 8 (input channels 4 (t % 8) ...) of B rows t / 8 + 16 j.
  const int chunk = t % 8, row0 = t / 8;
  int it = 0;  // k-blocks issued so far, over all tiles
  for (int tile = blockIdx.x; tile < Tiles<C>::kCount; tile += gridDim.x) {
    const int m0 = Tiles<C>::m0(tile), n0 = Tiles<C>::n0(tile);
    // This thread's pixel column of the A tile: 4 pixels (16-byte copies, consecutive in x) of channel rows
    // t / 32 + 4 j, or 1 pixel of every channel row.
    const int col = C::kVecX ? 4 * (t % 32) : t;
    const int m = m0 + col;
    const bool pixel_in = m < C::kM;
    const float* pixels = x + (pixel_in ? pixel_offset<C>(m) : 0);
    for (int kb = 0; kb < kKBlocks; ++kb, ++it) {
      const int stage = it % C::STAGES;
      sm90::mbarrier_wait(&empty[stage], ((it / C::STAGES) & 1) ^ 1);
      unsigned char* s = smem + stage * L::kStage;
      const int k0 = kb * kBK;
      // A first: its copies land while w's block is loaded and split below.
      const unsigned a_tile = sm90::shared_address(s + L::kA);
      if constexpr (C::kVecX) {
#pragma unroll
        for (int j = 0; j < kBK / 4; ++j) {
          const int row = t / 32 + 4 * j, k = k0 + row;
          const bool ok = pixel_in && (C::kK % kBK == 0 || k < C::kK);
          cp_async_vector_at<16>(a_tile + (row * kAPitch + col) * 4, ok ? pixels + static_cast<long long>(k) * C::XC : x, ok);
        }
      } else {
#pragma unroll 8
        for (int row = 0; row < kBK; ++row) {
          const int k = k0 + row;
          const bool ok = pixel_in && (C::kK % kBK == 0 || k < C::kK);
          cp_async_vector_at<4>(a_tile + (row * kAPitch + col) * 4, ok ? pixels + static_cast<long long>(k) * C::XC : x, ok);
        }
      }
      // Every load of w's block is issued before the first store, so that their latencies overlap.
      float4 v[C::BN / 16];  // (B row row0 + 16 j): w's input channels k0 + 4 chunk ... + 3
#pragma unroll
      for (int j = 0; j < C::BN / 16; ++j) {
        const int n = n0 + row0 + 16 * j, k = k0 + 4 * chunk;  // kK is a multiple of 4: a chunk is in or out
        v[j] = n < C::kN && k < C::kK ? __ldg(reinterpret_cast<const float4*>(w + static_cast<long long>(n) * C::WK + k))
                                      : make_float4(0.f, 0.f, 0.f, 0.f);
      }
      const unsigned b_tile = sm90::shared_address(s);
#pragma unroll
      for (int j = 0; j < C::BN / 16; ++j) {
        const unsigned at = b_tile + sm90::swizzle128_offset(row0 + 16 * j, chunk);
        const float in[4] = {v[j].x, v[j].y, v[j].z, v[j].w};
        unsigned big[4], small[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          big[e] = to_tf32(in[e]);
          small[e] = to_tf32(in[e] - __uint_as_float(big[e]));
        }
        st_shared_v4(at, big);
        st_shared_v4(at + L::kTileB, small);
      }
      // The B stores reach the wgmma (the async proxy) and the consumers after this arrival; the A copies
      // arrive on their own as they land.
      sm90::fence_proxy_async_shared();
      sm90::mbarrier_arrive(&full[stage]);
      sm90::cp_async_mbarrier_arrive_noinc(&full[stage]);
    }
  }
  sm90::cp_async_wait_all();
}

/// One consumer's tile: 64 pixel rows x BN channels, summed over the k-blocks
/// (`it` counting them over the consumer's tiles), then the bias, residual and
/// activation, stored.
template <class C>
__device__ void consume_tile(const ConvIgemmParams& p, unsigned char* smem, unsigned long long* full,
                             unsigned long long* empty, int& it, int m0, int n0, int consumer) {
  using L = Layout<C>;
  constexpr int kKBlocks = (C::kK + kBK - 1) / kBK;
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) % 128 / 32;
  const int g = lane / 4, q4 = lane % 4;
  // This thread's pixels: wgmma rows 16 warp + g and + 8 are tile pixels `pixel` and `pixel` + 1.
  const int pixel = consumer * 64 + warp * 16 + 2 * g;
  float acc[C::BN / 2];
#pragma unroll
  for (int i = 0; i < C::BN / 2; ++i) acc[i] = 0.f;
  for (int kb = 0; kb < kKBlocks; ++kb, ++it) {
    const int stage = it % C::STAGES;
    sm90::mbarrier_wait(&full[stage], (it / C::STAGES) & 1);
    const unsigned char* s = smem + stage * L::kStage;
    const float* a = reinterpret_cast<const float*>(s + L::kA);  // (32 channels, kAPitch pixels)
    // The A fragments of the k-block's four k8 steps: channels 8 step + q4 (a[0], a[1]) and + 4 (a[2], a[3]).
    unsigned big[kBK / 8][4], small[kBK / 8][4];
#pragma unroll
    for (int step = 0; step < kBK / 8; ++step) {
      const float2 lo = *reinterpret_cast<const float2*>(a + (8 * step + q4) * kAPitch + pixel);
      const float2 hi = *reinterpret_cast<const float2*>(a + (8 * step + q4 + 4) * kAPitch + pixel);
      const float v[4] = {lo.x, lo.y, hi.x, hi.y};
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        big[step][e] = to_tf32(v[e]);
        small[step][e] = to_tf32(v[e] - __uint_as_float(big[step][e]));
      }
    }
    const unsigned b_big = sm90::shared_address(s), b_small = b_big + L::kTileB;
    float part[C::BN / 2];  // the k-block's sums
    sm90::wgmma_fence();
#pragma unroll
    for (int step = 0; step < kBK / 8; ++step) {
      sm90::WgmmaTf32<C::BN>::mma(part, small[step], sm90::swizzle128_descriptor(b_big + 32 * step), step > 0);
      sm90::WgmmaTf32<C::BN>::mma(part, big[step], sm90::swizzle128_descriptor(b_small + 32 * step), 1);
    }
#pragma unroll
    for (int step = 0; step < kBK / 8; ++step)
      sm90::WgmmaTf32<C::BN>::mma(part, big[step], sm90::swizzle128_descriptor(b_big + 32 * step), 1);
    sm90::wgmma_commit_group();
    sm90::wgmma_wait_group<0>();
    __syncwarp();
    if (lane == 0) sm90::mbarrier_arrive(&empty[stage]);
#pragma unroll
    for (int i = 0; i < C::BN / 2; ++i) {
      sm90::pin_register(part[i]);
      acc[i] += part[i];
    }
  }

  // acc[4 j + 2 h + e]: tile pixel `pixel` + h, channel n0 + 8 j + 2 q4 + e.
  float* y = reinterpret_cast<float*>(p.out);
  const float* z = reinterpret_cast<const float*>(p.residual);
  const int m = m0 + pixel;
#pragma unroll
  for (int j = 0; j < C::BN / 8; ++j) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int k = n0 + 8 * j + 2 * q4 + e;
      if (k >= C::kN) continue;
      const float bias = C::kBias ? load_as_float<float>(p.bias, k) : 0.f;
      float v[2] = {acc[4 * j + e] + bias, acc[4 * j + 2 + e] + bias};
      if constexpr (C::kPairs) {
        // m is even, and so is HW: both pixels lie in one image, 8-byte aligned (YN and YC even too).
        if (m >= C::kM) continue;
        const long long at = static_cast<long long>(m / C::kHW) * C::YN + static_cast<long long>(k) * C::YC + m % C::kHW;
        if constexpr (C::kResidual) {
          const float2 r = *reinterpret_cast<const float2*>(z + at);
          v[0] += r.x;
          v[1] += r.y;
        }
        *reinterpret_cast<float2*>(y + at) = make_float2(activate<C::kAct>(v[0], p.act_alpha, p.act_lo, p.act_hi),
                                                         activate<C::kAct>(v[1], p.act_alpha, p.act_lo, p.act_hi));
      } else {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          if (m + h >= C::kM) continue;
          const long long at =
              static_cast<long long>((m + h) / C::kHW) * C::YN + static_cast<long long>(k) * C::YC + (m + h) % C::kHW;
          if constexpr (C::kResidual) v[h] += z[at];
          y[at] = activate<C::kAct>(v[h], p.act_alpha, p.act_lo, p.act_hi);
        }
      }
    }
  }
}

/// The kernel body: 384 threads (producer, two consumers), at most one CTA per SM, each taking the tiles
/// of Tiles<C> from blockIdx.x on. Registers move from the producer to the consumers' accumulators
/// (BN / 2 running and BN / 2 of the k-block's per thread).
template <class C>
__device__ void forward(const ConvIgemmParams& p) {
  using L = Layout<C>;
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  unsigned char* smem = smem_raw + ((1024u - (sm90::shared_address(smem_raw) & 1023u)) & 1023u);
  auto* full = reinterpret_cast<unsigned long long*>(smem + L::kBarriers);
  unsigned long long* empty = full + C::STAGES;
  if (threadIdx.x == 0) {
    for (int s = 0; s < C::STAGES; ++s) {
      sm90::mbarrier_init(&full[s], 256);  // each producer thread's arrival and its copies' completion
      sm90::mbarrier_init(&empty[s], kConsumerWarps);
    }
    sm90::fence_barrier_init();
  }
  __syncthreads();
  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  if (warpgroup == 0) {
    sm90::lower_registers<88>();
    produce<C>(p, smem, full, empty);
    return;
  }
  sm90::raise_registers<208>();
  int it = 0;
  for (int tile = blockIdx.x; tile < Tiles<C>::kCount; tile += gridDim.x)
    consume_tile<C>(p, smem, full, empty, it, Tiles<C>::m0(tile), Tiles<C>::n0(tile), warpgroup - 1);
}

}  // namespace planar_tf32
}  // namespace boo
