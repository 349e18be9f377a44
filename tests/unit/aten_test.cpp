// boo tests: ATen replay — the four-list parser (every form of BOO's sample,
// malformed lists with their errors), the ATen ops' mappings (each mapped
// result against ATen's definition computed here by hand), argmax/argmin's
// reference and plan.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "base/strings.hpp"
#include "boo/batchnorm.hpp"
#include "boo/conv.hpp"
#include "boo/norm.hpp"
#include "ops/aten/aten_gemm.hpp"
#include "ops/aten/aten_op.hpp"
#include "ops/aten/arg_reduce.hpp"
#include "ops/aten/device/arg_reduce_params.cuh"
#include "ops/gemm/gemm_conv_impl.hpp"
#include "plan_util.hpp"
#include "test_util.hpp"

namespace boo {
namespace {

using ops::aten::AtenGemmSignature;
using ops::aten::ArgReduceSignature;

Result<ParsedCommand> parse(const std::string& line) { return parse_command(std::string_view(line)); }

ParsedCommand parse_ok(const std::string& line) {
  Result<ParsedCommand> p = parse(line);
  EXPECT_TRUE(p.ok()) << line << ": " << p.status().to_string();
  return p.ok() ? std::move(*p) : ParsedCommand{};
}

// The error of `line`: its code and that its message holds `needle`.
void expect_error(const std::string& line, StatusCode code, const std::string& needle) {
  Result<ParsedCommand> p = parse(line);
  ASSERT_FALSE(p.ok()) << line;
  EXPECT_EQ(p.status().code(), code) << p.status().to_string();
  EXPECT_NE(p.status().message().find(needle), std::string::npos) << "'" << needle << "' not in " << p.status().to_string();
}

const ops::gemm::GemmDesc& desc_of(const ParsedCommand& p) {
  return dynamic_cast<const AtenGemmSignature&>(*p.signature).desc();
}

TEST(AtenParseTest, SampleLinesRoundTrip) {
  std::ifstream in("workloads/boo-sample.txt");
  ASSERT_TRUE(in) << "cannot open workloads/boo-sample.txt (tests run from the repository root)";
  int aten = 0;
  for (std::string line; std::getline(in, line);) {
    if (!base::starts_with(line, "aten::")) continue;
    ++aten;
    ParsedCommand p = parse_ok(line);
    ASSERT_TRUE(p.signature);
    // The canonical line is the profiler's own spelling: it reads back equal, and equals the line as written.
    EXPECT_EQ(p.signature->command(), line);
    ParsedCommand again = parse_ok(p.signature->command());
    ASSERT_TRUE(again.signature);
    EXPECT_TRUE(again.signature->equals(*p.signature)) << line;
  }
  EXPECT_EQ(aten, 7);
}

TEST(AtenParseTest, SampleMappings) {
  // mm with a column-major self: A's view walks rows by 1, columns by 3840.
  ParsedCommand mm = parse_ok(
      R"(aten::mm "[[3840, 4352], [4352, 3840]]" "['c10::BFloat16', 'c10::BFloat16']" "[[1, 3840], [3840, 1]]" "['', '']")");
  const ops::gemm::GemmDesc& d = desc_of(mm);
  EXPECT_EQ(d.dtype, DType::kBF16);
  EXPECT_EQ(d.m, 3840);
  EXPECT_EQ(d.k, 4352);
  EXPECT_EQ(d.n, 3840);
  EXPECT_EQ(d.a.strides, (std::array<int64_t, 3>{0, 1, 3840}));
  EXPECT_EQ(d.b.strides, (std::array<int64_t, 3>{0, 3840, 1}));
  EXPECT_EQ(mm.signature->results().at(0).shape, (std::vector<int64_t>{3840, 3840}));
  EXPECT_EQ(mm.signature->arguments().at(0).strides, (std::vector<int64_t>{1, 3840}));
  // addmm: self [512] is the bias row the conv tiers' epilogue fuses.
  ParsedCommand addmm = parse_ok(
      R"(aten::addmm "[[512], [24576, 512], [512, 512], [], []]" "['c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', 'Scalar', 'Scalar']" "[[1], [512, 1], [1, 512], [], []]" "['', '', '', '1', '1']")");
  const ops::gemm::GemmDesc& a = desc_of(addmm);
  ASSERT_TRUE(a.c.has_value());
  EXPECT_EQ(a.c->strides, (std::array<int64_t, 3>{0, 0, 1}));
  EXPECT_EQ(a.beta, 1.0);
  EXPECT_TRUE(a.conv_epilogue());
  EXPECT_EQ(addmm.signature->arguments().size(), 3u);  // the Scalars are no tensors
  // bmm in double.
  ParsedCommand bmm = parse_ok(
      R"(aten::bmm "[[128, 3, 3], [128, 3, 1152]]" "['double', 'double']" "[[9, 3, 1], [3456, 1152, 1]]" "['', '']")");
  EXPECT_EQ(desc_of(bmm).dtype, DType::kF64);
  EXPECT_EQ(desc_of(bmm).batch, 128);
  // argmax over dim 1: an int64 [4, 16].
  ParsedCommand argmax = parse_ok(
      R"(aten::argmax "[[4, 8, 16], [], []]" "['float', 'Scalar', 'Scalar']" "[[128, 16, 1], [], []]" "['', '1', 'False']")");
  const TensorSpec out = argmax.signature->results().at(0);
  EXPECT_EQ(out.dtype, DType::kI64);
  EXPECT_EQ(out.shape, (std::vector<int64_t>{4, 16}));
  EXPECT_EQ(argmax.signature->op_name(), "aten_arg_reduce");
}

TEST(AtenParseTest, RunFlagsFollowTheLists) {
  ParsedCommand p =
      parse_ok(R"(aten::mm "[[2, 3], [3, 4]]" "['float', 'float']" "[[3, 1], [4, 1]]" "['', '']" --iter 7 -t 0)");
  EXPECT_EQ(p.run.iterations, 7);
  EXPECT_FALSE(p.run.time);
  // Python's other spellings: double quotes inside, trailing commas, no spaces.
  ParsedCommand q = parse_ok("aten::mm '[[2,3],[3,4],]' '[\"float\",\"float\"]' '[[3,1],[4,1]]' '[\"\",\"\"]'");
  EXPECT_TRUE(q.signature->equals(*p.signature));
}

TEST(AtenParseTest, MalformedListsSayWhatAndWhere) {
  const std::string dt = R"("['float', 'float']")", st = R"("[[3, 1], [4, 1]]")", cv = R"("['', '']")";
  expect_error("aten::mm \"[[2, 3], [3 4]]\" " + dt + " " + st + " " + cv, StatusCode::kInvalidArgument,
               "the shapes (list 1) list '[[2, 3], [3 4]]': expected ',' or ']', found '4' at character 13");
  expect_error("aten::mm \"[[2, 3], [3, 4]\" " + dt + " " + st + " " + cv, StatusCode::kInvalidArgument,
               "a ']' is missing");
  expect_error("aten::mm \"[[2, 3], [3, 4]]\" \"['float', 'float]\" " + st + " " + cv, StatusCode::kInvalidArgument,
               "unterminated string");
  expect_error("aten::mm \"[[2, 3], [3, 4]]\" \"[float, float]\" " + st + " " + cv, StatusCode::kInvalidArgument,
               "the dtypes entry of argument 0 of aten::mm must be a quoted string, got 'float'");
  expect_error("aten::mm \"[[2, 3], [3, 4]]\" " + dt + " \"[[3, 1]]\" " + cv, StatusCode::kInvalidArgument,
               "one entry per argument, got shapes 2, dtypes 2, strides 1, concrete inputs 2");
  expect_error("aten::mm \"[[2, x], [3, 4]]\" " + dt + " " + st + " " + cv, StatusCode::kInvalidArgument,
               "the shape of argument 0 of aten::mm holds 'x', expected integers");
  expect_error("aten::mm \"[[2, 3], [3, 4]]\" " + dt + " \"[[1], [4, 1]]\" " + cv, StatusCode::kInvalidArgument,
               "self) has shape [2, 3] but strides [1]");
  expect_error("aten::mm \"[[2, 3], [3, 4]]\" " + dt + " " + st, StatusCode::kInvalidArgument,
               "aten::mm takes four quoted lists after the op (shapes, dtypes, strides, concrete inputs), got 3");
  expect_error("aten::mm \"[[2, 3], [3, 4]]\" " + dt + " " + st + " -t 0", StatusCode::kInvalidArgument,
               "found '-t' as list 4");
  expect_error("aten::mm \"(2, 3)\" " + dt + " " + st + " " + cv, StatusCode::kInvalidArgument,
               "expected a list starting with '['");
  expect_error("aten::mm \"[[2, 3], [3, 4]] x\" " + dt + " " + st + " " + cv, StatusCode::kInvalidArgument,
               "unexpected text after the list's closing ']'");
  // Lists that read but do not make a call ATen accepts, or one boo runs.
  expect_error("aten::mm \"[[2, 3], [4, 4]]\" " + dt + " \"[[3, 1], [4, 1]]\" " + cv, StatusCode::kInvalidArgument,
               "self [2, 3] and mat2 [4, 4] cannot be multiplied");
  expect_error("aten::mm \"[[2, 3], [3, 4]]\" \"['long', 'long']\" " + st + " " + cv, StatusCode::kUnimplemented,
               "is a long tensor; boo computes in float, double, c10::Half and c10::BFloat16");
  expect_error("aten::mm \"[[2, 3], [3, 4]]\" \"['float', 'c10::Half']\" " + st + " " + cv,
               StatusCode::kInvalidArgument, "mat2 is float16 but the product is float32");
  expect_error("aten::mm \"[[2, 3]]\" \"['float']\" \"[[3, 1]]\" \"['']\"", StatusCode::kInvalidArgument,
               "aten::mm has 1 arguments, expected 2: mm(Tensor self [m, k], Tensor mat2 [k, n])");
  expect_error("aten::cat \"[[[2, 3], [2, 3]], []]\" \"['TensorList', 'Scalar']\" \"[[], []]\" \"['', '0']\"",
               StatusCode::kUnimplemented, "unsupported op 'aten::cat': boo does not replay this ATen op yet");
  expect_error(R"(aten::argmax "[[4, 8], [], []]" "['float', 'Scalar', 'Scalar']" "[[8, 1], [], []]" "['', '2', 'False']")",
               StatusCode::kInvalidArgument, "dim 2 is out of range for a 2-D tensor (expected -2 to 1)");
  expect_error(R"(aten::argmax "[[4, 0], [], []]" "['float', 'Scalar', 'Scalar']" "[[1, 1], [], []]" "['', '1', 'False']")",
               StatusCode::kInvalidArgument, "is empty");
  expect_error(R"(aten::addmm "[[5], [2, 3], [3, 4], [], []]" "['float', 'float', 'float', 'Scalar', 'Scalar']" "[[1], [3, 1], [4, 1], [], []]" "['', '', '', '1', '1']")",
               StatusCode::kInvalidArgument, "self of aten::addmm has shape [5], which does not broadcast to [2, 4]");
}

// ATen's definition of each product, evaluated from the call's own tensors
// (logical indices through their strides), against the mapped reference.
struct Case {
  std::string line;
  // out[b][i][j] for the logical result; `t` are the arguments in call order.
  double (*expected)(const std::vector<base::HostTensor>& t, int64_t b, int64_t i, int64_t j, int64_t k);
};

double at(const base::HostTensor& t, std::vector<int64_t> index) { return t.at(index); }

TEST(AtenMappingTest, ProductsEqualAtenDefinitions) {
  const Case cases[] = {
      // mm, self transposed in memory.
      {R"(aten::mm "[[3, 4], [4, 5]]" "['float', 'float']" "[[1, 3], [5, 1]]" "['', '']")",
       [](const auto& t, int64_t, int64_t i, int64_t j, int64_t k) {
         double s = 0;
         for (int64_t p = 0; p < k; ++p) s += at(t[0], {i, p}) * at(t[1], {p, j});
         return s;
       }},
      // bmm with a padded batch stride and a transposed mat2.
      {R"(aten::bmm "[[2, 3, 4], [2, 4, 5]]" "['float', 'float']" "[[20, 4, 1], [20, 1, 4]]" "['', '']")",
       [](const auto& t, int64_t b, int64_t i, int64_t j, int64_t k) {
         double s = 0;
         for (int64_t p = 0; p < k; ++p) s += at(t[0], {b, i, p}) * at(t[1], {b, p, j});
         return s;
       }},
      // addmm: beta * self [m, 1] (broadcast over columns) + alpha * mat1 @ mat2.
      {R"(aten::addmm "[[3, 1], [3, 4], [4, 5], [], []]" "['float', 'float', 'float', 'Scalar', 'Scalar']" "[[1, 1], [4, 1], [1, 4], [], []]" "['', '', '', '0.5', '2']")",
       [](const auto& t, int64_t, int64_t i, int64_t j, int64_t k) {
         double s = 0;
         for (int64_t p = 0; p < k; ++p) s += at(t[1], {i, p}) * at(t[2], {p, j});
         return 0.5 * at(t[0], {i, 0}) + 2 * s;
       }},
      // addmm with beta 0: self is ignored.
      {R"(aten::addmm "[[3, 5], [3, 4], [4, 5], [], []]" "['float', 'float', 'float', 'Scalar', 'Scalar']" "[[5, 1], [4, 1], [5, 1], [], []]" "['', '', '', '0', '1']")",
       [](const auto& t, int64_t, int64_t i, int64_t j, int64_t k) {
         double s = 0;
         for (int64_t p = 0; p < k; ++p) s += at(t[1], {i, p}) * at(t[2], {p, j});
         return s;
       }},
      // baddbmm, self [1, 3, 5] broadcast over the batch.
      {R"(aten::baddbmm "[[1, 3, 5], [2, 3, 4], [2, 4, 5], [], []]" "['float', 'float', 'float', 'Scalar', 'Scalar']" "[[15, 5, 1], [12, 4, 1], [20, 5, 1], [], []]" "['', '', '', '-1', '0.25']")",
       [](const auto& t, int64_t b, int64_t i, int64_t j, int64_t k) {
         double s = 0;
         for (int64_t p = 0; p < k; ++p) s += at(t[1], {b, i, p}) * at(t[2], {b, p, j});
         return -at(t[0], {0, i, j}) + 0.25 * s;
       }},
      // linear over a contiguous 3-D input (rows collapse) with a bias.
      {R"(aten::linear "[[2, 3, 4], [5, 4], [5]]" "['float', 'float', 'float']" "[[12, 4, 1], [4, 1], [1]]" "['', '', '']")",
       [](const auto& t, int64_t, int64_t i, int64_t j, int64_t k) {
         double s = at(t[2], {j});
         for (int64_t p = 0; p < k; ++p) s += at(t[0], {i / 3, i % 3, p}) * at(t[1], {j, p});
         return s;
       }},
      // linear over a 3-D input whose leading dims do not collapse (a batch sharing the weight), no bias.
      {R"(aten::linear "[[2, 3, 4], [5, 4], []]" "['float', 'float', '']" "[[4, 8, 1], [4, 1], []]" "['', '', 'None']")",
       [](const auto& t, int64_t b, int64_t i, int64_t j, int64_t k) {
         double s = 0;
         for (int64_t p = 0; p < k; ++p) s += at(t[0], {b, i, p}) * at(t[1], {j, p});
         return s;
       }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.line);
    testing::ReferenceRun run = testing::run_reference(c.line);
    ASSERT_EQ(run.results.size(), 1u);
    const ops::gemm::GemmDesc& d = dynamic_cast<const AtenGemmSignature&>(*run.sig).desc();
    const base::HostTensor& out = run.results[0];
    int64_t checked = 0;
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t i = 0; i < d.m; ++i)
        for (int64_t j = 0; j < d.n; ++j, ++checked) {
          const double got = out.load(b * d.out.strides[0] + i * d.out.strides[1] + j * d.out.strides[2]);
          EXPECT_NEAR(got, c.expected(run.args, b, i, j, d.k), 1e-12) << b << "," << i << "," << j;
        }
    EXPECT_EQ(checked, out.spec().numel());
  }
}

TEST(AtenMappingTest, ConvolutionIsTheConvSignature) {
  // A channels-last bf16 conv with bias, stride 2, padding 1 and groups 2, from a trace.
  ParsedCommand p = parse_ok(
      R"(aten::convolution "[[2, 8, 6, 6], [4, 4, 3, 3], [4], [], [], [], [], [], []]" "['c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', 'ScalarList', 'ScalarList', 'ScalarList', 'Scalar', 'ScalarList', 'Scalar']" "[[288, 1, 48, 8], [36, 1, 12, 4], [1], [], [], [], [], [], []]" "['', '', '', '[2, 2]', '[1, 1]', '[1, 1]', 'False', '[0, 0]', '2']")");
  ParsedCommand miopen = parse_ok(
      "convbfp16 -n 2 -c 8 -H 6 -W 6 -k 4 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -g 2 -F 1 -b 1 --in_layout NHWC "
      "--fil_layout NHWC --out_layout NHWC");
  EXPECT_TRUE(p.signature->equals(*miopen.signature)) << p.signature->command();
  // The signature's x and w are the call's tensors, strides included.
  EXPECT_EQ(p.signature->arguments().at(0).strides, (std::vector<int64_t>{288, 1, 48, 8}));
  EXPECT_EQ(p.signature->arguments().at(1).strides, (std::vector<int64_t>{36, 1, 12, 4}));
  // cudnn_convolution's order (padding before stride) and its allow_tf32.
  ParsedCommand cudnn = parse_ok(
      R"(aten::cudnn_convolution "[[1, 3, 8, 8], [4, 3, 3, 3], [], [], [], [], [], [], []]" "['float', 'float', 'ScalarList', 'ScalarList', 'ScalarList', 'Scalar', 'Scalar', 'Scalar', 'Scalar']" "[[192, 64, 8, 1], [27, 9, 3, 1], [], [], [], [], [], [], []]" "['', '', '[0, 0]', '[2, 2]', '[1, 1]', '1', 'False', 'False', 'True']")");
  ParsedCommand tf32 = parse_ok("conv -n 1 -c 3 -H 8 -W 8 -k 4 -y 3 -x 3 -u 2 -v 2 -F 1 --fp32-math tf32");
  EXPECT_TRUE(cudnn.signature->equals(*tf32.signature)) << cudnn.signature->command();
  // Strides that are no layout, and double.
  expect_error(
      R"(aten::convolution "[[1, 3, 8, 8], [4, 3, 3, 3], [], [], [], [], [], [], []]" "['float', 'float', '', 'ScalarList', 'ScalarList', 'ScalarList', 'Scalar', 'ScalarList', 'Scalar']" "[[400, 100, 10, 1], [27, 9, 3, 1], [], [], [], [], [], [], []]" "['', '', 'None', '[1, 1]', '[0, 0]', '[1, 1]', 'False', '[0, 0]', '1']")",
      StatusCode::kUnimplemented, "which are no dense layout");
  expect_error(
      R"(aten::convolution "[[1, 3, 8, 8], [4, 3, 3, 3], [], [], [], [], [], [], []]" "['double', 'double', '', 'ScalarList', 'ScalarList', 'ScalarList', 'Scalar', 'ScalarList', 'Scalar']" "[[192, 64, 8, 1], [27, 9, 3, 1], [], [], [], [], [], [], []]" "['', '', 'None', '[1, 1]', '[0, 0]', '[1, 1]', 'False', '[0, 0]', '1']")",
      StatusCode::kUnimplemented, "aten::convolution in double");
}

TEST(AtenMappingTest, NativeLayerNormIsTheLayerNormSignature) {
  ParsedCommand p = parse_ok(
      R"(aten::native_layer_norm "[[4, 6, 32], [], [32], [32], []]" "['c10::BFloat16', 'ScalarList', 'c10::BFloat16', 'c10::BFloat16', 'Scalar']" "[[192, 32, 1], [], [1], [1], []]" "['', '[32]', '', '', '1e-05']")");
  LayerNormSignature expected;
  expected.dtype = DType::kBF16;
  expected.input_shape = {4, 6, 32};
  expected.normalized_dim = 2;
  expected.eps = 1e-5;
  expected.weight = expected.bias = true;
  expected.directions = kNormForward;
  EXPECT_TRUE(p.signature->equals(expected)) << p.signature->command();
  const std::vector<TensorSpec> results = p.signature->results();  // out, mean, rstd (float32, [4, 6, 1])
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[1].dtype, DType::kF32);
  EXPECT_EQ(results[1].shape, (std::vector<int64_t>{4, 6, 1}));
  // A permuted (dense) input is a memory order; weight without bias.
  ParsedCommand permuted = parse_ok(
      R"(aten::native_layer_norm "[[4, 6, 32], [], [32], [], []]" "['float', 'ScalarList', 'float', '', 'Scalar']" "[[32, 128, 1], [], [1], [], []]" "['', '[32]', '', 'None', '1e-06']")");
  const auto& ln = dynamic_cast<const LayerNormSignature&>(*permuted.signature);
  EXPECT_EQ(ln.input_permutation, (std::vector<int>{1, 0, 2}));
  EXPECT_TRUE(ln.weight);
  EXPECT_FALSE(ln.bias);
  EXPECT_EQ(ln.x_spec().strides, (std::vector<int64_t>{32, 128, 1}));
  expect_error(
      R"(aten::native_layer_norm "[[4, 6, 32], [], [], [], []]" "['float', 'ScalarList', '', '', 'Scalar']" "[[192, 32, 1], [], [], [], []]" "['', '[6]', 'None', 'None', '1e-05']")",
      StatusCode::kInvalidArgument, "normalized_shape [6] must be the trailing dims of input [4, 6, 32]");
}

