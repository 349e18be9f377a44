// boo device code: the reduce of gpu:conv:wgmma_sm90's forward and data faces
// split along their reduction (split K). Where a conv's 128 x BN output tiles
// are too few to fill the SMs (a small image or batch: 64 tiles for 132 SMs),
// the host gives each tile C::kSplits units over consecutive ranges of its
// k-blocks (conv_wgmma.cuh's Units); conv_wgmma<Cfg> stores each unit's fp32
// sums in its split's plane of the workspace (kSplits, kM, kN), and this
// kernel adds the planes of every element in split order (split_k.cuh, the
// weight face's reduce: deterministic, no atomics), then applies the
// epilogue (bias, activation, conversion to y's type) and writes y at the
// forward kernel's offsets; with C::kFp32Out it leaves the fp32 sums at the
// workspace's start for the caller's epilogue instead.
//
// The generated source defines `struct Cfg` (conv_wgmma.cuh's members, plus
// kGroups = 1 and kIdx32 for split_k.cuh) and instantiates conv_wgmma<Cfg> and
// conv_wgmma_forward_reduce<Cfg>.
#pragma once

#include "boo/conv/conv_wgmma.cuh"
#include "boo/kernels/gemm/split_k.cuh"

namespace boo {
namespace wgmma_conv {

/// y's element offsets for split_k_reduce (epilogue.cuh's OutputMap): GEMM
/// element (m, col) is output pixel m's channel col, its bias channel col.
template <class C>
struct ForwardOutput {
  __device__ static int out_offset(int m, int col, int, int& channel) {
    channel = col;
    return forward_offset<C>(m, col);
  }
};

/// Adds the kSplits planes of fp32 sums of every y element in split order and
/// writes it with the epilogue. Grid-stride, one thread per element.
template <class C>
__device__ void conv_wgmma_forward_reduce(const ConvIgemmParams& p) {
  static_assert(C::kSplits > 1, "an unsplit conv stores y from its own epilogue");
  gemm::split_k_reduce<C, ForwardOutput<C>>(p);
}

}  // namespace wgmma_conv
}  // namespace boo
