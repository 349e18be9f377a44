// boo device code: the GEMM's strided copies and its general epilogue.
//
// gpu:gemm:* run a GEMM as a 1x1 convolution on the conv tiers' kernels
// (gemm_conv_impl.cpp). An operand whose strides no conv layout expresses is
// copied into a dense buffer first, a result the conv writes elsewhere is
// copied out after, and an epilogue the conv's (bias per output channel, then
// the activation) cannot express -- alpha, beta * C, a broadcast bias -- is
// applied here to the conv's fp32 sums, so that the product is rounded once.
// One thread per element, grid-stride; the columns are the fastest index, so
// reads and writes of row-major views coalesce.
#pragma once

#include "boo/gemm/gemm_copy_params.cuh"
#include "boo/kernels/types.cuh"

namespace boo {

/// T: the type of dst, addend and bias; S: src's (T, or float: the conv's sums). kAddend: beta *
/// addend is added; kBias: bias is added; kAct: the activation (types.cuh).
template <typename T, typename S, bool kAddend, bool kBias, int kAct>
__device__ void gemm_copy(const GemmCopyParams& p) {
  const long long cols = p.sizes[2], rows = p.sizes[1];
  const long long total = p.sizes[0] * rows * cols;
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long c = e % cols, r = (e / cols) % rows, b = e / (cols * rows);  // (batch, row, column)
    auto at = [&](const long long* s) { return b * s[0] + r * s[1] + c * s[2]; };
    float v = p.alpha * load_as_float<S>(p.src, at(p.src_strides));
    if constexpr (kAddend) v += p.beta * load_as_float<T>(p.addend, at(p.addend_strides));
    if constexpr (kBias) v += load_as_float<T>(p.bias, at(p.bias_strides));
    store_from_float<T>(p.dst, at(p.dst_strides), activate<kAct>(v, p.act_alpha, p.act_lo, p.act_hi));
  }
}

}  // namespace boo
