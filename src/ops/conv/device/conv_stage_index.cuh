// boo device code: the index arithmetic of the staged copies
// (conv_channel_pad.cuh: conv_stage_tiles, conv_transpose_blocks and
// conv_copy_pixels), kept apart so that the host tests run it
// (tests/unit/conv_stage_index_test.cpp).
// Includes only the parameter block.
#pragma once

#include "boo/conv/conv_igemm_params.cuh"

namespace boo::stage {

/// The copy as conv_stage_tiles sees it: `outer` batches of the tensor's
/// [channel][run] blocks, each pixel q of a run contiguous (stride 1) and
/// its channels the dense row's. A plain copy's runs are the pixels of one
/// outer index (dense row outer * run + q). A filter flipped for the data
/// face whose (c, tap) pairs are one run of memory (KCRS: w[k][c][tap], the
/// copy's outer index t' = the reversed tap, its pixels c, its channels k)
/// is one batch of [k][c * taps + tap]: q = c * taps + tap is dense row
/// (taps - 1 - tap) * C + c.
struct View {
  long long outer, run;  // batches, pixels per run
  long long origin;      // the tensor's offset of (batch 0, channel 0, pixel 0)
};

__host__ __device__ __forceinline__ long long pixels_of(const ConvChannelPadParams& p) {
  return p.sizes[1] * p.sizes[2] * p.sizes[3];
}

__host__ __device__ __forceinline__ View view_of(const ConvChannelPadParams& p, bool flip_runs) {
  // A flipped copy's origin is tap taps - 1's (strides[0] = -(tap stride)): tap 0's is origin + (taps - 1) * strides[0].
  if (flip_runs) return {1, p.sizes[0] * pixels_of(p), p.origin + (p.sizes[0] - 1) * p.strides[0]};
  return {p.sizes[0], pixels_of(p), p.origin};
}

/// Dense channels a copy moves per pixel: into the dense buffer, every
/// padded channel (zeros past the tensor's); out of it, the tensor's.
__host__ __device__ __forceinline__ long long moved_channels(const ConvChannelPadParams& p, bool into_dense) {
  return into_dense ? p.padded_channels : p.channels;
}

/// Tiles of p.tile[0] batches x p.tile[1] dense channels x p.tile[2]
/// pixels, pixels fastest, then channels, then batches.
__host__ __device__ __forceinline__ long long tile_count(const ConvChannelPadParams& p, const View& v, long long moved) {
  return (v.outer + p.tile[0] - 1) / p.tile[0] * ((moved + p.tile[1] - 1) / p.tile[1]) *
         ((v.run + p.tile[2] - 1) / p.tile[2]);
}

struct Tile {
  long long b0, c0, q0;  // its first batch, dense channel and pixel
  long long strided;     // the tensor's offset of (b0, c0, q0)
  int nb, nq;            // batches and pixels
  int nc;                // the tensor's channels: rows of shared memory per batch (none in a tile of padding)
  int nd;                // dense channels moved
};

__host__ __device__ __forceinline__ int clamp_to(long long v, long long lo, long long hi) {
  return static_cast<int>(v < lo ? lo : v > hi ? hi : v);
}

__host__ __device__ __forceinline__ Tile tile_of(const ConvChannelPadParams& p, const View& v, long long moved,
                                                 long long t) {
  const long long tiles_q = (v.run + p.tile[2] - 1) / p.tile[2], tiles_c = (moved + p.tile[1] - 1) / p.tile[1];
  const long long rest = t / tiles_q;
  Tile out;
  out.q0 = (t - rest * tiles_q) * p.tile[2];
  out.c0 = rest % tiles_c * p.tile[1];
  out.b0 = rest / tiles_c * p.tile[0];
  out.strided = v.origin + out.b0 * p.strides[0] + out.c0 * p.strides[1] + out.q0;
  out.nb = clamp_to(v.outer - out.b0, 0, p.tile[0]);
  out.nq = clamp_to(v.run - out.q0, 0, p.tile[2]);
  out.nc = clamp_to(p.channels - out.c0, 0, p.tile[1]);
  out.nd = clamp_to(moved - out.c0, 0, p.tile[1]);
  return out;
}

/// The tensor's side of tile `t`: accesses of `vec` pixels. `run`: the
/// tile is one run of memory (its channels' runs adjacent, and its batches'
/// where it has several), read in order into shared memory [b][c][q] with
/// rows run pixels apart; else each (b, c) row is read in `vec`-pixel pieces
/// into rows p.tile[3] apart.
__host__ __device__ __forceinline__ int run_units(const Tile& t, bool run, int vec) {
  return run ? t.nb * t.nc * t.nq / vec : t.nb * t.nc * (t.nq / vec);
}

struct RunUnit {
  long long strided;  // the tensor's offset of its first element
  int shared;         // shared-memory index of its first element (the next ones follow)
};

__host__ __device__ __forceinline__ RunUnit run_unit(const ConvChannelPadParams& p, const Tile& t, bool run, int vec,
                                                     int i) {
  if (run) return {t.strided + static_cast<long long>(i) * vec, i * vec};
  const int per_row = t.nq / vec, row = i / per_row, q = (i - row * per_row) * vec;
  const int b = row / t.nc, c = row - b * t.nc;
  return {t.strided + b * p.strides[0] + c * p.strides[1] + q, row * static_cast<int>(p.tile[3]) + q};
}

/// The dense side of tile `t`: accesses of `vec` channels of one dense
/// pixel, channels fastest (every vector lies inside the pixel's padded row).
__host__ __device__ __forceinline__ int dense_units(const Tile& t, int vec) {
  return t.nb * t.nq * ((t.nd + vec - 1) / vec);
}

struct DenseUnit {
  long long dense;  // the dense buffer's offset of its first channel
  int shared;       // shared-memory index of its first channel; channel `channel + e` at shared + e * p.tile[3]
  int channel;      // its first channel, from the tile's c0: those at or past Tile::nc are not the tensor's
};

__host__ __device__ __forceinline__ DenseUnit dense_unit(const ConvChannelPadParams& p, const View& v,
                                                         const Tile& t, bool flip_runs, int vec, int i) {
  const int per_pixel = (t.nd + vec - 1) / vec, rest = i / per_pixel, channel = (i - rest * per_pixel) * vec;
  const int b = rest / t.nq, q = rest - b * t.nq;
  long long row;
  if (flip_runs) {
    const long long taps = p.sizes[0], pq = t.q0 + q, c = pq / taps;
    row = (taps - 1 - (pq - c * taps)) * pixels_of(p) + c;
  } else {
    row = (t.b0 + b) * v.run + t.q0 + q;
  }
  const int pitch = static_cast<int>(p.tile[3]);
  return {row * p.padded_channels + t.c0 + channel, (b * t.nc + channel) * pitch + q, channel};
}

/// conv_transpose_blocks' units: blocks of `e` dense channels x `vec` pixels of one outer index (`vec`
/// divides the pixels), a thread each. A warp's 32 units are 32 / lanes_c consecutive pixel blocks (over
/// the outer indices' runs in turn) x lanes_c consecutive channel vectors, so that each of its accesses
/// along a channel's pixels and along a pixel's channels covers whole 32-byte sectors. Warps take their
/// 2-D tiles channel tiles fastest.
struct BlockGrid {
  int pixel_blocks;  // per outer index
  int blocks;        // pixel blocks over all outer indices
  int vectors;       // channel vectors of e dense channels
  int units;         // threads: whole warps over the tiles
};

__host__ __device__ __forceinline__ BlockGrid block_grid(const ConvChannelPadParams& p, bool into_dense, int e,
                                                         int vec, int lanes_c) {
  BlockGrid g;
  g.pixel_blocks = static_cast<int>(pixels_of(p) / vec);
  g.blocks = static_cast<int>(p.sizes[0]) * g.pixel_blocks;
  g.vectors = static_cast<int>((moved_channels(p, into_dense) + e - 1) / e);
  const int lanes_p = 32 / lanes_c;
  g.units = (g.blocks + lanes_p - 1) / lanes_p * ((g.vectors + lanes_c - 1) / lanes_c) * 32;
  return g;
}

struct BlockUnit {
  bool valid;         // a block of the copy (else a lane past the pixel blocks or the channel vectors)
  int channel;        // its first dense channel
  long long strided;  // the tensor's offset of its first channel's first pixel (channel + j at + j * strides[1])
  long long dense;    // the dense buffer's offset of its first pixel's first channel (pixel + i at + i * padded)
};

__host__ __device__ __forceinline__ BlockUnit block_unit(const ConvChannelPadParams& p, const BlockGrid& g, int u,
                                                         int e, int vec, int lanes_c) {
  const int lane = u % 32, tile = u / 32, tiles_c = (g.vectors + lanes_c - 1) / lanes_c;
  const int tile_p = tile / tiles_c, tile_c = tile - tile_p * tiles_c;
  const int block = tile_p * (32 / lanes_c) + lane / lanes_c, vector = tile_c * lanes_c + lane % lanes_c;
  BlockUnit b{};
  b.valid = block < g.blocks && vector < g.vectors;
  if (!b.valid) return b;
  const int outer = block / g.pixel_blocks;
  const long long q0 = static_cast<long long>(block - outer * g.pixel_blocks) * vec;
  b.channel = vector * e;
  b.strided = p.origin + outer * p.strides[0] + b.channel * p.strides[1] + q0;
  b.dense = (outer * pixels_of(p) + q0) * p.padded_channels + b.channel;
  return b;
}

/// conv_copy_pixels: a unit is `vec` channels of one dense pixel (row).
__host__ __device__ __forceinline__ long long pixel_units(const ConvChannelPadParams& p, bool into_dense, int vec) {
  return p.sizes[0] * pixels_of(p) * ((moved_channels(p, into_dense) + vec - 1) / vec);
}

template <typename Index>
struct PixelUnit {
  Index strided;  // the tensor's offset of its first channel (channel + e at strided + e * strides[1])
  Index dense;    // the dense buffer's offset of its first channel
  Index channel;  // its first channel: those at or past p.channels are padding
};

/// Unit u: the row's digits over the last `row_dims` of p.row_sizes (the
/// slowest digit takes what is left). Index: int where the host found every
/// offset and unit count below 2^31.
template <typename Index>
__host__ __device__ __forceinline__ PixelUnit<Index> pixel_unit(const ConvChannelPadParams& p, Index u,
                                                                Index per_row, int row_dims, int vec) {
  Index row = u / per_row;
  PixelUnit<Index> out;
  out.channel = (u - row * per_row) * vec;
  out.dense = row * static_cast<Index>(p.padded_channels) + out.channel;
  out.strided = static_cast<Index>(p.origin) + out.channel * static_cast<Index>(p.strides[1]);
#pragma unroll
  for (int d = 3; d >= 4 - row_dims; --d) {
    if (d == 4 - row_dims) {
      out.strided += row * static_cast<Index>(p.row_strides[d]);
    } else {
      const Index size = static_cast<Index>(p.row_sizes[d]), next = row / size;
      out.strided += (row - next * size) * static_cast<Index>(p.row_strides[d]);
      row = next;
    }
  }
  return out;
}

}  // namespace boo::stage
