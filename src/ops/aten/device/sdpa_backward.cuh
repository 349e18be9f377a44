// boo device code: scaled dot-product attention backward, flash-attention
// style, from the forward's saved logsumexp (P is recomputed, never stored):
//
//   D  = rowsum(dO * O)                   sdpa_backward_delta (one warp per query row)
//   P  = exp(scale Q K^T - lse)           recomputed by both kernels below
//   dV = P^T dO,  dK = scale dS^T Q       sdpa_backward_dkdv (a CTA per block of 64 keys)
//   dP = dO V^T,  dS = P * (dP - D)
//   dQ = scale dS K                       sdpa_backward_dq (a CTA per block of 64 queries)
//
// dQ has its own kernel (recomputing S and dP) so that every gradient is a sum
// in one fixed order in one CTA: no atomics, no partials. The dK/dV CTA walks
// the query tiles of every head of its kv head's group, so grouped heads add
// into dK and dV in order. Products run on mma.sync m16n8k16 (bf16/fp16 in,
// fp32 accumulation); P and dS are rounded to the input dtype as A operands.
#pragma once

#include "boo/aten/sdpa_backward_params.cuh"
#include "boo/aten/sdpa_flash.cuh"

namespace boo {

constexpr int kSdpaBackwardThreads = 128;  // 4 warps, 16 rows (queries or keys) each
constexpr int kSdpaBackwardRows = 64;      // the rows a CTA owns: queries (dq) or keys (dkdv)

/// Queries per tile of the dK/dV kernel: 32 at head dim 128 keeps its dK and dV
/// accumulators (2 x 64 floats a thread) and the tile's scores in registers.
template <int kHeadDim>
constexpr int sdpa_dkdv_block_q() {
  return kHeadDim == 128 ? 32 : 64;
}

/// dq: Q and dO [64][kHeadDim], then two stages of K and two of V [64][kHeadDim], 16-bit.
template <int kHeadDim>
constexpr int sdpa_dq_shared_bytes() {
  return 2 * kHeadDim * (2 * kSdpaBackwardRows + 4 * kSdpaBlockN);
}
/// dkdv: K and V [64][kHeadDim], then two stages of Q and two of dO [block_q][kHeadDim], 16-bit.
template <int kHeadDim>
constexpr int sdpa_dkdv_shared_bytes() {
  return 2 * kHeadDim * (2 * kSdpaBackwardRows + 4 * sdpa_dkdv_block_q<kHeadDim>());
}

/// Grid: ceil(batch * heads * queries / 8), block: 256 threads (a warp per row r
/// = (b * heads + h) * queries + i). delta[r] = sum_e dO[r, e] O[r, e] (float32,
/// kHeadDim terms), lse2[r] = lse[b, h, i] * log2(e).
template <typename T, int kHeadDim>
__device__ void sdpa_backward_delta(const SdpaBackwardParams& p) {
  const int lane = threadIdx.x & 31;
  const long long r = static_cast<long long>(blockIdx.x) * (blockDim.x >> 5) + (threadIdx.x >> 5);
  if (r >= static_cast<long long>(p.batch) * p.heads * p.queries) return;
  const int i = static_cast<int>(r % p.queries);
  const long long bh = r / p.queries;
  const long long b = bh / p.heads, h = bh % p.heads;
  const T* dout = reinterpret_cast<const T*>(p.dout) + b * p.dout_strides[0] + h * p.dout_strides[1] +
                  i * p.dout_strides[2];
  const T* out = reinterpret_cast<const T*>(p.out) + b * p.out_strides[0] + h * p.out_strides[1] +
                 i * p.out_strides[2];
  float acc = 0.f;
  for (int e = lane; e < kHeadDim; e += 32) acc += to_float(dout[e]) * to_float(out[e]);
  #pragma unroll
  for (int m = 16; m > 0; m >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, m);
  if (lane == 0) {
    reinterpret_cast<float*>(p.delta)[r] = acc;
    const float lse = reinterpret_cast<const float*>(p.lse)[b * p.lse_strides[0] + h * p.lse_strides[1] +
                                                            i * p.lse_strides[2]];
    reinterpret_cast<float*>(p.lse2)[r] = lse * 1.4426950408889634f;
  }
}

/// B fragments of two 8-row n-tiles of a [rows][kHeadDim] tile whose rows are the
/// product's N dimension (Q K^T's keys): matrix m of lane l is row 16 * pair + 8 * (m / 2)
/// + l % 8 at chunk 2 * step + m % 2.
template <int kHeadDim>
__device__ __forceinline__ void sdpa_b_rows(unsigned (&r)[4], const unsigned char* tile, int pair, int step) {
  const int lane = threadIdx.x & 31, m = lane >> 3;
  ldmatrix_x4(r, tile + sdpa_swizzle<kHeadDim>(16 * pair + 8 * (m >> 1) + (lane & 7), 2 * step + (m & 1)));
}
/// B fragments of two 8-column n-tiles of a [rows][kHeadDim] tile whose rows are the
/// product's reduction (P V's keys), transposed: matrix m of lane l is row 16 * step +
/// 8 * (m % 2) + l % 8 at chunk 2 * pair + m / 2.
template <int kHeadDim>
__device__ __forceinline__ void sdpa_b_cols(unsigned (&r)[4], const unsigned char* tile, int pair, int step) {
  const int lane = threadIdx.x & 31, m = lane >> 3;
  ldmatrix_x4_trans(r, tile + sdpa_swizzle<kHeadDim>(16 * step + 8 * (m & 1) + (lane & 7), 2 * pair + (m >> 1)));
}
/// The A fragment of rows [row0, row0 + 16) of a [rows][kHeadDim] tile at 16-wide step `step`.
template <int kHeadDim>
__device__ __forceinline__ void sdpa_a_rows(unsigned (&a)[4], const unsigned char* tile, int row0, int step) {
  const int lane = threadIdx.x & 31;
  ldmatrix_x4(a, tile + sdpa_swizzle<kHeadDim>(row0 + (lane & 15), 2 * step + (lane >> 4)));
}
/// Accumulators of 16 x 16 columns (n-tiles 2 * step, 2 * step + 1) as an A fragment, rounded to T.
template <typename T>
__device__ __forceinline__ void sdpa_a_of(unsigned (&a)[4], const float (&lo)[4], const float (&hi)[4]) {
  a[0] = sdpa_pack(T{}, lo[0], lo[1]);
  a[1] = sdpa_pack(T{}, lo[2], lo[3]);
  a[2] = sdpa_pack(T{}, hi[0], hi[1]);
  a[3] = sdpa_pack(T{}, hi[2], hi[3]);
}

/// acc [16 x 8 kTiles] = A B^T for the warp's 16 rows [row0, row0 + 16) of tile `a` and the
/// first 8 kTiles rows of tile `b`, both [rows][kHeadDim] (the reduction over the head dim).
template <typename T, int kHeadDim, int kTiles>
__device__ __forceinline__ void sdpa_rows_times_tile(float (&acc)[kTiles][4], const unsigned char* a,
                                                     const unsigned char* b, int row0) {
  #pragma unroll
  for (int n = 0; n < kTiles; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.f;
  #pragma unroll
  for (int step = 0; step < kHeadDim / 16; ++step) {
    unsigned fa[4];
    sdpa_a_rows<kHeadDim>(fa, a, row0, step);
    #pragma unroll
    for (int pair = 0; pair < kTiles / 2; ++pair) {
      unsigned r[4];
      sdpa_b_rows<kHeadDim>(r, b, pair, step);
      const unsigned b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
      sdpa_mma(T{}, acc[2 * pair], fa, b0);
      sdpa_mma(T{}, acc[2 * pair + 1], fa, b1);
    }
  }
}

/// acc [16 x kHeadDim] += W B: W the warp's [16 x 8 kTiles] accumulators (rounded to T as A
/// fragments, 16 columns a step), B the first 8 kTiles rows of tile `b` [rows][kHeadDim],
/// read transposed.
template <typename T, int kHeadDim, int kTiles>
__device__ __forceinline__ void sdpa_scores_times_tile(float (&acc)[kHeadDim / 8][4], const float (&w)[kTiles][4],
                                                       const unsigned char* b) {
  #pragma unroll
  for (int step = 0; step < kTiles / 2; ++step) {
    unsigned a[4];
    sdpa_a_of<T>(a, w[2 * step], w[2 * step + 1]);
    #pragma unroll
    for (int pair = 0; pair < kHeadDim / 16; ++pair) {
      unsigned r[4];
      sdpa_b_cols<kHeadDim>(r, b, pair, step);
      const unsigned b0[2] = {r[0], r[1]}, b1[2] = {r[2], r[3]};
      sdpa_mma(T{}, acc[2 * pair], a, b0);
      sdpa_mma(T{}, acc[2 * pair + 1], a, b1);
    }
  }
}

/// Grid: x = batch * heads, y = ceil(queries / 64); block: 128 threads; dynamic shared
/// memory sdpa_dq_shared_bytes<kHeadDim>(). Each warp owns 16 query rows of dQ [64 x kHeadDim].
template <typename T, int kHeadDim, bool kCausal>
__device__ void sdpa_backward_dq(const SdpaBackwardParams& p) {
  constexpr int kThreads = kSdpaBackwardThreads, kBlockM = kSdpaBackwardRows;
  constexpr int kSTiles = kSdpaBlockN / 8;  // 8-key n-tiles of one warp's 16 x kSdpaBlockN scores
  constexpr int kDTiles = kHeadDim / 8;     // 8-wide n-tiles of one warp's 16 x kHeadDim dQ
  constexpr unsigned kRowsBytes = kBlockM * kHeadDim * 2;
  constexpr unsigned kTileBytes = kSdpaBlockN * kHeadDim * 2;
  extern __shared__ __align__(128) unsigned char sdpa_smem[];
  const unsigned q_tile = smem_address(sdpa_smem);
  const unsigned do_tile = q_tile + kRowsBytes;
  const unsigned k_tiles = do_tile + kRowsBytes;  // two stages
  const unsigned v_tiles = k_tiles + 2 * kTileBytes;  // two stages

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int bh = blockIdx.x, b = bh / p.heads, h = bh % p.heads, hk = h / p.group;
  const int q0 = blockIdx.y * kBlockM;
  const unsigned short* q = reinterpret_cast<const unsigned short*>(p.q) + b * p.q_strides[0] + h * p.q_strides[1];
  const unsigned short* dout =
      reinterpret_cast<const unsigned short*>(p.dout) + b * p.dout_strides[0] + h * p.dout_strides[1];
  const unsigned short* k = reinterpret_cast<const unsigned short*>(p.k) + b * p.k_strides[0] + hk * p.k_strides[1];
  const unsigned short* v = reinterpret_cast<const unsigned short*>(p.v) + b * p.v_strides[0] + hk * p.v_strides[1];
  const int key_end = kCausal ? min(p.keys, q0 + kBlockM) : p.keys;
  const int tiles = (key_end + kSdpaBlockN - 1) / kSdpaBlockN;

  sdpa_load_tile<kHeadDim, kBlockM, kThreads>(q_tile, q, p.q_strides[2], q0, p.queries);
  sdpa_load_tile<kHeadDim, kBlockM, kThreads>(do_tile, dout, p.dout_strides[2], q0, p.queries);
  sdpa_load_tile<kHeadDim, kSdpaBlockN, kThreads>(k_tiles, k, p.k_strides[2], 0, p.keys);
  sdpa_load_tile<kHeadDim, kSdpaBlockN, kThreads>(v_tiles, v, p.v_strides[2], 0, p.keys);
  cp_async_commit();

  // Per thread: rows g and g + 8 of the warp's 16, columns 2 * (lane % 4) + {0, 1} of each n-tile.
  const int g = lane >> 2, t4 = lane & 3;
  const int row0 = q0 + warp * 16 + g, row1 = row0 + 8;
  const long long head_row = static_cast<long long>(bh) * p.queries;
  float lse2[2], delta[2];
  #pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = r == 0 ? row0 : row1;
    lse2[r] = row < p.queries ? reinterpret_cast<const float*>(p.lse2)[head_row + row] : 0.f;
    delta[r] = row < p.queries ? reinterpret_cast<const float*>(p.delta)[head_row + row] : 0.f;
  }
  float dq[kDTiles][4];
  #pragma unroll
  for (int n = 0; n < kDTiles; ++n) dq[n][0] = dq[n][1] = dq[n][2] = dq[n][3] = 0.f;

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
    const unsigned char* q_s = sdpa_smem;
    const unsigned char* do_s = sdpa_smem + kRowsBytes;
    const unsigned char* k_s = sdpa_smem + (k_tiles - q_tile) + stage * kTileBytes;
    const unsigned char* v_s = sdpa_smem + (v_tiles - q_tile) + stage * kTileBytes;

    // S = Q K^T and dP = dO V^T [16 x kSdpaBlockN] per warp.
    float s[kSTiles][4], dp[kSTiles][4];
    sdpa_rows_times_tile<T, kHeadDim, kSTiles>(s, q_s, k_s, warp * 16);
    sdpa_rows_times_tile<T, kHeadDim, kSTiles>(dp, do_s, v_s, warp * 16);
    // P = exp2(S scale log2(e) - lse log2(e)), 0 where masked; s becomes dS / scale = P (dP - D).
    const int key0 = tile * kSdpaBlockN;
    #pragma unroll
    for (int n = 0; n < kSTiles; ++n) {
      #pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int key = key0 + n * 8 + 2 * t4 + (e & 1), row = e < 2 ? row0 : row1;
        const bool masked = key >= p.keys || (kCausal && key > row);
        const float prob = masked ? 0.f : sdpa_exp2(s[n][e] * p.scale_log2 - lse2[e >> 1]);
        s[n][e] = prob * (dp[n][e] - delta[e >> 1]);
      }
    }
    // dQ [16 x kHeadDim] += dS K.
    sdpa_scores_times_tile<T, kHeadDim, kSTiles>(dq, s, k_s);
    __syncthreads();  // the next iteration's copies overwrite the stage read here
  }
  cp_async_wait<0>();

  unsigned* out = reinterpret_cast<unsigned*>(p.dq);  // pairs of 16-bit elements, [B, H, L, kHeadDim]
  #pragma unroll
  for (int n = 0; n < kDTiles; ++n) {
    const int col = n * 8 + 2 * t4;
    if (row0 < p.queries)
      out[((head_row + row0) * kHeadDim + col) / 2] = sdpa_pack(T{}, dq[n][0] * p.scale, dq[n][1] * p.scale);
    if (row1 < p.queries)
      out[((head_row + row1) * kHeadDim + col) / 2] = sdpa_pack(T{}, dq[n][2] * p.scale, dq[n][3] * p.scale);
  }
}

