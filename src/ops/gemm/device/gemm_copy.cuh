// boo device code: the GEMM's strided copies and its general epilogue.
//
// gpu:gemm:* run a GEMM as a 1x1 convolution on the conv tiers' kernels
// (gemm_conv_impl.cpp). An operand whose strides no conv layout expresses is
// copied into a dense buffer first, a result the conv writes elsewhere is
// copied out after, and an epilogue the conv's (bias per output channel, then
// the activation) cannot express -- alpha, beta * C, a broadcast bias -- is
// applied here to the conv's fp32 sums, so that the product is rounded once.
//
// Two forms over the same parameters (gemm_copy_plan.hpp picks one):
// - gemm_copy: one thread per element, grid-stride, the columns the fastest
//   index. For copies where src and dst are both fastest along the same index;
//   the host makes it the columns, so reads and writes coalesce.
// - gemm_copy_tiled: a transpose. The host orders the index space so that src
//   is fastest along the rows and dst along the columns; each block reads a
//   64 x 64 tile down its rows, keeps it in shared memory, and writes it along
//   its columns, so both sides coalesce. One thread per element would read
//   (or write) one element per 32-byte sector: ~20x the traffic of the copy.
#pragma once

#include "boo/gemm/gemm_copy_params.cuh"
#include "boo/kernels/types.cuh"

namespace boo {

/// beta * addend[b, r, c] + bias[b, r, c] (the terms present). T: their type.
template <typename T, bool kAddend, bool kBias>
__device__ __forceinline__ float gemm_copy_terms(const GemmCopyParams& p, long long b, long long r, long long c) {
  auto at = [&](const long long* s) { return b * s[0] + r * s[1] + c * s[2]; };
  float v = 0.f;
  if constexpr (kAddend) v += p.beta * load_as_float<T>(p.addend, at(p.addend_strides));
  if constexpr (kBias) v += load_as_float<T>(p.bias, at(p.bias_strides));
  return v;
}

/// dst[b, r, c] = act(v), v the sum alpha * src + terms.
template <typename T, int kAct>
__device__ __forceinline__ void gemm_copy_store(const GemmCopyParams& p, long long b, long long r, long long c, float v) {
  const long long* s = p.dst_strides;
  store_from_float<T>(p.dst, b * s[0] + r * s[1] + c * s[2], activate<kAct>(v, p.act_alpha, p.act_lo, p.act_hi));
}

/// The element-wise form. T: the type of dst, addend and bias; S: src's (T, or float: the conv's
/// sums). kAddend: beta * addend is added; kBias: bias is added; kAct: the activation (types.cuh).
template <typename T, typename S, bool kAddend, bool kBias, int kAct>
__device__ void gemm_copy(const GemmCopyParams& p) {
  const long long cols = p.sizes[2], rows = p.sizes[1];
  const long long total = p.sizes[0] * rows * cols;
  const long long* s = p.src_strides;
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long c = e % cols, r = (e / cols) % rows, b = e / (cols * rows);  // (batch, row, column)
    const float v = p.alpha * load_as_float<S>(p.src, b * s[0] + r * s[1] + c * s[2]);
    gemm_copy_store<T, kAct>(p, b, r, c, v + gemm_copy_terms<T, kAddend, kBias>(p, b, r, c));
  }
}

/// The tiled form, same template arguments. The host's order: src's smallest stride is its row
/// stride, dst's (and, for coalesced reads, addend's) its column stride. Tiles of kGemmCopyTile
/// rows x kGemmCopyTile columns, partial at the bottom and right edges, batch-major, grid-stride.
/// Each thread moves 16 elements of a tile; in both phases it issues all 16 of its global loads
/// before it uses one (the compiler may not move a load of addend past a store to dst, which it
/// cannot tell apart), so a warp keeps 16 requests in flight.
/// @pre blockDim.x == kGemmCopyThreads (8 warps).
template <typename T, typename S, bool kAddend, bool kBias, int kAct>
__device__ void gemm_copy_tiled(const GemmCopyParams& p) {
  constexpr int kWarps = kGemmCopyThreads / 32;
  constexpr int kSteps = kGemmCopyTile / kWarps, kLaneSteps = kGemmCopyTile / 32;  // 8 x 2 elements a thread
  // tile[cc][rr] = alpha * src[b, r0 + rr, c0 + cc]: [kGemmCopyTile columns][kGemmCopyTile rows + 1]
  // floats. The pad puts element (rr, cc) in bank (cc * 65 + rr) % 32, so both a warp's 32 rows of
  // one column (the reads) and its 32 columns of one row (the writes) hit 32 distinct banks.
  __shared__ float tile[kGemmCopyTile][kGemmCopyTile + 1];
  const long long rows = p.sizes[1], cols = p.sizes[2];
  const long long row_tiles = (rows + kGemmCopyTile - 1) / kGemmCopyTile;
  const long long col_tiles = (cols + kGemmCopyTile - 1) / kGemmCopyTile;
  const long long tiles = p.sizes[0] * row_tiles * col_tiles;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const long long* s = p.src_strides;
  float v[kSteps][kLaneSteps];  // the thread's elements: [step of 8 columns or rows][step of 32]
  for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
    const long long b = t / (row_tiles * col_tiles), in_batch = t % (row_tiles * col_tiles);
    const long long r0 = in_batch / col_tiles * kGemmCopyTile, c0 = in_batch % col_tiles * kGemmCopyTile;
    // Reads: warp w takes columns w, w + 8, ...; its lanes 32 consecutive rows, adjacent in src.
    // Outside the matrix: 0, never written.
#pragma unroll
    for (int i = 0; i < kSteps; ++i) {
#pragma unroll
      for (int j = 0; j < kLaneSteps; ++j) {
        const long long r = r0 + lane + j * 32, c = c0 + warp + i * kWarps;
        v[i][j] = r < rows && c < cols ? p.alpha * load_as_float<S>(p.src, b * s[0] + r * s[1] + c * s[2]) : 0.f;
      }
    }
#pragma unroll
    for (int i = 0; i < kSteps; ++i)
#pragma unroll
      for (int j = 0; j < kLaneSteps; ++j) tile[warp + i * kWarps][lane + j * 32] = v[i][j];
    __syncthreads();
    // Writes: warp w takes rows w, w + 8, ...; its lanes 32 consecutive columns, adjacent in dst
    // (and in an addend laid out as dst). The terms first, for all 16 elements, then the stores.
    constexpr bool kTerms = kAddend || kBias;
    if constexpr (kTerms) {
#pragma unroll
      for (int i = 0; i < kSteps; ++i) {
#pragma unroll
        for (int j = 0; j < kLaneSteps; ++j) {
          const int rr = warp + i * kWarps, cc = lane + j * 32;
          const long long r = r0 + rr, c = c0 + cc;
          v[i][j] = tile[cc][rr] + (r < rows && c < cols ? gemm_copy_terms<T, kAddend, kBias>(p, b, r, c) : 0.f);
        }
      }
    }
#pragma unroll
    for (int i = 0; i < kSteps; ++i) {
#pragma unroll
      for (int j = 0; j < kLaneSteps; ++j) {
        const int rr = warp + i * kWarps, cc = lane + j * 32;
        const long long r = r0 + rr, c = c0 + cc;
        if (r < rows && c < cols) gemm_copy_store<T, kAct>(p, b, r, c, kTerms ? v[i][j] : tile[cc][rr]);
      }
    }
    __syncthreads();  // the next tile overwrites this one
  }
}

}  // namespace boo
