// boo device code: the index arithmetic of gpu:conv:pointwise
// (conv_pointwise.cuh), kept apart so that the host tests run it
// (tests/unit/conv_pointwise_index_test.cpp). Includes nothing.
#pragma once

namespace boo::pointwise {

/// Where pixel column j of channel row c lies in a planar (NCHW-like) tensor:
/// the columns are the pixels of every image in a row (j = n * kHW + p), so a
/// tile may span images; sn and sc are the image and channel strides.
template <class I, long long kHW>
__host__ __device__ __forceinline__ I planar_offset(I j, I c, I sn, I sc) {
  const I n = j / static_cast<I>(kHW);
  return n * sn + c * sc + (j - n * static_cast<I>(kHW));
}

/// The first tile of split s when kTiles tiles are shared by kSplits CTAs
/// (split s takes [first(s), first(s + 1))): every tile once, in order.
template <long long kTiles, long long kSplits>
__host__ __device__ __forceinline__ long long split_first_tile(long long s) {
  return s * kTiles / kSplits;
}

/// The shared-memory element (row, column offset) whose address lane gives
/// to ldmatrix .x4 for the fragments of one mma.sync m16n8k16 step:
///   kMatrixA:  A (16 x 16, rows M, columns K), stored [m][k].
///   kPairKN:   B of two n8 tiles stored [k][n] (read .trans), rows k.
///   kPairNK:   B of two n8 tiles stored [n][k] (read plain), rows n.
enum Fragment : int { kMatrixA = 0, kPairKN = 1, kPairNK = 2 };
template <int kFragment>
__host__ __device__ __forceinline__ void ldmatrix_source(int lane, int& row, int& col) {
  if (kFragment == kPairNK) {  // matrices (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15)
    row = (lane / 16) * 8 + lane % 8;
    col = (lane / 8) % 2 * 8;
  } else {  // A: (m 0-7, k 0-7), (m 8-15, k 0-7), (m 0-7, k 8-15), (m 8-15, k 8-15); kPairKN likewise with k, n
    row = lane % 16;
    col = lane / 16 * 8;
  }
}

/// Row and column (within the m16n8 tile) of accumulator q (0-3) of `lane`.
__host__ __device__ __forceinline__ void accumulator_place(int lane, int q, int& row, int& col) {
  row = lane / 4 + q / 2 * 8;
  col = lane % 4 * 2 + q % 2;
}

}  // namespace boo::pointwise
