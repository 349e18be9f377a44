// boo tests: MIOpenDriver command parsing, canonical commands, function names, validation.
#include <gtest/gtest.h>

#include <fstream>

#include "base/strings.hpp"
#include "boo/conv.hpp"
#include "boo/layernorm.hpp"
#include "boo/registry.hpp"
#include "ops/command_parse.hpp"
#include "test_util.hpp"

namespace boo {
namespace {

using testing::expect_round_trip;
using testing::must_parse;

const ConvSignature& as_conv(const ParsedCommand& p) { return dynamic_cast<const ConvSignature&>(*p.signature); }
const LayerNormSignature& as_ln(const ParsedCommand& p) {
  return dynamic_cast<const LayerNormSignature&>(*p.signature);
}

// Every line of every shipped workload either round-trips or is a clear "unsupported op".
TEST(WorkloadTest, EveryLineParsesOrIsClearlyUnsupported) {
  for (const char* file : {"workloads/boo-sample.txt", "workloads/boo-conv-413.txt",
                           "workloads/boo-tuned-conv-257.txt", "examples/sample-commands.txt"}) {
    std::ifstream in(file);
    ASSERT_TRUE(in) << "cannot open " << file << " (tests run from the repository root)";
    std::string line;
    int parsed = 0, unsupported = 0;
    while (std::getline(in, line)) {
      std::string_view t = base::trim(line);
      if (t.empty() || t.front() == '#') continue;
      Result<ParsedCommand> p = parse_command(t);
      if (p.ok()) {
        ++parsed;
        expect_round_trip(std::string(t));
      } else {
        ++unsupported;
        EXPECT_EQ(p.status().code(), StatusCode::kUnimplemented) << t << ": " << p.status().to_string();
        EXPECT_NE(p.status().message().find("unsupported op"), std::string::npos) << p.status().to_string();
        EXPECT_EQ(p.status().message().find('\n'), std::string::npos) << "one line per command";
      }
    }
    if (std::string(file) == "workloads/boo-conv-413.txt") {
      EXPECT_EQ(parsed, 413);
    }
    if (std::string(file) == "workloads/boo-tuned-conv-257.txt") {
      EXPECT_EQ(parsed, 257);
    }
    if (std::string(file) == "workloads/boo-sample.txt") {
      EXPECT_EQ(parsed, 19);  // its gemm, bnormbfp16 and ATen lines included
      EXPECT_EQ(unsupported, 0);
    }
  }
}

// Function names given in reference/boo-inventory.md §2.1/§2.2 and DESIGN.md.
TEST(FuncNameTest, MatchesBooGoldenNames) {
  struct Golden {
    const char* command;
    const char* name;
  };
  const Golden goldens[] = {
      {"conv -n 1 -c 1 -H 16 -W 16 -k 1 -y 2 -x 2 -F 1",
       "conv_2d_float32_forward_1x1x16x16_nchw_1x1x2x2_fchw_nfhw_1x1s_0x0p_1x1d_1g"},
      {"convbfp16 -n 16 -c 40 -H 192 -W 128 -k 40 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 4 --in_layout NHWC "
       "--fil_layout NHWC --out_layout NHWC",
       "conv_2d_bfloat16_weight_backward_16x192x128x40_nhwc_40x3x3x40_fhwc_nhwf_2x2s_1x1p_1x1d_1g"},
      {"convbfp16 -n 16 -c 288 --in_d 2 -H 48 -W 32 -k 288 --fil_d 3 -y 1 -x 1 --pad_d 1 -p 0 -q 0 -g 3 -F 1 -b 1 "
       "--in_layout NDHWC --fil_layout NDHWC --out_layout NDHWC",
       "conv_3d_bfloat16_forward_b_16x2x48x32x288_ndhwc_288x3x1x1x96_fdhwc_ndhwf_1x1x1s_1x0x0p_1x1x1d_3g"},
      {"convbfp16 -n 128 -c 128 -H 24 -W 48 -k 384 -y 1 -x 1 -F 1 --in_layout NHWC --fil_layout NHWC --out_layout NHWC",
       "conv_2d_bfloat16_forward_128x24x48x128_nhwc_384x1x1x128_fhwc_nhwf_1x1s_0x0p_1x1d_1g"},
      {"layernorm -X 10x32x42x32 -F 4 -m 1", "layer_norm_1d_float32_float32_weight_backward_10x32x42x32_w_b__aten"},
      {"layernormbfp16 -X 2x3x4 -o 1 -m 1 --input-permutation 0 2 1",
       "layer_norm_2d_bfloat16_float32_forward_2x3x4_w_b_perm_021_aten"},
      // RMS norm (MIOpen's t5layernorm; BOO has no name for it: boo's, in the layer_norm form).
      {"t5layernormbfp16 -X 16x1024x768", "rms_norm_1d_bfloat16_float32_forward_backward_16x1024x768_w"},
      {"t5layernorm -X 8x4096 -m 4 -F 1", "rms_norm_1d_float32_float32_forward_8x4096"},
      {"t5layernormfp16 -X 2x3x4 -o 1 -F 2", "rms_norm_2d_float16_float32_backward_2x3x4_w"},
  };
  for (const Golden& g : goldens) {
    ParsedCommand p = must_parse(g.command);
    ASSERT_TRUE(p.signature);
    EXPECT_EQ(p.signature->func_name(), g.name) << g.command;
  }
}

TEST(ConvParserTest, ShortAndLongFormsAgree) {
  ParsedCommand a = must_parse("convfp16 -n 2 -c 8 -H 10 -W 12 -k 4 -y 3 -x 5 -p 1 -q 2 -u 2 -v 1 -l 1 -j 2 -g 2 -F 2");
  ParsedCommand b = must_parse(
      "convfp16 --batchsize 2 --in_channels 8 --in_h 10 --in_w 12 --out_channels 4 --fil_h 3 --fil_w 5 --pad_h 1 "
      "--pad_w 2 --conv_stride_h 2 --conv_stride_w 1 --dilation_h 1 --dilation_w 2 --group_count 2 --forw=2");
  EXPECT_TRUE(a.signature->equals(*b.signature));
  EXPECT_EQ(as_conv(a).dtype, DType::kF16);
  // BOO's argparse forms: -n=2 and -n2 are -n 2.
  ParsedCommand c = must_parse("convfp16 -n=2 -c8 -H=10 -W12 -k 4 -y3 -x 5 -p1 -q=2 -u2 -v 1 -l1 -j=2 -g2 -F2");
  EXPECT_TRUE(a.signature->equals(*c.signature));
}

TEST(ConvParserTest, LoggedMIOpenCommandsParse) {
  ParsedCommand p = must_parse(
      "./bin/MIOpenDriver conv --batchsize 128 --spatial_dim 2 --pad_d 0 --conv_stride_d 0 --pad_mode default "
      "--in_channels 3 --in_h 32 --in_w 32 --out_channels 64 --fil_h 3 --fil_w 3 --pad_h 1 --pad_w 1 --forw 1");
  EXPECT_EQ(as_conv(p).output_size(), (std::vector<int64_t>{32, 32}));
  ParsedCommand logged = must_parse(
      "MIOpen(HIP): Command [LogCmdConvolution] ./bin/MIOpenDriver conv -n 128 -c 3 -H 32 -W 32 -k 64 -y 3 -x 3 "
      "-p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 1 -t 1");
  EXPECT_TRUE(p.signature->equals(*logged.signature));
  // MIOpen flags without effect in boo are accepted and reported.
  ParsedCommand s = must_parse("conv -n 1 -c 3 -H 8 -W 8 -k 4 -F 1 -S 5 -V 0 -s 1");
  EXPECT_EQ(s.ignored_flags.size(), 3u);
}

TEST(ConvParserTest, DefaultsAreMIOpenDriversAndLayoutsDefaultIndependently) {
  ParsedCommand p = must_parse("conv --in_layout NHWC");
  const ConvSignature& s = as_conv(p);
  EXPECT_EQ(s.n, 100);
  EXPECT_EQ(s.c, 3);
  EXPECT_EQ(s.k, 32);
  EXPECT_EQ(s.input_size, (std::vector<int64_t>{32, 32}));
  EXPECT_EQ(s.filter_size, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(s.directions, kConvForward | kConvBackwardData | kConvBackwardWeight);  // -F 0
  EXPECT_EQ(s.input_layout, "NHWC");
  EXPECT_EQ(s.filter_layout, "NCHW");
  EXPECT_EQ(s.output_layout, "NCHW");
  EXPECT_EQ(p.run.iterations, 100);
  EXPECT_TRUE(p.run.time);
}

TEST(ConvParserTest, RankFromSpatialDimOrLayouts) {
  ParsedCommand three = must_parse("convbfp16 -n 1 -c 4 --in_d 5 -H 6 -W 7 -k 8 --fil_d 1 -F 1 --in_layout ndhwc");
  EXPECT_EQ(as_conv(three).spatial_dims, 3);
  EXPECT_EQ(as_conv(three).input_layout, "NDHWC");
  ParsedCommand three_default_depth = must_parse("conv -_ 3 -n 1 -c 4 -H 6 -W 7 -k 8 -F 1");
  EXPECT_EQ(as_conv(three_default_depth).input_size, (std::vector<int64_t>{32, 6, 7}));  // --in_d defaults to 32
  EXPECT_EQ(as_conv(three_default_depth).filter_size, (std::vector<int64_t>{3, 3, 3}));
  ParsedCommand one = must_parse("conv --spatial_dim 1 -n 2 -c 4 -H 20 -k 8 -y 5 -p 2 -u 2 -F 1");
  EXPECT_EQ(as_conv(one).input_size, (std::vector<int64_t>{20}));
  EXPECT_EQ(as_conv(one).output_size(), (std::vector<int64_t>{10}));
  EXPECT_EQ(as_conv(one).input_layout, "NCH");
  expect_round_trip("conv --spatial_dim 1 -n 2 -c 4 -H 20 -k 8 -y 5 -p 2 -u 2 -F 1 --in_layout NHC");
}

TEST(ConvParserTest, OutputSizesFollowMIOpenDriver) {
  // reference/miopen-driver.md §2.3: the transposed example gives 1x256x256x256.
  ParsedCommand t = must_parse("conv -m trans -n 1 -c 512 -H 128 -W 128 -k 256 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -Y 1 -X 1 -F 1");
  EXPECT_EQ(as_conv(t).y_spec().shape, (std::vector<int64_t>{1, 256, 256, 256}));
  EXPECT_EQ(as_conv(t).w_spec().shape, (std::vector<int64_t>{512, 256, 3, 3}));
  ParsedCommand d = must_parse("conv -n 1 -c 1 -H 10 -W 9 -k 1 -y 3 -x 2 -p 1 -q 0 -u 3 -v 2 -l 2 -j 3 -F 1");
  // H: (10 + 2 - 2*2 - 1)/3 + 1 = 3;  W: (9 - 3*1 - 1)/2 + 1 = 3.
  EXPECT_EQ(as_conv(d).output_size(), (std::vector<int64_t>{3, 3}));
}

TEST(ConvParserTest, PadModeSameAndValid) {
  // same: pad = ((in % s == 0) ? max(f - s, 0) : max(f - in % s, 0)) / 2
  ParsedCommand same = must_parse("conv -n 1 -c 1 -H 7 -W 8 -k 1 -y 3 -x 4 -u 2 -v 2 -z same -F 1");
  EXPECT_EQ(as_conv(same).padding, (std::vector<int64_t>{1, 1}));
  ParsedCommand valid = must_parse("conv -n 1 -c 1 -H 7 -W 8 -k 1 -y 3 -x 3 -p 2 -q 2 -z valid -F 1");
  EXPECT_EQ(as_conv(valid).padding, (std::vector<int64_t>{0, 0}));
}

TEST(ConvParserTest, DirectionsAndBias) {
  EXPECT_EQ(as_conv(must_parse("conv -F 1 -b 1")).bias, true);
  EXPECT_EQ(as_conv(must_parse("conv -F 2 -b 1")).directions, kConvBackwardData | kConvBackwardBias);
  EXPECT_EQ(as_conv(must_parse("conv -F 8")).directions, kConvBackwardData | kConvBackwardBias);
  EXPECT_EQ(as_conv(must_parse("conv -F 10")).directions,
            kConvBackwardData | kConvBackwardWeight | kConvBackwardBias);
  ParsedCommand all = must_parse("conv -F 0 -b 1");
  EXPECT_EQ(as_conv(all).directions, kConvForward | kConvBackwardData | kConvBackwardWeight | kConvBackwardBias);
  EXPECT_TRUE(as_conv(all).bias);
  for (const char* cmd : {"conv -F 0 -b 1", "conv -F 3 -b 1", "conv -F 5", "conv -F 6 -b 1", "conv -F 7",
                          "conv -F 9", "conv -F 1 -b 1 --activation leaky_relu:0.2",
                          "conv -F 1 --activation clamp:-1:6.5", "conv -F 1 --fp32-math tf32",
                          "convbfp16 -m trans -n 2 -c 8 -H 5 -W 6 -k 4 -y 3 -x 3 -u 2 -v 3 -Y 1 -X 2 -g 2 -F 0",
                          "conv -n 2 -c 6 -H 5 -W 6 -k 6 -g 6 -F 1 --in_layout CHWN --fil_layout HWCN "
                          "--out_layout WHNC"}) {
    expect_round_trip(cmd);
  }
}

TEST(ConvParserTest, ResidualIsAnInputOfYsShapeAndLayout) {
  const ParsedCommand p = must_parse(
      "convbfp16 -n 2 -c 8 -H 6 -W 5 -k 16 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 1 -b 1 --residual 1 --activation relu "
      "--in_layout NHWC --fil_layout NHWC --out_layout NCHW");
  const ConvSignature& sig = as_conv(p);
  EXPECT_TRUE(sig.residual);
  const std::vector<TensorSpec> args = sig.arguments();
  ASSERT_EQ(args.size(), 4u);  // x, w, b, then z
  EXPECT_EQ(args[3].name, "z");
  EXPECT_EQ(args[3].shape, sig.y_spec().shape);
  EXPECT_EQ(args[3].strides, sig.y_spec().strides);  // y's layout (NCHW here), not x's
  EXPECT_EQ(args[3].dtype, DType::kBF16);
  EXPECT_NE(sig.func_name().find("_residual"), std::string::npos) << sig.func_name();
  // The flag is part of the identity: the same conv without it is another signature.
  EXPECT_FALSE(sig == as_conv(must_parse("convbfp16 -n 2 -c 8 -H 6 -W 5 -k 16 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 1 "
                                         "-b 1 --activation relu --in_layout NHWC --fil_layout NHWC --out_layout NCHW")));
  EXPECT_FALSE(as_conv(must_parse("conv -F 1 --residual 0")).residual);
  for (const char* cmd : {"conv -F 1 --residual 1", "convfp16 -F 1 -b 1 --residual 1 --activation clamp:0:6",
                          "conv -m trans -n 2 -c 8 -H 5 -W 6 -k 4 -u 2 -v 2 -Y 1 -X 1 -F 1 --residual 1"})
    expect_round_trip(cmd);
}

TEST(LayerNormParserTest, MIOpenAndBooForms) {
  ParsedCommand p = must_parse("layernormbfp16 --input 16x1024x768 -o 2 --eps 1e-6 --mode 1 -F 14");
  const LayerNormSignature& s = as_ln(p);
  EXPECT_EQ(s.dtype, DType::kBF16);
  EXPECT_EQ(s.input_shape, (std::vector<int64_t>{16, 1024, 768}));
  EXPECT_EQ(s.rows(), 16 * 1024);
  EXPECT_EQ(s.row_length(), 768);
  EXPECT_TRUE(s.weight && s.bias);
  EXPECT_EQ(s.results().size(), 3u);
  // Any first normalized axis (MIOpen), not only the last one (BOO).
  EXPECT_EQ(as_ln(must_parse("layernorm -X 2x3x4x5 -o 1")).row_length(), 60);
  // MIOpen's descriptor may carry a layout suffix, which only MIOpen uses.
  EXPECT_EQ(as_ln(must_parse("layernorm -X 2x3x4,NCHW -o 2")).input_shape, (std::vector<int64_t>{2, 3, 4}));
  for (const char* cmd : {"layernorm -X 10x32x42x32 -F 8", "layernormfp16 -X 4x7 -o 1 -m 1 --bias 0 -F 6",
                          "layernormbfp16 -X 2x3x4 -o 2 --input-permutation 2 0 1 -F 1 -e 0.001",
                          "layernorm -X 8x9 -o 1 --use-aten 0", "t5layernorm -X 4x5 -F 1", "t5layernormfp16 -X 2x3x4 -o 1 -m 4",
                          "t5layernormbfp16 -X 7x9,NCHW -e 1e-06 -F 2"}) {
    expect_round_trip(cmd);
  }
}

// Each bad command must fail with a message naming the offending value or rule.
TEST(ValidationTest, BadCommandsGetSpecificMessages) {
  struct Bad {
    const char* command;
    const char* fragment;
    StatusCode code;
  };
  const Bad bad[] = {
      {"conv -n 1 -c 6 -k 4 -g 4 -F 1", "input channels -c 6 are not divisible by the group count -g 4",
       StatusCode::kInvalidArgument},
      {"conv -n 1 -c 8 -k 6 -g 4 -F 1", "output channels -k 6 are not divisible", StatusCode::kInvalidArgument},
      {"conv -n 0 -F 1", "batch size -n must be positive, got 0", StatusCode::kInvalidArgument},
      {"conv -H -3 -F 1", "input size in_h must be positive, got -3", StatusCode::kInvalidArgument},
      {"conv -u 0 -F 1", "stride conv_stride_h must be positive", StatusCode::kInvalidArgument},
      {"conv -p -1 -F 1", "padding pad_h must not be negative", StatusCode::kInvalidArgument},
      {"conv -H 2 -W 2 -y 5 -x 5 -F 1", "exceeds the padded input", StatusCode::kInvalidArgument},
      {"conv --in_layout NCHX -F 1", "must use each of the letters NCHW", StatusCode::kInvalidArgument},
      {"conv --in_layout NHWC --out_layout NDHWC -F 1", "rank mismatch", StatusCode::kInvalidArgument},
      {"conv --spatial_dim 3 --in_layout NHWC -F 1", "rank mismatch", StatusCode::kInvalidArgument},
      {"conv --spatial_dim 4 -F 1", "--spatial_dim 4 is not supported", StatusCode::kInvalidArgument},
      {"conv -m trans -u 2 -v 2 -Y 2 -F 1", "must be smaller than the stride (2)", StatusCode::kInvalidArgument},
      {"conv -m deconv -F 1", "--mode/-m 'deconv'", StatusCode::kInvalidArgument},
      {"conv -F 11", "--forw/-F 11 is not a conv direction", StatusCode::kInvalidArgument},
      {"conv -F 2 --activation relu", "fused into the forward convolution only", StatusCode::kInvalidArgument},
      {"conv -F 1 --activation swishy", "unknown activation 'swishy'", StatusCode::kInvalidArgument},
      {"conv -F 0 --residual 1", "adds z to the forward convolution's output only (-F 1)", StatusCode::kInvalidArgument},
      {"conv -F 2 --residual 1", "(-F 1); this command has backward directions", StatusCode::kInvalidArgument},
      {"conv -F 1 --residual 2", "--residual must be 0 or 1, got 2", StatusCode::kInvalidArgument},
      {"conv -F 1 --residual yes", "--residual: expected an integer, got 'yes'", StatusCode::kInvalidArgument},
      {"conv -F 1 --activation clamp:3:1", "clamp needs lo <= hi", StatusCode::kInvalidArgument},
      {"convbfp16 -F 1 --fp32-math tf32", "applies to fp32 convolutions", StatusCode::kInvalidArgument},
      {"conv -n abc", "--batchsize/-n: expected an integer, got 'abc'", StatusCode::kInvalidArgument},
      {"conv -n", "flag '-n' needs a value", StatusCode::kInvalidArgument},
      {"conv -Q 3", "unknown flag '-Q' for conv", StatusCode::kInvalidArgument},
      {"conv --in_chanels 3", "unknown flag '--in_chanels' for conv", StatusCode::kInvalidArgument},
      {"conv -nabc", "--batchsize/-n: expected an integer, got 'abc'", StatusCode::kInvalidArgument},
      {"conv 100", "unexpected word '100'", StatusCode::kInvalidArgument},
      {"conv -b 2 -F 1", "--bias/-b must be 0 or 1", StatusCode::kInvalidArgument},
      {"conv -z full -F 1", "accepted values are default, same, valid", StatusCode::kInvalidArgument},
      {"conv -z same -l 2 -F 1", "applies only to -m conv with all dilations 1", StatusCode::kInvalidArgument},
      {"conv -d input.bin -F 1", "loading tensors from files is not supported", StatusCode::kUnimplemented},
      {"conv -U fp8 -F 1", "fp8 casts are not supported", StatusCode::kUnimplemented},
      {"convint8 -n 1", "unsupported op 'convint8'", StatusCode::kUnimplemented},
      {"gemm --a_w 3 --isColMajor 2", "--isColMajor/-C must be 0 or 1", StatusCode::kInvalidArgument},
      {"gemm -F 4", "not a gemm direction", StatusCode::kInvalidArgument},
      {"gemmfp16 --a_h 0", "--a_h/-m (the reduction, k) must be positive", StatusCode::kInvalidArgument},
      {"gemm -F 2 --bias 1", "apply to the forward", StatusCode::kInvalidArgument},
      {"gemmbfp16 --fp32-math tf32", "applies to fp32 GEMMs", StatusCode::kInvalidArgument},
      {"gemm --transA 2", "--transA/-u must be 0 or 1", StatusCode::kInvalidArgument},
      {"softmaxfp16 -n 2", "unsupported op 'softmaxfp16'", StatusCode::kUnimplemented},
      {"convbf16 -n 2", "unknown op 'convbf16'", StatusCode::kInvalidArgument},
      {"", "empty command", StatusCode::kInvalidArgument},
      {"layernorm -X 2x3x4 -o 3", "--normalized_dim/-o 3 is out of range for a rank-3 input", StatusCode::kInvalidArgument},
      {"layernorm -X 2x0x4 -o 1", "dimension 1 must be positive", StatusCode::kInvalidArgument},
      {"layernorm -X 2xfoo", "--input/-X '2xfoo'", StatusCode::kInvalidArgument},
      {"layernorm -X 4x4 -o 1 -F 3", "layernorm --forw/-F 3 is not a mode", StatusCode::kInvalidArgument},
      {"layernorm -X 4x4 -o 1 -F 16", "layernorm --forw/-F 16", StatusCode::kInvalidArgument},
      {"layernorm -X 4x4 -o 1 -m 7", "accepted values are 0 (no weight and bias) and 1", StatusCode::kInvalidArgument},
      {"layernorm -X 4x4 -o 1 -m 3", "use the addlayernorm command", StatusCode::kInvalidArgument},
      {"layernorm -X 4x4 -o 1 -m 5", "use the t5layernorm command", StatusCode::kInvalidArgument},
      {"t5layernorm -X 4x4 -m 1", "accepted values are 5 (with a weight) and 4 (without)", StatusCode::kInvalidArgument},
      {"t5layernorm -X 4x4 -F 4", "t5layernorm --forw/-F 4: use 0", StatusCode::kInvalidArgument},
      {"t5layernorm -X 4x4 -o 2", "--normalized_dim/-o 2 is out of range for a rank-2 input", StatusCode::kInvalidArgument},
      {"t5layernorm -X 4x0", "dimension 1 must be positive", StatusCode::kInvalidArgument},
      {"t5layernormbfp16 -X 4x4 -e -1", "--eps/-e must be positive", StatusCode::kInvalidArgument},
      {"layernorm -X 4x4 -o 1 -e 0", "--eps/-e must be positive", StatusCode::kInvalidArgument},
      {"layernorm -X 2x3x4 -o 2 --input-permutation 0 1 1", "is not a permutation of 0..2",
       StatusCode::kInvalidArgument},
      {"layernorm -X 2x3 -o 1 --input-permutation 0 1 2", "is not a permutation of 0..1", StatusCode::kInvalidArgument},
      {"layernorm -X 2x3 -o 1 --bias 1", "needs -m 1", StatusCode::kInvalidArgument},
  };
  for (const Bad& b : bad) {
    Result<ParsedCommand> p = parse_command(std::string_view(b.command));
    ASSERT_FALSE(p.ok()) << "accepted: " << b.command;
    EXPECT_NE(p.status().message().find(b.fragment), std::string::npos)
        << b.command << "\n  got:      " << p.status().message() << "\n  expected: " << b.fragment;
    EXPECT_EQ(p.status().code(), b.code) << b.command << ": " << p.status().to_string();
  }
}

TEST(ValidationTest, DirectConstructionIsValidatedToo) {
  ConvSignature s;
  s.input_size = {8};  // rank mismatch with the 2-D default
  EXPECT_NE(s.validate().message().find("rank mismatch"), std::string::npos);
  ConvSignature t;
  t.directions = kConvForward | kConvBackwardBias;
  t.bias = true;
  EXPECT_NE(t.validate().message().find("cannot be combined with only a forward pass"), std::string::npos);
}

// The list of op tokens boo skips as unsupported must not shadow what it runs
// (it listed t5layernorm, RMS norm's command, after boo implemented it).
TEST(OpTokenTest, NoSupportedTokenIsListedAsUnsupported) {
  const std::vector<std::string> supported = supported_op_tokens();
  ASSERT_FALSE(supported.empty());
  for (const std::string& token : supported) {
    for (std::string_view prefix : ops::known_unsupported_op_prefixes())
      EXPECT_FALSE(base::starts_with(token, prefix)) << "'" << token << "' is supported but listed as '" << prefix << "'";
    Result<ops::OpTokenMatch> match = ops::op_for_token(token);
    ASSERT_TRUE(match.ok()) << token << ": " << match.status().to_string();
    EXPECT_NE(match->op, nullptr);
  }
}

TEST(OpTokenTest, TokensSelectTheirOpAndElementType) {
  struct Case {
    const char* token;
    const char* op;
    DType dtype;
  };
  for (const Case& c : {Case{"conv", "conv", DType::kF32}, Case{"convbfp16", "conv", DType::kBF16},
                        Case{"layernormfp16", "layernorm", DType::kF16}, Case{"t5layernorm", "rmsnorm", DType::kF32},
                        Case{"t5layernormbfp16", "rmsnorm", DType::kBF16}, Case{"bnormfp16", "batchnorm", DType::kF16},
                        Case{"bnormbfp16fp32", "batchnorm_mixed", DType::kBF16}}) {
    Result<ops::OpTokenMatch> match = ops::op_for_token(c.token);
    ASSERT_TRUE(match.ok()) << c.token << ": " << match.status().to_string();
    EXPECT_EQ(match->op->name(), c.op) << c.token;
    EXPECT_EQ(match->dtype, c.dtype) << c.token;
  }
  Result<ops::OpTokenMatch> unknown = ops::op_for_token("convolution");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("unknown op 'convolution': expected one of conv, "), std::string::npos)
      << unknown.status().message();
  Result<ops::OpTokenMatch> skipped = ops::op_for_token("softmaxfp16");
  ASSERT_FALSE(skipped.ok());
  EXPECT_EQ(skipped.status().code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace boo
