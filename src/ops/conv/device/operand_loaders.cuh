// boo device code: the operand loaders of the implicit-GEMM convolution --
// global -> shared copies of the GEMM's A and B tiles, read from the conv
// tensors through the face maps (face.cuh). The GEMM mainloop
// (src/kernels/gemm/mainloop.cuh) calls init() once and load() per k tile.
//
// Three ways to load, chosen per operand at compile time:
//   precomputed rows     K-vector operands of the forward face (both) and the data face's A:
//                        each thread's rows are fixed, so the per-row part of every address
//                        (batch, pixel, padding start) is computed once and each k tile adds
//                        only the per-k part (tap and channel) -- CUTLASS's "optimized"
//                        iterator, with every size a constant. Two variants: unit strides
//                        (one add per vector) and the strided data face.
//   precomputed columns  MN-vector B operands of the weight face (x's im2col) and the data
//                        face (the filter): each thread's column is fixed, and the k of its
//                        slots advances by BK per tile as mixed-radix digits, by carries
//                        instead of divisions (the divisions per vector bound these kernels).
//   by offsets           everything else: each element's (scalar) or vector's offset from
//                        Face's a_offset / b_offset, whatever the layout.
#pragma once

#include "boo/conv/face.cuh"
#include "boo/kernels/arch/sm80.cuh"
#include "boo/kernels/gemm/tile.cuh"

namespace boo {
namespace igemm {

using gemm::kScalar;
using gemm::kVectorK;
using gemm::kVectorMN;
using gemm::Select;
using gemm::Tile;

/// A GEMM k index as mixed-radix digits (d0, d1, d2, d3), d3 fastest, radices (-, R1, R2, R3):
/// advanced by a constant step without division, each digit taking the step's digit plus at most
/// one carry. d0 is unbounded (a k past the end is caught by the caller's k < K check).
template <class I, long long R1, long long R2, long long R3>
struct KDigits {
  I d0, d1, d2, d3;

  __device__ void set(I k) {
    d3 = k % static_cast<I>(R3);
    k /= static_cast<I>(R3);
    d2 = k % static_cast<I>(R2);
    k /= static_cast<I>(R2);
    d1 = k % static_cast<I>(R1);
    d0 = k / static_cast<I>(R1);
  }
  template <long long kStep>
  __device__ void advance() {
    constexpr I s3 = kStep % R3, s2 = kStep / R3 % R2, s1 = kStep / (R3 * R2) % R1, s0 = kStep / (R3 * R2 * R1);
    d3 += s3;
    I carry = d3 >= static_cast<I>(R3) ? 1 : 0;
    d3 -= carry * static_cast<I>(R3);
    d2 += s2 + carry;
    carry = d2 >= static_cast<I>(R2) ? 1 : 0;
    d2 -= carry * static_cast<I>(R2);
    d1 += s1 + carry;
    carry = d1 >= static_cast<I>(R1) ? 1 : 0;
    d1 -= carry * static_cast<I>(R1);
    d0 += s0 + carry;
  }
};

/// Loads one operand's tiles, global -> shared: A (kIsA: rows m, k) or B (k, columns n).
///
/// One class holds the state of both precomputed paths, although a loader uses at most one: the
/// other's members are never touched and cost nothing. A class per path reads better but changes
/// the machine code: NVVM then orders the k loop's values differently and ptxas schedules some
/// kernels differently (found by comparing the PTX of every kernel the planner emits).
template <class C, bool kIsA>
struct OperandLoader {
  using T = typename C::T;
  using I = Index<C>;
  using F = Face<C>;
  static constexpr int kRows = kIsA ? C::BM : C::BN;  // the tile's M (A) or N (B) extent
  static constexpr int kMode = kIsA ? C::kAMode : C::kBMode;
  static constexpr int V = kIsA ? C::kAVec : C::kBVec;  // elements per vector
  static constexpr int kBytes = V * static_cast<int>(sizeof(T));  // per copy
  using TileT = Tile<C, kRows, kMode>;

