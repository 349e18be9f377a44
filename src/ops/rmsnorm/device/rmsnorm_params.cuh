// boo: the parameter block of the rmsnorm kernels, shared by host and device
// code (plain integers only, identical layout on both sides).
#pragma once

namespace boo {

/// Rows are the product of the leading dims, columns of the normalized dims;
/// every tensor is contiguous: element (row, col) of x, y, dy, dx is at
/// row * cols + col. Unused tensors are 0.
struct RmsNormParams {
  unsigned long long x, weight, y, rstd;  ///< rstd: written by the forward, read by the backward
  unsigned long long dy, dx, dweight;
  long long rows, cols;
  float eps;
};

}  // namespace boo
