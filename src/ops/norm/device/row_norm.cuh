// boo device code: bandwidth-bound row normalizations (layer norm and RMS
// norm), forward and backward, shared by gpu:layernorm:rows and gpu:rmsnorm:rows.
//
// A row of kCols elements (contiguous, every tensor) is split into vectors of
// kVec elements (16 bytes when the row length allows) spread over the
// kThreadsPerRow threads of a row group; each thread keeps its share of the
// row in registers, so x (and dy) are read from memory exactly once.
// A block holds kBlock / kThreadsPerRow row groups.
//
// Backward: each row group also sums dweight/dbias over the rows it visits
// (its columns are fixed) into float32 partial rows of the workspace;
// row_norm_finalize adds the partial rows in a fixed order, so the result is
// the same run to run. Rows too wide to hold x, dy and both partials in
// registers split the backward: row_norm_backward computes dx alone and
// row_norm_param_grads the partial rows, column-parallel.
#pragma once

#include "boo/kernels/arch/sm80.cuh"
#include "boo/kernels/reduce/group_sum.cuh"
#include "boo/kernels/reduce/row_stats.cuh"
#include "boo/kernels/reduce/vectors.cuh"
#include "boo/kernels/types.cuh"
#include "boo/norm/row_norm_params.cuh"

namespace boo {

/// The compile-time split of a row over a row group.
template <int kCols, int kVec, int kThreadsPerRow, int kBlock>
struct RowSplit {
  static_assert(kCols % kVec == 0, "a row is a whole number of vectors");
  static_assert((kThreadsPerRow & (kThreadsPerRow - 1)) == 0, "row groups are a power of two of threads");
  static_assert(kThreadsPerRow <= 32 || kThreadsPerRow == kBlock, "a row wider than a warp takes the whole block");
  static constexpr int kVectors = kCols / kVec;                                             // vectors per row
  static constexpr int kPerThread = (kVectors + kThreadsPerRow - 1) / kThreadsPerRow;       // vectors per thread
  static constexpr int kRowsPerBlock = kBlock / kThreadsPerRow;                              // row groups per block
};

/// A thread's share of one row as loaded: its kPerThread vectors (vector
/// lane + i * kThreadsPerRow of the row), zeros outside the row or past the
/// last row. With kPrefetch (chosen by norm_rows_impl.cpp) a thread loads its
/// share of the row it visits next before reducing the current one, so the
/// loads overlap the reductions and stores. A per-column parameter (weight,
/// bias) is the share of row 0, loaded once and kept packed in registers.
template <typename T, int kVec, int kPerThread, int kThreadsPerRow, int kVectors>
struct RowShare {
  Vec<T, kVec> v[kPerThread];  // [vectors of this thread]

  __device__ __forceinline__ void load(unsigned long long base, long long row, bool active, int lane) {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int vec = lane + i * kThreadsPerRow;
      v[i] = active && vec < kVectors ? reinterpret_cast<const Vec<T, kVec>*>(base)[row * kVectors + vec]
                                      : Vec<T, kVec>{};
    }
  }

  __device__ __forceinline__ void to_float(float (&out)[kPerThread][kVec]) const {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i)
#pragma unroll
      for (int k = 0; k < kVec; ++k) out[i][k] = boo::to_float(v[i].v[k]);
  }
};

/// x += a second row share (add-layernorm's x2), in float32.
template <typename Share, int kPerThread, int kVec>
__device__ __forceinline__ void add_share(const Share& share, float (&x)[kPerThread][kVec]) {
  float x2[kPerThread][kVec];  // [vectors of this thread][kVec]
  share.to_float(x2);
#pragma unroll
  for (int i = 0; i < kPerThread; ++i)
#pragma unroll
    for (int k = 0; k < kVec; ++k) x[i][k] += x2[i][k];
}

