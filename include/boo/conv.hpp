// boo: the convolution signature.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "boo/signature.hpp"

namespace boo {

/// The activation fused after the bias in a forward convolution
/// (`--activation`, a boo extension to MIOpenDriver's flags).
struct Activation {
  enum class Kind : uint8_t { kNone, kRelu, kSigmoid, kTanh, kSilu, kGelu, kGeluTanh, kLeakyRelu, kClamp };
  Kind kind = Kind::kNone;
  double alpha = 0.01;  ///< leaky_relu slope for negative inputs
  double lo = 0.0;      ///< clamp bounds
  double hi = 0.0;

  /// Parses `none|relu|sigmoid|tanh|silu|gelu|gelu_tanh|leaky_relu[:alpha]|clamp:lo:hi`.
  static Result<Activation> parse(std::string_view text);
  /// The canonical spelling, which parse() accepts.
  std::string to_string() const;
  /// f(v) in double precision (the reference definition of each activation).
  double apply(double v) const;
  bool operator==(const Activation&) const = default;
};

/// Which results a convolution command computes (a bit set).
enum ConvDirection : uint8_t {
  kConvForward = 1,         ///< y = act(conv(x, w) + b)
  kConvBackwardData = 2,    ///< dx from dy and w
  kConvBackwardWeight = 4,  ///< dw from dy and x
  kConvBackwardBias = 8,    ///< db = sum of dy over N and the spatial dims
};

/// A 1-, 2- or 3-D convolution, forward or backward, regular or transposed.
///
/// Sizes follow MIOpenDriver: `c` is the channel count of x, `k` of y. Spatial
/// vectors hold `spatial_dims` entries in D, H, W order (1-D uses H only, as
/// BOO does). Layout strings are permutations of "NC" + spatial letters
/// ("NHWC", "NCDHW", "CHWN", ...); in the filter layout N stands for the
/// filter's first dimension (K, or C when transposed) and C for its second.
struct ConvSignature final : OpSignature {
  int spatial_dims = 2;
  DType dtype = DType::kF32;
  int64_t n = 100, c = 3, k = 32;
  std::vector<int64_t> input_size{32, 32};   ///< x spatial sizes
  std::vector<int64_t> filter_size{3, 3};
  std::vector<int64_t> stride{1, 1};
  std::vector<int64_t> padding{0, 0};        ///< symmetric zero padding
  std::vector<int64_t> dilation{1, 1};
  std::vector<int64_t> output_padding{0, 0};  ///< transposed only; < stride
  int64_t groups = 1;
  bool transposed = false;                    ///< MIOpen -m trans
  std::string input_layout = "NCHW";
  std::string filter_layout = "NCHW";
  std::string output_layout = "NCHW";
  uint8_t directions = kConvForward;          ///< bit set of ConvDirection
  bool bias = false;                          ///< forward adds a per-channel bias
  /// Forward only: y = act(conv(x, w) + bias + z), z an argument of y's shape
  /// and layout (a residual connection: ResNet's relu(conv(x) + identity)).
  bool residual = false;
  Activation activation;                      ///< forward only, applied after the bias and the residual
  bool fp32_tf32 = false;                     ///< fp32 may use TF32 tensor cores (--fp32-math tf32)

  /// Spatial sizes of y (MIOpenDriver's rules, including transposed).
  std::vector<int64_t> output_size() const;

  /// Tensor descriptions (logical shape + layout strides).
  TensorSpec x_spec(std::string name = "x") const;
  TensorSpec w_spec(std::string name = "w") const;
  TensorSpec y_spec(std::string name = "y") const;
  TensorSpec bias_spec(std::string name = "b") const;

  // OpSignature
  std::string_view op_name() const override { return "conv"; }
  Status validate() const override;
  std::string command() const override;
  std::string func_name() const override;
  std::vector<TensorSpec> arguments() const override;
  std::vector<TensorSpec> results() const override;
  double flop_count() const override;
  std::unique_ptr<OpSignature> clone() const override;
  bool equals(const OpSignature& other) const override;
  bool operator==(const ConvSignature& other) const;
};

/// The default layout for a rank: "NCH", "NCHW" or "NCDHW".
std::string default_conv_layout(int spatial_dims);

}  // namespace boo
