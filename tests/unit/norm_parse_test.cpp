// boo tests: the norm family's command lines — MIOpen's current layernorm
// syntax (-N -C -D -H -W, --layout), canonical commands, function names,
// layouts as strides and the messages of bad lines.
#include <gtest/gtest.h>

#include "boo/batchnorm.hpp"
#include "boo/norm.hpp"
#include "boo/registry.hpp"
#include "test_util.hpp"

namespace boo {
namespace {

using testing::expect_round_trip;
using testing::must_parse;

template <typename Signature>
const Signature& as(const ParsedCommand& p) {
  return dynamic_cast<const Signature&>(*p.signature);
}

void expect_error(const std::string& command, const std::string& fragment, StatusCode code) {
  Result<ParsedCommand> p = parse_command(command);
  ASSERT_FALSE(p.ok()) << "accepted: " << command;
  EXPECT_NE(p.status().message().find(fragment), std::string::npos)
      << command << "\n  got:      " << p.status().message() << "\n  expected: " << fragment;
  EXPECT_EQ(p.status().code(), code) << command << ": " << p.status().to_string();
}

std::vector<std::string> names(const std::vector<TensorSpec>& specs) {
  std::vector<std::string> out;
  for (const TensorSpec& s : specs) out.push_back(s.name);
  return out;
}

TEST(LayerNormDimsSyntaxTest, ShapeFromDimsAndForwardBackwardByDefault) {
  ParsedCommand p = must_parse("layernorm -N 32 -C 1 -D 32 -H 32 -W 32 -o 4 -e 1e-5 -m 0");
  const NormSignature& s = as<NormSignature>(p);
  EXPECT_EQ(s.input_shape, (std::vector<int64_t>{32, 1, 32, 32, 32}));
  EXPECT_EQ(s.layout, "NCDHW");
  EXPECT_EQ(s.row_length(), 32);
  // MIOpen's -F default 0 in this syntax: forward, then dx (no weight: no dweight/dbias).
  EXPECT_EQ(s.directions, kNormForward | kNormBackwardData);
  EXPECT_EQ(names(s.arguments()), (std::vector<std::string>{"x", "dy"}));
  EXPECT_EQ(names(s.results()), (std::vector<std::string>{"y", "mean", "rstd", "dx"}));
  // With the weight and bias, their gradients too.
  const ParsedCommand pw = must_parse("layernorm -N 2 -C 3 -H 4 -W 5 -m 1 -o 1");
  const NormSignature& w = as<NormSignature>(pw);
  EXPECT_EQ(w.directions, kNormForward | kNormBackwardData | kNormBackwardWeight | kNormBackwardBias);
  EXPECT_EQ(names(w.arguments()), (std::vector<std::string>{"x", "weight", "bias", "dy"}));
  EXPECT_EQ(names(w.results()), (std::vector<std::string>{"y", "mean", "rstd", "dx", "dweight", "dbias"}));
  EXPECT_EQ(w.func_name(), "layer_norm_3d_float32_float32_forward_full_backward_2x3x4x5_w_b__aten");
  // C and H 0: a rank-2 [N, W] input; MIOpen's defaults otherwise (100x3x32x32).
  EXPECT_EQ(as<NormSignature>(must_parse("layernorm -N 8 -C 0 -H 0 -W 64 -o 1 -F 1")).input_shape,
            (std::vector<int64_t>{8, 64}));
  EXPECT_EQ(as<NormSignature>(must_parse("layernorm -N 8 -o 3")).input_shape,
            (std::vector<int64_t>{8, 3, 32, 32}));
}

TEST(LayerNormDimsSyntaxTest, LayoutStridesEveryActivation) {
  const ParsedCommand p = must_parse("layernormbfp16 -N 2 -C 3 -H 4 -W 5 --layout NHWC -o 1 -m 1");
  const NormSignature& s = as<NormSignature>(p);
  const std::vector<int64_t> nhwc{60, 1, 15, 3};
  EXPECT_EQ(s.x_spec().strides, nhwc);
  for (const TensorSpec& t : s.results())
    if (t.name == "y" || t.name == "dx") {
      EXPECT_EQ(t.strides, nhwc) << t.name;
    }
  for (const TensorSpec& t : s.arguments())
    if (t.name == "dy") {
      EXPECT_EQ(t.strides, nhwc);
    }
  EXPECT_NE(s.func_name().find("_nhwc_"), std::string::npos) << s.func_name();
  EXPECT_EQ(as<NormSignature>(must_parse("layernorm -N 2 -C 3 -D 2 -H 4 -W 5 -L ndhwc -o 2 -F 1")).x_spec().strides,
            (std::vector<int64_t>{120, 1, 60, 15, 3}));
}

TEST(LayerNormDimsSyntaxTest, RoundTrips) {
  for (const char* cmd : {"layernorm -N 32 -C 1 -D 32 -H 32 -W 32 -o 4 -e 1e-5 -m 0 -F 0",
                          "layernormfp16 -N 4 -C 6 -H 5 -W 7 --layout NHWC -o 1 -m 1 -F 1",
                          "layernormbfp16 -N 4 -C 6 -H 5 -W 7 --layout NHWC -o 3 -m 1 --bias 0 -F 2",
                          "layernorm -N 8 -C 0 -H 0 -W 64 -o 1 -L NW", "layernorm -N 3 -C 2 -D 4 -H 5 -W 6 -L NDHWC -o 1"}) {
    expect_round_trip(cmd);
  }
}

TEST(LayerNormDimsSyntaxTest, BadLinesNameTheRule) {
  expect_error("layernorm -X 2x3 -N 4", "-X or as -N -C [-D] -H -W", StatusCode::kInvalidArgument);
  expect_error("layernorm -N 4 -C 6 -H 5 -W 7 -F 3", "use 0 (forward and backward), 1 (forward) or 2",
               StatusCode::kInvalidArgument);
  expect_error("layernorm -N 4 -C 6 -H 5 -W 7 --layout NDHWC", "accepted NCHW or NHWC", StatusCode::kInvalidArgument);
  expect_error("layernorm -N 4 -C 6 -H 0 -W 7", "give both", StatusCode::kInvalidArgument);
  expect_error("layernorm -N 4 -C -2 -H 3 -W 7", "-C must be non-negative", StatusCode::kInvalidArgument);
  expect_error("layernorm -N 4 -C 0 -H 0 -W 7", "-o 3 is out of range for a rank-2", StatusCode::kInvalidArgument);
  expect_error("layernorm -N 4 -C 2 -H 3 -W 7 --input-permutation 0 2 3 1", "give one", StatusCode::kInvalidArgument);
}

TEST(BatchNormParserTest, BooSampleLineAndMIOpenDefaults) {
  // BOO's sample line: per activation (MIOpen's default -m 0), training (-F 0 -b 0 trains).
  ParsedCommand p = must_parse(
      "bnormbfp16 --batchsize 8 --in_channels 64 --in_h 56 --in_w 56 -t 1 --iter 100 --save 1 --run 1 --layout NHWC");
  const BatchNormSignature& s = as<BatchNormSignature>(p);
  EXPECT_EQ(s.input_shape, (std::vector<int64_t>{8, 64, 56, 56}));
  EXPECT_EQ(s.layout, "NHWC");
  EXPECT_EQ(s.pass, BatchNormPass::kTraining);
  EXPECT_EQ(s.mode, BatchNormMode::kPerActivation);
  EXPECT_TRUE(s.save && s.running);
  EXPECT_EQ(s.eps, 1e-3);
  EXPECT_EQ(s.dtype, DType::kBF16);
  EXPECT_EQ(s.param_dtype, DType::kF32);
  EXPECT_EQ(s.grad_dtype, DType::kBF16);
  EXPECT_EQ(names(s.arguments()),
            (std::vector<std::string>{"x", "scale", "bias", "running_mean_in", "running_variance_in"}));
  EXPECT_EQ(names(s.results()), (std::vector<std::string>{"y", "saved_mean", "saved_inv_variance", "running_mean",
                                                          "running_variance"}));
  EXPECT_EQ(s.param_shape(), (std::vector<int64_t>{1, 64, 56, 56}));
  EXPECT_EQ(s.reduction_size(), 8);
  // The mixed tokens keep 16-bit parameters and float32 gradients.
  ParsedCommand m = must_parse("bnormfp16fp32 -n 4 -c 8 -H 3 -W 3 -m 1 -F 0 -b 1 -s 1");
  const BatchNormSignature& ms = as<BatchNormSignature>(m);
  EXPECT_EQ(ms.op_name(), "batchnorm_mixed");
  EXPECT_EQ(ms.param_dtype, DType::kF16);
  EXPECT_EQ(ms.grad_dtype, DType::kF32);
  EXPECT_EQ(ms.pass, BatchNormPass::kBackward);
  EXPECT_EQ(names(ms.arguments()), (std::vector<std::string>{"x", "dy", "scale", "saved_mean", "saved_inv_variance"}));
  EXPECT_EQ(names(ms.results()), (std::vector<std::string>{"dx", "dscale", "dbias"}));
  EXPECT_EQ(ms.param_shape(), (std::vector<int64_t>{1, 8, 1, 1}));
  // -F 1 with -b 1 runs the forward only (MIOpenDriver warns and trains).
  EXPECT_EQ(as<BatchNormSignature>(must_parse("bnorm -F 1 -b 1")).pass, BatchNormPass::kTraining);
  EXPECT_EQ(as<BatchNormSignature>(must_parse("bnorm -n 2 -c 3 -D 4 -H 5 -W 6")).layout, "NCDHW");
}

TEST(BatchNormParserTest, RoundTrips) {
  for (const char* cmd : {"bnorm", "bnormbfp16 -n 8 -c 64 -H 56 -W 56 -m 1 -s 1 -r 1 --layout NHWC",
                          "bnormfp16 -n 2 -c 3 -D 4 -H 5 -W 6 -m 1 -F 2 -r 1 --layout NDHWC",
                          "bnormbfp16fp32 -n 2 -c 3 -H 5 -W 6 -m 0 -F 0 -b 1 -s 1 --eps 1e-05",
                          "bnormfp16fp32 -n 2 -c 3 -H 5 -W 6 -m 1 -F 1 -r 1 --momentum 0.1 -L nhwc",
                          "bnorm -n 2 -c 3 -H 5 -W 6 -m 1 -F 2 -A 2 -B 1 -P 0"}) {
    expect_round_trip(cmd);
  }
}

TEST(BatchNormParserTest, BadLinesNameTheRule) {
  expect_error("bnorm -m 2", "accepted values are 0 (per activation) and 1 (spatial)", StatusCode::kInvalidArgument);
  expect_error("bnorm -F 3", "bnorm --forw/-F 3", StatusCode::kInvalidArgument);
  expect_error("bnorm -b 2", "--back/-b must be 0 or 1", StatusCode::kInvalidArgument);
  expect_error("bnorm --layout NDHWC", "accepted NCHW or NHWC", StatusCode::kInvalidArgument);
  expect_error("bnorm -n 0", "--batchsize/-n must be positive", StatusCode::kInvalidArgument);
  expect_error("bnorm -n 1 -m 0", "need at least 2", StatusCode::kInvalidArgument);
  expect_error("bnorm -n 1 -c 3 -H 1 -W 1 -m 1 -F 1", "need at least 2", StatusCode::kInvalidArgument);
  expect_error("bnorm --momentum 2", "--momentum must be in [0, 1]", StatusCode::kInvalidArgument);
  expect_error("bnorm --eps 0", "--eps must be positive", StatusCode::kInvalidArgument);
  // Inference from the running statistics needs no batch statistics.
  EXPECT_TRUE(parse_command(std::string("bnorm -n 1 -m 0 -F 2 -r 1")).ok());
}

}  // namespace
}  // namespace boo
