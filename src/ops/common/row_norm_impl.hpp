// boo: the row-normalization kernels (common/device/row_norm.cuh) as a GPU
// implementation, shared by layer norm (gpu:layernorm:rows) and RMS norm
// (gpu:rmsnorm:rows): each op says what its signature asks for as a
// RowNormProblem.
#pragma once

#include <functional>

#include "ops/gpu_implementation.hpp"

namespace boo::ops {

/// A row normalization over `rows` contiguous rows of `cols` elements.
struct RowNormProblem {
  DType dtype = DType::kF32;
  int64_t rows = 0, cols = 0;
  double eps = 1e-5;
  bool rms = false;                  ///< RMS norm (no mean) instead of layer norm
  bool weight = false, bias = false;
  bool forward = false;              ///< y and the statistics (and first, when backward follows)
  bool dx = false, dweight = false, dbias = false;
};

/// The problem a signature poses, or why the row kernels do not take it
/// (a permuted input, ...).
using RowNormProblemOf = std::function<Result<RowNormProblem>(const OpSignature&)>;

/// A GpuImplementation named `name` running the row kernels on the problems
/// `problem_of` extracts. Declines rows too wide to keep in registers.
std::unique_ptr<GpuImplementation> make_row_norm_implementation(std::string name, RowNormProblemOf problem_of);

}  // namespace boo::ops