/// Rows [q0, q0 + kRows) of head h's Q and dO into the tiles at q_tile and do_tile.
template <int kHeadDim, int kRows>
__device__ __forceinline__ void sdpa_load_query_tiles(const SdpaBackwardParams& p, int b, int h, int q0,
                                                      unsigned q_tile, unsigned do_tile) {
  const unsigned short* q = reinterpret_cast<const unsigned short*>(p.q) + b * p.q_strides[0] + h * p.q_strides[1];
  const unsigned short* dout =
      reinterpret_cast<const unsigned short*>(p.dout) + b * p.dout_strides[0] + h * p.dout_strides[1];
  sdpa_load_tile<kHeadDim, kRows, kSdpaBackwardThreads>(q_tile, q, p.q_strides[2], q0, p.queries);
  sdpa_load_tile<kHeadDim, kRows, kSdpaBackwardThreads>(do_tile, dout, p.dout_strides[2], q0, p.queries);
}

/// Grid: x = batch * kv_heads, y = ceil(keys / 64); block: 128 threads; dynamic shared
/// memory sdpa_dkdv_shared_bytes<kHeadDim>(). Each warp owns 16 key rows of dK and dV
/// [64 x kHeadDim] and works on the transposed products: S^T = K Q^T, dP^T = V dO^T
/// [16 keys x kBlockQ queries], dV += P^T dO, dK += dS^T Q, over the query tiles of
/// every head of the group (heads in order, then queries).
template <typename T, int kHeadDim, bool kCausal>
__device__ void sdpa_backward_dkdv(const SdpaBackwardParams& p) {
  constexpr int kBlockN = kSdpaBackwardRows, kBlockQ = sdpa_dkdv_block_q<kHeadDim>();
  constexpr int kQTiles = kBlockQ / 8;    // 8-query n-tiles of one warp's 16 x kBlockQ scores
  constexpr int kDTiles = kHeadDim / 8;   // 8-wide n-tiles of one warp's 16 x kHeadDim dK and dV
  constexpr unsigned kKeyBytes = kBlockN * kHeadDim * 2;
  constexpr unsigned kQBytes = kBlockQ * kHeadDim * 2;
  extern __shared__ __align__(128) unsigned char sdpa_smem[];
  const unsigned k_tile = smem_address(sdpa_smem);
  const unsigned v_tile = k_tile + kKeyBytes;
  const unsigned q_tiles = v_tile + kKeyBytes;     // two stages
  const unsigned do_tiles = q_tiles + 2 * kQBytes;  // two stages

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int kvh = blockIdx.x, b = kvh / p.kv_heads, hk = kvh % p.kv_heads;
  const int k0 = blockIdx.y * kBlockN;
  const unsigned short* k = reinterpret_cast<const unsigned short*>(p.k) + b * p.k_strides[0] + hk * p.k_strides[1];
  const unsigned short* v = reinterpret_cast<const unsigned short*>(p.v) + b * p.v_strides[0] + hk * p.v_strides[1];
  // Causal: queries before k0 see none of the block's keys.
  const int q_begin = kCausal ? k0 / kBlockQ : 0;
  const int q_tiles_per_head = max(0, (p.queries + kBlockQ - 1) / kBlockQ - q_begin);
  const int iterations = p.group * q_tiles_per_head;

  sdpa_load_tile<kHeadDim, kBlockN, kSdpaBackwardThreads>(k_tile, k, p.k_strides[2], k0, p.keys);
  sdpa_load_tile<kHeadDim, kBlockN, kSdpaBackwardThreads>(v_tile, v, p.v_strides[2], k0, p.keys);
  if (iterations > 0)
    sdpa_load_query_tiles<kHeadDim, kBlockQ>(p, b, hk * p.group, q_begin * kBlockQ, q_tiles, do_tiles);
  cp_async_commit();

  // Per thread: key rows g and g + 8 of the warp's 16, query columns 2 * (lane % 4) + {0, 1} of each n-tile.
  const int g = lane >> 2, t4 = lane & 3;
  const int key_row0 = k0 + warp * 16 + g, key_row1 = key_row0 + 8;
  float dk[kDTiles][4], dv[kDTiles][4];
  #pragma unroll
  for (int n = 0; n < kDTiles; ++n)
    #pragma unroll
    for (int e = 0; e < 4; ++e) dk[n][e] = dv[n][e] = 0.f;

  for (int it = 0; it < iterations; ++it) {
    const int stage = it & 1;
    if (it + 1 < iterations) {
      const int next = it + 1;
      const unsigned offset = static_cast<unsigned>(stage ^ 1) * kQBytes;
      sdpa_load_query_tiles<kHeadDim, kBlockQ>(p, b, hk * p.group + next / q_tiles_per_head,
                                               (q_begin + next % q_tiles_per_head) * kBlockQ, q_tiles + offset,
                                               do_tiles + offset);
    }
    cp_async_commit();  // an empty group on the last iteration keeps the wait count uniform
    cp_async_wait<1>();
    __syncthreads();
    const int h = hk * p.group + it / q_tiles_per_head;
    const int q0 = (q_begin + it % q_tiles_per_head) * kBlockQ;
    const long long head_row = (static_cast<long long>(b) * p.heads + h) * p.queries;
    const unsigned char* k_s = sdpa_smem;
    const unsigned char* v_s = sdpa_smem + kKeyBytes;
    const unsigned char* q_s = sdpa_smem + (q_tiles - k_tile) + stage * kQBytes;
    const unsigned char* do_s = sdpa_smem + (do_tiles - k_tile) + stage * kQBytes;

    // S^T = K Q^T and dP^T = V dO^T [16 keys x kBlockQ queries] per warp.
    float st[kQTiles][4], dpt[kQTiles][4];
    sdpa_rows_times_tile<T, kHeadDim, kQTiles>(st, k_s, q_s, warp * 16);
    sdpa_rows_times_tile<T, kHeadDim, kQTiles>(dpt, v_s, do_s, warp * 16);
    // P^T (0 where masked: queries past the end, causal keys after the query) into st,
    // dS^T / scale = P^T (dP^T - D) into dpt.
    #pragma unroll
    for (int n = 0; n < kQTiles; ++n) {
      #pragma unroll
      for (int c = 0; c < 2; ++c) {
        const int query = q0 + n * 8 + 2 * t4 + c;
        const bool inside = query < p.queries;
        const float lse2 = inside ? reinterpret_cast<const float*>(p.lse2)[head_row + query] : 0.f;
        const float delta = inside ? reinterpret_cast<const float*>(p.delta)[head_row + query] : 0.f;
        #pragma unroll
        for (int e = c; e < 4; e += 2) {
          const int key = e < 2 ? key_row0 : key_row1;
          const bool masked = !inside || (kCausal && key > query);
          const float prob = masked ? 0.f : sdpa_exp2(st[n][e] * p.scale_log2 - lse2);
          st[n][e] = prob;
          dpt[n][e] = prob * (dpt[n][e] - delta);
        }
      }
    }
    // dV += P^T dO and dK += dS^T Q.
    sdpa_scores_times_tile<T, kHeadDim, kQTiles>(dv, st, do_s);
    sdpa_scores_times_tile<T, kHeadDim, kQTiles>(dk, dpt, q_s);
    __syncthreads();  // the next iteration's copies overwrite the stage read here
  }
  cp_async_wait<0>();

  // dK = scale dS^T Q and dV, [B, Hkv, S, kHeadDim] contiguous, pairs of 16-bit elements.
  unsigned* dk_out = reinterpret_cast<unsigned*>(p.dk);
  unsigned* dv_out = reinterpret_cast<unsigned*>(p.dv);
  const long long head_key = static_cast<long long>(kvh) * p.keys;
  #pragma unroll
  for (int n = 0; n < kDTiles; ++n) {
    const int col = n * 8 + 2 * t4;
    if (key_row0 < p.keys) {
      dk_out[((head_key + key_row0) * kHeadDim + col) / 2] = sdpa_pack(T{}, dk[n][0] * p.scale, dk[n][1] * p.scale);
      dv_out[((head_key + key_row0) * kHeadDim + col) / 2] = sdpa_pack(T{}, dv[n][0], dv[n][1]);
    }
    if (key_row1 < p.keys) {
      dk_out[((head_key + key_row1) * kHeadDim + col) / 2] = sdpa_pack(T{}, dk[n][2] * p.scale, dk[n][3] * p.scale);
      dv_out[((head_key + key_row1) * kHeadDim + col) / 2] = sdpa_pack(T{}, dv[n][2], dv[n][3]);
    }
  }
}

}  // namespace boo
