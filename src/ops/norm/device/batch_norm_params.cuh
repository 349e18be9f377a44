// boo: the parameter block of the batch norm kernels, shared by host and
// device code (plain integers only, identical layout on both sides).
#pragma once

namespace boo {

/// x, y, dy and dx are [outer][channels][inner] in memory (NormProblem);
/// scale, bias, the statistics and dscale/dbias hold one element per channel.
/// Unused tensors are 0.
struct BatchNormParams {
  unsigned long long x, dy, scale, bias;
  unsigned long long mean_in, variance_in;            ///< inference -r: estimated; training -r: running_*_in
  unsigned long long saved_mean, saved_inv_variance;  ///< training -s: written; backward -s: read
  unsigned long long running_mean, running_variance;  ///< training -r: written
  unsigned long long y, dx, dscale, dbias;
  unsigned long long partials;      ///< workspace: [slices][channels] Sum2 (float pairs); slabs: slab_partial_index
  unsigned long long coefficients;  ///< workspace: [kChannelCoefficients][channels] float
  long long outer, channels;
  long long rows_per_slice;  ///< outer rows per slice of the sums and apply kernels (gridDim.y slices)
  /// gpu:batchnorm:resident: the first rows of each slice kept in shared memory between the sums and the
  /// apply pass, and the grid barrier's arrival counter (workspace, cleared before the launch).
  long long resident_rows;
  unsigned long long barrier;
  float eps, momentum;
};

/// The per-channel coefficients the statistics and gradient kernels leave for
/// the others, each an array of `channels` floats in the workspace.
enum ChannelCoefficient : int {
  kCoefMeanHigh = 0,  ///< the mean as high + low (x - high - low keeps the mean's float64 accuracy)
  kCoefMeanLow = 1,
  kCoefInvStd = 2,    ///< 1 / sqrt(var + eps)
  kCoefA = 3,         ///< forward y = (x - mean) * a + b; backward dx = a * dy + b * (x - mean) + c
  kCoefB = 4,
  kCoefC = 5,
  kChannelCoefficients = 6,
};

/// gpu:batchnorm:slabs' index arithmetic (plain functions: host code checks
/// them, NVRTC compiles them as device code). Its grid is (channel slabs,
/// slices of the rows); a block's threads are kThreadsX channel vectors x
/// kThreadsY row lanes.

/// Where block (slab, slice)'s sum of channel `lane` of its slab lies in the
/// partials: [slabs][slices][slab_channels], so one slab's partials over all
/// slices are contiguous (the apply kernel's blocks each read theirs).
inline constexpr long long slab_partial_index(long long slab, long long slice, long long lane, long long slices,
                                              long long slab_channels) {
  return (slab * slices + slice) * slab_channels + lane;
}

/// The rows [first, last) of slice `slice` (rows_per_slice each, the last one short).
struct SliceRows {
  long long first, last;
};
inline constexpr SliceRows slice_rows(long long slice, long long rows_per_slice, long long rows) {
  const long long first = slice * rows_per_slice;
  return SliceRows{first, first + rows_per_slice < rows ? first + rows_per_slice : rows};
}

/// The last row of `slice` that row lane `lane` of `lanes` visits (rows
/// first + lane, first + lane + lanes, ...), or first - 1 when it has none:
/// the apply kernel walks a lane's rows from there down, the reverse of the
/// sums' order, so it starts on the rows the sums read last (still in L2).
inline constexpr long long last_row_of_lane(SliceRows s, long long lane, long long lanes) {
  if (s.first + lane >= s.last) return s.first - 1;
  return s.first + lane + (s.last - 1 - s.first - lane) / lanes * lanes;
}

/// gpu:batchnorm:resident's static shared memory in bytes, for a block of
/// `threads` threads over a slab of `slab_channels` channels: the partials'
/// scratch ([warp][channel] float pairs), the float64 slice-group sums
/// ([2][threads / slab_channels][channel]) and the coefficients ([5][channel]
/// floats). The plan gives the rest of an SM's shared memory to the resident
/// rows; the kernel checks its arrays against this.
inline constexpr long long resident_static_shared_bytes(long long slab_channels, long long threads) {
  return threads / 32 * slab_channels * 8 + 2 * threads * 8 + 5 * slab_channels * 4;
}

}  // namespace boo
