// boo: what a norm signature asks for, read once from it by the CPU
// reference, the GPU tiers and the cuDNN baseline.
#pragma once

#include <cstdint>
#include <memory>

#include "boo/batchnorm.hpp"
#include "boo/groupnorm.hpp"
#include "boo/norm.hpp"
#include "ops/problem.hpp"

namespace boo::ops::norm {

/// What a norm command computes, as every implementation reasons about it:
/// a row normalization (layer, RMS norm) of `rows` rows of `cols` elements
/// (the normalized dims of x, flattened), a column one (batch norm) of
/// `channels` statistics over x seen as [outer][channels][inner] in memory,
/// or group norm's rows: `rows` = N * groups statistics of `cols` = C / groups
/// * spatial elements each (with x's logical order, a group of a sample is a
/// row), x being [outer = N][channels = C][inner = spatial] logically.
class NormProblem final : public OpProblem {
 public:
  explicit NormProblem(const NormSignature& sig);
  explicit NormProblem(const BatchNormSignature& sig);
  explicit NormProblem(const GroupNormSignature& sig);

  bool rms() const { return kind == NormKind::kRms; }
  bool backward() const { return dx || dweight || dbias; }
  bool param_grads() const { return dweight || dbias; }

  NormKind kind = NormKind::kLayer;
  DType dtype = DType::kF32;
  int64_t rows = 0, cols = 0;
  double eps = 1e-5;
  bool weight = false, bias = false;
  bool fused_add = false;  ///< add-layernorm: the rows are x + x2 (x2 stored like x)
  bool forward = false;  ///< y and the statistics (computed first when a backward follows)
  bool dx = false, dweight = false, dbias = false;
  /// x's shape and storage strides: row-major unless a layer norm input is
  /// permuted (BOO's --input-permutation: x alone) or in a channels-last
  /// --layout (MIOpen's: y, dy and dx too, see strided_like_x). Every other
  /// tensor is row-major.
  TensorSpec x;
  bool contiguous = true;       ///< x is row-major: element (row, col) at row * cols + col
  bool strided_like_x = false;  ///< y, dy and dx have x's strides (else they are row-major)

  /// Batch norm: x (y, dy, dx) as [outer][channels][inner] in memory. Spatial
  /// NC(D)HW: [N][C][spatial]; spatial channels last: [N * spatial][C][1];
  /// per activation, either layout: [N][C * spatial][1], a "channel" being an
  /// activation's offset within a sample, which is also its offset in the
  /// parameter and statistic tensors (laid out like x). Each channel's
  /// statistics summarize its outer * inner elements.
  int64_t outer = 0, channels = 0, inner = 1;
  BatchNormPass pass = BatchNormPass::kTraining;
  bool save = false, running = false;  ///< MIOpen's -s and -r
  double momentum = 1.0;
  DType param_dtype = DType::kF32, grad_dtype = DType::kF32;  ///< scale/bias; dy/dx
  int64_t count() const { return outer * inner; }  ///< elements per statistic

  /// Group norm: groups of channels, and whether x (y, dy, dx) is stored
  /// channels last ([N][spatial][C]; else [N][C][spatial] planes). A layout
  /// whose spatial size is 1 is channels last, whose C is 1 planes: either
  /// way the same bytes.
  int64_t groups = 1;
  bool channels_last = false;
};

/// The problem of a norm signature of `kind` (a NormSignature, or a
/// BatchNormSignature for kBatch); INTERNAL for another op's or kind's.
Result<std::unique_ptr<OpProblem>> make_norm_problem(const OpSignature& sig, NormKind kind);

}  // namespace boo::ops::norm
