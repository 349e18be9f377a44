// boo: gpu:gemm:* — GEMMs on the conv tiers' kernels.
#pragma once

#include <optional>
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
  ConvSignature conv;     ///< 1-D, 1x1, forward (or, map_in_place, weight or data gradient); bias and activation when fused
  bool grouped = false;   ///< B batched: one group per batch entry
  /// The operands by the conv tensor whose shape each takes: x, w and y of the
  /// forward, x, dw and dy of the weight gradient, dx, w and dy of the data
  /// gradient. y is never staged with the epilogue kernel, which writes out
  /// itself.
  Operand x, w, y;
  bool epilogue = false;  ///< the GEMM's epilogue runs after the conv (gemm_copy.cuh) on its fp32 sums
  /// With the epilogue: the [batch, m, n] view of the conv's fp32 sums, the
  /// dense (groups, M, N) floats at its workspace's start (ConvProblem::fp32_result).
  std::array<int64_t, 3> sums{};

  /// Whether the conv is the weight gradient (map_in_place): it reads x and
  /// dy (the operand y) and writes dw (the operand w).
  bool weight_gradient() const { return conv.directions == kConvBackwardWeight; }
  /// Whether the conv is the data gradient (map_in_place): it reads w and dy
  /// (the operand y) and writes dx (the operand x).
  bool data_gradient() const { return conv.directions == kConvBackwardData; }
  /// The operand the conv writes.
  const Operand& result() const { return weight_gradient() ? w : data_gradient() ? x : y; }
  /// The operand bound to the conv's argument `name` (x, w or dy); nullptr for its bias.
  const Operand* argument(const std::string& name) const {
    if (name == "x") return &x;
    if (name == "w") return &w;
    if (name == "dy") return &y;
    return nullptr;
  }
};

/// The mapping of `desc`. `channels_last`: operands are staged unless already
/// in the conv's channels-last layouts (NHC), as gpu:conv:wgmma_sm90 needs.
ConvMapping map_to_conv(const GemmDesc& desc, bool channels_last);

/// A plain GEMM (one batch entry; no alpha, C, bias or activation) whose
/// operands a channels-last forward would stage, read where they lie by
/// another face of gpu:conv:wgmma_sm90's (on the H100 the staging copies cost
/// 5-35% of such a GEMM's time; docs/perf/2026-11-27-session10.md):
/// - A stored k x m (--transA), B and out row-major: the weight gradient of
///   k one-pixel images, dy = A (NHC, [k, m]), x = B (NHC, [k, n]),
///   dw = out (KCRS, [m, n]);
/// - A, B and out row-major (no transpose): the forward of one image of n
///   pixels in NCH, w = A (KCRS, [m, k]), x = B ([k, n]), y = out ([m, n]).
/// Nothing is staged and the conv has no epilogue. std::nullopt otherwise.
std::optional<ConvMapping> map_in_place(const GemmDesc& desc);

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