// native_batch_norm is MIOpen's spatial batch norm: training saves the statistics and updates the running ones
// by momentum; evaluation normalizes by the running ones; [N, C, L] runs as [N, C, 1, L]; the strides pick the layout.
TEST(AtenMappingTest, NativeBatchNormIsTheBatchNormSignature) {
  ParsedCommand p = parse_ok(
      R"(aten::native_batch_norm "[[8, 16, 10, 12], [16], [16], [16], [16], [], [], []]" "['c10::BFloat16', 'float', 'float', 'float', 'float', 'Scalar', 'Scalar', 'Scalar']" "[[1920, 1, 192, 16], [1], [1], [1], [1], [], [], []]" "['', '', '', '', '', 'True', '0.1', '1e-05']")");
  ParsedCommand miopen = parse_ok("bnormbfp16 -n 8 -c 16 -H 10 -W 12 -m 1 --forw 1 -b 0 -s 1 -r 1 --layout NHWC --eps 1e-05 --momentum 0.1");
  EXPECT_TRUE(p.signature->equals(*miopen.signature)) << p.signature->command();
  EXPECT_EQ(p.signature->arguments().at(0).strides, (std::vector<int64_t>{1920, 1, 192, 16}));
  // Evaluation of a contiguous [N, C, L] fp32 input, by the running statistics.
  ParsedCommand eval = parse_ok(
      R"(aten::native_batch_norm "[[4, 6, 50], [6], [6], [6], [6], [], [], []]" "['float', 'float', 'float', 'float', 'float', 'Scalar', 'Scalar', 'Scalar']" "[[300, 50, 1], [1], [1], [1], [1], [], [], []]" "['', '', '', '', '', 'False', '0.1', '0.001']")");
  const auto& bn = dynamic_cast<const BatchNormSignature&>(*eval.signature);
  EXPECT_EQ(bn.input_shape, (std::vector<int64_t>{4, 6, 1, 50}));
  EXPECT_EQ(bn.layout, "NCHW");
  EXPECT_EQ(bn.pass, BatchNormPass::kInference);
  EXPECT_TRUE(bn.running);
  EXPECT_EQ(bn.mode, BatchNormMode::kSpatial);
  // Half data with half parameters is MIOpen's bnormfp16fp32.
  ParsedCommand half = parse_ok(
      R"(aten::native_batch_norm "[[2, 8, 4, 4, 4], [8], [8], [], [], [], [], []]" "['c10::Half', 'c10::Half', 'c10::Half', '', '', 'Scalar', 'Scalar', 'Scalar']" "[[512, 64, 16, 4, 1], [1], [1], [], [], [], [], []]" "['', '', '', 'None', 'None', 'True', '0.1', '1e-05']")");
  EXPECT_NE(half.signature->command().find("bnormfp16fp32"), std::string::npos) << half.signature->command();
  EXPECT_NE(half.signature->command().find("NCDHW"), std::string::npos) << half.signature->command();
  expect_error(
      R"(aten::native_batch_norm "[[4, 6, 50], [], [], [6], [6], [], [], []]" "['float', '', '', 'float', 'float', 'Scalar', 'Scalar', 'Scalar']" "[[300, 50, 1], [], [], [1], [1], [], [], []]" "['', 'None', 'None', '', '', 'True', '0.1', '1e-05']")",
      StatusCode::kUnimplemented, "without a weight (affine=False)");
  expect_error(
      R"(aten::native_batch_norm "[[4, 6, 50], [6], [6], [], [], [], [], []]" "['float', 'float', 'float', '', '', 'Scalar', 'Scalar', 'Scalar']" "[[300, 50, 1], [1], [1], [], [], [], [], []]" "['', '', '', 'None', 'None', 'False', '0.1', '1e-05']")",
      StatusCode::kInvalidArgument, "running_mean and running_var are None");
  expect_error(
      R"(aten::native_batch_norm "[[4, 6, 50], [5], [6], [6], [6], [], [], []]" "['float', 'float', 'float', 'float', 'float', 'Scalar', 'Scalar', 'Scalar']" "[[300, 50, 1], [1], [1], [1], [1], [], [], []]" "['', '', '', '', '', 'True', '0.1', '1e-05']")",
      StatusCode::kInvalidArgument, "weight [5] must be [6]");
  expect_error(
      R"(aten::native_batch_norm "[[4, 6, 5, 5], [6], [6], [6], [6], [], [], []]" "['float', 'float', 'float', 'float', 'float', 'Scalar', 'Scalar', 'Scalar']" "[[150, 1, 6, 30], [1], [1], [1], [1], [], [], []]" "['', '', '', '', '', 'True', '0.1', '1e-05']")",
      StatusCode::kUnimplemented, "contiguous or channels-last inputs");
  expect_error(
      R"(aten::native_batch_norm "[[4, 6, 50], [6], [6], [6], [6], [], [], []]" "['double', 'double', 'double', 'double', 'double', 'Scalar', 'Scalar', 'Scalar']" "[[300, 50, 1], [1], [1], [1], [1], [], [], []]" "['', '', '', '', '', 'True', '0.1', '1e-05']")",
      StatusCode::kUnimplemented, "native_batch_norm in double");
}

