// boo device code: the operand coordinate maps of the convolution's GEMM faces.
//
// Every conv direction is one face of the regular relation (conv_ref.cpp):
//   B[n, kb, o] = sum_{c in group(kb), r} A[n, c, o*stride - pad + r*dil] * W[kb, c, r]
// and each face is a GEMM per group g (Ag/Bg: channels per group):
//   face 0, forward: rows (n, o) of B, cols kb < Bg,        k = (r, c < Ag)    out = B
//   face 1, data:    rows (n, i) of A, cols c < Ag,         k = (r, kb < Bg)   out = A
//   face 2, weight:  rows kb < Bg,     cols (r, c < Ag),    k = (n, o)         out = W
// Face<C> maps a GEMM element to its offset in the conv tensors. Every size,
// stride and padding is a constant of the config C (the generated `struct
// Cfg`), so each division here is by a constant. The GEMM layer
// (src/kernels/gemm/) uses out_offset as its output map; the operand loaders
// (operand_loaders.cuh) use the rest.
//
// The conv's members of the config, beside the GEMM's (tile.cuh):
//   kFace                           0 forward, 1 data, 2 weight (above)
//   kChannelsA, kChannelsB          channels of A and B, all groups
//   a_size(d), b_size(d)            spatial sizes (z, y, x) of A and B
//   filter_size(d)                  the filter's spatial size
//   stride(d), pad(d), dilation(d)  per spatial dimension
//   a_strides(i), b_strides(i),     element strides of A (n, c, z, y, x), B (n, kb, z, y, x)
//   w_strides(i)                    and W (kb, c, z, y, x)
//   kPhase, phase_size(d),          the data face's stride phase (data_row below)
//   phase_first_pixel(d),
//   phase_first_tap(d), phase_taps(d)
//   kAPixelStride, kBPixelStride    the stride of one linear (n, pixel) index of A / B where the
//                                   tensor's layout has one (channels last), else 0
//   kPointwise                      1x1 filter, stride 1, no padding: A's pixels are B's
#pragma once

#include "boo/kernels/gemm/tile.cuh"

namespace boo {
namespace igemm {

using gemm::Index;

/// Coordinates of a GEMM (row, k) or (k, col) element in the conv tensors.
template <class C>
struct Face {
  using I = Index<C>;
  static constexpr I kAg = static_cast<I>(C::kChannelsA / C::kGroups), kBg = static_cast<I>(C::kChannelsB / C::kGroups);

  static constexpr I kPixA = static_cast<I>(C::a_size(0) * C::a_size(1) * C::a_size(2));  // spatial positions of A
  static constexpr I kPixB = static_cast<I>(C::b_size(0) * C::b_size(1) * C::b_size(2));  // spatial positions of B

  // Splits a spatial index of A (kOfA) or B into (z, y, x), row-major D, H, W.
  template <bool kOfA>
  __device__ static void spatial(I idx, I& z, I& y, I& x) {
    constexpr I s1 = static_cast<I>(kOfA ? C::a_size(1) : C::b_size(1)),
                s2 = static_cast<I>(kOfA ? C::a_size(2) : C::b_size(2));
    x = idx % s2;
    idx /= s2;
    y = idx % s1;
    z = idx / s1;
  }
  __device__ static void tap(I r, I& rz, I& ry, I& rx) {
    rx = r % C::filter_size(2);
    r /= C::filter_size(2);
    ry = r % C::filter_size(1);
    rz = r / C::filter_size(1);
  }
  // Offsets in the A, B and W tensors of element (i0, i1, z, y, x).
  __device__ static I a_at(I i0, I i1, I z, I y, I x) {
    return i0 * C::a_strides(0) + i1 * C::a_strides(1) + z * C::a_strides(2) + y * C::a_strides(3) +
           x * C::a_strides(4);
  }
  __device__ static I b_at(I i0, I i1, I z, I y, I x) {
    return i0 * C::b_strides(0) + i1 * C::b_strides(1) + z * C::b_strides(2) + y * C::b_strides(3) +
           x * C::b_strides(4);
  }
  __device__ static I w_at(I i0, I i1, I z, I y, I x) {
    return i0 * C::w_strides(0) + i1 * C::w_strides(1) + z * C::w_strides(2) + y * C::w_strides(3) +
           x * C::w_strides(4);
  }

