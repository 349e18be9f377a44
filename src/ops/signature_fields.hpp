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

#include "boo/conv.hpp"
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

Result<std::unique_ptr<ConvSignature>> conv_signature_from_fields(const ConvFields& fields);
Result<std::unique_ptr<LayerNormSignature>> layer_norm_signature_from_fields(const LayerNormFields& fields);
Result<std::unique_ptr<RmsNormSignature>> rms_norm_signature_from_fields(const RmsNormFields& fields);

}  // namespace boo::ops
