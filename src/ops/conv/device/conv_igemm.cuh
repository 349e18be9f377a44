// boo device code: the general tensor-core implicit-GEMM convolution
// (gpu:conv:implicit_gemm), mma.sync + ldmatrix + cp.async, multistage.
//
// Every conv direction is one face of the regular relation (conv_ref.cpp):
//   B[n, kb, o] = sum_{c in group(kb), r} A[n, c, o*stride - pad + r*dil] * W[kb, c, r]
// and each face is a GEMM per group g (Ag/Bg: channels per group):
//   face 0, forward: rows (n, o) of B, cols kb < Bg,        k = (r, c < Ag)    out = B
//   face 1, data:    rows (n, i) of A, cols c < Ag,         k = (r, kb < Bg)   out = A
//   face 2, weight:  rows kb < Bg,     cols (r, c < Ag),    k = (n, o)         out = W
// The generated source defines `struct Cfg` with every size, stride and tile
// parameter as a compile-time constant (divisions by constants, no runtime
// shape arguments) and instantiates the kernels below with it.
#pragma once

#include "boo/common/mma.cuh"
#include "boo/common/types.cuh"
#include "boo/conv/conv_igemm_params.cuh"

namespace boo {
namespace igemm {

template <bool kCond, class A, class B>
struct Select {
  using type = A;
};
template <class A, class B>
struct Select<false, A, B> {
  using type = B;
};

/// How an operand tile travels from global to shared memory.
enum OperandMode : int {
  kScalar = 0,    ///< element by element (any strides); K-major shared tile
  kVectorK = 1,   ///< 16-byte vectors along K; K-major shared tile [rows][BK]
  kVectorMN = 2,  ///< 16-byte vectors along M (A) or N (B); MN-major shared tile [BK][rows]
};

/// Index arithmetic in 32 bits when every tensor has fewer than 2^31 elements (Cfg::kIdx32).
template <class C>
using Index = typename Select<C::kIdx32, int, long long>::type;

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

/// Coordinates of a GEMM (row, k) or (k, col) element in the conv tensors.
template <class C>
struct Face {
  using I = Index<C>;
  static constexpr I kAg = static_cast<I>(C::kCA / C::kGroups), kBg = static_cast<I>(C::kCB / C::kGroups);
  
  static constexpr I kPixA = static_cast<I>(C::AS(0) * C::AS(1) * C::AS(2));  // spatial positions of A
  static constexpr I kPixB = static_cast<I>(C::BS(0) * C::BS(1) * C::BS(2));  // spatial positions of B

  // Splits a spatial index of A (kOfA) or B into (z, y, x), row-major D, H, W.
  template <bool kOfA>
  __device__ static void spatial(I idx, I& z, I& y, I& x) {
    constexpr I s1 = static_cast<I>(kOfA ? C::AS(1) : C::BS(1)), s2 = static_cast<I>(kOfA ? C::AS(2) : C::BS(2));
    x = idx % s2;
    idx /= s2;
    y = idx % s1;
    z = idx / s1;
  }
  __device__ static void tap(I r, I& rz, I& ry, I& rx) {
    rx = r % C::FS(2);
    r /= C::FS(2);
    ry = r % C::FS(1);
    rz = r / C::FS(1);
  }
  // Offsets in the A, B and W tensors of element (i0, i1, z, y, x).
  __device__ static I a_at(I i0, I i1, I z, I y, I x) {
    return i0 * C::AStr(0) + i1 * C::AStr(1) + z * C::AStr(2) + y * C::AStr(3) + x * C::AStr(4);
  }
  __device__ static I b_at(I i0, I i1, I z, I y, I x) {
    return i0 * C::BStr(0) + i1 * C::BStr(1) + z * C::BStr(2) + y * C::BStr(3) + x * C::BStr(4);
  }
  __device__ static I w_at(I i0, I i1, I z, I y, I x) {
    return i0 * C::WStr(0) + i1 * C::WStr(1) + z * C::WStr(2) + y * C::WStr(3) + x * C::WStr(4);
  }

