// boo device code: copies between a conv tensor with any strides and a dense
// channels-last buffer, whose channels may be padded with zeros (to 4 or a
// multiple of 8), so that the GEMM tiers load 16-byte vectors of channels
// where the tensor's layout (NCHW, KCRS, CHWN) or its channel count (3, 5,
// 13, 35, 49, ...) allows only scalar loads. Four walks, chosen by the plan
// (conv_staging.cpp), all bandwidth-bound: where the tensor's pixels are
// contiguous, conv_transpose_blocks where the dense channels are whole
// 16-byte vectors and the pixels allow 8-byte accesses, conv_transpose_channels
// where they are many and the channels a multiple of 64 (16-bit), else
// conv_stage_tiles; conv_copy_pixels elsewhere. Index arithmetic:
// conv_stage_index.cuh.
#pragma once

#include "boo/kernels/types.cuh"
#include "boo/conv/conv_igemm_params.cuh"
#include "boo/conv/conv_stage_index.cuh"

namespace boo {

/// kN elements of T moved by one access of kN * sizeof(T) bytes.
template <typename T, int kN>
struct alignas(kN * sizeof(T)) StageVector {
  T v[kN];
};

/// kIntoDense: dense[outer, z, y, x, c] = c < channels ? strided[outer, c, z, y, x] : 0;
/// else strided[outer, c, z, y, x] = dense[outer, z, y, x, c] for c < channels.
/// For tensors whose channels are contiguous (NHWC padding) or whose pixels
/// are not (CHWN): a thread per kVec channels of one dense pixel, one
/// kVec-wide dense access, its channels' reads (writes) kVec apart along the
/// row, so that a warp's reads cover consecutive pixels. Index: int where
/// every offset fits (the host decides); kRowDims: the pixels' digits
/// (stage::pixel_unit). Block: 256 threads; grid-stride over the units,
/// kUnroll of them in flight per thread.
template <typename T, bool kIntoDense, typename Index, int kRowDims, int kVec>
__device__ void conv_copy_pixels(const ConvChannelPadParams& p) {
  constexpr int kUnroll = 4;
  using Vec = StageVector<T, kVec>;
  const long long units = stage::pixel_units(p, kIntoDense, kVec);
  const Index per_row = static_cast<Index>((stage::moved_channels(p, kIntoDense) + kVec - 1) / kVec);
  const Index channels = static_cast<Index>(p.channels), channel_stride = static_cast<Index>(p.strides[1]);
  const long long step = static_cast<long long>(gridDim.x) * blockDim.x;
  const T* src = reinterpret_cast<const T*>(kIntoDense ? p.strided : p.dense);
  T* dst = reinterpret_cast<T*>(kIntoDense ? p.dense : p.strided);
  for (long long first = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; first < units;
       first += kUnroll * step) {
    stage::PixelUnit<Index> at[kUnroll];
    Vec v[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const long long u = first + k * step;
      if (u >= units) break;
      at[k] = stage::pixel_unit<Index>(p, static_cast<Index>(u), per_row, kRowDims, kVec);
      if (kIntoDense) {
#pragma unroll
        for (int e = 0; e < kVec; ++e)
          v[k].v[e] = at[k].channel + e < channels ? src[at[k].strided + e * channel_stride] : T{};
      } else {
        v[k] = *reinterpret_cast<const Vec*>(src + at[k].dense);
      }
    }
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      if (first + k * step >= units) break;
      if (kIntoDense) {
        *reinterpret_cast<Vec*>(dst + at[k].dense) = v[k];
      } else {
#pragma unroll
        for (int e = 0; e < kVec; ++e)
          if (at[k].channel + e < channels) dst[at[k].strided + e * channel_stride] = v[k].v[e];
      }
    }
  }
}

