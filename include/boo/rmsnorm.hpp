// boo: the RMS-normalization signature (MIOpen's t5layernorm).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "boo/signature.hpp"

namespace boo {

/// What an rmsnorm command computes (a bit set). MIOpen's -F 1 is the
/// forward, -F 2 the backward (dx, and dweight with a weight), -F 0 both.
enum RmsNormDirection : uint8_t {
  kRmsNormForward = 1,         ///< y, and float32 rstd for backward
  kRmsNormBackwardData = 2,    ///< dx
  kRmsNormBackwardWeight = 4,  ///< dweight = sum over rows of dy * x * rstd
};

/// y = x * rstd * weight, rstd = 1 / sqrt(mean(x^2) + eps) over the trailing
/// dims [normalized_dim, rank) of x (MIOpen: the last dim); rstd is float32
/// with the leading dims' shape. All tensors are contiguous.
struct RmsNormSignature final : OpSignature {
  DType dtype = DType::kF32;
  std::vector<int64_t> input_shape{100, 3, 32, 32};
  int normalized_dim = 3;  ///< first normalized axis (boo's -o; MIOpen normalizes the last dim)
  double eps = 1e-5;
  bool weight = true;      ///< MIOpen -m 5 (weight) or 4 (no weight, w = 1)
  uint8_t directions = kRmsNormForward | kRmsNormBackwardData | kRmsNormBackwardWeight;

  std::vector<int64_t> normalized_shape() const;
  int64_t rows() const;        ///< product of the leading dims
  int64_t row_length() const;  ///< product of the normalized dims

  TensorSpec dense_spec(std::string name) const;  ///< shape of x, contiguous
  TensorSpec param_spec(std::string name) const;  ///< normalized shape (weight)
  TensorSpec stat_spec(std::string name) const;   ///< leading dims, float32

  // OpSignature
  std::string_view op_name() const override { return "rmsnorm"; }
  Status validate() const override;
  std::string command() const override;
  std::string func_name() const override;
  std::vector<TensorSpec> arguments() const override;
  std::vector<TensorSpec> results() const override;
  double flop_count() const override;
  std::unique_ptr<OpSignature> clone() const override;
  bool equals(const OpSignature& other) const override;
  bool operator==(const RmsNormSignature& other) const;
};

}  // namespace boo
