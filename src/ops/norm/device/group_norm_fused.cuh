// boo device code: group norm in one cooperative launch (gpu:groupnorm:fused):
// gpu:groupnorm:groups' kernels as phases of one persistent kernel, separated
// by grid barriers instead of launches. The SD-UNet's group norms (0.3-5 MB at
// batch 2) take a few microseconds of memory traffic, about what each of the
// groups tier's three (forward) or five (backward) dependent launches costs;
// their second read of x (and dy) hits L2.
//
// The grid is at most as many blocks as the SMs hold at once (the
// cooperative launch starts them all); the elementwise phases' blocks visit
// the places of the groups tier's (channel blocks, slices) or (pieces) grid
// in turn (blocks_x wide), and the per-group and per-channel phases' threads
// their rows in turn. Every sum has the groups tier's order: the results are
// its results.
#pragma once

#include "boo/kernels/reduce/grid_barrier.cuh"
#include "boo/norm/group_norm.cuh"

namespace boo {

/// Forward (kForward: sums of the moments, statistics, y) and/or backward
/// (kDx: from the forward's statistics or, without kForward, the saved mean
/// and rstd; gradient sums, dx's coefficients, with kParamGrads dweight and
/// dbias, dx). Template arguments as group_norm_sums' and
/// group_norm_statistics'; blocks_y: the rows of the visited grid.
template <typename T, int kVec, int kThreadsX, int kThreadsY, bool kChannelsLast, long long kPiece, bool kForward,
          bool kDx, bool kAffine, bool kParamGrads>
__device__ void group_norm_fused(const GroupNormParams& p, long long blocks_y) {
  const long long places = p.blocks_x * blocks_y;
  // Block-wide phases: each place of the grid once; the scratch of the sums is reused, hence the barrier.
  auto each_place = [&](auto&& phase) {
    for (long long v = blockIdx.x; v < places; v += gridDim.x) {
      phase(BlockIndex{v % p.blocks_x, v / p.blocks_x});
      __syncthreads();
    }
  };
  // The per-group and per-channel phases: a warp per row (or channel), the grid's warps in turn.
  const long long first = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const long long rows = p.samples * p.groups;
  unsigned int generation = 0;
  if (kForward) {
    each_place([&](BlockIndex b) { group_norm_sums<T, kVec, kThreadsX, kThreadsY, kChannelsLast, kPiece, false>(p, b); });
    grid_barrier(p.barrier, ++generation);
    for (long long row = first; row < rows; row += stride)
      group_norm_statistics<T, kChannelsLast, kGroupStatsBatch, true, kAffine>(p, row, lane);
    grid_barrier(p.barrier, ++generation);
    each_place([&](BlockIndex b) { group_norm_apply<T, kVec, kThreadsX, kThreadsY, kChannelsLast, kPiece, false>(p, b); });
  } else {
    for (long long row = first; row < rows; row += stride)
      group_norm_statistics<T, kChannelsLast, kGroupStatsSaved, false, kAffine>(p, row, lane);
    grid_barrier(p.barrier, ++generation);
  }
  if (kDx) {
    // The gradient sums read the mean (written before the last barrier) and overwrite the partials the
    // statistics read before it; y's pass reads a and b, which the gradients overwrite after the next.
    each_place([&](BlockIndex b) { group_norm_sums<T, kVec, kThreadsX, kThreadsY, kChannelsLast, kPiece, true>(p, b); });
    grid_barrier(p.barrier, ++generation);
    for (long long row = first; row < rows; row += stride)
      group_norm_gradients<T, kChannelsLast, kAffine>(p, row, lane);
    grid_barrier(p.barrier, ++generation);
    // dweight and dbias read only the gradient partials and rstd (written before the barrier), which dx's
    // pass leaves as they are: no barrier before dx.
    if (kParamGrads)
      for (long long c = first; c < p.channels; c += stride) group_norm_param_grads<T, kChannelsLast>(p, c, lane);
    each_place([&](BlockIndex b) { group_norm_apply<T, kVec, kThreadsX, kThreadsY, kChannelsLast, kPiece, true>(p, b); });
  }
}

}  // namespace boo