  static constexpr bool kPrecomputedRows = kMode == kVectorK && (C::kFace == 0 || (C::kFace == 1 && kIsA));
  static constexpr int kPerRow = C::BK / V;               // threads (vectors) per tile row
  static constexpr int kRowStep = C::kThreads / kPerRow;  // tile rows per pass of the CTA
  static constexpr int kIters = kPrecomputedRows ? (kRows + kRowStep - 1) / kRowStep : 1;  // a thread's rows
  // With unit strides (every forward face; the data face unless strided): a vector's offset is its
  // row's offset plus the tile's k part, one add; a bound is checked only in a dimension where the
  // receptive field can leave the tensor, by one unsigned compare. Row it of the thread is tile
  // row threadIdx.x / kPerRow + it * kRowStep: its shared-memory slot is a constant step from slot 0.
  static constexpr bool kLinear = C::kFace == 0 || (C::stride(0) == 1 && C::stride(1) == 1 && C::stride(2) == 1);
  static constexpr unsigned kSlotBytes = kRowStep * TileT::kPitch * sizeof(T);

  static constexpr bool kPrecomputedColumns =
      kMode == kVectorMN && !kIsA && ((C::kFace == 2 && !(C::kAPixelStride > 0 && C::kPointwise)) || C::kFace == 1);
  static constexpr int kPerK = kRows / V;  // threads (vectors) per k line of the tile
  static constexpr int kColSlots = kPrecomputedColumns ? (C::BK * kPerK + C::kThreads - 1) / C::kThreads : 1;
  // A slot's k as digits: weight face (n, z, y, x) of dy's pixels, data face (tap z, y, x, kb).
  using Digits = typename Select<C::kFace == 2, KDigits<I, C::b_size(0), C::b_size(1), C::b_size(2)>,
                                 KDigits<I, C::phase_taps(1), C::phase_taps(2), C::kChannelsB / C::kGroups>>::type;

  // Precomputed rows, per row `it` of the thread:
  int kk_;                                  // the thread's k offset in the tile
  unsigned smem_off_;                       // byte offset of slot 0 in a stage
  bool row_ok_[kIters];                     // (it): the row is in the tile and the GEMM
  I base_[kIters];                          // (it): offset of the row's batch/pixel (or filter row); kLinear:
                                            // at its receptive field's first coordinate (may lie outside)
  I sz_[kIters], sy_[kIters], sx_[kIters];  // (it): first coordinate of the row's receptive field
  // Precomputed columns: the thread's column -- its offset (-1: outside) and, weight face, its
  // tap's offsets (tap * dilation - padding) -- and per slot the digits of the k loaded next.
  I col_base_, tz_, ty_, tx_;
  Digits digits_[kColSlots];  // (slot)

  /// Once, before the first tile: row0 is the tile's first row (A) or column (B), g the group,
  /// k_first the first k tile's start (the tiles then come in order, BK apart).
  __device__ void init(I row0, I g, I k_first) {
    if constexpr (kPrecomputedColumns) init_columns(row0, g, k_first);
    if constexpr (kPrecomputedRows) init_rows(row0, g);
  }

  /// Issues the copies of the tile at k0 into `smem` (cp.async, or plain loads for scalar operands).
  __device__ void load(T* smem, const T* __restrict__ gmem, I row0, I k0, I g) {
    if constexpr (kPrecomputedColumns) load_columns(smem, gmem, k0);
    else if constexpr (kPrecomputedRows && kLinear) load_rows_linear(smem, gmem, k0);
    else if constexpr (kPrecomputedRows) load_rows_strided(smem, gmem, k0);
    else load_by_offsets(smem, gmem, row0, k0, g);
  }

