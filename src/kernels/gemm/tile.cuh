// boo device code: the vocabulary of the tiled GEMM kernels (src/kernels/gemm/):
// the index type, how an operand tile travels to shared memory, and the shared
// tile's layout.
//
// A GEMM kernel is instantiated with a config C, a struct of compile-time
// constants that the generated source defines (the conv's `struct Cfg`). The
// GEMM layer reads these members of it:
//   T                   element type of the operands and the output (float, bf16, f16)
//   kM, kN, kK          the GEMM per group: (M x K) * (K x N)
//   kGroups             independent GEMMs of those sizes, one per blockIdx.y
//   BM, BN, BK          the CTA tile (rows, cols, k per stage)
//   WARPS_M, WARPS_N    warps along the tile's rows and columns; kThreads = 32 * WARPS_M * WARPS_N
//   STAGES              shared-memory stages of the cp.async pipeline
//   kAMode, kBMode      OperandMode of each operand's shared tile
//   kMath               0: bf16/fp16 tensor cores (kHalf: fp16), 1: TF32 tensor cores, 2: FFMA,
//                       3: 3xTF32 (full-precision fp32 on TF32 tensor cores)
//   kSplits             K splits (> 1: fp32 partials reduced by split_k_reduce)
//   kVecOut             the output's GEMM columns are contiguous: 16-byte vector stores
//   kBias, kAct         the epilogue: per-channel bias, then activation kAct (types.cuh)
//   kIdx32              every offset fits in 32 bits
// Everything that says where an element lives in memory (the operand loaders,
// the output map) belongs to the op that instantiates the GEMM.
#pragma once

#include "boo/kernels/types.cuh"

namespace boo {
namespace gemm {

using boo::Index;  // types.cuh
using boo::Select;

/// How an operand tile travels from global to shared memory.
enum OperandMode : int {
  kScalar = 0,    ///< element by element (any strides); K-major shared tile
  kVectorK = 1,   ///< 16-byte vectors along K; K-major shared tile [rows][BK]
  kVectorMN = 2,  ///< 16-byte vectors along M (A) or N (B); MN-major shared tile [BK][rows]
};

/// Shared-memory tile of one operand and stage: K-major [kRows][BK + pad] or MN-major [BK][kRows + pad].
/// Each line is padded by one 16-byte vector so that the lines one ldmatrix reads start in
/// different banks (without it, power-of-two pitches put them all in the same ones).
template <class C, int kRows, int kMode>
struct Tile {
  using T = typename C::T;
  static constexpr int kPad = 16 / static_cast<int>(sizeof(T));  // one 16-byte vector: conflict-free ldmatrix
  static constexpr bool kKMajor = kMode != kVectorMN;
  static constexpr int kPitch = kKMajor ? C::BK + kPad : kRows + kPad;  // elements per line
  static constexpr int kElems = kKMajor ? kRows * kPitch : C::BK * kPitch;

  __device__ static int index(int row, int k) { return kKMajor ? row * kPitch + k : k * kPitch + row; }
};

}  // namespace gemm
}  // namespace boo