TEST(AtenArgReduceTest, ReferenceByHand) {
  // x [2, 4] stored transposed (strides 1, 2): ties go to the first index, a NaN wins both.
  const std::string line = R"(aten::argmax "[[2, 4], [], []]" "['float', 'Scalar', 'Scalar']" "[[1, 2], [], []]" "['', '1', 'True']")";
  ParsedCommand p = parse_ok(line);
  const std::vector<TensorSpec> specs = p.signature->arguments();
  EXPECT_EQ(p.signature->results().at(0).shape, (std::vector<int64_t>{2, 1}));
  const double nan = std::nan("");
  std::vector<base::HostTensor> args{testing::tensor_from(specs[0], {1, 5, 5, -2, 0, nan, 3, nan})};
  Result<std::vector<base::HostTensor>> r = ops::find_op("aten_arg_reduce")->reference(*p.signature, args);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(testing::logical_values(r->at(0)), (std::vector<double>{1, 1}));
  // argmin over everything (dim None): the flat index of the first minimum, or of the first NaN.
  ParsedCommand all = parse_ok(
      R"(aten::argmin "[[2, 3], [], []]" "['c10::Half', '', 'Scalar']" "[[3, 1], [], []]" "['', 'None', 'False']")");
  EXPECT_TRUE(all.signature->results().at(0).shape.empty());
  const TensorSpec half = all.signature->arguments().at(0);
  for (const auto& [values, index] :
       {std::pair{std::vector<double>{3, 1, 2, 1, 0, 0}, 4.0}, {std::vector<double>{3, 1, nan, 1, 0, nan}, 2.0}}) {
    std::vector<base::HostTensor> in{testing::tensor_from(half, values)};
    Result<std::vector<base::HostTensor>> m = ops::find_op("aten_arg_reduce")->reference(*all.signature, in);
    ASSERT_TRUE(m.ok());
    EXPECT_EQ(testing::logical_values(m->at(0)), (std::vector<double>{index}));
  }
}

