// boo: staged copies — dense channels-last workspace copies of conv tensors
// whose layout a GEMM tier cannot read with 16-byte vectors (NCHW, KCRS,
// CHWN), whose channels are too few for vectors (zero-padded), or that a face
// needs rearranged (the data face run as a forward conv reads the filter with
// its taps flipped and its channel roles swapped). gpu:conv:implicit_gemm and
// gpu:conv:wgmma_sm90 both plan them; device code: device/conv_channel_pad.cuh.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "ops/arch_spec.hpp"
#include "ops/conv/conv_problem.hpp"
#include "ops/plan.hpp"

namespace boo::ops::conv {

/// How a copy's kernel walks it (device/conv_channel_pad.cuh), chosen by the
/// plan (layout_copy, flipped_filter_copy) and shown in its text.
enum class CopyWalk {
  kPixels,     ///< conv_copy_pixels: a thread per vector of a dense pixel's channels
  kTranspose,  ///< conv_transpose_channels: 64 x 64 tiles of 16-bit pairs (many pixels, channels a multiple of 64)
  kTiles,      ///< conv_stage_tiles: tiles of outer x channels x pixels through shared memory
  kBlocks,     ///< conv_transpose_blocks: 16-byte vectors of channels x as many pixels through registers
};

/// A dense channels-last copy of a signature tensor in the workspace:
/// [outer_rows][z][y][x][padded]. Arguments are copied in before the GEMMs;
/// results are written to their copy and copied out after.
struct StagedCopy {
  std::string tensor;        // "x", "w", "dy", "z" (a residual, staged as the y it is added to) in; "y", "dx", "dw" out
  bool input = true;
  bool padding = false;      // made for channel padding (else for the layout)
  bool flip = false;         // a filter rearranged for the data face (see flipped_filter_copy)
  long long outer = 0;       // N, or K for a filter: the rows copied
  long long outer_rows = 0;  // rows of the copy (dw's rows are padded with dy's channels; those are left behind)
  Dims3 size{};              // pixels or filter taps
  long long channels = 0, padded = 0;  // the tensor's channels and the copy's (per group, for a filter)
  Strides5 strides{};        // the tensor's, as (outer, channel, z, y, x)
  long long origin = 0;      // element offset of (0, 0, 0, 0, 0) in the tensor (non-zero where strides are negative)
  size_t offset = 0;         // bytes into the workspace

  // The walk (plan_walk), and what its kernel is instantiated and launched with.
  CopyWalk walk = CopyWalk::kPixels;
  int vec_channels = 1;      // kPixels, kTiles: elements per access of the dense buffer
  // kTiles (stage::View, stage::Tile):
  long long tile[4] = {};    // outer indices (batches), dense channels, pixels per tile; shared-memory row pitch
  bool run = false;          // each tile one run of the tensor (few pixels whose (channel, pixel) blocks are dense)
  bool flip_runs = false;    // a flipped filter whose (c, tap) pairs are one run (KCRS)
  int vec_pixels = 1;        // kTiles, kBlocks: elements per access of the tensor, along its pixels
  // kBlocks (stage::block_unit): a warp's lanes along the channel vectors (the rest along the pixel blocks).
  int lanes_c = 1;
  // kPixels (stage::pixel_unit):
  int row_dims = 1;          // digits of a dense pixel's row index
  bool index32 = false;      // every offset and unit below 2^31: int arithmetic
  long long row_sizes[4] = {}, row_strides[4] = {};

  std::string entry() const;
  long long elements() const { return outer_rows * size[0] * size[1] * size[2] * padded; }
  /// Bytes of dynamic shared memory its kernel takes.
  long long shared_bytes(long long elem_bytes) const;
  /// What `boo explain` and the cache key show of it.
  std::string text() const;
};

/// A channel count and, where a tier pads it with zeros in its staged copies (`on`), the padded one.
struct ChannelPad {
  bool on = false;
  long long channels = 0, padded = 0;  // real and padded channel counts
  long long count() const { return on ? padded : channels; }
};

/// The (outer, channel, z, y, x) strides of signature tensor `tensor` (an argument or a result).
Strides5 signature_strides(const ConvProblem& problem, const std::string& tensor);

/// Whether a GEMM reads (or writes) the channels of an activation or filter
/// with stride 1: else each element would be a scalar load.
bool channels_contiguous(const Strides5& strides, long long channels);

/// A copy of signature tensor `tensor` (strides from the signature) into
/// [outer_rows][size][padded], its walk planned for `elem_bytes`-byte
/// elements (plan_walk).
StagedCopy layout_copy(const ConvProblem& problem, const std::string& tensor, long long outer, long long outer_rows,
                       const Dims3& size, long long channels, long long padded, bool padding);

/// The filter W[kb, c, r, s] of a 2-D (or 1-D) relation as W'[r', s', c, kb]
/// = W[kb, c, R-1-r', S-1-s']: the filter of the data face run as a forward
/// conv (A from B: kb becomes the reduced channel, c the output channel),
/// channels-last with kb contiguous. As a copy: outer = the R x S taps in
/// reverse, "pixels" = the c channels, "channels" = kb, padded with zeros to
/// `padded` (at least K) where K is not a multiple of 8. Nullopt where the
/// tensor's taps are not one run (r's stride = S x s's stride), as in every
/// dense layout.
std::optional<StagedCopy> flipped_filter_copy(const ConvProblem& problem, const std::string& tensor, long long padded);

/// Chooses `copy`'s walk for `elem_bytes`-byte elements. Where the tensor's
/// pixels are contiguous and its channels are not: blocks through registers
/// where the dense channels are whole 16-byte vectors and the pixels allow
/// 8-byte accesses; else the 64 x 64 pair transpose where pixels are many and
/// 16-bit channels a multiple of 64; else tiles (whole (channel, pixel)
/// blocks of several outer indices where pixels are few). Elsewhere a thread
/// per dense pixel's vector of channels.
void plan_walk(StagedCopy& copy, long long elem_bytes);

/// Adds `copy` unless an identical copy (tensor, rows, channels, flip) is
/// already listed; returns its index.
int add_copy(std::vector<StagedCopy>& copies, const StagedCopy& copy);

/// Assigns each copy its workspace offset from `first` (256-byte aligned);
/// returns the end of the last one.
size_t place_copies(std::vector<StagedCopy>& copies, size_t first, long long elem_bytes);

/// Adds the copy's kernel to `source` (and conv_channel_pad.cuh's include,
/// once) and returns its launch.
Result<LaunchStep> staged_copy_step(const StagedCopy& copy, DType dtype, const TensorRoles& roles,
                                    const ArchSpec& arch, base::KernelSource& source);

}  // namespace boo::ops::conv