 private:
  /// Whether the thread's row it lies in the tile: only the last can fall past it, when the tile's
  /// rows are not a multiple of kRowStep (a 96-row tile by 64-row steps). Its slot would be the next
  /// tile's memory: no copy at all, not even a zero-filling one, may go there.
  __device__ static bool in_tile(int it) {
    return kRows % kRowStep == 0 || it < kIters - 1 || static_cast<int>(threadIdx.x) / kPerRow + it * kRowStep < kRows;
  }
  /// The extent a row coordinate plus a tap displacement is checked against in dimension d.
  __device__ static constexpr long long extent(int d) { return C::kFace == 0 ? C::a_size(d) : C::b_size(d); }
  /// Whether dimension d needs that check: the coordinates' range there, from the constants.
  __device__ static constexpr bool bounded(int d) {
    if constexpr (C::kFace == 0) {  // iz = oz * stride - pad + r * dil, oz < b_size, r < filter_size
      return kIsA && (C::pad(d) > 0 ||
                      (C::b_size(d) - 1) * C::stride(d) - C::pad(d) + (C::filter_size(d) - 1) * C::dilation(d) >=
                          C::a_size(d));
    } else {  // t = i + pad - r * dil over the phase's rows i and taps r
      const long long step = C::kPhase ? C::stride(d) : 1;
      const long long i_lo = C::phase_first_pixel(d), i_hi = C::phase_first_pixel(d) + step * (C::phase_size(d) - 1);
      const long long r_lo = C::phase_first_tap(d), r_hi = C::phase_first_tap(d) + step * (C::phase_taps(d) - 1);
      return i_lo + C::pad(d) - r_hi * C::dilation(d) < 0 || i_hi + C::pad(d) - r_lo * C::dilation(d) >= C::b_size(d);
    }
  }

  __device__ void init_columns(I row0, I g, I k_first) {
    static_assert(C::kThreads % kPerK == 0, "a thread's slots share one column");
    const I col = row0 + (threadIdx.x % kPerK) * V;
    col_base_ = -1;
    tz_ = ty_ = tx_ = 0;
    if (col < static_cast<I>(C::kN)) {
      if constexpr (C::kFace == 2) {  // col = (tap, channel c)
        I rz, ry, rx;
        F::tap(col / F::kAg, rz, ry, rx);
        col_base_ = F::a_at(0, g * F::kAg + col % F::kAg, 0, 0, 0);
        tz_ = rz * static_cast<I>(C::dilation(0)) - static_cast<I>(C::pad(0));
        ty_ = ry * static_cast<I>(C::dilation(1)) - static_cast<I>(C::pad(1));
        tx_ = rx * static_cast<I>(C::dilation(2)) - static_cast<I>(C::pad(2));
      } else {  // col = channel c of the filter
        col_base_ = F::w_at(g * F::kBg, col, 0, 0, 0);
      }
    }
#pragma unroll
    for (int s = 0; s < kColSlots; ++s) digits_[s].set(k_first + (threadIdx.x + s * C::kThreads) / kPerK);
  }

  __device__ void init_rows(I row0, I g) {
    static_assert(C::kThreads % kPerRow == 0, "threads must cover whole tile rows");
    kk_ = (threadIdx.x % kPerRow) * V;
    smem_off_ = static_cast<unsigned>(TileT::index(threadIdx.x / kPerRow, kk_) * sizeof(T));
#pragma unroll
    for (int it = 0; it < kIters; ++it) {
      const int row = threadIdx.x / kPerRow + it * kRowStep;
      const I m = row0 + row;
      row_ok_[it] = row < kRows && m < static_cast<I>(kIsA ? C::kM : C::kN);
      base_[it] = 0;
      sz_[it] = sy_[it] = sx_[it] = 0;
      if (!row_ok_[it]) continue;
      if constexpr (C::kFace == 0 && kIsA) {  // im2col rows: (n, output pixel)
        I z, y, x;
        F::template spatial<false>(m % F::kPixB, z, y, x);
        sz_[it] = z * static_cast<I>(C::stride(0)) - static_cast<I>(C::pad(0));
        sy_[it] = y * static_cast<I>(C::stride(1)) - static_cast<I>(C::pad(1));
        sx_[it] = x * static_cast<I>(C::stride(2)) - static_cast<I>(C::pad(2));
        base_[it] = F::a_at(m / F::kPixB, g * F::kAg, sz_[it], sy_[it], sx_[it]);
      } else if constexpr (C::kFace == 0) {  // filter rows: output channel m of the group
        base_[it] = F::w_at(g * F::kBg + m, 0, 0, 0, 0);
      } else {  // data face: (n, input pixel) rows reading dy
        I n, z, y, x;
        F::data_row(m, n, z, y, x);
        sz_[it] = z + static_cast<I>(C::pad(0));
        sy_[it] = y + static_cast<I>(C::pad(1));
        sx_[it] = x + static_cast<I>(C::pad(2));
        base_[it] = kLinear ? F::b_at(n, g * F::kBg, sz_[it], sy_[it], sx_[it]) : F::b_at(n, g * F::kBg, 0, 0, 0);
      }
    }
  }