  // The data face runs over one stride phase of A's pixels at a time when the
  // conv is strided (Cfg::kPhase): rows are the pixels i = I0 + stride*t whose
  // contributing taps are exactly r = T0 + stride*j, so no tap is wasted.
  // Without phases I0 = T0 = 0, steps are 1 and IS/TN are A's size and the filter's.
  static constexpr I kPixData = static_cast<I>(C::IS(0) * C::IS(1) * C::IS(2));
  static constexpr I kTapsData = static_cast<I>(C::TN(0) * C::TN(1) * C::TN(2));
  __device__ static I row_step(int d) { return C::kPhase ? static_cast<I>(C::ST(d)) : 1; }
  /// Row m of the data face -> (n, A pixel).
  __device__ static void data_row(I m, I& n, I& iz, I& iy, I& ix) {
    const I p = m % kPixData;
    n = m / kPixData;
    ix = static_cast<I>(C::I0(2)) + row_step(2) * (p % static_cast<I>(C::IS(2)));
    iy = static_cast<I>(C::I0(1)) + row_step(1) * ((p / static_cast<I>(C::IS(2))) % static_cast<I>(C::IS(1)));
    iz = static_cast<I>(C::I0(0)) + row_step(0) * (p / static_cast<I>(C::IS(2) * C::IS(1)));
  }
  /// Tap j of the data face -> (rz, ry, rx).
  __device__ static void data_tap(I j, I& rz, I& ry, I& rx) {
    rx = static_cast<I>(C::T0(2)) + row_step(2) * (j % static_cast<I>(C::TN(2)));
    ry = static_cast<I>(C::T0(1)) + row_step(1) * ((j / static_cast<I>(C::TN(2))) % static_cast<I>(C::TN(1)));
    rz = static_cast<I>(C::T0(0)) + row_step(0) * (j / static_cast<I>(C::TN(2) * C::TN(1)));
  }

  /// Offset of GEMM operand A element (row m, column k) in its tensor, or -1 (zero).
  __device__ static I a_offset(I m, I k, I g) {
    if (m >= C::kM || k >= C::kK) return -1;
    if constexpr (C::kFace == 0) {  // im2col of A
      I n = m / kPixB, oz, oy, ox, rz, ry, rx;
      spatial<false>(m % kPixB, oz, oy, ox);
      const I c = k % kAg;
      tap(k / kAg, rz, ry, rx);
      const I iz = oz * C::ST(0) - C::PD(0) + rz * C::DL(0);
      const I iy = oy * C::ST(1) - C::PD(1) + ry * C::DL(1);
      const I ix = ox * C::ST(2) - C::PD(2) + rx * C::DL(2);
      if (iz < 0 || iz >= C::AS(0) || iy < 0 || iy >= C::AS(1) || ix < 0 || ix >= C::AS(2)) return -1;
      return a_at(n, g * kAg + c, iz, iy, ix);
    } else if constexpr (C::kFace == 1) {  // strided "col2im" of B
      I n, iz, iy, ix, rz, ry, rx;
      data_row(m, n, iz, iy, ix);
      const I kb = k % kBg;
      data_tap(k / kBg, rz, ry, rx);
      const I tz = iz + C::PD(0) - rz * C::DL(0);
      const I ty = iy + C::PD(1) - ry * C::DL(1);
      const I tx = ix + C::PD(2) - rx * C::DL(2);
      if (tz < 0 || ty < 0 || tx < 0) return -1;
      if (!C::kPhase && (tz % C::ST(0) || ty % C::ST(1) || tx % C::ST(2))) return -1;
      const I oz = tz / C::ST(0), oy = ty / C::ST(1), ox = tx / C::ST(2);
      if (oz >= C::BS(0) || oy >= C::BS(1) || ox >= C::BS(2)) return -1;
      return b_at(n, g * kBg + kb, oz, oy, ox);
    } else {  // dy rows
      if constexpr (C::kBPixStride > 0) {  // (n, pixel) is one linear index: no division
        return k * static_cast<I>(C::kBPixStride) + (g * kBg + m) * static_cast<I>(C::BStr(1));
      } else {
        I n = k / kPixB, oz, oy, ox;
        spatial<false>(k % kPixB, oz, oy, ox);
        return b_at(n, g * kBg + m, oz, oy, ox);
      }
    }
  }

  /// Offset of GEMM operand B element (row k, column col) in its tensor, or -1 (zero).
  __device__ static I b_offset(I k, I col, I g) {
    if (col >= C::kN || k >= C::kK) return -1;
    I rz, ry, rx;
    if constexpr (C::kFace == 0) {  // filter, kb = col
      tap(k / kAg, rz, ry, rx);
      return w_at(g * kBg + col, k % kAg, rz, ry, rx);
    } else if constexpr (C::kFace == 1) {  // filter, c = col
      data_tap(k / kBg, rz, ry, rx);
      return w_at(g * kBg + k % kBg, col, rz, ry, rx);
    } else {  // im2col of A, col = (r, c)
      if constexpr (C::kAPixStride > 0 && C::kPointwise) {  // 1x1, stride 1, no padding: pixel k of A
        return k * static_cast<I>(C::kAPixStride) + (g * kAg + col) * static_cast<I>(C::AStr(1));
      }
      I n = k / kPixB, oz, oy, ox;
      spatial<false>(k % kPixB, oz, oy, ox);
      tap(col / kAg, rz, ry, rx);
      const I iz = oz * C::ST(0) - C::PD(0) + rz * C::DL(0);
      const I iy = oy * C::ST(1) - C::PD(1) + ry * C::DL(1);
      const I ix = ox * C::ST(2) - C::PD(2) + rx * C::DL(2);
      if (iz < 0 || iz >= C::AS(0) || iy < 0 || iy >= C::AS(1) || ix < 0 || ix >= C::AS(2)) return -1;
      return a_at(n, g * kAg + col % kAg, iz, iy, ix);
    }
  }