/// A thread's float32 partial sums of dweight and dbias over the rows its row
/// group visits, kElems per parameter (its columns, in share order). In
/// registers, or (kShared, chosen by norm_rows_impl.cpp) in the block's dynamic
/// shared memory, [kInShared][kElems][kBlock] floats (dweight, then dbias
/// unless kDbInRegisters), which leaves the registers to the early load of the
/// next row. kDbInRegisters (with kShared): dbias stays in registers, halving
/// the shared memory the sums take (room for a deeper ring, StagedRows). Each
/// thread touches only its own sums, so no barrier is needed.
template <int kElems, int kBlock, bool kShared, bool kDbInRegisters>
struct PartialSums {
  static constexpr int kInShared = kShared ? (kDbInRegisters ? 1 : 2) : 0;  // sums in shared memory
  float held[kShared ? 1 : 2][kElems];  // [the sums in registers: dweight, dbias or dbias alone][element]

  __device__ __forceinline__ float& at(int which, int e) {
    if (kShared && which < kInShared) {
      extern __shared__ float dynamic_shared[];  // [kInShared][kElems][kBlock]
      return dynamic_shared[(which * kElems + e) * kBlock + threadIdx.x];
    } else {
      return held[kShared ? 0 : which][e];
    }
  }
  __device__ __forceinline__ float& dw(int e) { return at(0, e); }
  __device__ __forceinline__ float& db(int e) { return at(1, e); }
};

/// A thread's shares of the rows it visits next, in a ring of kStages stages
/// in the block's dynamic shared memory after the partial sums (if there),
/// [kStages][kTensors][kPerThread][kBlock] vectors, filled by cp.async
/// (sm_80+) kStages - 1 rows ahead of the row reduced: loads in flight that
/// hold no registers, where the early load (kPrefetch) holds one row ahead in
/// registers. Each thread reads only the slots it filled itself, so no barrier:
/// cp.async.wait_group makes its copies visible to it. Chosen by
/// norm_rows_impl.cpp (StagedRows there).
template <typename T, int kVec, int kPerThread, int kThreadsPerRow, int kVectors, int kBlock, int kTensors,
          int kStages>
struct StagedRows {
  using V = Vec<T, kVec>;
  V* ring;  // [kStages][kTensors][kPerThread][kBlock]

  __device__ __forceinline__ V* slot(int stage, int tensor, int i) const {
    return ring + ((stage * kTensors + tensor) * kPerThread + i) * kBlock + threadIdx.x;
  }

  /// Starts copying this thread's share of `row` of one tensor (zeros past the last row).
  __device__ __forceinline__ void issue(int stage, int tensor, unsigned long long base, long long row, bool active,
                                        int lane) const {
    static_assert(sizeof(V) == 16 || sizeof(V) == 8 || sizeof(V) == 4, "cp.async moves 4, 8 or 16 bytes");
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      const int vec = lane + i * kThreadsPerRow;
      const bool valid = active && vec < kVectors;
      const V* src = reinterpret_cast<const V*>(base) + (valid ? row * kVectors + vec : 0);
      cp_async_vector<sizeof(V)>(slot(stage, tensor, i), src, valid);
    }
  }

  template <typename Share>
  __device__ __forceinline__ void read(int stage, int tensor, Share& share) const {
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) share.v[i] = *slot(stage, tensor, i);
  }
};

/// Waits until at most kPending of this thread's cp.async groups are in
/// flight; the memory clobber keeps the compiler from moving shared-memory
/// reads above it (or a stage's reads below the copies that refill it).
template <int kPending>
__device__ __forceinline__ void staged_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

/// Forward: y = (x - mean) * rstd * weight + bias, rstd = 1/sqrt(var + eps)
/// (layer norm; var biased, two passes over the registers), or
/// y = x * rstd * weight, rstd = 1/sqrt(mean(x^2) + eps) (kRms).
/// Writes float32 mean (layer norm) and rstd per row. kAdd (add-layernorm):
/// the row is x + x2, added in float32 as it is loaded.
template <typename T, int kCols, int kVec, int kThreadsPerRow, int kBlock, bool kPrefetch, bool kRms, bool kWeight,
          bool kBias, bool kAdd>
