// boo device code: scaled dot-product attention forward, flash-attention
// style: one CTA per (batch * head, block of kBlockM queries); each warp owns
// 16 query rows. K and V tiles of kBlockN keys stream through a two-stage
// shared-memory ring (cp.async); S = Q K^T and O += P V run on mma.sync
// m16n8k16 (bf16/fp16 in, fp32 accumulation); the softmax is online (running
// row max and sum in fp32), so the scores never leave registers.
#pragma once

#include "boo/aten/sdpa_params.cuh"
#include "boo/kernels/arch/sm80.cuh"
#include "boo/kernels/types.cuh"

namespace boo {

constexpr int kSdpaBlockN = 64;  // keys per K/V tile

/// The shared memory of one CTA: Q [kBlockM][kHeadDim], then two stages of
/// K [kSdpaBlockN][kHeadDim] and two of V [kSdpaBlockN][kHeadDim], 16-bit elements.
template <int kHeadDim, int kBlockM>
constexpr int sdpa_shared_bytes() {
  return 2 * kHeadDim * (kBlockM + 4 * kSdpaBlockN);
}

/// Byte offset of 16-byte chunk `chunk` of row `row` in a tile of kHeadDim-element rows.
/// Chunks are XOR-swizzled by the row's low 3 bits: the 8 rows one ldmatrix
/// reads at one logical chunk land in 8 distinct bank groups.
template <int kHeadDim>
__device__ __forceinline__ unsigned sdpa_swizzle(int row, int chunk) {
  return static_cast<unsigned>(row * kHeadDim * 2 + ((chunk ^ (row & 7)) << 4));
}

/// Rows [row0, row0 + kRows) of a [rows][kHeadDim] matrix at `src` (row
/// stride `stride` elements, dense along the row) into the tile at shared
/// address `tile`; rows at or past `limit` are zero-filled (so masked keys'
/// values are 0, never NaN, in P V).
template <int kHeadDim, int kRows, int kThreads>
__device__ __forceinline__ void sdpa_load_tile(unsigned tile, const unsigned short* src, long long stride, int row0,
                                               int limit) {
  constexpr int kChunks = kHeadDim / 8;
  for (int i = threadIdx.x; i < kRows * kChunks; i += kThreads) {
    const int r = i / kChunks, c = i % kChunks;
    const bool valid = row0 + r < limit;
    const unsigned short* g = valid ? src + static_cast<long long>(row0 + r) * stride + c * 8 : src;
    cp_async_vector_at<16>(tile + sdpa_swizzle<kHeadDim>(r, c), g, valid);
  }
}

/// Two floats as the 16-bit pair of an mma operand register (lo in the low half).
__device__ __forceinline__ unsigned sdpa_pack(bf16, float lo, float hi) {
  unsigned out;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(out) : "f"(hi), "f"(lo));
  return out;
}
__device__ __forceinline__ unsigned sdpa_pack(f16, float lo, float hi) {
  unsigned out;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(out) : "f"(hi), "f"(lo));
  return out;
}

__device__ __forceinline__ void sdpa_mma(bf16, float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  mma_bf16_16816(d, a, b);
}
__device__ __forceinline__ void sdpa_mma(f16, float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  mma_f16_16816(d, a, b);
}

__device__ __forceinline__ float sdpa_exp2(float x) {
  float out;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(out) : "f"(x));
  return out;
}

