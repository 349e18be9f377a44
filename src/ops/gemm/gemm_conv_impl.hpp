// boo: gpu:gemm:* — GEMMs on the conv tiers' kernels.
#pragma once

#include <string>

#include "ops/conv/conv_problem.hpp"
#include "ops/gemm/gemm_problem.hpp"
#include "ops/gpu_implementation.hpp"

namespace boo::ops::gemm {

/// A GEMM is a 1x1 convolution: rows are pixels, k input channels, columns
/// output channels. Unbatched (or with B shared by the batch): x = A as
/// [batch, k, m] (or [m, k, 1] unbatched), w = B^T as [n, k, 1], y = out as
/// [batch, n, m] (or [m, n, 1]). With B batched: one group per batch entry of
/// the transposed product, x = B as [1, batch*k, n], w = A as [batch*m, k, 1],
/// y = out as [1, batch*m, n]. Each operand takes the conv layout (a
/// permutation of NCH) whose strides are its own; one no layout expresses
/// (non-dense strides, a broadcast A, a transposed batched operand) is copied
/// into a dense buffer first, and out from one after.
///
/// Where the GEMM's epilogue is not the conv's (alpha, beta * C, a bias along
/// the rows or per batch entry, any epilogue of a grouped mapping), the conv
/// leaves its fp32 sums in the workspace (ConvProblem::fp32_result) and the
/// epilogue kernel (gemm_copy.cuh) applies alpha, beta * C, the bias and the
/// activation to them and writes out in its own strides: the product is
/// rounded to the GEMM's dtype once, as the reference's is.
struct ConvMapping {
  struct Operand {
    MatrixView view;         ///< the GEMM's view it holds
    int64_t rows = 0, cols = 0;
    bool staged = false;     ///< copied through a dense buffer in the workspace
    MatrixView staged_view;  ///< the buffer's view (tensor name empty), when staged
    size_t offset = 0;       ///< the buffer's byte offset in the workspace
  };
  ConvSignature conv;     ///< forward, 1-D, 1x1; bias and activation when fused
  bool grouped = false;   ///< B batched: one group per batch entry
  Operand x, w, y;       ///< y is never staged with the epilogue kernel, which writes out itself
  bool epilogue = false;  ///< the GEMM's epilogue runs after the conv (gemm_copy.cuh) on its fp32 sums
  /// With the epilogue: the [batch, m, n] view of the conv's fp32 sums, the
  /// dense (groups, M, N) floats at its workspace's start (ConvProblem::fp32_result).
  std::array<int64_t, 3> sums{};
};

/// The mapping of `desc`. `channels_last`: operands are staged unless already
/// in the conv's channels-last layouts (NHC), as gpu:conv:wgmma_sm90 needs.
ConvMapping map_to_conv(const GemmDesc& desc, bool channels_last);

/// GEMMs on one conv tier's kernels, declining what that tier declines for
/// the mapped conv: gpu:gemm:wgmma_sm90 (gpu:conv:wgmma_sm90, operands staged
/// channels-last), gpu:gemm:fp32_bf16x6 (strict fp32 as six bf16 products:
/// gpu:conv:fp32_bf16x6; GEMMs without an epilogue kernel), gpu:gemm:implicit_gemm
/// and gpu:gemm:direct.
const GpuImplementation& gemm_via_conv_wgmma();
const GpuImplementation& gemm_via_conv_fp32_bf16x6();
const GpuImplementation& gemm_via_conv_implicit_gemm();
const GpuImplementation& gemm_via_conv_direct();

}  // namespace boo::ops::gemm