  /// Precomputed columns: a thread's column is the same in all its slots and tiles.
  __device__ void load_columns(T* smem, const T* __restrict__ gmem, I k0) {
    const int row = (threadIdx.x % kPerK) * V;
#pragma unroll
    for (int s = 0; s < kColSlots; ++s) {
      const int kk = (threadIdx.x + s * C::kThreads) / kPerK;
      if (kk >= C::BK) continue;
      const Digits& d = digits_[s];
      bool ok = col_base_ >= 0 && k0 + kk < static_cast<I>(C::kK);
      I off;
      if constexpr (C::kFace == 2) {  // (n, z, y, x) of dy's pixel -> x's pixel under this tap
        const I iz = d.d1 * static_cast<I>(C::stride(0)) + tz_, iy = d.d2 * static_cast<I>(C::stride(1)) + ty_,
                ix = d.d3 * static_cast<I>(C::stride(2)) + tx_;
        ok = ok && iz >= 0 && iz < static_cast<I>(C::a_size(0)) && iy >= 0 && iy < static_cast<I>(C::a_size(1)) &&
             ix >= 0 && ix < static_cast<I>(C::a_size(2));
        off = col_base_ + F::a_at(d.d0, 0, iz, iy, ix);
      } else {  // (tap j = (z, y, x), kb): the data face's tap as data_tap() maps it
        off = col_base_ + F::w_at(d.d3, 0, static_cast<I>(C::phase_first_tap(0)) + F::row_step(0) * d.d0,
                                  static_cast<I>(C::phase_first_tap(1)) + F::row_step(1) * d.d1,
                                  static_cast<I>(C::phase_first_tap(2)) + F::row_step(2) * d.d2);
      }
      cp_async_vector<kBytes>(smem + TileT::index(row, kk), gmem + (ok ? off : 0), ok);
      digits_[s].template advance<C::BK>();
    }
  }

  /// Precomputed rows, unit strides.
  __device__ void load_rows_linear(T* smem, const T* __restrict__ gmem, I k0) {
    const I k = k0 + kk_;
    const bool k_ok = k < static_cast<I>(C::kK);
    // The tap's displacement (dz, dy, dx) of a row's coordinates and the k part of the offset.
    I rz, ry, rx, dz, dy, dx, k_off;
    if constexpr (C::kFace == 0) {
      const I c = k % F::kAg;
      F::tap(k / F::kAg, rz, ry, rx);
      dz = rz * static_cast<I>(C::dilation(0)), dy = ry * static_cast<I>(C::dilation(1)),
      dx = rx * static_cast<I>(C::dilation(2));
      k_off = kIsA ? F::a_at(0, c, dz, dy, dx) : F::w_at(0, c, rz, ry, rx);
    } else {
      const I kb = k % F::kBg;
      F::data_tap(k / F::kBg, rz, ry, rx);
      dz = -rz * static_cast<I>(C::dilation(0)), dy = -ry * static_cast<I>(C::dilation(1)),
      dx = -rx * static_cast<I>(C::dilation(2));
      k_off = F::b_at(0, kb, dz, dy, dx);
    }
    using U = typename Select<C::kIdx32, unsigned, unsigned long long>::type;
    const unsigned slot0 = smem_address(smem) + smem_off_;
#pragma unroll
    for (int it = 0; it < kIters; ++it) {
      if (!in_tile(it)) continue;
      bool ok = k_ok && row_ok_[it];
      if constexpr (bounded(0)) ok = ok && static_cast<U>(sz_[it] + dz) < static_cast<U>(extent(0));
      if constexpr (bounded(1)) ok = ok && static_cast<U>(sy_[it] + dy) < static_cast<U>(extent(1));
      if constexpr (bounded(2)) ok = ok && static_cast<U>(sx_[it] + dx) < static_cast<U>(extent(2));
      cp_async_vector_at<kBytes>(slot0 + it * kSlotBytes, gmem + (ok ? base_[it] + k_off : 0), ok);
    }
  }