/// The same copies for a tensor whose pixels are contiguous (NCHW, KCRS,
/// KRSC's flip), through shared memory tile by tile (stage::tile_of): the
/// tensor's side moved in runs along pixels (kVecP-element accesses; kRun:
/// the whole tile is one run, as where a few pixels' (channel, pixel) blocks
/// of one or several outer indices are dense), the dense side in kVecC-
/// channel accesses of each pixel's row, zeros for padding. kFlip: the
/// flipped filter of stage::View, (c, tap) runs. Block: 256 threads;
/// dynamic shared memory: p.tile[0] x min(p.tile[1], channels) rows of
/// p.tile[3] elements; grid-stride over the tiles.
template <typename T, bool kIntoDense, bool kRun, bool kFlip, int kVecP, int kVecC>
__device__ void conv_stage_tiles(const ConvChannelPadParams& p) {
  constexpr int kThreads = 256, kUnroll = 4;  // kUnroll global reads in flight per thread
  using RunVec = StageVector<T, kVecP>;
  using DenseVec = StageVector<T, kVecC>;
  extern __shared__ __align__(16) unsigned char conv_stage_smem[];
  T* tile = reinterpret_cast<T*>(conv_stage_smem);
  const stage::View view = stage::view_of(p, kFlip);
  const long long moved = stage::moved_channels(p, kIntoDense), tiles = stage::tile_count(p, view, moved);
  const int pitch = static_cast<int>(p.tile[3]);
  T* strided = reinterpret_cast<T*>(p.strided);
  T* dense = reinterpret_cast<T*>(p.dense);
  for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
    const stage::Tile at = stage::tile_of(p, view, moved, t);
    const int runs = stage::run_units(at, kRun, kVecP), pieces = stage::dense_units(at, kVecC);
    if (kIntoDense) {
      for (int first = threadIdx.x; first < runs; first += kThreads * kUnroll) {
        stage::RunUnit u[kUnroll];
        RunVec v[kUnroll];
#pragma unroll
        for (int k = 0; k < kUnroll; ++k) {
          if (first + k * kThreads >= runs) break;
          u[k] = stage::run_unit(p, at, kRun, kVecP, first + k * kThreads);
          v[k] = *reinterpret_cast<const RunVec*>(strided + u[k].strided);
        }
#pragma unroll
        for (int k = 0; k < kUnroll; ++k) {
          if (first + k * kThreads >= runs) break;
          if (kRun) {  // rows run pixels apart: the tile is the run, vectors stay aligned
            *reinterpret_cast<RunVec*>(tile + u[k].shared) = v[k];
          } else {
#pragma unroll
            for (int e = 0; e < kVecP; ++e) tile[u[k].shared + e] = v[k].v[e];
          }
        }
      }
      __syncthreads();
      for (int i = threadIdx.x; i < pieces; i += kThreads) {
        const stage::DenseUnit d = stage::dense_unit(p, view, at, kFlip, kVecC, i);
        DenseVec v;
#pragma unroll
        for (int e = 0; e < kVecC; ++e) v.v[e] = d.channel + e < at.nc ? tile[d.shared + e * pitch] : T{};
        *reinterpret_cast<DenseVec*>(dense + d.dense) = v;
      }
    } else {
      for (int first = threadIdx.x; first < pieces; first += kThreads * kUnroll) {
        stage::DenseUnit d[kUnroll];
        DenseVec v[kUnroll];
#pragma unroll
        for (int k = 0; k < kUnroll; ++k) {
          if (first + k * kThreads >= pieces) break;
          d[k] = stage::dense_unit(p, view, at, kFlip, kVecC, first + k * kThreads);
          v[k] = *reinterpret_cast<const DenseVec*>(dense + d[k].dense);
        }
#pragma unroll
        for (int k = 0; k < kUnroll; ++k) {
          if (first + k * kThreads >= pieces) break;
#pragma unroll
          for (int e = 0; e < kVecC; ++e)  // the padding channels stay behind
            if (d[k].channel + e < at.nc) tile[d[k].shared + e * pitch] = v[k].v[e];
        }
      }
      __syncthreads();
      for (int i = threadIdx.x; i < runs; i += kThreads) {
        const stage::RunUnit u = stage::run_unit(p, at, kRun, kVecP, i);
        RunVec v;
        if (kRun) {
          v = *reinterpret_cast<const RunVec*>(tile + u.shared);
        } else {
#pragma unroll
          for (int e = 0; e < kVecP; ++e) v.v[e] = tile[u.shared + e];
        }
        *reinterpret_cast<RunVec*>(strided + u.strided) = v;
      }
    }
    __syncthreads();  // the tile's shared memory is the next one's
  }
}

/// The same copies for a tensor whose pixels are contiguous, into (out of) a
/// dense buffer whose channels are whole 16-byte vectors (kE = 16 / sizeof(T)
/// elements), without shared memory: each thread moves a block of kE
/// channels x kVecP pixels (stage::block_unit; kVecP divides the pixels and
/// every run's offset) through its registers: kE accesses of kVecP pixels of
/// a channel, transposed, written as kVecP 16-byte vectors of a pixel's
/// channels (out of the dense buffer, the reverse). A warp's lanes are
/// 32 / kLanesC pixel blocks x kLanesC channel vectors: each access of a warp
/// covers whole 32-byte sectors of a channel's pixels and of a pixel's
/// channels. All of a thread's reads are in flight at once. Block: 256
/// threads; grid-stride over the units.
template <typename T, bool kIntoDense, int kVecP, int kLanesC>
__device__ void conv_transpose_blocks(const ConvChannelPadParams& p) {
  constexpr int kE = 16 / static_cast<int>(sizeof(T));
  using Vec = StageVector<T, kE>;
  using Piece = StageVector<T, kVecP>;
  const stage::BlockGrid grid = stage::block_grid(p, kIntoDense, kE, kVecP, kLanesC);
  const int step = static_cast<int>(gridDim.x * blockDim.x);
  const long long channel_stride = p.strides[1], padded = p.padded_channels;
  const T* src = reinterpret_cast<const T*>(kIntoDense ? p.strided : p.dense);
  T* dst = reinterpret_cast<T*>(kIntoDense ? p.dense : p.strided);
  for (int u = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); u < grid.units; u += step) {
    const stage::BlockUnit b = stage::block_unit(p, grid, u, kE, kVecP, kLanesC);
    if (!b.valid) continue;
    if (kIntoDense) {
      Piece rows[kE];  // channel j's pixels
#pragma unroll
      for (int j = 0; j < kE; ++j) {
        rows[j] = Piece{};
        if (b.channel + j < p.channels) rows[j] = *reinterpret_cast<const Piece*>(src + b.strided + j * channel_stride);
      }
#pragma unroll
      for (int i = 0; i < kVecP; ++i) {
        Vec v;
#pragma unroll
        for (int j = 0; j < kE; ++j) v.v[j] = rows[j].v[i];
        *reinterpret_cast<Vec*>(dst + b.dense + i * padded) = v;
      }
    } else {
      Vec pixels[kVecP];  // pixel i's channels
#pragma unroll
      for (int i = 0; i < kVecP; ++i) pixels[i] = *reinterpret_cast<const Vec*>(src + b.dense + i * padded);
#pragma unroll
      for (int j = 0; j < kE; ++j) {
        if (b.channel + j >= p.channels) break;  // the padding channels stay behind
        Piece v;
#pragma unroll
        for (int i = 0; i < kVecP; ++i) v.v[i] = pixels[i].v[j];
        *reinterpret_cast<Piece*>(dst + b.strided + j * channel_stride) = v;
      }
    }
  }
}