  /// Offset of output element (row m, column col) and its channel (for the bias).
  __device__ static I out_offset(I m, I col, I g, I& channel) {
    I z, y, x, rz, ry, rx;
    if constexpr (C::kFace == 0) {
      spatial<false>(m % kPixB, z, y, x);
      channel = g * kBg + col;
      return b_at(m / kPixB, channel, z, y, x);
    } else if constexpr (C::kFace == 1) {
      I n;
      data_row(m, n, z, y, x);
      channel = g * kAg + col;
      return a_at(n, channel, z, y, x);
    } else {
      tap(col / kAg, rz, ry, rx);
      channel = g * kBg + m;
      return w_at(channel, col % kAg, rz, ry, rx);
    }
  }
};

/// Shared-memory tile of one operand and stage: K-major [kRows][BK + pad] or MN-major [BK][kRows + pad].
template <class C, int kRows, int kMode>
struct Tile {
  using T = typename C::T;
  static constexpr int kPad = 16 / static_cast<int>(sizeof(T));  // one 16-byte vector: conflict-free ldmatrix
  static constexpr bool kKMajor = kMode != kVectorMN;
  static constexpr int kPitch = kKMajor ? C::BK + kPad : kRows + kPad;
  static constexpr int kElems = kKMajor ? kRows * kPitch : C::BK * kPitch;

  __device__ static int index(int row, int k) { return kKMajor ? row * kPitch + k : k * kPitch + row; }
};

/// Loads one operand's tiles, global -> shared. Each thread owns fixed tile
/// slots; for K-vector operands of the forward and data faces the per-row
/// part of every address (batch, pixel, padding start) is computed once, and
/// each k-tile adds only the per-k part (tap and channel) -- CUTLASS's
/// "optimized" iterator, with every size a constant.
template <class C, bool kIsA>
struct Loader {
  using T = typename C::T;
  using I = Index<C>;
  using F = Face<C>;
  static constexpr int kRows = kIsA ? C::BM : C::BN;
  static constexpr int kMode = kIsA ? C::kAMode : C::kBMode;
  static constexpr int V = kIsA ? C::kAVec : C::kBVec;  // elements per vector
  using TileT = Tile<C, kRows, kMode>;
  // The precomputed-row path: K vectors of the forward face (both operands) and the data face (A).
  static constexpr bool kRowsFast = kMode == kVectorK && (C::kFace == 0 || (C::kFace == 1 && kIsA));
  static constexpr int kPerRow = C::BK / V;
  static constexpr int kRowStep = C::kThreads / kPerRow;
  static constexpr int kIters = kRowsFast ? (kRows + kRowStep - 1) / kRowStep : 1;
  // The precomputed-column path: the B operand of the weight face (x's im2col) and of the data face
  // (the filter), vectors along its channels. A thread's column is the same in all its slots and
  // tiles, so its part of the address is computed once; each slot's k advances by BK per tile, kept
  // as mixed-radix digits -- weight face (n, z, y, x) of dy's pixels, data face (tap z, y, x, kb) --
  // advanced by carries instead of divisions (the divisions per vector bound these kernels).
  static constexpr bool kColsFast = kMode == kVectorMN && !kIsA &&
                                    ((C::kFace == 2 && !(C::kAPixStride > 0 && C::kPointwise)) || C::kFace == 1);
  static constexpr int kPerK = kRows / V;
  static constexpr int kColSlots = kColsFast ? (C::BK * kPerK + C::kThreads - 1) / C::kThreads : 1;
  using Digits = typename Select<C::kFace == 2, KDigits<I, C::BS(0), C::BS(1), C::BS(2)>,
                                 KDigits<I, C::TN(1), C::TN(2), C::kCB / C::kGroups>>::type;