__device__ void row_norm_forward(const RowNormParams& p) {
  using Split = RowSplit<kCols, kVec, kThreadsPerRow, kBlock>;
  __shared__ Sum2 scratch[32];
  const int lane = threadIdx.x % kThreadsPerRow;  // position in the row group
  const int group = threadIdx.x / kThreadsPerRow;  // row group in the block
  using Share = RowShare<T, kVec, Split::kPerThread, kThreadsPerRow, Split::kVectors>;
  Share weight, bias;  // this thread's columns of each
  if (kWeight) weight.load(p.weight, 0, true, lane);
  if (kBias) bias.load(p.bias, 0, true, lane);
  const long long stride = static_cast<long long>(gridDim.x) * Split::kRowsPerBlock;  // rows between visits
  long long first = static_cast<long long>(blockIdx.x) * Split::kRowsPerBlock;
  Share share, share2;  // of x's and x2's (kAdd) row (kPrefetch: of the row visited next)
  auto load_row = [&](long long row) {
    share.load(p.x, row, row < p.rows, lane);
    if (kAdd) share2.load(p.x2, row, row < p.rows, lane);
  };
  if (kPrefetch) load_row(first + group);
  // The trip count depends on the block only: every thread reaches every reduction.
  for (; first < p.rows; first += stride) {
    const long long row = first + group;
    const bool active = row < p.rows;
    if (!kPrefetch) load_row(row);
    float x[Split::kPerThread][kVec];  // [vectors of this thread][kVec]: its share of the row
    share.to_float(x);
    if (kAdd) add_share(share2, x);
    if (kPrefetch) load_row(row + stride);
    const RowStats stats = two_pass_row_stats<kThreadsPerRow, Split::kPerThread, kVec, !kRms>(
        x, lane, Split::kVectors, static_cast<float>(kCols), p.eps, scratch);
    if (!active) continue;
#pragma unroll
    for (int i = 0; i < Split::kPerThread; ++i) {
      const int vec = lane + i * kThreadsPerRow;
      if (vec >= Split::kVectors) continue;
      float y[kVec];
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        float v = stats.normalize(x[i][k]);
        if (kWeight) v *= to_float(weight.v[i].v[k]);
        if (kBias) v += to_float(bias.v[i].v[k]);
        y[k] = v;
      }
      store_vector<T, kVec>(p.y, row * Split::kVectors + vec, y);
    }
    if (lane == 0) {
      if (!kRms) reinterpret_cast<float*>(p.mean)[row] = stats.mean();
      reinterpret_cast<float*>(p.rstd)[row] = stats.rstd;
    }
  }
}

/// Backward from the saved statistics: xhat = (x - mean) * rstd (mean = 0 for
/// kRms), g = dy * weight,
///   dx = rstd * (g - mean(g) - xhat * mean(g * xhat))   (layer norm)
///   dx = rstd * (g - xhat * mean(g * xhat))             (kRms)
/// and the row group's partial sums of dweight (dy * xhat) and dbias (dy) over
/// its rows, in partial row blockIdx.x * kRowsPerBlock + group (kSharedPartials:
/// kept in shared memory meanwhile, dbias in registers with kDbInRegisters, see
/// PartialSums). kAdd: x is x + x2.
/// kStages > 0: the rows' shares come through a ring of kStages stages in
/// shared memory (StagedRows), and mean and rstd one row ahead in registers.
template <typename T, int kCols, int kVec, int kThreadsPerRow, int kBlock, bool kPrefetch, bool kSharedPartials,
          int kStages, bool kDbInRegisters, bool kRms, bool kWeight, bool kDx, bool kDw, bool kDb, bool kAdd>
