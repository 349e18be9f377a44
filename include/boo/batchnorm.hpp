// boo: the batch normalization signature (MIOpenDriver's bnorm commands):
// statistics per channel (spatial) or per activation over the batch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "boo/signature.hpp"

namespace boo {

/// MIOpen's miopenBatchNormMode_t (-m).
enum class BatchNormMode : uint8_t {
  kPerActivation = 0,  ///< statistics of each (c, [d,] h, w) over N
  kSpatial = 1,        ///< statistics of each channel over N and the spatial dims (CNN batch norm)
};

/// What one bnorm command computes (MIOpen's -F and -b).
enum class BatchNormPass : uint8_t {
  kTraining = 1,   ///< -F 1: y from the batch statistics; saved mean/inv-variance (-s), running statistics (-r)
  kInference = 2,  ///< -F 2: y from the running statistics (-r 1) or the batch's (-r 0)
  kBackward = 3,   ///< -F 0 -b 1: dx, dscale, dbias from the saved statistics (-s 1) or recomputed from x
};

/// y = (x - mean) * invstd * scale + bias, invstd = 1 / sqrt(var + eps) with
/// the biased variance. x, y, dy and dx are [N, C, [D,] H, W] in `layout`;
/// scale, bias, their gradients and the statistics are [1, C, 1, 1] (spatial)
/// or [1, C, H, W] (per activation) in the same layout. Element types as
/// MIOpenDriver's: bnorm float32 throughout; bnormfp16 / bnormbfp16 16-bit
/// x, y, dy, dx with float32 parameters; bnormfp16fp32 / bnormbfp16fp32 16-bit
/// x, y, scale, bias with float32 dy, dx. Statistics and dscale/dbias are
/// float32. Running statistics are updated out of place (running_mean_in ->
/// running_mean) with factor `momentum`: r = (1 - f) * r_in + f * batch, the
/// variance unbiased (n / (n - 1)), as MIOpen.
struct BatchNormSignature final : OpSignature {
  DType dtype = DType::kF32;        ///< x, y
  DType param_dtype = DType::kF32;  ///< scale, bias
  DType grad_dtype = DType::kF32;   ///< dy, dx
  std::vector<int64_t> input_shape{32, 3, 32, 32};  ///< N, C, [D,] H, W
  std::string layout = "NCHW";  ///< NCHW, NHWC, NCDHW or NDHWC
  BatchNormMode mode = BatchNormMode::kPerActivation;
  BatchNormPass pass = BatchNormPass::kTraining;
  bool save = false;     ///< -s: training saves mean and inv-variance; backward reads them
  bool running = false;  ///< -r: training updates the running statistics; inference reads them
  double eps = 1e-3;     ///< MIOpenDriver's EPSILON (boo's --eps changes it)
  /// MIOpen's exponential average factor: 1 in MIOpenDriver's first iteration
  /// (it passes 1 / (i + 1)); PyTorch's momentum 0.1 is 0.1 (boo's --momentum).
  double momentum = 1.0;

  bool spatial() const { return mode == BatchNormMode::kSpatial; }
  /// Whether the 16-bit types keep float32 gradients (bnormfp16fp32, bnormbfp16fp32).
  bool mixed() const { return dtype != DType::kF32 && grad_dtype == DType::kF32; }
  /// Shape of scale, bias and the statistics: [1, C, 1...] or [1, C, D, H, W].
  std::vector<int64_t> param_shape() const;
  /// Elements each statistic summarizes: N * spatial (spatial) or N.
  int64_t reduction_size() const;

  TensorSpec x_spec(std::string name, DType dtype) const;      ///< shape of x in the layout
  TensorSpec param_spec(std::string name, DType dtype) const;  ///< param_shape in the layout

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
  bool operator==(const BatchNormSignature& other) const;
};

}  // namespace boo