  // kRowsFast with unit strides (every forward face; the data face unless strided): a vector's offset
  // is its row's offset plus the tile's k part, one add; a bound is checked only in a dimension where
  // the receptive field can leave the tensor, by one unsigned compare. Row it of the thread is tile
  // row threadIdx.x / kPerRow + it * kRowStep: its shared-memory slot is a constant step from slot 0.
  static constexpr bool kLinear = C::kFace == 0 || (C::ST(0) == 1 && C::ST(1) == 1 && C::ST(2) == 1);
  static constexpr unsigned kSlotBytes = kRowStep * TileT::kPitch * sizeof(T);
  /// Whether the thread's row it lies in the tile: only the last can fall past it, when the tile's
  /// rows are not a multiple of kRowStep (a 96-row tile by 64-row steps). Its slot would be the next
  /// tile's memory: no copy at all, not even a zero-filling one, may go there.
  __device__ static bool in_tile(int it) {
    return kRows % kRowStep == 0 || it < kIters - 1 || static_cast<int>(threadIdx.x) / kPerRow + it * kRowStep < kRows;
  }
  /// The extent a row coordinate plus a tap displacement is checked against in dimension d.
  __device__ static constexpr long long extent(int d) { return C::kFace == 0 ? C::AS(d) : C::BS(d); }
  /// Whether dimension d needs that check: the coordinates' range there, from the constants.
  __device__ static constexpr bool bounded(int d) {
    if constexpr (C::kFace == 0) {  // iz = oz * stride - pad + r * dil, oz < BS, r < FS
      return kIsA && (C::PD(d) > 0 || (C::BS(d) - 1) * C::ST(d) - C::PD(d) + (C::FS(d) - 1) * C::DL(d) >= C::AS(d));
    } else {  // t = i + pad - r * dil over the phase's rows i and taps r
      const long long step = C::kPhase ? C::ST(d) : 1;
      const long long i_lo = C::I0(d), i_hi = C::I0(d) + step * (C::IS(d) - 1);
      const long long r_lo = C::T0(d), r_hi = C::T0(d) + step * (C::TN(d) - 1);
      return i_lo + C::PD(d) - r_hi * C::DL(d) < 0 || i_hi + C::PD(d) - r_lo * C::DL(d) >= C::BS(d);
    }
  }

  int kk_;
  unsigned smem_off_;                       // byte offset of slot 0 in a stage
  bool row_ok_[kIters];                     // the row is in the tile and the GEMM
  I base_[kIters];                          // offset of the row's batch/pixel (or filter row); kLinear: at
                                            // its receptive field's first coordinate (may lie outside)
  I sz_[kIters], sy_[kIters], sx_[kIters];  // first coordinate of the row's receptive field
  // kColsFast: the thread's column -- its offset (-1: outside) and, weight face, its tap's offsets
  // (tap * dilation - padding) -- and per slot the digits of the k of the tile loaded next.
  I col_base_, tz_, ty_, tx_;
  Digits digits_[kColSlots];

  /// k_first: the first k tile's start (the tiles then come in order, BK apart).
  __device__ void init(I row0, I g, I k_first) {
    if constexpr (kColsFast) {
      static_assert(C::kThreads % kPerK == 0, "a thread's slots share one column");
      const I col = row0 + (threadIdx.x % kPerK) * V;
      col_base_ = -1;
      tz_ = ty_ = tx_ = 0;
      if (col < static_cast<I>(C::kN)) {
        if constexpr (C::kFace == 2) {  // col = (tap, channel c)
          I rz, ry, rx;
          F::tap(col / F::kAg, rz, ry, rx);
          col_base_ = F::a_at(0, g * F::kAg + col % F::kAg, 0, 0, 0);
          tz_ = rz * static_cast<I>(C::DL(0)) - static_cast<I>(C::PD(0));
          ty_ = ry * static_cast<I>(C::DL(1)) - static_cast<I>(C::PD(1));
          tx_ = rx * static_cast<I>(C::DL(2)) - static_cast<I>(C::PD(2));
        } else {  // col = channel c of the filter
          col_base_ = F::w_at(g * F::kBg, col, 0, 0, 0);
        }
      }
#pragma unroll
      for (int s = 0; s < kColSlots; ++s) digits_[s].set(k_first + (threadIdx.x + s * C::kThreads) / kPerK);
    }
    if constexpr (kRowsFast) {
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
          sz_[it] = z * static_cast<I>(C::ST(0)) - static_cast<I>(C::PD(0));
          sy_[it] = y * static_cast<I>(C::ST(1)) - static_cast<I>(C::PD(1));
          sx_[it] = x * static_cast<I>(C::ST(2)) - static_cast<I>(C::PD(2));
          base_[it] = F::a_at(m / F::kPixB, g * F::kAg, sz_[it], sy_[it], sx_[it]);
        } else if constexpr (C::kFace == 0) {  // filter rows: output channel m of the group
          base_[it] = F::w_at(g * F::kBg + m, 0, 0, 0, 0);
        } else {  // data face: (n, input pixel) rows reading dy
          I n, z, y, x;
          F::data_row(m, n, z, y, x);
          sz_[it] = z + static_cast<I>(C::PD(0));
          sy_[it] = y + static_cast<I>(C::PD(1));
          sx_[it] = x + static_cast<I>(C::PD(2));
          base_[it] = kLinear ? F::b_at(n, g * F::kBg, sz_[it], sy_[it], sx_[it]) : F::b_at(n, g * F::kBg, 0, 0, 0);
        }
      }
    }
  }