__device__ void row_norm_backward(const RowNormParams& p) {
  using Split = RowSplit<kCols, kVec, kThreadsPerRow, kBlock>;
  constexpr bool kStaged = kStages > 0;
  static_assert(!(kStaged && kPrefetch), "the ring is the early load");
  static_assert(!kStaged || kStages >= 2, "a ring of one stage would wait for every row");
  // dbias alone needs only dy (its signature has no x, mean or rstd).
  constexpr bool kNeedX = kDx || kDw;
  __shared__ Sum2 scratch[32];
  const int lane = threadIdx.x % kThreadsPerRow;
  const int group = threadIdx.x / kThreadsPerRow;
  using Share = RowShare<T, kVec, Split::kPerThread, kThreadsPerRow, Split::kVectors>;
  Share weight;  // this thread's columns of the weight
  if (kWeight && kDx) weight.load(p.weight, 0, true, lane);
  // Element i * kVec + k: partial dweight and dbias of this thread's column
  // (vector i, element k); left unused, and so removed by the compiler, when
  // not asked for.
  using Partials = PartialSums<Split::kPerThread * kVec, kBlock, kSharedPartials, kDbInRegisters>;
  Partials partial;
#pragma unroll
  for (int e = 0; e < Split::kPerThread * kVec; ++e) {
    if (kDw) partial.dw(e) = 0.f;
    if (kDb) partial.db(e) = 0.f;
  }
  // A row's shares of x and dy and its statistics (kPrefetch: of the row
  // visited next, loaded before the current row is reduced).
  Share x_share, x2_share, dy_share;
  float row_mean = 0.f, row_rstd = 0.f;
  auto load_stats = [&](long long row) {
    const bool active = row < p.rows;
    if (!kRms && kNeedX) row_mean = active ? reinterpret_cast<const float*>(p.mean)[row] : 0.f;
    if (kNeedX) row_rstd = active ? reinterpret_cast<const float*>(p.rstd)[row] : 0.f;
  };
  auto load_row = [&](long long row) {
    const bool active = row < p.rows;
    if (kNeedX) x_share.load(p.x, row, active, lane);
    if (kNeedX && kAdd) x2_share.load(p.x2, row, active, lane);
    dy_share.load(p.dy, row, active, lane);
    load_stats(row);
  };
  const long long stride = static_cast<long long>(gridDim.x) * Split::kRowsPerBlock;  // rows between visits
  long long first = static_cast<long long>(blockIdx.x) * Split::kRowsPerBlock;
  // The ring: tensors x, x2 (kAdd), dy in that order, after the partial sums.
  constexpr int kX = 0, kX2 = 1, kDy = kNeedX ? (kAdd ? 2 : 1) : 0;
  constexpr int kTensors = kDy + 1;
  extern __shared__ float dynamic_shared[];  // [partial sums (kSharedPartials)][ring (kStaged)]
  using Ring = StagedRows<T, kVec, Split::kPerThread, kThreadsPerRow, Split::kVectors, kBlock, kTensors,
                          (kStaged ? kStages : 1)>;
  const Ring ring{reinterpret_cast<typename Ring::V*>(
      dynamic_shared + Partials::kInShared * Split::kPerThread * kVec * kBlock)};
  auto issue_row = [&](long long row, int stage) {
    if constexpr (kStaged) {
      const bool active = row < p.rows;
      // No shared-memory read of a stage moves below the copies that refill it.
      asm volatile("" ::: "memory");
      if (kNeedX) ring.issue(stage, kX, p.x, row, active, lane);
      if (kNeedX && kAdd) ring.issue(stage, kX2, p.x2, row, active, lane);
      ring.issue(stage, kDy, p.dy, row, active, lane);
      cp_async_commit();
    }
  };
  int stage = 0;  // the ring's stage of the row reduced (kStaged)
  if constexpr (kStaged) {
#pragma unroll
    for (int s = 0; s + 1 < kStages; ++s) issue_row(first + group + s * stride, s);
    load_stats(first + group);
  }
  if (kPrefetch) load_row(first + group);
  for (; first < p.rows; first += stride) {
    const long long row = first + group;
    const bool active = row < p.rows;
    if (!kPrefetch && !kStaged) load_row(row);
    const float mean = row_mean, rstd = row_rstd;
    if constexpr (kStaged) {
      // Refill the stage reduced last time (its values are in registers and
      // used), then wait for this row's: kStages - 1 rows stay in flight.
      issue_row(row + (kStages - 1) * stride, (stage + kStages - 1) % kStages);
      load_stats(row + stride);
      staged_wait<kStages - 1>();
      if (kNeedX) ring.read(stage, kX, x_share);
      if (kNeedX && kAdd) ring.read(stage, kX2, x2_share);
      ring.read(stage, kDy, dy_share);
      stage = (stage + 1) % kStages;
    }
    float xhat[Split::kPerThread][kVec];  // [vectors of this thread][kVec]
    float dy[Split::kPerThread][kVec];    // [vectors of this thread][kVec]
    if (kNeedX) x_share.to_float(xhat);
    if (kNeedX && kAdd) add_share(x2_share, xhat);
    dy_share.to_float(dy);
    if (kPrefetch) load_row(row + stride);
    float sum_g = 0.f, sum_gx = 0.f;
#pragma unroll
    for (int i = 0; i < Split::kPerThread; ++i) {
      const bool valid = active && lane + i * kThreadsPerRow < Split::kVectors;
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        xhat[i][k] = kNeedX && valid ? (xhat[i][k] - mean) * rstd : 0.f;
        if (kDx) {
          const float g = kWeight ? dy[i][k] * to_float(weight.v[i].v[k]) : dy[i][k];
          sum_g += g;
          sum_gx += g * xhat[i][k];
        }
        if (kDw) partial.dw(i * kVec + k) += dy[i][k] * xhat[i][k];
        if (kDb) partial.db(i * kVec + k) += dy[i][k];
      }
    }
    if (!kDx) continue;
    const Sum2 sums = group_sum2<kThreadsPerRow>(Sum2{sum_g, sum_gx}, scratch);
    const float mean_g = kRms ? 0.f : sums.a / static_cast<float>(kCols);
    const float mean_gx = sums.b / static_cast<float>(kCols);
    if (!active) continue;
#pragma unroll
    for (int i = 0; i < Split::kPerThread; ++i) {
      const int vec = lane + i * kThreadsPerRow;
      if (vec >= Split::kVectors) continue;
      float out[kVec];
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        const float g = kWeight ? dy[i][k] * to_float(weight.v[i].v[k]) : dy[i][k];
        out[k] = rstd * (g - mean_g - xhat[i][k] * mean_gx);
      }
      store_vector<T, kVec>(p.dx, row * Split::kVectors + vec, out);
    }
  }
  // The ring's last copies (of rows past the end, zeros) land before the block leaves its shared memory.
  if constexpr (kStaged) staged_wait<0>();
  if (!kDw && !kDb) return;
  const long long slot = static_cast<long long>(blockIdx.x) * Split::kRowsPerBlock + group;
  float* partial_dw = reinterpret_cast<float*>(p.partials) + slot * kCols;                  // [kCols] of slot
  float* partial_db = reinterpret_cast<float*>(p.partials) + (p.slots + slot) * kCols;      // [kCols] of slot