  /// Precomputed rows of the strided data face: a tap reaches a row only where the stride divides.
  __device__ void load_rows_strided(T* smem, const T* __restrict__ gmem, I k0) {
    const I k = k0 + kk_;
    const bool k_ok = k < static_cast<I>(C::kK);
    I rz, ry, rx;
    const I kb = k % F::kBg;
    F::data_tap(k / F::kBg, rz, ry, rx);
    const I dz = rz * static_cast<I>(C::dilation(0)), dy = ry * static_cast<I>(C::dilation(1)),
            dx = rx * static_cast<I>(C::dilation(2));
    const unsigned slot0 = smem_address(smem) + smem_off_;
#pragma unroll
    for (int it = 0; it < kIters; ++it) {
      if (!in_tile(it)) continue;
      const I tz = sz_[it] - dz, ty = sy_[it] - dy, tx = sx_[it] - dx;
      bool ok = k_ok && row_ok_[it] && tz >= 0 && ty >= 0 && tx >= 0;
      if constexpr (!C::kPhase && C::stride(0) > 1) ok = ok && tz % static_cast<I>(C::stride(0)) == 0;
      if constexpr (!C::kPhase && C::stride(1) > 1) ok = ok && ty % static_cast<I>(C::stride(1)) == 0;
      if constexpr (!C::kPhase && C::stride(2) > 1) ok = ok && tx % static_cast<I>(C::stride(2)) == 0;
      const I oz = tz / static_cast<I>(C::stride(0)), oy = ty / static_cast<I>(C::stride(1)),
              ox = tx / static_cast<I>(C::stride(2));
      ok = ok && oz < static_cast<I>(C::b_size(0)) && oy < static_cast<I>(C::b_size(1)) &&
           ox < static_cast<I>(C::b_size(2));
      const I off = base_[it] + F::b_at(0, kb, oz, oy, ox);
      cp_async_vector_at<kBytes>(slot0 + it * kSlotBytes, gmem + (ok ? off : 0), ok);
    }
  }

  __device__ void load_by_offsets(T* smem, const T* __restrict__ gmem, I row0, I k0, I g) {
    if constexpr (kMode == kScalar) {
      // Consecutive threads take consecutive rows: coalesced when rows are contiguous (NCHW pixels).
      for (int e = threadIdx.x; e < kRows * C::BK; e += C::kThreads) {
        const int row = e % kRows, kk = e / kRows;
        const I off = kIsA ? F::a_offset(row0 + row, k0 + kk, g) : F::b_offset(k0 + kk, row0 + row, g);
        smem[TileT::index(row, kk)] = off >= 0 ? gmem[off] : T{};
      }
    } else if constexpr (kMode == kVectorK) {
      for (int v = threadIdx.x; v < kRows * kPerRow; v += C::kThreads) {
        const int row = v / kPerRow, kk = (v % kPerRow) * V;
        const I off = kIsA ? F::a_offset(row0 + row, k0 + kk, g) : F::b_offset(k0 + kk, row0 + row, g);
        cp_async_vector<kBytes>(smem + TileT::index(row, kk), gmem + (off >= 0 ? off : 0), off >= 0);
      }
    } else {
      for (int v = threadIdx.x; v < C::BK * kPerK; v += C::kThreads) {
        const int kk = v / kPerK, row = (v % kPerK) * V;
        const I off = kIsA ? F::a_offset(row0 + row, k0 + kk, g) : F::b_offset(k0 + kk, row0 + row, g);
        cp_async_vector<kBytes>(smem + TileT::index(row, kk), gmem + (off >= 0 ? off : 0), off >= 0);
      }
    }
  }
};

}  // namespace igemm
}  // namespace boo
