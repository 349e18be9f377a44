// boo: the group normalization signature (MIOpenDriver's groupnorm commands):
// statistics per sample and group of channels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "boo/norm.hpp"
#include "boo/signature.hpp"

namespace boo {

/// y = (x - mean) * rstd * weight[c] + bias[c], mean and rstd = 1 / sqrt(var
/// + eps) (var biased) over each sample's group of C / groups channels and
/// every spatial element. x, y, dy and dx are [N, C, [D,] H, W] or [N, C, W]
/// in `layout`; weight, bias and their gradients [C] (MIOpen's -m 1; -m 0
/// has neither: weight 1, bias 0); mean and rstd [N, groups] float32.
/// Forward, backward (dx, and dweight, dbias with -m 1: PyTorch's GroupNorm
/// needs them; MIOpenDriver's backward is a no-op) or both in one command
/// (the backward reads the statistics the forward computes).
struct GroupNormSignature final : OpSignature {
  DType dtype = DType::kF32;
  std::vector<int64_t> input_shape{32, 32, 14, 14, 14};  ///< MIOpenDriver's default: -n 32 -c 32 -D 14 -H 14 -W 14
  int64_t groups = 4;
  double eps = 1e-5;
  bool affine = false;                ///< -m 1: weight and bias
  uint8_t directions = kNormForward;  ///< kNormForward and/or the backward (kNormBackwardData, + weight and bias with affine)
  /// boo's --layout: NCW, NCHW, NCDHW (default: the logical order) or channels
  /// last (NWC, NHWC, NDHWC) for x, y, dy and dx.
  std::string layout = "NCDHW";

  int64_t channels_per_group() const;
  int64_t spatial_size() const;  ///< product of the dims past C
  /// Elements each statistic summarizes: C / groups * spatial.
  int64_t group_size() const;
  /// The whole backward of the mode: dx, with dweight and dbias when affine.
  uint8_t backward_directions() const;

  TensorSpec x_spec(std::string name) const;      ///< input_shape in the layout
  TensorSpec param_spec(std::string name) const;  ///< [C], the data type
  TensorSpec stat_spec(std::string name) const;   ///< [N, groups] float32

  // OpSignature
  std::string_view op_name() const override;
  Status validate() const override;
  std::string command() const override;
  std::string func_name() const override;
  std::vector<TensorSpec> arguments() const override;
  std::vector<TensorSpec> results() const override;
  double flop_count() const override;
  std::unique_ptr<OpSignature> clone() const override;
  bool equals(const OpSignature& other) const override;
  bool operator==(const GroupNormSignature& other) const;
};

}  // namespace boo
