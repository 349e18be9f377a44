// boo device code: split K. When a GEMM has few output tiles and a long K (a
// weight gradient), the host's cost model may give each tile kSplits CTAs,
// each over its own range of k tiles (CtaTile), to fill the GPU. They store
// fp32 partial sums in a workspace of shape (kSplits, kGroups, kM, kN), and a
// second kernel sums them and applies the epilogue. No atomics: the order of
// the sum is fixed, so results are deterministic.
//
// C::kFp32Out: the GEMM's caller applies its own epilogue to the unrounded
// sums (a GEMM's alpha, beta * C, bias along rows: gpu:gemm). The CTAs store
// their accumulators as partials even without split K (one plane), and the
// reduce writes each sum in fp32 over split 0's plane in place of the
// epilogue: (kGroups, kM, kN) floats at the workspace's start.
#pragma once

#include "boo/kernels/gemm/epilogue.cuh"
#include "boo/kernels/gemm/tile.cuh"
#include "boo/kernels/gemm/warp_tile.cuh"

namespace boo {
namespace gemm {

/// Stores the CTA's accumulators in its split's plane of the workspace, P::workspace. The
/// coordinates come by reference, as in store_tile_elements (epilogue.cuh says why).
template <class C, class P>
__device__ void store_partials(const Accumulators<C>& acc, const P& p, const Index<C>& row0, const Index<C>& col0,
                               const Index<C>& g, const int& warp_m, const int& warp_n, const int& lane) {
  using I = Index<C>;
  constexpr int kWarpM = WarpTile<C>::kWarpM, kWarpN = WarpTile<C>::kWarpN;
  constexpr int kMmaM = WarpTile<C>::kMmaM, kMmaN = WarpTile<C>::kMmaN;
#pragma unroll
  for (int i = 0; i < kMmaM; ++i) {
#pragma unroll
    for (int j = 0; j < kMmaN; ++j) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {  // rows lane/4 and lane/4 + 8 of the m16 block
        const I m = row0 + warp_m * kWarpM + i * 16 + (lane >> 2) + half * 8;
        const I col = col0 + warp_n * kWarpN + j * 8 + (lane & 3) * 2;
        if (m >= static_cast<I>(C::kM)) continue;
        float* ws = reinterpret_cast<float*>(p.workspace) +
                    ((blockIdx.z * C::kGroups + g) * C::kM + m) * C::kN;  // row m of (split, group)
        if (col < C::kN) ws[col] = acc[i][j][half * 2];
        if (col + 1 < C::kN) ws[col + 1] = acc[i][j][half * 2 + 1];
      }
    }
  }
}

/// The reduce kernel's body: sums the kSplits partials of each output element and writes it with
/// the epilogue (OutputMap, P as in epilogue.cuh). One thread per element, grid-stride.
template <class C, class OutputMap, class P>
__device__ void split_k_reduce(const P& p) {
  using T = typename C::T;
  using I = Index<C>;
  constexpr long long kPlane = C::kGroups * C::kM * C::kN;  // one split's partials
  const float* ws = reinterpret_cast<const float*>(p.workspace);
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < kPlane;
       e += static_cast<long long>(gridDim.x) * blockDim.x) {
    // Summed in float64 and rounded once: an fp32 sum over 100-256 partials of size sqrt(slice)
    // would add an error as large as the slices' own (docs/tolerances.md, "fp32 weight
    // gradients"). The reduce is bound by reading the partials, so the FP64 adds cost no time.
    double sum = 0.0;
    for (int s = 0; s < C::kSplits; ++s) sum += ws[s * kPlane + e];
    float v = static_cast<float>(sum);
    if constexpr (C::kFp32Out) {
      reinterpret_cast<float*>(p.workspace)[e] = v;  // only this thread reads element e's partials
    } else {
      const I g = static_cast<I>(e / (C::kM * C::kN)), m = static_cast<I>((e / C::kN) % C::kM),
              col = static_cast<I>(e % C::kN);
      I channel;
      const I off = OutputMap::out_offset(m, col, g, channel);
      v = bias_and_activation<C>(v, channel, off, p);
      store_from_float<T>(p.out, off, v);
    }
  }
}

}  // namespace gemm
}  // namespace boo