#pragma unroll
  for (int i = 0; i < Split::kPerThread; ++i) {
    const int vec = lane + i * kThreadsPerRow;
    if (vec >= Split::kVectors) continue;
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      if (kDw) partial_dw[vec * kVec + k] = partial.dw(i * kVec + k);
      if (kDb) partial_db[vec * kVec + k] = partial.db(i * kVec + k);
    }
  }
}

/// dweight and dbias partial rows for rows too wide for row_norm_backward to
/// hold (which then computes dx alone): column-parallel, no row reductions.
/// Thread t of block (bx, by) owns vector bx * kBlock + t of the columns and
/// adds dy * xhat and dy over rows by, by + gridDim.y, ... into partial row
/// `by` (p.slots == gridDim.y), so every partial sum has a fixed order.
/// kAdd: x is x + x2.
template <typename T, int kCols, int kVec, int kBlock, bool kRms, bool kDw, bool kDb, bool kAdd>
__device__ void row_norm_param_grads(const RowNormParams& p) {
  constexpr int kVectors = kCols / kVec;  // vectors per row
  const int vec = blockIdx.x * kBlock + threadIdx.x;
  if (vec >= kVectors) return;
  float dw[kVec], db[kVec];  // [kVec]: this thread's columns
#pragma unroll
  for (int k = 0; k < kVec; ++k) dw[k] = db[k] = 0.f;
  for (long long row = blockIdx.y; row < p.rows; row += gridDim.y) {
    float dy[kVec], xhat[kVec];  // [kVec]
    load_vector<T, kVec>(p.dy, row * kVectors + vec, true, dy);
    if (kDw) {
      const float mean = kRms ? 0.f : reinterpret_cast<const float*>(p.mean)[row];
      const float rstd = reinterpret_cast<const float*>(p.rstd)[row];
      load_vector<T, kVec>(p.x, row * kVectors + vec, true, xhat);
      if (kAdd) {
        float x2[kVec];  // [kVec]
        load_vector<T, kVec>(p.x2, row * kVectors + vec, true, x2);
#pragma unroll
        for (int k = 0; k < kVec; ++k) xhat[k] += x2[k];
      }
#pragma unroll
      for (int k = 0; k < kVec; ++k) dw[k] += dy[k] * ((xhat[k] - mean) * rstd);
    }
#pragma unroll
    for (int k = 0; k < kVec; ++k) db[k] += dy[k];
  }
  float* partial_dw = reinterpret_cast<float*>(p.partials) + blockIdx.y * static_cast<long long>(kCols);  // [kCols]
  float* partial_db = reinterpret_cast<float*>(p.partials) + (p.slots + blockIdx.y) * kCols;              // [kCols]
#pragma unroll
  for (int k = 0; k < kVec; ++k) {
    if (kDw) partial_dw[vec * kVec + k] = dw[k];
    if (kDb) partial_db[vec * kVec + k] = db[k];
  }
}

