// boo: the normalization signatures — layer norm (MIOpen's layernorm) and RMS
// norm (MIOpen's t5layernorm), two kinds of one row normalization.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "boo/signature.hpp"

namespace boo {

/// Which results a norm command computes (a bit set; BOO's Mode values for
/// layer norm). RMS norm takes no bias, so never kNormBackwardBias.
enum NormDirection : uint8_t {
  kNormForward = 1,         ///< y, and float32 statistics (mean: layer norm only; rstd) for backward
  kNormBackwardData = 2,    ///< dx
  kNormBackwardWeight = 4,  ///< dweight = sum over rows of dy * xhat
  kNormBackwardBias = 8,    ///< dbias = sum over rows of dy
};

// The names boo/layernorm.hpp and boo/rmsnorm.hpp have always given them.
using LayerNormDirection = NormDirection;
using RmsNormDirection = NormDirection;
inline constexpr NormDirection kLayerNormForward = kNormForward;
inline constexpr NormDirection kLayerNormBackwardData = kNormBackwardData;
inline constexpr NormDirection kLayerNormBackwardWeight = kNormBackwardWeight;
inline constexpr NormDirection kLayerNormBackwardBias = kNormBackwardBias;
inline constexpr NormDirection kRmsNormForward = kNormForward;
inline constexpr NormDirection kRmsNormBackwardData = kNormBackwardData;
inline constexpr NormDirection kRmsNormBackwardWeight = kNormBackwardWeight;

enum class NormKind : uint8_t {
  kLayer,  ///< xhat = (x - mean) * rstd, rstd = 1 / sqrt(var + eps) (var biased)
  kRms,    ///< xhat = x * rstd, rstd = 1 / sqrt(mean(x^2) + eps)
  kBatch,  ///< statistics per channel (or activation) over the batch: boo/batchnorm.hpp
  kGroup,  ///< statistics per sample and group of channels: boo/groupnorm.hpp
};

/// y = xhat * weight + bias over the trailing dims [normalized_dim, rank) of x
/// (rows: the product of the leading dims; a row: the normalized elements).
/// Each computes forward, backward, or both in one command (MIOpen's -F 0 of
/// t5layernorm and of layernorm's -N -C -H -W syntax; the backward reads the
/// statistics the forward saves). Statistics are float32.
/// Construct a LayerNormSignature or an RmsNormSignature: they set the kind
/// and MIOpen's defaults of each.
struct NormSignature : OpSignature {
  DType dtype = DType::kF32;
  std::vector<int64_t> input_shape{100, 3, 32, 32};
  int normalized_dim = 3;  ///< first normalized axis (MIOpen's layernorm -o; RMS norm: the last by default)
  double eps = 1e-5;
  bool weight = false;     ///< elementwise affine weight (layernorm -m 1, t5layernorm -m 5)
  bool bias = false;       ///< layer norm only: the bias (-m 1 without --bias 0); needs weight
  uint8_t directions = kNormForward;  ///< NormDirection bits
  /// Layer norm only: memory order of x, outermost first (BOO's
  /// --input-permutation); empty or the identity means contiguous.
  std::vector<int> input_permutation;
  bool use_aten = true;    ///< layer norm only: BOO's --use-aten; only affects func_name
  /// Layer norm only: MIOpen's current syntax (-N -C [-D] -H -W, --layout):
  /// the memory layout of x, y, dy and dx ("NCHW", "NHWC", "NCDHW", "NDHWC" or
  /// "NW", the letters of input_shape's dims N, C, [D,] H, W or N, W); its -F
  /// 0 is the forward and backward. "" for the -X syntax.
  std::string layout;
  /// Layer norm only: MIOpen's addlayernorm, y = LN(x + x2) (x2 shaped and
  /// stored like x; its gradient is dx's). Construct an AddLayerNormSignature.
  bool fused_add = false;

  NormKind kind() const { return kind_; }
  std::vector<int64_t> normalized_shape() const;
  /// Rows (product of the leading dims) and row length (product of the normalized dims).
  int64_t rows() const;
  int64_t row_length() const;
  bool permuted() const;

  TensorSpec x_spec(std::string name = "x") const;  ///< strided by input_permutation or layout
  /// Shape of x (y, dy, dx): in the layout where there is one, else contiguous.
  TensorSpec x_shaped_spec(std::string name) const;
  TensorSpec param_spec(std::string name) const;    ///< normalized shape (weight, bias)
  /// Float32 statistics: layer norm's are the leading dims then a 1 per
  /// normalized dim (BOO), RMS norm's the leading dims alone (MIOpen).
  TensorSpec stat_spec(std::string name) const;

  // OpSignature
  std::string_view op_name() const override;
  Status validate() const override;
  std::string command() const override;
  std::string func_name() const override;
  std::vector<TensorSpec> arguments() const override;
  std::vector<TensorSpec> results() const override;
  double flop_count() const override;
  bool equals(const OpSignature& other) const override;
  bool operator==(const NormSignature& other) const;

 protected:
  explicit NormSignature(NormKind kind) : kind_(kind) {}

 private:
  NormKind kind_;
};

/// Layer normalization: y = (x - mean) * rstd * weight + bias.
struct LayerNormSignature final : NormSignature {
  LayerNormSignature() : NormSignature(NormKind::kLayer) {}
  std::unique_ptr<OpSignature> clone() const override;
};

/// Add-layernorm (MIOpen's addlayernorm): y = LN(x + x2), mean and rstd of
/// x + x2; the backward's dx is the gradient of x and of x2 alike. The -X
/// syntax, contiguous tensors.
struct AddLayerNormSignature final : NormSignature {
  AddLayerNormSignature() : NormSignature(NormKind::kLayer) { fused_add = true; }
  std::unique_ptr<OpSignature> clone() const override;
};

/// RMS normalization: y = x * rstd * weight. All tensors are contiguous.
struct RmsNormSignature final : NormSignature {
  RmsNormSignature() : NormSignature(NormKind::kRms) {
    weight = true;  // MIOpen's -m 5
    directions = kNormForward | kNormBackwardData | kNormBackwardWeight;
  }
  std::unique_ptr<OpSignature> clone() const override;
};

}  // namespace boo
