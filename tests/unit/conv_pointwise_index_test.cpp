// boo tests: gpu:conv:pointwise's index arithmetic (device/conv_pointwise_index.cuh)
// run on the host: the pixel columns of the tiles (spanning images) reach
// every element of a planar tensor once and no vector straddles two images;
// the weight face's splits take every tile once; and the ldmatrix addresses
// and accumulator places the kernels use, fed through an emulation of
// ldmatrix .x4 (plain and .trans) and mma.sync m16n8k16 as the PTX ISA lays
// out their fragments, multiply as the GEMM says.
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <vector>

#include "device_on_host.hpp"
#define __host__
#include "ops/conv/device/conv_pointwise_index.cuh"

namespace boo::pointwise {
namespace {

// Every (n, c, p) of a planar [N][C][HW] tensor (strides C*HW, HW) once, over
// tiles of kTP columns of kVec-element vectors, each vector inside one image.
template <long long kHW>
void expect_tiles_cover(long long batch, long long channels, long long tp, long long vec) {
  const long long l = batch * kHW, sn = channels * kHW, sc = kHW;
  std::vector<int> seen(static_cast<size_t>(batch * channels * kHW), 0);
  for (long long j0 = 0; j0 < l; j0 += tp)
    for (long long c = 0; c < channels; ++c)
      for (long long col = 0; col < tp; col += vec) {
        if (j0 + col >= l) continue;  // the kernel copies zeros there
        const long long first = planar_offset<long long, kHW>(j0 + col, c, sn, sc);
        for (long long v = 0; v < vec; ++v) {
          const long long j = j0 + col + v;
          ASSERT_LT(j, l);
          ASSERT_EQ(j / kHW, (j0 + col) / kHW) << "a vector straddles two images at column " << j;
          const long long off = first + v;
          ASSERT_EQ(off, (planar_offset<long long, kHW>(j, c, sn, sc)));
          ++seen[static_cast<size_t>(off)];
        }
      }
  for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1) << "element " << i;
}

TEST(ConvPointwiseIndexTest, TilesSpanImagesAndReachEveryElementOnce) {
  expect_tiles_cover<49>(5, 3, 64, 1);    // 7x7: element copies, tiles across images
  expect_tiles_cover<196>(3, 2, 128, 4);  // 14x14: 8-byte vectors of 16-bit elements
  expect_tiles_cover<784>(2, 3, 256, 8);  // 28x28: 16-byte vectors
  expect_tiles_cover<1000>(3, 2, 64, 4);  // 1-D, fp32 16-byte vectors
}

TEST(ConvPointwiseIndexTest, SplitsTakeEveryTileOnceInOrder) {
  constexpr long long kTiles = 3136, kSplits = 660;
  long long next = 0;
  for (long long s = 0; s < kSplits; ++s) {
    ASSERT_EQ((split_first_tile<kTiles, kSplits>(s)), next);
    next = split_first_tile<kTiles, kSplits>(s + 1);
    ASSERT_GE(next, (split_first_tile<kTiles, kSplits>(s)));
  }
  EXPECT_EQ(next, kTiles);
}

// A shared-memory tile of floats standing for 16-bit elements, [rows][pitch].
struct Smem {
  int pitch;
  std::vector<float> v;
  float at(int r, int c) const { return v[static_cast<size_t>(r * pitch + c)]; }
};
using Reg = std::array<float, 2>;  // one 32-bit register: two 16-bit elements

// ldmatrix .x4: lane l gives the address (row, col) of row l % 8 of matrix l / 8; register q of lane
// l gets row l / 4, columns 2 (l % 4) and + 1 of matrix q (.trans: rows 2 (l % 4) and + 1 of column l / 4).
std::array<std::array<Reg, 4>, 32> ldmatrix_x4(const Smem& s, const std::array<std::array<int, 2>, 32>& address,
                                               bool trans) {
  std::array<std::array<Reg, 4>, 32> out{};
  for (int lane = 0; lane < 32; ++lane)
    for (int q = 0; q < 4; ++q)
      for (int e = 0; e < 2; ++e) {
        const int row = trans ? 2 * (lane % 4) + e : lane / 4, col = trans ? lane / 4 : 2 * (lane % 4) + e;
        const auto& a = address[static_cast<size_t>(q * 8 + row)];
        out[static_cast<size_t>(lane)][static_cast<size_t>(q)][static_cast<size_t>(e)] = s.at(a[0], a[1] + col);
      }
  return out;
}

// mma.sync m16n8k16 (row.col): A registers {(g, 2t), (g + 8, 2t), (g, 2t + 8), (g + 8, 2t + 8)},
// B registers {(k 2t, n g), (k 2t + 8, n g)}, D {(g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1)};
// g = lane / 4, t = lane % 4, each register two consecutive columns (A) or k (B).
std::array<std::array<float, 4>, 32> mma(const std::array<std::array<Reg, 4>, 32>& a,
                                         const std::array<std::array<Reg, 2>, 32>& b) {
  float am[16][16], bm[16][8];
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    for (int q = 0; q < 4; ++q)
      for (int e = 0; e < 2; ++e) am[g + (q % 2) * 8][2 * t + (q / 2) * 8 + e] = a[lane][q][e];
    for (int q = 0; q < 2; ++q)
      for (int e = 0; e < 2; ++e) bm[2 * t + q * 8 + e][g] = b[lane][q][e];
  }
  std::array<std::array<float, 4>, 32> d{};
  for (int lane = 0; lane < 32; ++lane)
    for (int q = 0; q < 4; ++q) {
      const int row = lane / 4 + (q / 2) * 8, col = 2 * (lane % 4) + q % 2;
      for (int k = 0; k < 16; ++k) d[lane][q] += am[row][k] * bm[k][col];
    }
  return d;
}

