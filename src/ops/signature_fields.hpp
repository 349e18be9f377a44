// boo: signatures built from typed fields (tensor shapes, layouts, dtype,
// direction, epilogue) instead of MIOpenDriver command lines.
//
// Shapes are logical, in PyTorch's order: a conv input is (N, C, spatial...)
// whatever its layout, its weight (K, C/groups, filter...) or, transposed,
// (C, K/groups, filter...). Each builder checks its fields with errors that
// name the field, canonicalises them as the command parser does, and
// validates the signature, so a signature built here equals the one parsed
// from the equivalent command (same command(), func_name() and cache key).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "boo/batchnorm.hpp"
#include "boo/conv.hpp"
#include "boo/groupnorm.hpp"
#include "boo/layernorm.hpp"
#include "boo/rmsnorm.hpp"

namespace boo::ops {

struct ConvFields {
  DType dtype = DType::kF32;
  std::vector<int64_t> input_shape;   ///< (N, C, spatial...): 3 to 5 dims
  std::vector<int64_t> weight_shape;  ///< (K, C/groups, filter...); transposed (C, K/groups, filter...)
  /// One entry per spatial dimension, or one entry for all of them; empty:
  /// stride and dilation 1, padding and output padding 0.
  std::vector<int64_t> stride, padding, dilation, output_padding;
  int64_t groups = 1;
  bool transposed = false;
  /// Permutations of "NC" + spatial letters ("NHWC", ...); empty: channels-first.
  /// The output's defaults to the input's.
  std::string input_layout, weight_layout, output_layout;
  uint8_t directions = kConvForward;  ///< bit set of ConvDirection
  bool bias = false;                  ///< the forward adds a bias (kConvBackwardBias is its gradient)
  bool residual = false;              ///< the forward adds z (y's shape and layout) before the activation
  Activation activation;              ///< forward only
  bool fp32_tf32 = false;
};

struct LayerNormFields {
  DType dtype = DType::kF32;
  std::vector<int64_t> input_shape;
  std::vector<int64_t> normalized_shape;  ///< the trailing dims of input_shape that are normalized
  double eps = 1e-5;
  bool weight = false;
  bool bias = false;  ///< needs the weight
  uint8_t directions = kLayerNormForward;  ///< forward alone, or a set of backward bits
  std::vector<int> input_permutation;      ///< memory order of x, outermost first; empty: contiguous
  bool use_aten = true;                    ///< BOO's --use-aten; only changes func_name
};

struct RmsNormFields {
  DType dtype = DType::kF32;
  std::vector<int64_t> input_shape;
  std::vector<int64_t> normalized_shape;  ///< the trailing dims of input_shape that are normalized
  double eps = 1e-5;
  bool weight = true;
  /// kRmsNormForward and/or the backward: kRmsNormBackwardData, with
  /// kRmsNormBackwardWeight when there is a weight (one kernel computes both).
  uint8_t directions = kRmsNormForward;
};

/// Batch norm as PyTorch's (statistics per channel by default). Element types
/// as MIOpen's bnorm tokens: float32 throughout; 16-bit data and gradients with
/// float32 scale/bias (bnormfp16, bnormbfp16); with `mixed`, 16-bit data and
/// scale/bias with float32 gradients (bnormfp16fp32, bnormbfp16fp32).
struct BatchNormFields {
  DType dtype = DType::kF32;
  std::vector<int64_t> input_shape;  ///< (N, C, H, W) or (N, C, D, H, W), logical whatever the layout
  std::string layout;                ///< NCHW, NHWC, NCDHW or NDHWC; empty: channels-first
  BatchNormMode mode = BatchNormMode::kSpatial;
  BatchNormPass pass = BatchNormPass::kTraining;
  bool save = false;     ///< training saves mean and inverse variance; backward reads them
  bool running = false;  ///< training updates the running statistics; inference reads them
  double eps = 1e-5;
  double momentum = 0.1;  ///< the running statistics' update factor (PyTorch's momentum)
  bool mixed = false;
};

/// Group norm as PyTorch's: statistics per sample over each of `groups`
/// groups of channels and every spatial element.
struct GroupNormFields {
  DType dtype = DType::kF32;
  std::vector<int64_t> input_shape;  ///< (N, C, W), (N, C, H, W) or (N, C, D, H, W), logical
  int64_t groups = 1;
  double eps = 1e-5;
  bool affine = true;                 ///< weight and bias, [C] in the data type
  uint8_t directions = kNormForward;  ///< forward, the whole backward of the mode, or both
  std::string layout;                 ///< channels-first (NCW, NCHW, NCDHW) or last (NWC, NHWC, NDHWC); empty: first
};

Result<std::unique_ptr<ConvSignature>> conv_signature_from_fields(const ConvFields& fields);
Result<std::unique_ptr<LayerNormSignature>> layer_norm_signature_from_fields(const LayerNormFields& fields);
Result<std::unique_ptr<RmsNormSignature>> rms_norm_signature_from_fields(const RmsNormFields& fields);
Result<std::unique_ptr<BatchNormSignature>> batch_norm_signature_from_fields(const BatchNormFields& fields);
Result<std::unique_ptr<GroupNormSignature>> group_norm_signature_from_fields(const GroupNormFields& fields);

}  // namespace boo::ops
