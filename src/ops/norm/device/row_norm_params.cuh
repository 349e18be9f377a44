// boo: the parameter block of the row-normalization kernels, shared by host
// and device code (plain integers only, identical layout on both sides).
#pragma once

namespace boo {

/// Every tensor is contiguous: element (row, col) of x, y, dy, dx is at
/// row * cols + col; weight, bias, dweight, dbias hold cols elements; mean and
/// rstd one float32 per row. Unused tensors are 0.
struct RowNormParams {
  unsigned long long x, weight, bias, y, mean, rstd;  ///< mean: layer norm only; rstd written or read
  unsigned long long dy, dx, dweight, dbias;          ///< backward (unused ones are 0)
  unsigned long long partials;                        ///< workspace: [2][slots][cols] float32 (dweight, dbias)
  unsigned long long x2;                              ///< add-layernorm: the row is x + x2 (else 0)
  long long rows;
  long long slots;                                    ///< partial rows: backward blocks * row groups per block
  float eps;
};

}  // namespace boo