  /// Issues the loads of the tile at k0 (cp.async, or plain loads for scalar operands).
  __device__ void load(T* smem, const T* __restrict__ gmem, I row0, I k0, I g) {
    constexpr int kBytes = V * static_cast<int>(sizeof(T));
    if constexpr (kColsFast) {
      const int row = (threadIdx.x % kPerK) * V;
#pragma unroll
      for (int s = 0; s < kColSlots; ++s) {
        const int kk = (threadIdx.x + s * C::kThreads) / kPerK;
        if (kk >= C::BK) continue;
        const Digits& d = digits_[s];
        bool ok = col_base_ >= 0 && k0 + kk < static_cast<I>(C::kK);
        I off;
        if constexpr (C::kFace == 2) {  // (n, z, y, x) of dy's pixel -> x's pixel under this tap
          const I iz = d.d1 * static_cast<I>(C::ST(0)) + tz_, iy = d.d2 * static_cast<I>(C::ST(1)) + ty_,
                  ix = d.d3 * static_cast<I>(C::ST(2)) + tx_;
          ok = ok && iz >= 0 && iz < static_cast<I>(C::AS(0)) && iy >= 0 && iy < static_cast<I>(C::AS(1)) &&
               ix >= 0 && ix < static_cast<I>(C::AS(2));
          off = col_base_ + F::a_at(d.d0, 0, iz, iy, ix);
        } else {  // (tap j = (z, y, x), kb): the data face's tap as data_tap() maps it
          off = col_base_ + F::w_at(d.d3, 0, static_cast<I>(C::T0(0)) + F::row_step(0) * d.d0,
                                    static_cast<I>(C::T0(1)) + F::row_step(1) * d.d1,
                                    static_cast<I>(C::T0(2)) + F::row_step(2) * d.d2);
        }
        cp_async_vector<kBytes>(smem + TileT::index(row, kk), gmem + (ok ? off : 0), ok);
        digits_[s].template advance<C::BK>();
      }
    } else if constexpr (kRowsFast && kLinear) {
      const I k = k0 + kk_;
      const bool k_ok = k < static_cast<I>(C::kK);
      // The tap's displacement (dz, dy, dx) of a row's coordinates and the k part of the offset.
      I rz, ry, rx, dz, dy, dx, k_off;
      if constexpr (C::kFace == 0) {
        const I c = k % F::kAg;
        F::tap(k / F::kAg, rz, ry, rx);
        dz = rz * static_cast<I>(C::DL(0)), dy = ry * static_cast<I>(C::DL(1)), dx = rx * static_cast<I>(C::DL(2));
        k_off = kIsA ? F::a_at(0, c, dz, dy, dx) : F::w_at(0, c, rz, ry, rx);
      } else {
        const I kb = k % F::kBg;
        F::data_tap(k / F::kBg, rz, ry, rx);
        dz = -rz * static_cast<I>(C::DL(0)), dy = -ry * static_cast<I>(C::DL(1)), dx = -rx * static_cast<I>(C::DL(2));
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
    } else if constexpr (kRowsFast) {  // the strided data face
      const I k = k0 + kk_;
      const bool k_ok = k < static_cast<I>(C::kK);
      I rz, ry, rx;
      const I kb = k % F::kBg;
      F::data_tap(k / F::kBg, rz, ry, rx);
      const I dz = rz * static_cast<I>(C::DL(0)), dy = ry * static_cast<I>(C::DL(1)), dx = rx * static_cast<I>(C::DL(2));
      const unsigned slot0 = smem_address(smem) + smem_off_;
#pragma unroll
      for (int it = 0; it < kIters; ++it) {
        if (!in_tile(it)) continue;
        const I tz = sz_[it] - dz, ty = sy_[it] - dy, tx = sx_[it] - dx;
        bool ok = k_ok && row_ok_[it] && tz >= 0 && ty >= 0 && tx >= 0;
        if constexpr (!C::kPhase && C::ST(0) > 1) ok = ok && tz % static_cast<I>(C::ST(0)) == 0;
        if constexpr (!C::kPhase && C::ST(1) > 1) ok = ok && ty % static_cast<I>(C::ST(1)) == 0;
        if constexpr (!C::kPhase && C::ST(2) > 1) ok = ok && tx % static_cast<I>(C::ST(2)) == 0;
        const I oz = tz / static_cast<I>(C::ST(0)), oy = ty / static_cast<I>(C::ST(1)), ox = tx / static_cast<I>(C::ST(2));
        ok = ok && oz < static_cast<I>(C::BS(0)) && oy < static_cast<I>(C::BS(1)) && ox < static_cast<I>(C::BS(2));
        const I off = base_[it] + F::b_at(0, kb, oz, oy, ox);
        cp_async_vector_at<kBytes>(slot0 + it * kSlotBytes, gmem + (ok ? off : 0), ok);
      }
    } else if constexpr (kMode == kScalar) {
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

/// The implicit-GEMM kernel body. Grid: (M tiles x N tiles, groups, K splits).
template <class C>
__device__ void conv_igemm(const ConvIgemmParams& p) {
  using T = typename C::T;
  using I = Index<C>;
  using TileA = Tile<C, C::BM, C::kAMode>;
  using TileB = Tile<C, C::BN, C::kBMode>;
  constexpr int kWarpM = C::BM / C::WARPS_M, kWarpN = C::BN / C::WARPS_N;
  constexpr int kMmaM = kWarpM / 16, kMmaN = kWarpN / 8;
  constexpr bool kTf32 = C::kMath != 0;
  constexpr int kStepK = kTf32 ? 8 : 16;
  static_assert(C::BK % kStepK == 0 && kWarpM % 16 == 0 && kWarpN % 16 == 0, "tile shape");
  static_assert(C::WARPS_M * C::WARPS_N * 32 == C::kThreads, "thread count");

  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* sA = reinterpret_cast<T*>(smem_raw);                    // (STAGES, TileA::kElems)
  T* sB = sA + C::STAGES * TileA::kElems;                    // (STAGES, TileB::kElems)

  // N tiles fastest: the CTAs that share an A tile (the large activation
  // operand) run together, so it is read from DRAM once and from L2 after.
  constexpr I kTilesN = static_cast<I>((C::kN + C::BN - 1) / C::BN);
  const I tile_n = static_cast<I>(blockIdx.x) % kTilesN, tile_m = static_cast<I>(blockIdx.x) / kTilesN;
  const I g = static_cast<I>(blockIdx.y);
  const I row0 = tile_m * C::BM, col0 = tile_n * C::BN;
  constexpr I kTilesK = static_cast<I>((C::kK + C::BK - 1) / C::BK);
  const I kt_begin = kTilesK * static_cast<I>(blockIdx.z) / C::kSplits;
  const I kt_end = kTilesK * (static_cast<I>(blockIdx.z) + 1) / C::kSplits;

  const T* a_src = reinterpret_cast<const T*>(C::kFace == 0 ? p.a : p.b);
  const T* b_src = reinterpret_cast<const T*>(C::kFace == 2 ? p.a : p.w);

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_m = warp % C::WARPS_M, warp_n = warp / C::WARPS_M;
  float acc[kMmaM][kMmaN][4] = {};

  Loader<C, true> a_loader;
  Loader<C, false> b_loader;
  a_loader.init(row0, g, kt_begin * C::BK);
  b_loader.init(col0, g, kt_begin * C::BK);
  auto load_stage = [&](int stage, I kt) {
    a_loader.load(sA + stage * TileA::kElems, a_src, row0, kt * C::BK, g);
    b_loader.load(sB + stage * TileB::kElems, b_src, col0, kt * C::BK, g);
  };
  // Prologue: STAGES-1 tiles in flight.
  for (int s = 0; s < C::STAGES - 1; ++s) {
    if (kt_begin + s < kt_end) load_stage(s, kt_begin + s);
    cp_async_commit();
  }
  for (I kt = kt_begin; kt < kt_end; ++kt) {
    cp_async_wait<C::STAGES - 2>();
    __syncthreads();  // tile kt is visible to all; stage (kt-1) is free to overwrite
    const I next = kt + C::STAGES - 1;
    if (next < kt_end) load_stage(static_cast<int>((next - kt_begin) % C::STAGES), next);
    cp_async_commit();

    const int stage = static_cast<int>((kt - kt_begin) % C::STAGES);
    const T* tA = sA + stage * TileA::kElems;  // (BM, BK)
    const T* tB = sB + stage * TileB::kElems;  // (BN, BK)
    if constexpr (!kTf32) {
      // bf16/fp16 tensor cores. The fragments of k16 step kk + 16 are loaded before step kk's mma
      // are issued (two fragment buffers), so ldmatrix latency overlaps tensor-core work.
      unsigned a_frag[2][kMmaM][4];  // (buffer, m16 block, A fragment)
      unsigned b_frag[2][kMmaN][2];  // (buffer, n8 block, B fragment)
      auto load_fragments = [&](int buf, int kk) {
#pragma unroll
        for (int i = 0; i < kMmaM; ++i) {
          const int m = warp_m * kWarpM + i * 16;
          if constexpr (TileA::kKMajor)
            ldmatrix_x4(a_frag[buf][i], tA + TileA::index(m + (lane & 15), kk + (lane >> 4) * 8));
          else
            ldmatrix_x4_trans(a_frag[buf][i],
                              tA + TileA::index(m + ((lane >> 3) & 1) * 8, kk + (lane & 7) + (lane >> 4) * 8));
        }
#pragma unroll
        for (int j = 0; j < kMmaN; j += 2) {
          const int n = warp_n * kWarpN + j * 8;
          unsigned r[4];
          if constexpr (TileB::kKMajor)
            ldmatrix_x4(r, tB + TileB::index(n + (lane & 7) + (lane >> 4) * 8, kk + ((lane >> 3) & 1) * 8));
          else
            ldmatrix_x4_trans(r, tB + TileB::index(n + (lane >> 4) * 8, kk + (lane & 7) + ((lane >> 3) & 1) * 8));
          b_frag[buf][j][0] = r[0];
          b_frag[buf][j][1] = r[1];
          b_frag[buf][j + 1][0] = r[2];
          b_frag[buf][j + 1][1] = r[3];
        }
      };
      load_fragments(0, 0);
#pragma unroll
      for (int kk = 0; kk < C::BK; kk += 16) {
        const int buf = (kk / 16) % 2;
        if (kk + 16 < C::BK) load_fragments(buf ^ 1, kk + 16);
#pragma unroll
        for (int i = 0; i < kMmaM; ++i)
#pragma unroll
          for (int j = 0; j < kMmaN; ++j) {
            if constexpr (C::kHalf) mma_f16_16816(acc[i][j], a_frag[buf][i], b_frag[buf][j]);
            else mma_bf16_16816(acc[i][j], a_frag[buf][i], b_frag[buf][j]);
          }
      }
    } else {
#pragma unroll
      for (int kk = 0; kk < C::BK; kk += kStepK) {
        if constexpr (C::kMath == 1) {
          // fp32 operands on TF32 tensor cores (--fp32-math tf32): scalar fragment loads.
          const int gid = lane >> 2, tid = lane & 3;
          unsigned a_tf[kMmaM][4], b_tf[kMmaN][2];
#pragma unroll
          for (int i = 0; i < kMmaM; ++i) {
            const int m = warp_m * kWarpM + i * 16 + gid;
            a_tf[i][0] = to_tf32(tA[TileA::index(m, kk + tid)]);
            a_tf[i][1] = to_tf32(tA[TileA::index(m + 8, kk + tid)]);
            a_tf[i][2] = to_tf32(tA[TileA::index(m, kk + tid + 4)]);
            a_tf[i][3] = to_tf32(tA[TileA::index(m + 8, kk + tid + 4)]);
          }
#pragma unroll
          for (int j = 0; j < kMmaN; ++j) {
            const int n = warp_n * kWarpN + j * 8 + gid;
            b_tf[j][0] = to_tf32(tB[TileB::index(n, kk + tid)]);
            b_tf[j][1] = to_tf32(tB[TileB::index(n, kk + tid + 4)]);
          }
#pragma unroll
          for (int i = 0; i < kMmaM; ++i)
#pragma unroll
            for (int j = 0; j < kMmaN; ++j) mma_tf32_1688(acc[i][j], a_tf[i], b_tf[j]);
        } else {
          // Full fp32 (the default for fp32): FFMA on the CUDA cores, one k at a
          // time, accumulators kept in the mma layout so the epilogue is shared.
          const int gid = lane >> 2, tid = lane & 3;
#pragma unroll
          for (int k8 = 0; k8 < kStepK; ++k8) {
            float a_row[kMmaM][2], b_col[kMmaN][2];
#pragma unroll
            for (int i = 0; i < kMmaM; ++i) {
              const int m = warp_m * kWarpM + i * 16 + gid;
              a_row[i][0] = tA[TileA::index(m, kk + k8)];
              a_row[i][1] = tA[TileA::index(m + 8, kk + k8)];
            }
#pragma unroll
            for (int j = 0; j < kMmaN; ++j) {
              const int n = warp_n * kWarpN + j * 8 + tid * 2;
              b_col[j][0] = tB[TileB::index(n, kk + k8)];
              b_col[j][1] = tB[TileB::index(n + 1, kk + k8)];
            }
#pragma unroll
            for (int i = 0; i < kMmaM; ++i)
#pragma unroll
              for (int j = 0; j < kMmaN; ++j)
#pragma unroll
                for (int q = 0; q < 4; ++q) acc[i][j][q] = fmaf(a_row[i][q >> 1], b_col[j][q & 1], acc[i][j][q]);
          }
        }
      }
    }
  }
  cp_async_wait<0>();

  // Epilogue. Accumulator (i, j, q) holds row warp_m*kWarpM + i*16 + lane/4 (+8 for q >= 2),
  // column warp_n*kWarpN + j*8 + 2*(lane%4) (+1 for odd q).
  if constexpr (C::kSplits == 1 && C::kVecOut) {
    // Stage the finished tile in shared memory, then write 16-byte vectors
    // along the output's contiguous dimension (full cache lines).
    constexpr int kPitchC = C::BN + 16 / static_cast<int>(sizeof(T));
    constexpr int V = 16 / static_cast<int>(sizeof(T));
    static_assert(C::BM * kPitchC * sizeof(T) <= C::STAGES * (TileA::kElems + TileB::kElems) * sizeof(T),
                  "the output tile fits in the pipeline's shared memory");
    __syncthreads();  // every warp is done reading the operand tiles
    T* sC = reinterpret_cast<T*>(smem_raw);  // (BM, BN)
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
              Face<C>::out_offset(0, col0 + c, g, channel);
              v += load_as_float<T>(p.bias, channel);
            }
          }
          sC[r * kPitchC + c] = from_float<T>(activate<C::kAct>(v, p.act_alpha, p.act_lo, p.act_hi));
        }
    __syncthreads();
    T* out = reinterpret_cast<T*>(p.out);
    for (int v = threadIdx.x; v < C::BM * (C::BN / V); v += C::kThreads) {
      const int r = v / (C::BN / V), c = (v % (C::BN / V)) * V;
      const I m = row0 + r, col = col0 + c;
      if (m >= static_cast<I>(C::kM) || col >= static_cast<I>(C::kN)) continue;
      I channel;
      const I off = Face<C>::out_offset(m, col, g, channel);
      *reinterpret_cast<uint4*>(out + off) = *reinterpret_cast<const uint4*>(sC + r * kPitchC + c);
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < kMmaM; ++i) {
#pragma unroll
    for (int j = 0; j < kMmaN; ++j) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const I m = row0 + warp_m * kWarpM + i * 16 + (lane >> 2) + half * 8;
        const I col = col0 + warp_n * kWarpN + j * 8 + (lane & 3) * 2;
        if (m >= static_cast<I>(C::kM)) continue;
        if constexpr (C::kSplits > 1) {
          // fp32 partial sums: workspace (splits, groups, M, N), reduced by conv_igemm_reduce.
          float* ws = reinterpret_cast<float*>(p.workspace) +
                      ((blockIdx.z * C::kGroups + g) * C::kM + m) * C::kN;
          if (col < C::kN) ws[col] = acc[i][j][half * 2];
          if (col + 1 < C::kN) ws[col + 1] = acc[i][j][half * 2 + 1];
        } else {
#pragma unroll
          for (int q = 0; q < 2; ++q) {
            if (col + q >= static_cast<I>(C::kN)) continue;
            I channel;
            const I off = Face<C>::out_offset(m, col + q, g, channel);
            float v = acc[i][j][half * 2 + q];
            if constexpr (C::kBias) v += load_as_float<T>(p.bias, channel);
            v = activate<C::kAct>(v, p.act_alpha, p.act_lo, p.act_hi);
            store_from_float<T>(p.out, off, v);
          }
        }
      }
    }
  }
}

/// Sums the split-K partials and writes the output (with the epilogue). One thread per element.
template <class C>
__device__ void conv_igemm_reduce(const ConvIgemmParams& p) {
  using T = typename C::T;
  constexpr long long kPlane = C::kGroups * C::kM * C::kN;
  const float* ws = reinterpret_cast<const float*>(p.workspace);
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < kPlane;
       e += static_cast<long long>(gridDim.x) * blockDim.x) {
    float v = 0.f;
    for (int s = 0; s < C::kSplits; ++s) v += ws[s * kPlane + e];
    const Index<C> g = static_cast<Index<C>>(e / (C::kM * C::kN)), m = static_cast<Index<C>>((e / C::kN) % C::kM),
                   col = static_cast<Index<C>>(e % C::kN);
    Index<C> channel;
    const Index<C> off = Face<C>::out_offset(m, col, g, channel);
    if constexpr (C::kBias) v += load_as_float<T>(p.bias, channel);
    v = activate<C::kAct>(v, p.act_alpha, p.act_lo, p.act_hi);
    store_from_float<T>(p.out, off, v);
  }
}

}  // namespace igemm
}  // namespace boo
