// boo: the GEMM signature (MIOpenDriver's and BOO's `gemm` commands).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "boo/conv.hpp"  // Activation
#include "boo/signature.hpp"

namespace boo {

/// Which result a GEMM command computes (BOO's -F values).
enum class GemmDirection : uint8_t {
  kForward = 1,    ///< d = act(alpha * op(a) @ op(b) + beta * c + bias)
  kGradientA = 2,  ///< da = alpha * dd @ op(b)^T, stored as a is
  kGradientB = 3,  ///< db = alpha * op(a)^T @ dd, stored as b is
};

/// A (batched) matrix product D = alpha * op(A) @ op(B) + beta * C + bias.
///
/// Sizes follow BOO's GEMM parser (op_exports/gemm.py): op(A) is m x k and
/// op(B) is k x n, where m = --a_w (-k), k = --a_h (-m) and n = --b_w (-n);
/// MIOpenDriver reads -m as m instead. transA stores A as k x m, transB stores
/// B as n x k; every matrix is row-major, or column-major with --isColMajor 1
/// (MIOpenDriver's: the same logical shapes, each stored transposed), and
/// with a batch, batch-major. Tensor names are cuBLASLt's: a, b, c (the beta addend, present
/// when beta != 0), bias (length n) -> d; the gradients read dd.
struct GemmSignature final : OpSignature {
  DType dtype = DType::kF32;
  int64_t batch = 1;  ///< --batch_count (MIOpenDriver); 1: rank-2 tensors
  int64_t m = 256, n = 256, k = 256;
  bool trans_a = false, trans_b = false;
  bool col_major = false;  ///< --isColMajor: every matrix stored column-major
  GemmDirection direction = GemmDirection::kForward;
  double alpha = 1.0, beta = 0.0;
  bool bias = false;         ///< boo: a per-column bias of length n (forward)
  Activation activation;     ///< boo: applied last (forward)
  bool fp32_tf32 = false;    ///< fp32 may use TF32 tensor cores (--fp32-math tf32)

  /// The stored tensors: a (m x k, or k x m transposed), b (k x n, or n x k),
  /// c and d (m x n), bias (n); a leading batch dimension when batch > 1. With
  /// col_major, a matrix's strides are (1, rows) (batch: rows * cols first).
  TensorSpec a_spec(std::string name = "a") const;
  TensorSpec b_spec(std::string name = "b") const;
  TensorSpec d_spec(std::string name = "d") const;
  TensorSpec bias_spec(std::string name = "bias") const;

  // OpSignature
  std::string_view op_name() const override { return "gemm"; }
  Status validate() const override;
  std::string command() const override;
  std::string func_name() const override;
  std::vector<TensorSpec> arguments() const override;
  std::vector<TensorSpec> results() const override;
  double flop_count() const override;
  std::unique_ptr<OpSignature> clone() const override;
  bool equals(const OpSignature& other) const override;
  bool operator==(const GemmSignature& other) const;
};

}  // namespace boo
