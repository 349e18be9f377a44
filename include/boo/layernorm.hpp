// boo: the layer-normalization signature.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "boo/signature.hpp"

namespace boo {

/// Which results a layernorm command computes (a bit set; BOO's Mode values).
enum LayerNormDirection : uint8_t {
  kLayerNormForward = 1,         ///< y, and float32 mean and rstd for backward
  kLayerNormBackwardData = 2,    ///< dx
  kLayerNormBackwardWeight = 4,  ///< dweight = sum over rows of dy * xhat
  kLayerNormBackwardBias = 8,    ///< dbias = sum over rows of dy
};

/// y = (x - mean) * rstd * weight + bias over the trailing dims
/// [normalized_dim, rank) of x; mean and rstd are float32.
struct LayerNormSignature final : OpSignature {
  DType dtype = DType::kF32;
  std::vector<int64_t> input_shape{100, 3, 32, 32};
  int normalized_dim = 3;  ///< first normalized axis (MIOpen -o)
  double eps = 1e-5;
  bool weight = false;     ///< elementwise affine weight (MIOpen -m 1)
  bool bias = false;       ///< bias (MIOpen -m 1); needs weight
  uint8_t directions = kLayerNormForward;
  /// Memory order of x, outermost first (BOO's --input-permutation); empty
  /// or the identity means contiguous.
  std::vector<int> input_permutation;
  bool use_aten = true;    ///< BOO's --use-aten; only affects func_name

  std::vector<int64_t> normalized_shape() const;
  /// Rows (product of the leading dims) and row length (product of the normalized dims).
  int64_t rows() const;
  int64_t row_length() const;
  bool permuted() const;

  TensorSpec x_spec(std::string name = "x") const;        ///< strided by input_permutation
  TensorSpec dense_spec(std::string name) const;          ///< shape of x, contiguous
  TensorSpec param_spec(std::string name) const;          ///< normalized shape (weight, bias)
  TensorSpec stat_spec(std::string name) const;           ///< leading dims + 1s, float32

  // OpSignature
  std::string_view op_name() const override { return "layernorm"; }
  Status validate() const override;
  std::string command() const override;
  std::string func_name() const override;
  std::vector<TensorSpec> arguments() const override;
  std::vector<TensorSpec> results() const override;
  double flop_count() const override;
  std::unique_ptr<OpSignature> clone() const override;
  bool equals(const OpSignature& other) const override;
  bool operator==(const LayerNormSignature& other) const;
};

}  // namespace boo
