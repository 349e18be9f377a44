// boo: the parameter blocks of the simple norm kernels (gpu:layernorm:simple,
// gpu:rmsnorm:simple), shared by host and device code (plain integers only,
// identical layout on both sides).
#pragma once

namespace boo {

/// Rows are the product of the leading dims, columns of the normalized dims.
/// x may be strided (BOO's --input-permutation, MIOpen's --layout): element
/// (row, col) is logical index row*cols + col of `shape`, at offset
/// sum(index[d]*x_strides[d]). y, dy and dx are contiguous, or strided like x
/// (the kernels' kLikeX); the other tensors are contiguous.
struct LayerNormParams {
  unsigned long long x, weight, bias, y, mean, rstd;  ///< forward (weight/bias may be 0)
  unsigned long long dy, dx, dweight, dbias;           ///< backward (unused ones are 0)
  unsigned long long x2;                               ///< add-layernorm: x is x + x2, strided like x (else 0)
  long long rows, cols;
  long long shape[8], x_strides[8];
  int rank;
  float eps;
};

/// Every tensor is contiguous: element (row, col) of x, y, dy, dx is at
/// row * cols + col. Unused tensors are 0.
struct RmsNormParams {
  unsigned long long x, weight, y, rstd;  ///< rstd: written by the forward, read by the backward
  unsigned long long dy, dx, dweight;
  long long rows, cols;
  float eps;
};

}  // namespace boo