template <int kFragment>
std::array<std::array<int, 2>, 32> addresses(int row0, int col0) {
  std::array<std::array<int, 2>, 32> out{};
  for (int lane = 0; lane < 32; ++lane) {
    int r, c;
    ldmatrix_source<kFragment>(lane, r, c);
    out[static_cast<size_t>(lane)] = {row0 + r, col0 + c};
  }
  return out;
}

float value(int i, int j) { return static_cast<float>((i * 7 + j * 3) % 11) - 5.f; }

// The forward face's step: out[m][j] = sum_k W[m][k] in[k][j] for a 16 x 16 filter block (stored
// [m][k]) and two n8 tiles of a pixel-contiguous tile (stored [k][j], read .trans), at offsets.
TEST(ConvPointwiseIndexTest, ForwardFragmentsMultiplyTheFilterByPixelColumns) {
  Smem w{40, std::vector<float>(40 * 40)}, in{24 + 8, std::vector<float>(32 * 32)};
  for (int m = 0; m < 32; ++m)
    for (int k = 0; k < 32; ++k) w.v[static_cast<size_t>(m * w.pitch + k)] = value(m, k);
  for (int k = 0; k < 32; ++k)
    for (int j = 0; j < in.pitch; ++j) in.v[static_cast<size_t>(k * in.pitch + j)] = value(j + 1, 2 * k);
  const int m0 = 16, k0 = 16, j0 = 8;
  const auto a = ldmatrix_x4(w, addresses<kMatrixA>(m0, k0), false);
  const auto b = ldmatrix_x4(in, addresses<kPairKN>(k0, j0), true);
  for (int half = 0; half < 2; ++half) {
    std::array<std::array<Reg, 2>, 32> bh{};
    for (int lane = 0; lane < 32; ++lane) bh[lane] = {b[lane][2 * half], b[lane][2 * half + 1]};
    const auto d = mma(a, bh);
    for (int lane = 0; lane < 32; ++lane)
      for (int q = 0; q < 4; ++q) {
        int r, c;
        accumulator_place(lane, q, r, c);
        float want = 0.f;
        for (int k = 0; k < 16; ++k) want += w.at(m0 + r, k0 + k) * in.at(k0 + k, j0 + half * 8 + c);
        EXPECT_EQ(d[lane][q], want) << "lane " << lane << " q " << q;
      }
  }
}

// The weight face's step: dW[m][n] = sum_j B[m][j] A[n][j], both tiles stored [channel][pixel].
TEST(ConvPointwiseIndexTest, WeightFragmentsSumProductsOverPixels) {
  Smem bt{72, std::vector<float>(32 * 72)}, at{72, std::vector<float>(48 * 72)};
  for (int m = 0; m < 32; ++m)
    for (int j = 0; j < 72; ++j) bt.v[static_cast<size_t>(m * 72 + j)] = value(m, j);
  for (int n = 0; n < 48; ++n)
    for (int j = 0; j < 72; ++j) at.v[static_cast<size_t>(n * 72 + j)] = value(j, n + 5);
  const int m0 = 16, n0 = 32, k0 = 48;
  const auto a = ldmatrix_x4(bt, addresses<kMatrixA>(m0, k0), false);
  const auto b = ldmatrix_x4(at, addresses<kPairNK>(n0, k0), false);
  for (int half = 0; half < 2; ++half) {
    std::array<std::array<Reg, 2>, 32> bh{};
    for (int lane = 0; lane < 32; ++lane) bh[lane] = {b[lane][2 * half], b[lane][2 * half + 1]};
    const auto d = mma(a, bh);
    for (int lane = 0; lane < 32; ++lane)
      for (int q = 0; q < 4; ++q) {
        int r, c;
        accumulator_place(lane, q, r, c);
        float want = 0.f;
        for (int k = 0; k < 16; ++k) want += bt.at(m0 + r, k0 + k) * at.at(n0 + half * 8 + c, k0 + k);
        EXPECT_EQ(d[lane][q], want) << "lane " << lane << " q " << q;
      }
  }
}

}  // namespace
}  // namespace boo::pointwise