/// Grid: x = batch * heads, y = ceil(queries / kBlockM); block: kBlockM / 16
/// warps; dynamic shared memory sdpa_shared_bytes<kHeadDim, kBlockM>().
/// T: bf16 or f16; kHeadDim: 64 or 128 (E == Ev); kCausal: key j > query i masked.
template <typename T, int kHeadDim, int kBlockM, bool kCausal>
__device__ void sdpa_flash_forward(const SdpaParams& p) {
  constexpr int kWarps = kBlockM / 16, kThreads = kWarps * 32;
  constexpr int kKSteps = kHeadDim / 16;      // 16-wide steps of the head dim (Q K^T's reduction)
  constexpr int kSTiles = kSdpaBlockN / 8;    // 8-key n-tiles of one warp's 16 x kSdpaBlockN scores
  constexpr int kOTiles = kHeadDim / 8;       // 8-wide n-tiles of one warp's 16 x kHeadDim output
  constexpr unsigned kTileBytes = kSdpaBlockN * kHeadDim * 2;
  extern __shared__ __align__(128) unsigned char sdpa_smem[];
  const unsigned q_tile = smem_address(sdpa_smem);
  const unsigned k_tiles = q_tile + kBlockM * kHeadDim * 2;  // two stages
  const unsigned v_tiles = k_tiles + 2 * kTileBytes;         // two stages

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int bh = blockIdx.x, b = bh / p.heads, h = bh % p.heads, hk = h / p.group;
  const int q0 = blockIdx.y * kBlockM;
  const unsigned short* q = reinterpret_cast<const unsigned short*>(p.q) + b * p.q_strides[0] + h * p.q_strides[1];
  const unsigned short* k = reinterpret_cast<const unsigned short*>(p.k) + b * p.k_strides[0] + hk * p.k_strides[1];
  const unsigned short* v = reinterpret_cast<const unsigned short*>(p.v) + b * p.v_strides[0] + hk * p.v_strides[1];
  // Causal: the block's last query sees keys up to itself only.
  const int key_end = kCausal ? min(p.keys, q0 + kBlockM) : p.keys;
  const int tiles = (key_end + kSdpaBlockN - 1) / kSdpaBlockN;

  sdpa_load_tile<kHeadDim, kBlockM, kThreads>(q_tile, q, p.q_strides[2], q0, p.queries);
  sdpa_load_tile<kHeadDim, kSdpaBlockN, kThreads>(k_tiles, k, p.k_strides[2], 0, p.keys);
  sdpa_load_tile<kHeadDim, kSdpaBlockN, kThreads>(v_tiles, v, p.v_strides[2], 0, p.keys);
  cp_async_commit();

  // Per thread: rows g = lane / 4 and g + 8 of the warp's 16, columns 2 * (lane % 4) + {0, 1} of each n-tile.
  const int g = lane >> 2, t4 = lane & 3;
  const int row0 = q0 + warp * 16 + g, row1 = row0 + 8;  // the query indices of the thread's two rows
  unsigned q_frag[kKSteps][4];
  float o[kOTiles][4];
  #pragma unroll
  for (int n = 0; n < kOTiles; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
  float m_run[2] = {-__int_as_float(0x7f800000), -__int_as_float(0x7f800000)};  // running max (log2 units)
  float l_run[2] = {0.f, 0.f};  // this thread's part of the running sum (the quad's sum at the end)

  for (int tile = 0; tile < tiles; ++tile) {
    const int stage = tile & 1;
    if (tile + 1 < tiles) {
      const unsigned next = static_cast<unsigned>(stage ^ 1) * kTileBytes;
      sdpa_load_tile<kHeadDim, kSdpaBlockN, kThreads>(k_tiles + next, k, p.k_strides[2], (tile + 1) * kSdpaBlockN,
                                                      p.keys);
      sdpa_load_tile<kHeadDim, kSdpaBlockN, kThreads>(v_tiles + next, v, p.v_strides[2], (tile + 1) * kSdpaBlockN,
                                                      p.keys);
    }
    cp_async_commit();  // an empty group on the last tile keeps the wait count uniform
    cp_async_wait<1>();
    __syncthreads();
    if (tile == 0) {
      // A fragments of the warp's 16 query rows: lane l addresses row l % 16, chunk 2 * step + l / 16.
      #pragma unroll
      for (int s = 0; s < kKSteps; ++s)
        ldmatrix_x4(q_frag[s], sdpa_smem + sdpa_swizzle<kHeadDim>(warp * 16 + (lane & 15), 2 * s + (lane >> 4)));
    }
    const unsigned char* k_s = sdpa_smem + (k_tiles - q_tile) + stage * kTileBytes;
    const unsigned char* v_s = sdpa_smem + (v_tiles - q_tile) + stage * kTileBytes;

    // S [16 x kSdpaBlockN] = Q K^T. B fragments of two n-tiles per ldmatrix_x4: matrix m of lane l
    // is keys 16 * pair + 8 * (m / 2) + l % 8 at chunk 2 * step + m % 2.
    float s_acc[kSTiles][4];
    #pragma unroll
    for (int n = 0; n < kSTiles; ++n) s_acc[n][0] = s_acc[n][1] = s_acc[n][2] = s_acc[n][3] = 0.f;
    #pragma unroll
    for (int s = 0; s < kKSteps; ++s) {
      #pragma unroll
      for (int pair = 0; pair < kSTiles / 2; ++pair) {
        const int m = lane >> 3;
        unsigned r[4];
        ldmatrix_x4(r, k_s + sdpa_swizzle<kHeadDim>(16 * pair + 8 * (m >> 1) + (lane & 7), 2 * s + (m & 1)));
        const unsigned b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
        sdpa_mma(T{}, s_acc[2 * pair], q_frag[s], b0);
        sdpa_mma(T{}, s_acc[2 * pair + 1], q_frag[s], b1);
      }
    }

    // Online softmax, rows row0 (elements 0, 1) and row1 (2, 3); masked scores are -inf.
    const int key0 = tile * kSdpaBlockN;
    float tile_max[2] = {m_run[0], m_run[1]};
    #pragma unroll
    for (int n = 0; n < kSTiles; ++n) {
      #pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = key0 + n * 8 + 2 * t4 + (e & 1), row = e < 2 ? row0 : row1;
        const bool masked = key >= p.keys || (kCausal && key > row);
        s_acc[n][e] = masked ? -__int_as_float(0x7f800000) : s_acc[n][e] * p.scale_log2;
        tile_max[e >> 1] = fmaxf(tile_max[e >> 1], s_acc[n][e]);
      }
    }
    float correction[2];
    #pragma unroll
    for (int r = 0; r < 2; ++r) {
      tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 1));
      tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 2));
      // A row with every key masked so far keeps max -inf: subtract 0 instead, so exp2 gives 0, not NaN.
      const float shift = tile_max[r] == -__int_as_float(0x7f800000) ? 0.f : tile_max[r];
      correction[r] = sdpa_exp2(m_run[r] - shift);
      m_run[r] = tile_max[r];
      l_run[r] *= correction[r];
      tile_max[r] = shift;
    }
    #pragma unroll
    for (int n = 0; n < kSTiles; ++n) {
      #pragma unroll
      for (int e = 0; e < 4; ++e) {
        s_acc[n][e] = sdpa_exp2(s_acc[n][e] - tile_max[e >> 1]);
        l_run[e >> 1] += s_acc[n][e];
      }
    }
    #pragma unroll
    for (int n = 0; n < kOTiles; ++n) {
      o[n][0] *= correction[0];
      o[n][1] *= correction[0];
      o[n][2] *= correction[1];
      o[n][3] *= correction[1];
    }

    // O [16 x kHeadDim] += P V. P's A fragment of keys 16 * step ..: two score n-tiles; V's B
    // fragments transposed from the [key][dim] tile: matrix m of lane l is key 16 * step + 8 * (m % 2)
    // + l % 8 at chunk 2 * pair + m / 2.
    #pragma unroll
    for (int s = 0; s < kSdpaBlockN / 16; ++s) {
      const unsigned a[4] = {sdpa_pack(T{}, s_acc[2 * s][0], s_acc[2 * s][1]),
                             sdpa_pack(T{}, s_acc[2 * s][2], s_acc[2 * s][3]),
                             sdpa_pack(T{}, s_acc[2 * s + 1][0], s_acc[2 * s + 1][1]),
                             sdpa_pack(T{}, s_acc[2 * s + 1][2], s_acc[2 * s + 1][3])};
      #pragma unroll
      for (int pair = 0; pair < kOTiles / 2; ++pair) {
        const int m = lane >> 3;
        unsigned r[4];
        ldmatrix_x4_trans(r, v_s + sdpa_swizzle<kHeadDim>(16 * s + 8 * (m & 1) + (lane & 7), 2 * pair + (m >> 1)));
        const unsigned b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
        sdpa_mma(T{}, o[2 * pair], a, b0);
        sdpa_mma(T{}, o[2 * pair + 1], a, b1);
      }
    }
    __syncthreads();  // the next iteration's copies overwrite the stage read here
  }
  cp_async_wait<0>();

  // out = O / l; the quad's four threads hold a row's partial sums.
  float inv[2];
  #pragma unroll
  for (int r = 0; r < 2; ++r) {
    float l = l_run[r];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    inv[r] = l > 0.f ? 1.f / l : 0.f;
  }
  unsigned* out = reinterpret_cast<unsigned*>(p.out);  // pairs of 16-bit elements
  const long long head_row = static_cast<long long>(bh) * p.queries;
  #pragma unroll
  for (int n = 0; n < kOTiles; ++n) {
    const int col = n * 8 + 2 * t4;
    if (row0 < p.queries) out[((head_row + row0) * kHeadDim + col) / 2] = sdpa_pack(T{}, o[n][0] * inv[0], o[n][1] * inv[0]);
    if (row1 < p.queries) out[((head_row + row1) * kHeadDim + col) / 2] = sdpa_pack(T{}, o[n][2] * inv[1], o[n][3] * inv[1]);
  }
}

}  // namespace boo
