// boo: what a norm signature asks for, read once from it by the CPU
// reference, the GPU tiers and the cuDNN baseline.
#pragma once

#include <cstdint>
#include <memory>

#include "boo/norm.hpp"
#include "ops/problem.hpp"

namespace boo::ops::norm {

/// A row normalization of `rows` rows of `cols` elements (the normalized dims
/// of x, flattened), and which of its results a command computes.
class NormProblem final : public OpProblem {
 public:
  explicit NormProblem(const NormSignature& sig);

  const NormSignature& typed() const { return static_cast<const NormSignature&>(signature()); }
  bool rms() const { return kind == NormKind::kRms; }
  bool backward() const { return dx || dweight || dbias; }
  bool param_grads() const { return dweight || dbias; }

  NormKind kind = NormKind::kLayer;
  DType dtype = DType::kF32;
  int64_t rows = 0, cols = 0;
  double eps = 1e-5;
  bool weight = false, bias = false;
  bool forward = false;  ///< y and the statistics (computed first when a backward follows)
  bool dx = false, dweight = false, dbias = false;
  /// x's shape and storage strides: row-major unless a layer norm input is
  /// permuted (BOO's --input-permutation: x alone) or in a channels-last
  /// --layout (MIOpen's: y, dy and dx too, see strided_like_x). Every other
  /// tensor is row-major.
  TensorSpec x;
  bool contiguous = true;       ///< x is row-major: element (row, col) at row * cols + col
  bool strided_like_x = false;  ///< y, dy and dx have x's strides (else they are row-major)
};

/// The problem of a norm signature of `kind`; INTERNAL for another op's or kind's.
Result<std::unique_ptr<OpProblem>> make_norm_problem(const OpSignature& sig, NormKind kind);

}  // namespace boo::ops::norm
