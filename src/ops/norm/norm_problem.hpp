// boo: what a norm signature asks for, derived once from it and read by the
// CPU reference, the GPU implementations and the cuDNN baseline.
#pragma once

#include <cstdint>

#include "boo/norm.hpp"

namespace boo::ops::norm {

/// A row normalization of `rows` rows of `cols` elements (the normalized dims
/// of x, flattened), and which of its results a command computes.
struct NormProblem {
  NormKind kind = NormKind::kLayer;
  DType dtype = DType::kF32;
  int64_t rows = 0, cols = 0;
  double eps = 1e-5;
  bool weight = false, bias = false;
  bool forward = false;  ///< y and the statistics (computed first when a backward follows)
  bool dx = false, dweight = false, dbias = false;
  /// x's shape and storage strides: row-major unless a layer norm input is
  /// permuted. Every other tensor is row-major.
  TensorSpec x;
  bool contiguous = true;  ///< x is row-major: element (row, col) at row * cols + col

  bool rms() const { return kind == NormKind::kRms; }
  bool backward() const { return dx || dweight || dbias; }
  bool param_grads() const { return dweight || dbias; }
};

/// The problem a norm signature poses; an error for another op's signature.
Result<NormProblem> norm_problem(const OpSignature& sig);
/// The same, and an error for a norm signature of another kind.
Result<NormProblem> norm_problem(const OpSignature& sig, NormKind kind);

}  // namespace boo::ops::norm