  // The data face runs over one stride phase of A's pixels at a time when the
  // conv is strided (Cfg::kPhase): rows are the pixels i = phase_first_pixel + stride*t whose
  // contributing taps are exactly r = phase_first_tap + stride*j, so no tap is wasted. Without
  // phases both firsts are 0, steps are 1, and phase_size / phase_taps are A's size and the filter's.
  static constexpr I kPixData = static_cast<I>(C::phase_size(0) * C::phase_size(1) * C::phase_size(2));
  static constexpr I kTapsData = static_cast<I>(C::phase_taps(0) * C::phase_taps(1) * C::phase_taps(2));
  __device__ static I row_step(int d) { return C::kPhase ? static_cast<I>(C::stride(d)) : 1; }
  /// Row m of the data face -> (n, A pixel).
  __device__ static void data_row(I m, I& n, I& iz, I& iy, I& ix) {
    const I p = m % kPixData;
    n = m / kPixData;
    ix = static_cast<I>(C::phase_first_pixel(2)) + row_step(2) * (p % static_cast<I>(C::phase_size(2)));
    iy = static_cast<I>(C::phase_first_pixel(1)) +
         row_step(1) * ((p / static_cast<I>(C::phase_size(2))) % static_cast<I>(C::phase_size(1)));
    iz = static_cast<I>(C::phase_first_pixel(0)) +
         row_step(0) * (p / static_cast<I>(C::phase_size(2) * C::phase_size(1)));
  }
  /// Tap j of the data face -> (rz, ry, rx).
  __device__ static void data_tap(I j, I& rz, I& ry, I& rx) {
    rx = static_cast<I>(C::phase_first_tap(2)) + row_step(2) * (j % static_cast<I>(C::phase_taps(2)));
    ry = static_cast<I>(C::phase_first_tap(1)) +
         row_step(1) * ((j / static_cast<I>(C::phase_taps(2))) % static_cast<I>(C::phase_taps(1)));
    rz = static_cast<I>(C::phase_first_tap(0)) +
         row_step(0) * (j / static_cast<I>(C::phase_taps(2) * C::phase_taps(1)));
  }

  /// Offset of GEMM operand A element (row m, column k) in its tensor, or -1 (zero).
  __device__ static I a_offset(I m, I k, I g) {
    if (m >= C::kM || k >= C::kK) return -1;
    if constexpr (C::kFace == 0) {  // im2col of A
      I n = m / kPixB, oz, oy, ox, rz, ry, rx;
      spatial<false>(m % kPixB, oz, oy, ox);
      const I c = k % kAg;
      tap(k / kAg, rz, ry, rx);
      const I iz = oz * C::stride(0) - C::pad(0) + rz * C::dilation(0);
      const I iy = oy * C::stride(1) - C::pad(1) + ry * C::dilation(1);
      const I ix = ox * C::stride(2) - C::pad(2) + rx * C::dilation(2);
      if (iz < 0 || iz >= C::a_size(0) || iy < 0 || iy >= C::a_size(1) || ix < 0 || ix >= C::a_size(2)) return -1;
      return a_at(n, g * kAg + c, iz, iy, ix);
    } else if constexpr (C::kFace == 1) {  // strided "col2im" of B
      I n, iz, iy, ix, rz, ry, rx;
      data_row(m, n, iz, iy, ix);
      const I kb = k % kBg;
      data_tap(k / kBg, rz, ry, rx);
      const I tz = iz + C::pad(0) - rz * C::dilation(0);
      const I ty = iy + C::pad(1) - ry * C::dilation(1);
      const I tx = ix + C::pad(2) - rx * C::dilation(2);
      if (tz < 0 || ty < 0 || tx < 0) return -1;
      if (!C::kPhase && (tz % C::stride(0) || ty % C::stride(1) || tx % C::stride(2))) return -1;
      const I oz = tz / C::stride(0), oy = ty / C::stride(1), ox = tx / C::stride(2);
      if (oz >= C::b_size(0) || oy >= C::b_size(1) || ox >= C::b_size(2)) return -1;
      return b_at(n, g * kBg + kb, oz, oy, ox);
    } else {  // dy rows
      if constexpr (C::kBPixelStride > 0) {  // (n, pixel) is one linear index: no division
        return k * static_cast<I>(C::kBPixelStride) + (g * kBg + m) * static_cast<I>(C::b_strides(1));
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
      if constexpr (C::kAPixelStride > 0 && C::kPointwise) {  // 1x1, stride 1, no padding: pixel k of A
        return k * static_cast<I>(C::kAPixelStride) + (g * kAg + col) * static_cast<I>(C::a_strides(1));
      }
      I n = k / kPixB, oz, oy, ox;
      spatial<false>(k % kPixB, oz, oy, ox);
      tap(col / kAg, rz, ry, rx);
      const I iz = oz * C::stride(0) - C::pad(0) + rz * C::dilation(0);
      const I iy = oy * C::stride(1) - C::pad(1) + ry * C::dilation(1);
      const I ix = ox * C::stride(2) - C::pad(2) + rx * C::dilation(2);
      if (iz < 0 || iz >= C::a_size(0) || iy < 0 || iy >= C::a_size(1) || ix < 0 || ix >= C::a_size(2)) return -1;
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

}  // namespace igemm
}  // namespace boo