/// The same copies for 16-bit tensors with many contiguous pixels and
/// channels a multiple of 64 (where it measured near 2 TB/s on an H100, kept
/// as it was): per (outer, 64 channels, 64 pixels) tile, a transpose through
/// shared memory, each thread moving two adjacent elements (every offset even,
/// the host checked) as one 32-bit access. Strided element (o, c, pixel) at
/// origin + o * strides[0] + c * strides[1] + pixel. Block: 32 x 8 threads
/// (256, x fastest); grid: (pixel tiles, channel tiles, outer in a
/// grid-stride loop).
template <typename T, bool kIntoDense>
__device__ void conv_transpose_channels(const ConvChannelPadParams& p) {
  constexpr int kTile = 64;             // channels and pixels per tile
  constexpr int kPer = 2;               // elements per access
  __shared__ T tile[kTile][kTile + 2];  // [channel][pixel]; +2 keeps rows 4-byte aligned and spreads banks
  const long long pixels = p.sizes[1] * p.sizes[2] * p.sizes[3];
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;  // 32 x 8
  const long long p0 = static_cast<long long>(blockIdx.x) * kTile, c0 = static_cast<long long>(blockIdx.y) * kTile;
  const long long dense_channels = kIntoDense ? p.padded_channels : p.channels;  // channels each side moves
  const T* src = reinterpret_cast<const T*>(kIntoDense ? p.strided : p.dense);
  T* dst = reinterpret_cast<T*>(kIntoDense ? p.dense : p.strided);
  using Run = StageVector<T, kPer>;  // a pair as one 32-bit word
  for (long long o = blockIdx.z; o < p.sizes[0]; o += gridDim.z) {
    const long long dense_row = o * pixels;  // first pixel of this outer index in the dense buffer
    if (kIntoDense) {
      // Read runs along pixels, write runs along channels; padding channels are zeros.
      for (int j = ty; j < kTile; j += 8) {
        const long long c = c0 + j, px = p0 + kPer * tx;
        Run r{};
        if (c < p.channels && px < pixels) r = *reinterpret_cast<const Run*>(src + p.origin + o * p.strides[0] + c * p.strides[1] + px);
        for (int e = 0; e < kPer; ++e) tile[j][kPer * tx + e] = r.v[e];
      }
      __syncthreads();
      for (int j = ty; j < kTile; j += 8) {
        const long long px = p0 + j, c = c0 + kPer * tx;
        Run r;
        for (int e = 0; e < kPer; ++e) r.v[e] = tile[kPer * tx + e][j];
        if (px < pixels && c < dense_channels) *reinterpret_cast<Run*>(dst + (dense_row + px) * p.padded_channels + c) = r;
      }
    } else {
      // Read runs along the dense buffer's channels, write runs along pixels; padding channels stay behind.
      for (int j = ty; j < kTile; j += 8) {
        const long long px = p0 + j, c = c0 + kPer * tx;
        if (px < pixels && c < p.padded_channels) {
          const Run r = *reinterpret_cast<const Run*>(src + (dense_row + px) * p.padded_channels + c);
          for (int e = 0; e < kPer; ++e) tile[kPer * tx + e][j] = r.v[e];
        }
      }
      __syncthreads();
      for (int j = ty; j < kTile; j += 8) {
        const long long c = c0 + j, px = p0 + kPer * tx;
        Run r;
        for (int e = 0; e < kPer; ++e) r.v[e] = tile[j][kPer * tx + e];
        if (c < p.channels && px < pixels) *reinterpret_cast<Run*>(dst + p.origin + o * p.strides[0] + c * p.strides[1] + px) = r;
      }
    }
    __syncthreads();  // the tile is reused by the next outer index
  }
}

}  // namespace boo