/// Drops the 128-byte line at `address` from L2 without writing it back
/// (sm_80+; a no-op before): for partial rows read for the last time. They
/// were written by the kernel just before and are still in L2; without the
/// discard every dirty line went back to memory later, a write of the whole
/// workspace (2 x 132 partial rows of 12288 floats, 13 MB, at 1024x12288:
/// 17% of the backward's minimum bytes). @pre `address` is 128-byte aligned.
__device__ __forceinline__ void discard_l2_line(const float* address) {
#if __CUDA_ARCH__ >= 800
  asm volatile("discard.global.L2 [%0], 128;" ::"l"(address) : "memory");
#endif
}

/// dweight[c] / dbias[c] = the sum of the partial rows' column c, in a fixed
/// order. Block: 32 columns x 8 slot lanes; lane t adds slots t, t+8, ...,
/// then the 8 lane sums are added in lane order. Where a row of partials is
/// whole 128-byte lines (kCols a multiple of 32 floats; the workspace is
/// 256-byte aligned), each warp's 32 columns of a slot are one line, read
/// once: the warp discards its lines from L2 once every lane has added them
/// (__syncwarp orders the lanes' reads before lane 0's discards).
template <typename T, int kCols, bool kDw, bool kDb>
__device__ void row_norm_finalize(const RowNormParams& p) {
  constexpr bool kWholeLines = kCols % 32 == 0;
  __shared__ float sums[2][8][33];  // [dweight, dbias][slot lane][column in the block], padded
  const int column_in_block = threadIdx.x & 31, slot_lane = threadIdx.x >> 5;
  const long long col = static_cast<long long>(blockIdx.x) * 32 + column_in_block;
  float dw = 0.f, db = 0.f;
  if (col < kCols) {
    const float* partial_dw = reinterpret_cast<const float*>(p.partials);  // [slots][kCols]
    const float* partial_db = partial_dw + p.slots * kCols;                // [slots][kCols]
    // Unrolled so that several slots' loads are in flight at once.
#pragma unroll 4
    for (long long s = slot_lane; s < p.slots; s += 8) {
      if (kDw) dw += partial_dw[s * kCols + col];
      if (kDb) db += partial_db[s * kCols + col];
    }
    if (kWholeLines) {
      __syncwarp();
      if (column_in_block == 0)
        for (long long s = slot_lane; s < p.slots; s += 8) {
          if (kDw) discard_l2_line(partial_dw + s * kCols + col);
          if (kDb) discard_l2_line(partial_db + s * kCols + col);
        }
    }
  }
  sums[0][slot_lane][column_in_block] = dw;
  sums[1][slot_lane][column_in_block] = db;
  __syncthreads();
  if (slot_lane != 0 || col >= kCols) return;
  float total_dw = 0.f, total_db = 0.f;
#pragma unroll
  for (int l = 0; l < 8; ++l) {
    total_dw += sums[0][l][column_in_block];
    total_db += sums[1][l][column_in_block];
  }
  if (kDw) store_from_float<T>(p.dweight, col, total_dw);
  if (kDb) store_from_float<T>(p.dbias, col, total_db);
}

}  // namespace boo