TEST(AtenArgReduceTest, PlanWalksTheStrides) {
  const ops::GpuImplementation& tier = *ops::find_op("aten_arg_reduce")->gpu_implementations()[0];
  EXPECT_EQ(tier.name(), "gpu:aten:arg_reduce");
  // argmin over dim -2 of a [4, 8, 16] stored with dim 0 innermost.
  const std::string line = R"(aten::argmin "[[4, 8, 16], [], []]" "['c10::BFloat16', 'Scalar', 'Scalar']" "[[1, 64, 4], [], []]" "['', '-2', 'False']")";
  const ops::test::Planned p = ops::test::plan_of(tier, line);
  ASSERT_EQ(p.launches.size(), 1u);
  const auto params = ops::test::params_of<ArgReduceParams>(p.launches[0]);
  EXPECT_EQ(params.x, p.address.at("self"));
  EXPECT_EQ(params.out, p.address.at("out"));
  EXPECT_EQ(params.outputs, 4 * 16);
  EXPECT_EQ(params.length, 8);
  EXPECT_EQ(params.outer_rank, 2);
  EXPECT_EQ(params.outer_sizes[1], 16);
  EXPECT_EQ(params.outer_strides[0], 1);
  EXPECT_EQ(params.outer_strides[1], 4);
  EXPECT_EQ(params.reduced_rank, 1);
  EXPECT_EQ(params.reduced_strides[0], 64);
  EXPECT_EQ(p.launches[0].block.x, 32u);  // 8 elements: one warp
  EXPECT_NE(p.source.text.find("boo::arg_reduce<boo::bf16, false>(p)"), std::string::npos) << p.source.text;
  // float64 declines with the reason.
  std::unique_ptr<ops::OpProblem> f64 = ops::test::problem_of(
      R"(aten::argmax "[[4, 8], [], []]" "['double', 'Scalar', 'Scalar']" "[[8, 1], [], []]" "['', '1', 'False']")");
  ASSERT_TRUE(f64);
  const Status declined = tier.accepts(*f64, ops::test::sm90());
  EXPECT_EQ(declined.code(), StatusCode::kUnimplemented);
  EXPECT_NE(declined.message().find("float64 runs on the CPU reference only"), std::string::npos) << declined.to_string();
}

