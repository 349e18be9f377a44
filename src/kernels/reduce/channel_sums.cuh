// boo device code: sums per channel of a tensor seen as
// [outer][channels][inner] in memory — the column reductions of the norm
// family (batch norm's statistics and gradients). The grid is (channel
// blocks, slices of the outer rows): each block adds its channels' terms over
// one slice and writes one Sum2 per channel to partials[slice][channel]; a
// second, small kernel adds each channel's partials in slice order, so every
// sum has the same order run to run. NVRTC-clean: includes nothing but boo's
// device code.
#pragma once

#include "boo/kernels/reduce/group_sum.cuh"

namespace boo {

/// A block's place on the (channel blocks, slices) grid: the launch's own
/// (this_block()), or one of the places a persistent (cooperative) kernel's
/// block visits in turn.
struct BlockIndex {
  long long x, y;
};
__device__ __forceinline__ BlockIndex this_block() { return BlockIndex{blockIdx.x, blockIdx.y}; }

/// The outer rows [first, last) of slice b.y.
struct Slice {
  long long first, last;
};
__device__ __forceinline__ Slice slice_of_block(long long rows, long long rows_per_slice, BlockIndex b = this_block()) {
  const long long first = b.y * rows_per_slice;
  const long long last = first + rows_per_slice < rows ? first + rows_per_slice : rows;
  return Slice{first, last};
}

/// Channels last ([outer][channels], inner 1; channels = vectors * kVec).
/// Block b of kThreadsX x kThreadsY threads: thread (tx, ty) owns channel
/// vector b.x * kThreadsX + tx (kVec consecutive channels) and visits
/// rows first + ty, first + ty + kThreadsY, ... of its slice, calling
/// terms(row, vector, acc) to add that row's terms into acc[kVec]. The row
/// lanes' sums are then added in lane order.
/// @pre blockDim.x == kThreadsX * kThreadsY; every thread of the block calls it.
template <int kVec, int kThreadsX, int kThreadsY, typename Terms>
__device__ __forceinline__ void channels_last_partial_sums(const Terms& terms, long long rows, long long vectors,
                                                           long long rows_per_slice, Sum2* partials,
                                                           BlockIndex b = this_block()) {
  constexpr int kChannelsPerBlock = kThreadsX * kVec;
  __shared__ Sum2 scratch[kThreadsY][kChannelsPerBlock];  // [row lane][channel of the block]
  const int tx = threadIdx.x % kThreadsX, ty = threadIdx.x / kThreadsX;
  const long long vec = b.x * kThreadsX + tx;
  Sum2 acc[kVec];  // [channel of the vector]
#pragma unroll
  for (int k = 0; k < kVec; ++k) acc[k] = Sum2{0.f, 0.f};
  const Slice slice = slice_of_block(rows, rows_per_slice, b);
  if (vec < vectors)
    for (long long row = slice.first + ty; row < slice.last; row += kThreadsY) terms(row, vec, acc);
#pragma unroll
  for (int k = 0; k < kVec; ++k) scratch[ty][tx * kVec + k] = acc[k];
  __syncthreads();
  const long long channels = vectors * kVec;
  for (int t = threadIdx.x; t < kChannelsPerBlock; t += kThreadsX * kThreadsY) {
    Sum2 s{0.f, 0.f};
    for (int y = 0; y < kThreadsY; ++y) {
      s.a += scratch[y][t].a;
      s.b += scratch[y][t].b;
    }
    const long long channel = b.x * kChannelsPerBlock + t;
    if (channel < channels) partials[b.y * channels + channel] = s;
  }
}

/// Channel planes ([outer][channels][kInner], kInner a multiple of kVec):
/// block b (channel b.x, slice b.y) of kBlock threads visits the
/// kVec-vectors of its channel's planes in the slice, calling
/// terms(vector_index, acc) to add a vector's terms (one channel's) into acc;
/// the block's sums are then reduced (group_sum2, a fixed tree).
/// @pre blockDim.x == kBlock; every thread of the block calls it.
template <int kVec, int kBlock, long long kInner, typename Terms>
__device__ __forceinline__ void plane_partial_sums(const Terms& terms, long long rows, long long channels,
                                                   long long rows_per_slice, Sum2* partials,
                                                   BlockIndex b = this_block()) {
  constexpr long long kInnerVectors = kInner / kVec;  // vectors per plane
  __shared__ Sum2 scratch[32];
  const long long channel = b.x;
  const Slice slice = slice_of_block(rows, rows_per_slice, b);
  const long long count = (slice.last - slice.first) * kInnerVectors;
  Sum2 acc{0.f, 0.f};
  for (long long i = threadIdx.x; i < count; i += kBlock) {
    const long long row = slice.first + i / kInnerVectors;  // division by a constant
    terms((row * channels + channel) * kInnerVectors + i % kInnerVectors, acc);
  }
  acc = group_sum2<kBlock>(acc, scratch);
  if (threadIdx.x == 0) partials[b.y * channels + channel] = acc;
}

}  // namespace boo
