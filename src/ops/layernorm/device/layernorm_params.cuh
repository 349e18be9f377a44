// boo: the parameter block of the layernorm kernels, shared by host and
// device code (plain integers only, identical layout on both sides).
#pragma once

namespace boo {

/// Rows are the product of the leading dims, columns of the normalized dims.
/// x may be strided (BOO's --input-permutation): element (row, col) is
/// logical index row*cols + col of `shape`, at offset sum(index[d]*x_strides[d]).
/// Every other tensor is contiguous.
struct LayerNormParams {
  unsigned long long x, weight, bias, y, mean, rstd;  ///< forward (weight/bias may be 0)
  unsigned long long dy, dx, dweight, dbias;           ///< backward (unused ones are 0)
  long long rows, cols;
  long long shape[8], x_strides[8];
  int rank;
  float eps;
};

}  // namespace boo
