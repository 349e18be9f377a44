// boo: one launch of the GEMM's copy and epilogue kernels (device/gemm_copy.cuh):
//
//   dst[b, r, c] = act(alpha * src[b, r, c] + beta * addend[b, r, c] + bias[b, r, c])
//
// over a [batch, rows, cols] index space, each tensor a strided view of it. Where
// src and dst are fastest along the same index the kernel runs one thread per
// element (coalesced on both sides); where they are not -- a transpose -- it
// moves tiles through shared memory so that both sides still coalesce. The
// interface is only sizes and strides, so another op's plan (a conv writing its
// fp32 sums [N][pixels][K] into an NCHW result with bias and activation) can
// use it as gpu:gemm does.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "base/kernel_source.hpp"
#include "boo/conv.hpp"
#include "boo/tensor.hpp"
#include "ops/arch_spec.hpp"
#include "ops/plan.hpp"

namespace boo::ops::gemm {

using Extents3 = std::array<int64_t, 3>;  ///< batch, rows, cols
using Strides3 = std::array<int64_t, 3>;  ///< element strides of batch, row, col; 0 broadcasts

/// One tensor of a copy: where the launch finds it and its view of the index space.
struct CopyOperand {
  TensorBinding binding;
  Strides3 strides{};
};

/// One copy or epilogue launch.
struct CopySpec {
  std::string entry;                ///< the kernel's name, unique in the plan's source
  DType dtype = DType::kF32;        ///< of dst, addend and bias
  bool src_fp32 = false;            ///< src holds floats (fp32 sums) rather than `dtype`
  Extents3 sizes{};
  CopyOperand src, dst;
  std::optional<CopyOperand> addend;  ///< scaled by beta
  std::optional<CopyOperand> bias;
  double alpha = 1.0, beta = 0.0;
  Activation activation;
};

/// How the kernel walks the index space.
struct CopyForm {
  bool tiled = false;  ///< gemm_copy_tiled, else gemm_copy (element-wise)
  /// The kernel's (batch, rows, cols) are the index space's dims order[0], order[1], order[2].
  /// Tiled: src is fastest along order[1], dst along order[2]. Element-wise: both (or the one
  /// that has a fastest dim) along order[2], the kernel's fastest index; the others keep their order.
  std::array<int, 3> order{0, 1, 2};
};

/// The dim (0, 1 or 2) along which a view is fastest over `sizes`: the smallest
/// nonzero stride (in magnitude) of an extent above 1, the first of equals; -1
/// when there is none (one element, or broadcast everywhere).
int fastest_dim(const Strides3& strides, const Extents3& sizes);

/// Tiled exactly when src and dst are both fastest along some dim and those
/// dims differ; element-wise otherwise, along the dim they share. addend and
/// bias are read where dst is written: an addend laid out as dst (beta * C)
/// coalesces with it.
CopyForm copy_form(const Extents3& sizes, const Strides3& src, const Strides3& dst);

/// Appends `spec`'s kernel to `source` (its text, with gemm_copy.cuh included
/// once, and its entry) and returns its launch: the form copy_form() picks,
/// the index space reordered for it, grid sized on `arch`. INTERNAL when a
/// size is not positive.
Result<LaunchStep> plan_copy(const CopySpec& spec, const ArchSpec& arch, base::KernelSource& source);

}  // namespace boo::ops::gemm