TEST(AtenGemmTest, Float64DeclinesOnEveryGemmTier) {
  std::unique_ptr<ops::OpProblem> f64 = ops::test::problem_of(
      R"(aten::bmm "[[128, 3, 3], [128, 3, 1152]]" "['double', 'double']" "[[9, 3, 1], [3456, 1152, 1]]" "['', '']")");
  ASSERT_TRUE(f64);
  for (const ops::GpuImplementation* impl : ops::find_op("aten_gemm")->gpu_implementations()) {
    const Status declined = impl->accepts(*f64, ops::test::sm90());
    EXPECT_NE(declined.message().find("float64 runs on the CPU reference only"), std::string::npos)
        << impl->name() << ": " << declined.to_string();
  }
  // A bf16 ATen GEMM plans on the GEMM tiers, its tensors bound by the call's names: the
  // column-major mat2 is the conv's filter as stored, the bias row fused into the conv's epilogue.
  const std::string addmm = R"(aten::addmm "[[64], [128, 64], [64, 64], [], []]" "['c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', 'Scalar', 'Scalar']" "[[1], [64, 1], [1, 64], [], []]" "['', '', '', '1', '1']")";
  const ops::GpuImplementation& igemm = ops::gemm::gemm_via_conv_implicit_gemm();
  ASSERT_TRUE(ops::test::accepts(igemm, addmm));
  const ops::test::Planned p = ops::test::plan_of(igemm, addmm);
  EXPECT_NE(p.config.find("conv convbfp16"), std::string::npos) << p.config;
  EXPECT_NE(p.config.find("-b 1"), std::string::npos) << p.config;
  EXPECT_EQ(p.config.find("epilogue kernel"), std::string::npos) << p.config;
  EXPECT_EQ(p.config.find("; stage "), std::string::npos) << p.config;  // no copy of any operand
  EXPECT_NE(p.config.find("--fil_layout NHC"), std::string::npos) << p.config;
}

}  // namespace
}  // namespace boo
