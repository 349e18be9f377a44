// boo device code: the epilogue of the mma.sync GEMMs -- per-channel bias,
// activation, conversion to the output type and the stores. (With split K the
// GEMM stores fp32 partial sums instead and a second kernel applies this
// epilogue to their sum: split_k.cuh.)
//
// Where an output element lives is the op's: OutputMap::out_offset(m, col, g,
// channel) gives the offset of GEMM element (m, col) of group g in the output
// tensor and sets `channel` to its bias channel. The parameter block P carries
// `out`, `bias`, `workspace` (addresses) and `act_alpha`, `act_lo`, `act_hi`;
// with C::kResidual also `residual`: a tensor laid out as the output (a conv's
// z, y's shape and layout), whose element at the output's offset is added
// after the bias and before the activation (cuDNN's conv-bias-add-act order).
#pragma once

#include "boo/kernels/gemm/tile.cuh"
#include "boo/kernels/gemm/warp_tile.cuh"
#include "boo/kernels/types.cuh"

namespace boo {
namespace gemm {

/// The epilogue of one output element at `offset` in the output: its channel's bias, the
/// residual's element at the same offset, then the activation.
template <class C, class P>
__device__ float bias_and_activation(float v, Index<C> channel, Index<C> offset, const P& p) {
  if constexpr (C::kBias) v += load_as_float<typename C::T>(p.bias, channel);
  if constexpr (C::kResidual) v += load_as_float<typename C::T>(p.residual, offset);
  return activate<C::kAct>(v, p.act_alpha, p.act_lo, p.act_hi);
}

/// Stages the finished (BM, BN) tile in shared memory, then writes 16-byte vectors along the
/// output's contiguous dimension (full cache lines instead of the accumulators' 8-byte pairs).
/// `smem` is the pipeline's shared memory, free once every warp is past its last stage.
template <class C, class OutputMap, class P>
__device__ void store_tile_vectorized(const Accumulators<C>& acc, const P& p, unsigned char* smem, Index<C> row0,
                                      Index<C> col0, Index<C> g, int warp_m, int warp_n, int lane) {
  using T = typename C::T;
  using I = Index<C>;
  using TileA = Tile<C, C::BM, C::kAMode>;
  using TileB = Tile<C, C::BN, C::kBMode>;
  constexpr int kWarpM = WarpTile<C>::kWarpM, kWarpN = WarpTile<C>::kWarpN;
  constexpr int kMmaM = WarpTile<C>::kMmaM, kMmaN = WarpTile<C>::kMmaN;
  constexpr int kPitchC = C::BN + 16 / static_cast<int>(sizeof(T));  // padded as the operand tiles are
  constexpr int V = 16 / static_cast<int>(sizeof(T));                 // elements per 16-byte vector
  static_assert(C::BM * kPitchC * sizeof(T) <= C::STAGES * (TileA::kElems + TileB::kElems) * sizeof(T),
                "the output tile fits in the pipeline's shared memory");
  __syncthreads();  // every warp is done reading the operand tiles
  T* sC = reinterpret_cast<T*>(smem);  // (BM, kPitchC)
#pragma unroll
  for (int i = 0; i < kMmaM; ++i)
#pragma unroll
    for (int j = 0; j < kMmaN; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int r = warp_m * kWarpM + i * 16 + (lane >> 2) + (q >> 1) * 8;
        const int c = warp_n * kWarpN + j * 8 + (lane & 3) * 2 + (q & 1);
        float v = acc[i][j][q];
        if constexpr (C::kBias) {
          if (col0 + c < static_cast<I>(C::kN)) {
            I channel;
            OutputMap::out_offset(0, col0 + c, g, channel);
            v += load_as_float<T>(p.bias, channel);
          }
        }
        if constexpr (C::kResidual) {
          // Read here, at the element's own offset, so that its sum is rounded once, as the others'.
          if (row0 + r < static_cast<I>(C::kM) && col0 + c < static_cast<I>(C::kN)) {
            I channel;
            v += load_as_float<T>(p.residual, OutputMap::out_offset(row0 + r, col0 + c, g, channel));
          }
        }
        sC[r * kPitchC + c] = from_float<T>(activate<C::kAct>(v, p.act_alpha, p.act_lo, p.act_hi));
      }
  __syncthreads();
  T* out = reinterpret_cast<T*>(p.out);  // the output tensor, addressed by OutputMap
  for (int v = threadIdx.x; v < C::BM * (C::BN / V); v += C::kThreads) {
    const int r = v / (C::BN / V), c = (v % (C::BN / V)) * V;
    const I m = row0 + r, col = col0 + c;
    if (m >= static_cast<I>(C::kM) || col >= static_cast<I>(C::kN)) continue;
    I channel;
    const I off = OutputMap::out_offset(m, col, g, channel);
    *reinterpret_cast<uint4*>(out + off) = *reinterpret_cast<const uint4*>(sC + r * kPitchC + c);
  }
}

/// Writes each accumulator to its output element (any output layout). The coordinates come by
/// reference (the caller's locals): taken by value, NVVM orders the operands of the index sums
/// differently and ptxas emits other code for the same arithmetic (found with the PTX check).
template <class C, class OutputMap, class P>
__device__ void store_tile_elements(const Accumulators<C>& acc, const P& p, const Index<C>& row0,
                                    const Index<C>& col0, const Index<C>& g, const int& warp_m, const int& warp_n,
                                    const int& lane) {
  using I = Index<C>;
  constexpr int kWarpM = WarpTile<C>::kWarpM, kWarpN = WarpTile<C>::kWarpN;
  constexpr int kMmaM = WarpTile<C>::kMmaM, kMmaN = WarpTile<C>::kMmaN;
#pragma unroll
  for (int i = 0; i < kMmaM; ++i) {
#pragma unroll
    for (int j = 0; j < kMmaN; ++j) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {  // rows lane/4 and lane/4 + 8 of the m16 block
        const I m = row0 + warp_m * kWarpM + i * 16 + (lane >> 2) + half * 8;
        const I col = col0 + warp_n * kWarpN + j * 8 + (lane & 3) * 2;
        if (m >= static_cast<I>(C::kM)) continue;
#pragma unroll
        for (int q = 0; q < 2; ++q) {
          if (col + q >= static_cast<I>(C::kN)) continue;
          I channel;
          const I off = OutputMap::out_offset(m, col + q, g, channel);
          const float v = bias_and_activation<C>(acc[i][j][half * 2 + q], channel, off, p);
          store_from_float<typename C::T>(p.out, off, v);
        }
      }
    }
  }
}

}  // namespace gemm
}  // namespace boo
