// boo device code: batch norm of channels-last x (gpu:batchnorm:resident) in
// one cooperative launch that reads x (and dy) from device memory once where
// the SMs' shared memory holds them, and re-reads only what does not fit.
//
// The grid is (channel slabs, slices of the rows), one block per SM (at most
// as many blocks as SMs: the cooperative launch starts them all at once). A
// block keeps the first resident_rows rows of its slice ([row][thread
// vector] of 16-byte vectors, dynamic shared memory) while it adds its
// slab's terms over the whole slice (batch_norm_slab_sums' terms and order),
// stores its partials, and waits at a grid barrier for every block's; then it
// derives the slab's coefficients in float64 (slab_coefficients, as
// gpu:batchnorm:slabs) and writes y or dx: first the rows it did not keep,
// re-read from the last down (the sums read them last, so they are the ones
// still in L2), then the kept rows from shared memory. Results are the same
// run to run.
//
// kAsyncKept (a boo tune candidate): the kept rows go straight to shared
// memory by cp.async, every one of a thread's in flight at once, while the
// thread adds the other rows through registers; their terms are added once
// the copies land. Without it a thread moves kUnroll rows at a time through
// registers, storing the kept ones.
#pragma once

#include "boo/kernels/arch/sm80.cuh"
#include "boo/kernels/reduce/grid_barrier.cuh"
#include "boo/norm/batch_norm_slabs.cuh"

