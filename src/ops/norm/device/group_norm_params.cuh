// boo: the parameter block of the group norm kernels (gpu:groupnorm:groups),
// shared by host and device code (plain integers only, identical layout on
// both sides).
#pragma once

namespace boo {

/// x, y, dy and dx are [N][C][spatial] planes or [N][spatial][C] channels
/// last in memory; weight, bias, dweight and dbias [C]; mean and rstd
/// [N][groups] float32 (results of a forward, arguments of a backward alone).
/// Unused tensors are 0.
struct GroupNormParams {
  unsigned long long x, dy, weight, bias, y, mean, rstd, dx, dweight, dbias;
  /// Workspace: Sum2 partial sums, [N * C][pieces] (planes: each plane in
  /// `pieces` runs) or [N * slices_per_sample][C] (channels last).
  unsigned long long partials;
  unsigned long long coefficients;  ///< workspace: [kGroupCoefficients][N * C] float
  long long samples, channels, groups, spatial;
  long long pieces;                             ///< planes: runs per plane (one block each)
  long long slices_per_sample, rows_per_slice;  ///< channels last: spatial rows per block row
  /// gpu:groupnorm:fused: the width of the sums' and apply's grid its blocks visit in turn, and the grid
  /// barrier's arrival counter (workspace, cleared before the launch).
  long long blocks_x;
  unsigned long long barrier;
  float eps;
};

/// The per-(sample, channel) coefficients the statistics and gradient kernels
/// leave for the elementwise one, each an array of N * C floats.
enum GroupCoefficient : int {
  kGroupMeanHigh = 0,  ///< the group's mean as high + low (x - high - low keeps its float64 accuracy)
  kGroupMeanLow = 1,
  kGroupInvStd = 2,    ///< the group's rstd
  kGroupA = 3,         ///< forward y = (x - mean) * a + b; backward dx = a * dy + b * (x - mean) + c
  kGroupB = 4,
  kGroupC = 5,
  kGroupCoefficients = 6,
};

}  // namespace boo