namespace boo {

/// Block (slab blockIdx.x, slice blockIdx.y) of the one launch: sums (x - K,
/// (x - K)^2) or with kBackward (dy, dy * (x - saved mean)) over its slice,
/// the grid barrier, then y or dx. Thread (tx, ty) owns channel vector
/// blockIdx.x * kThreadsX + tx (kVec channels) and rows first + ty, +
/// kThreadsY, ..., kUnroll rows' loads in flight. T: x's element type, G:
/// dy's and dx's, P: scale's and bias'. kSave / kRunning: slice 0 writes the
/// saved or running statistics. kAsyncKept: the kept rows by cp.async (above).
template <typename T, typename G, typename P, int kVec, int kThreadsX, int kThreadsY, int kUnroll, bool kBackward,
          bool kSave, bool kRunning, bool kAsyncKept>
__device__ void batch_norm_resident(const BatchNormParams& p) {
  constexpr int kThreads = kThreadsX * kThreadsY;
  constexpr int kSlab = kThreadsX * kVec;  // channels of a slab
  using VectorT = Vec<T, kVec>;
  using VectorG = Vec<G, kVec>;
  __shared__ Sum2 scratch[kThreads / 32][kSlab];               // [warp][channel of the slab]
  __shared__ double group_sums[2][kThreads / kSlab][kSlab];    // [sum][slice group][channel of the slab]
  __shared__ float coefficient[5][kSlab];                      // [high, low, a, b, c][channel of the slab]
  static_assert(sizeof(scratch) + sizeof(group_sums) + sizeof(coefficient) ==
                    resident_static_shared_bytes(kSlab, kThreads),
                "the plan sizes the resident rows from resident_static_shared_bytes");
  // The kept rows: dy's [resident row][kThreadsX] (kBackward), then x's; dy's vectors are at least as wide as
  // x's (G is T or float), so x's start aligned.
  extern __shared__ __align__(16) unsigned char resident[];
  VectorG* kept_dy = reinterpret_cast<VectorG*>(resident);
  VectorT* kept_x = reinterpret_cast<VectorT*>(resident + (kBackward ? p.resident_rows * kThreadsX * sizeof(VectorG) : 0));

  const int tx = threadIdx.x % kThreadsX, ty = threadIdx.x / kThreadsX;
  const long long vectors = p.channels / kVec;  // channel vectors per row
  const long long vec = static_cast<long long>(blockIdx.x) * kThreadsX + tx;
  const bool owner = vec < vectors;
  const SliceRows rows = slice_rows(blockIdx.y, p.rows_per_slice, p.outer);
  const long long kept_end = rows.first + (p.resident_rows < rows.last - rows.first ? p.resident_rows
                                                                                     : rows.last - rows.first);
  float centre[kVec], low[kVec];  // [channel of the vector]: K, or the saved mean (low 0)
#pragma unroll
  for (int k = 0; k < kVec; ++k) low[k] = 0.f;
  if (kBackward) {
#pragma unroll
    for (int k = 0; k < kVec; ++k)
      centre[k] = owner ? reinterpret_cast<const float*>(p.saved_mean)[vec * kVec + k] : 0.f;
  } else {
    load_vector<T, kVec>(p.x, vec, owner, centre);  // row 0
  }
  Sum2 acc[kVec];  // [channel of the vector]
#pragma unroll
  for (int k = 0; k < kVec; ++k) acc[k] = Sum2{0.f, 0.f};
  // One row's vector of x (and dy) into the sums.
  auto add_terms = [&](const VectorT& xv, const VectorG& dv) {
#pragma unroll
    for (int k = 0; k < kVec; ++k)
      add_shifted_terms<kBackward>(to_float(xv.v[k]), kBackward ? to_float(dv.v[k]) : 0.f, centre[k], low[k], acc[k]);
  };
  // This lane's rows from `start` to the slice's end through registers, kUnroll loads in flight; those before
  // kept_end are stored to shared memory.
  auto add_through_registers = [&](long long start) {
    for (long long row = start; row < rows.last; row += kThreadsY * kUnroll) {
      VectorT x[kUnroll];  // [row of the step]
      VectorG dy[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const long long r = row + u * kThreadsY;
        if (r < rows.last) {
          x[u] = reinterpret_cast<const VectorT*>(p.x)[r * vectors + vec];
          if (kBackward) dy[u] = reinterpret_cast<const VectorG*>(p.dy)[r * vectors + vec];
        }
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const long long r = row + u * kThreadsY;
        if (r >= rows.last) break;
        if (r < kept_end) {
          kept_x[(r - rows.first) * kThreadsX + tx] = x[u];
          if (kBackward) kept_dy[(r - rows.first) * kThreadsX + tx] = dy[u];
        }
        add_terms(x[u], dy[u]);
      }
    }
  };
  if constexpr (kAsyncKept) {
    static_assert(sizeof(VectorT) >= 4 && (!kBackward || sizeof(VectorG) >= 4), "cp.async moves 4, 8 or 16 bytes");
    if (owner) {
      for (long long r = rows.first + ty; r < kept_end; r += kThreadsY) {
        cp_async_vector<sizeof(VectorT)>(&kept_x[(r - rows.first) * kThreadsX + tx],
                                         reinterpret_cast<const VectorT*>(p.x) + r * vectors + vec, true);
        if (kBackward)
          cp_async_vector<sizeof(VectorG)>(&kept_dy[(r - rows.first) * kThreadsX + tx],
                                           reinterpret_cast<const VectorG*>(p.dy) + r * vectors + vec, true);
      }
      cp_async_commit();
      // From the lane's first row at or after kept_end while the copies land.
      const long long kept_of_lane = kept_end - rows.first - ty;
      const long long skipped = kept_of_lane > 0 ? (kept_of_lane + kThreadsY - 1) / kThreadsY : 0;
      add_through_registers(rows.first + ty + skipped * kThreadsY);
      cp_async_wait<0>();  // this thread's copies (it alone reads them here)
      for (long long r = rows.first + ty; r < kept_end; r += kThreadsY) {
        const VectorT xv = kept_x[(r - rows.first) * kThreadsX + tx];
        VectorG dv;
        if (kBackward) dv = kept_dy[(r - rows.first) * kThreadsX + tx];
        add_terms(xv, dv);
      }
    }
  } else if (owner) {
    add_through_registers(rows.first + ty);
  }
  store_slab_partials<kVec, kThreadsX, kThreadsY>(p, acc, scratch);
  grid_barrier(p.barrier, 1);

  slab_coefficients<T, P, kSlab, kThreads, kBackward, kSave, kRunning>(p, group_sums, coefficient);
  if (!owner) return;
  float high[kVec], a[kVec], b[kVec], c[kVec];  // [channel of the vector]
#pragma unroll
  for (int k = 0; k < kVec; ++k) {
    high[k] = coefficient[0][tx * kVec + k];
    low[k] = coefficient[1][tx * kVec + k];
    a[k] = coefficient[2][tx * kVec + k];
    b[k] = coefficient[3][tx * kVec + k];
    c[k] = coefficient[4][tx * kVec + k];
  }
  apply_rows_reversed<T, G, kVec, kThreadsY, kUnroll, kBackward>(p, SliceRows{kept_end, rows.last}, ty, vec, vectors,
                                                                 high, low, a, b, c);
  for (long long row = rows.first + ty; row < kept_end; row += kThreadsY) {
    float x[kVec], dy[kVec];  // [channel of the vector]
    const VectorT xv = kept_x[(row - rows.first) * kThreadsX + tx];
#pragma unroll
    for (int k = 0; k < kVec; ++k) x[k] = to_float(xv.v[k]);
    if (kBackward) {
      const VectorG dv = kept_dy[(row - rows.first) * kThreadsX + tx];
#pragma unroll
      for (int k = 0; k < kVec; ++k) dy[k] = to_float(dv.v[k]);
    }
    apply_vector<T, G, kVec, kBackward>(p, row * vectors + vec, x, dy, high, low, a, b, c);
  }
}

}  // namespace boo
