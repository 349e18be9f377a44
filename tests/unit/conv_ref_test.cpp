// boo tests: the CPU reference convolution — hand-computed cases, adjoint
// identities across the signature space, layout invariance, bias gradients.
#include <gtest/gtest.h>

#include <cmath>

#include "boo/conv.hpp"
#include "ops/conv/conv_problem.hpp"
#include "ops/conv/conv_ref.hpp"
#include "test_util.hpp"

namespace boo {
namespace {

using testing::inner_product;
using testing::logical_values;
using testing::run_reference;
using testing::tensor_from;

ConvSignature conv_of(const std::string& command) {
  Result<ParsedCommand> p = parse_command(command);
  EXPECT_TRUE(p.ok()) << p.status().to_string();
  return dynamic_cast<const ConvSignature&>(*p->signature);
}

std::vector<double> run_forward(const std::string& command, const std::vector<std::vector<double>>& inputs) {
  ConvSignature sig = conv_of(command);
  std::vector<base::HostTensor> args;
  const std::vector<TensorSpec> specs = sig.arguments();
  for (size_t i = 0; i < specs.size(); ++i) args.push_back(tensor_from(specs[i], inputs[i]));
  Result<std::vector<base::HostTensor>> r = ops::conv::conv_reference(sig, args);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return logical_values((*r)[0]);
}

TEST(ConvReferenceTest, HandComputedForward) {
  // 3x3 input 1..9, 2x2 filter of ones: each output sums a 2x2 window.
  EXPECT_EQ(run_forward("conv -n 1 -c 1 -H 3 -W 3 -k 1 -y 2 -x 2 -F 1", {{1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 1, 1}}),
            (std::vector<double>{12, 16, 24, 28}));
  // Padding 1, stride 2 on a 3x3 input with a 3x3 filter of ones: 2x2 output of
  // corner windows of the zero-padded input.
  EXPECT_EQ(run_forward("conv -n 1 -c 1 -H 3 -W 3 -k 1 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 1",
                        {{1, 2, 3, 4, 5, 6, 7, 8, 9}, std::vector<double>(9, 1.0)}),
            (std::vector<double>{12, 16, 24, 28}));
  // Dilation 2: a 2x2 filter reads the four corners of the 3x3 input.
  EXPECT_EQ(run_forward("conv -n 1 -c 1 -H 3 -W 3 -k 1 -y 2 -x 2 -l 2 -j 2 -F 1",
                        {{1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 10, 100, 1000}}),
            (std::vector<double>{1 + 30 + 700 + 9000}));
  // Depthwise with bias and ReLU: channel c is scaled by w[c], then b[c] is added.
  EXPECT_EQ(run_forward("conv -n 1 -c 2 -H 1 -W 2 -k 2 -y 1 -x 1 -g 2 -F 1 -b 1 --activation relu",
                        {{1, 2, 3, 4}, {2, -1}, {0.5, 1}}),
            (std::vector<double>{2.5, 4.5, 0, 0}));
  // Two groups of two channels: output k reads only its group's inputs.
  EXPECT_EQ(run_forward("conv -n 1 -c 4 -H 1 -W 1 -k 2 -y 1 -x 1 -g 2 -F 1", {{1, 2, 3, 4}, {1, 10, 100, 1000}}),
            (std::vector<double>{21, 4300}));
  // 1-D: a 3-tap filter over 5 samples.
  EXPECT_EQ(run_forward("conv --spatial_dim 1 -n 1 -c 1 -H 5 -k 1 -y 3 -F 1", {{1, 2, 3, 4, 5}, {1, 0, -1}}),
            (std::vector<double>{-2, -2, -2}));
}

TEST(ConvReferenceTest, ResidualIsAddedBeforeTheActivation) {
  // y = relu(w * x + b + z) per channel (1x1, two groups of one channel): sums 2.5, 4.5 and -2, -3; z
  // enters before the ReLU, so the -2 that z lifts to 1 survives and the 2.5 it pushes to -0.5 does not.
  EXPECT_EQ(run_forward("conv -n 1 -c 2 -H 1 -W 2 -k 2 -y 1 -x 1 -g 2 -F 1 -b 1 --residual 1 --activation relu",
                        {{1, 2, 3, 4}, {2, -1}, {0.5, 1}, {-3, 10, 3, -1}}),
            (std::vector<double>{0, 14.5, 1, 0}));  // added after the ReLU it would be {-0.5, 14.5, 3, -1}
  // Without an activation, with a strided transposed conv: y = conv(x, w) + z element by element.
  const std::string trans = "conv -m trans -n 1 -c 1 -H 2 -W 2 -k 1 -y 2 -x 2 -u 2 -v 2 -F 1";
  std::vector<double> z(16);
  for (size_t i = 0; i < z.size(); ++i) z[i] = 0.25 * static_cast<double>(i);
  const std::vector<double> plain = run_forward(trans, {{1, 2, 3, 4}, {1, 1, 1, 1}});
  const std::vector<double> added = run_forward(trans + " --residual 1", {{1, 2, 3, 4}, {1, 1, 1, 1}, z});
  ASSERT_EQ(added.size(), plain.size());
  for (size_t i = 0; i < plain.size(); ++i) EXPECT_EQ(added[i], plain[i] + z[i]) << i;
}

TEST(ConvReferenceTest, ResidualReadsItsOwnLayout) {
  // z stored in y's layout (NHWC here): the reference reads it through its strides, so the same
  // logical z gives the same y whatever the layout.
  const std::string geometry = "conv -n 2 -c 3 -H 4 -W 3 -k 5 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 --residual 1 --activation tanh";
  const ConvSignature nchw = conv_of(geometry);
  const ConvSignature nhwc = conv_of(geometry + " --in_layout NHWC --fil_layout NHWC --out_layout NHWC");
  std::vector<std::vector<double>> values;
  for (const TensorSpec& spec : nchw.arguments()) {
    std::vector<double> v(static_cast<size_t>(spec.numel()));
    for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.37 * static_cast<double>(i) + static_cast<double>(spec.name[0]));
    values.push_back(std::move(v));
  }
  auto run = [&](const ConvSignature& sig) {
    std::vector<base::HostTensor> args;
    const std::vector<TensorSpec> specs = sig.arguments();
    for (size_t i = 0; i < specs.size(); ++i) args.push_back(tensor_from(specs[i], values[i]));
    Result<std::vector<base::HostTensor>> r = ops::conv::conv_reference(sig, args);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return logical_values((*r)[0]);
  };
  const std::vector<double> a = run(nchw), b = run(nhwc);
  EXPECT_EQ(a, b);
  // And z changes y: the same inputs without it differ.
  values.pop_back();
  EXPECT_NE(a, run_forward(geometry.substr(0, geometry.find(" --residual")) + " --activation tanh", values));
}

TEST(ConvReferenceTest, HandComputedTransposed) {
  // Stride-2 transposed 2x2 filter of ones: each input value fills a 2x2 block.
  EXPECT_EQ(run_forward("conv -m trans -n 1 -c 1 -H 2 -W 2 -k 1 -y 2 -x 2 -u 2 -v 2 -F 1", {{1, 2, 3, 4}, {1, 1, 1, 1}}),
            (std::vector<double>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
  // Output padding adds a row/column that only padding reaches.
  std::vector<double> y =
      run_forward("conv -m trans -n 1 -c 1 -H 1 -W 1 -k 1 -y 1 -x 1 -u 2 -v 2 -Y 1 -X 1 -F 1", {{5}, {2}});
  EXPECT_EQ(y, (std::vector<double>{10, 0, 0, 0}));
}

TEST(ConvReferenceTest, ActivationsMatchTheirDefinitions) {
  const double v = -0.7;
  EXPECT_DOUBLE_EQ(Activation::parse("sigmoid")->apply(v), 1 / (1 + std::exp(0.7)));
  EXPECT_DOUBLE_EQ(Activation::parse("silu")->apply(v), v / (1 + std::exp(0.7)));
  EXPECT_NEAR(Activation::parse("gelu")->apply(1.0), 0.8413447460685429, 1e-15);
  EXPECT_NEAR(Activation::parse("gelu_tanh")->apply(1.0), 0.8411919906082768, 1e-15);
  EXPECT_DOUBLE_EQ(Activation::parse("leaky_relu")->apply(v), 0.01 * v);
  EXPECT_DOUBLE_EQ(Activation::parse("leaky_relu:0.2")->apply(v), 0.2 * v);
  EXPECT_DOUBLE_EQ(Activation::parse("clamp:-0.5:0.5")->apply(v), -0.5);
  EXPECT_DOUBLE_EQ(Activation::parse("tanh")->apply(v), std::tanh(v));
  EXPECT_DOUBLE_EQ(Activation::parse("relu")->apply(v), 0);
}

// The three directions are adjoint: <fwd(x, w), dy> = <x, bwd_data(dy, w)> = <w, bwd_weight(x, dy)>.
// Each command runs with -F 0, so one reference call gives y, dx and dw from x, w, dy.
TEST(ConvReferenceTest, DirectionsAreAdjointAcrossTheSignatureSpace) {
  const char* commands[] = {
      "conv -n 2 -c 3 -H 7 -W 6 -k 4 -y 3 -x 2 -F 0",
      "conv -n 2 -c 4 -H 9 -W 8 -k 6 -y 3 -x 3 -p 1 -q 2 -u 2 -v 3 -l 2 -j 1 -g 2 -F 0",
      "convbfp16 -n 2 -c 5 -H 6 -W 7 -k 5 -y 3 -x 3 -p 1 -q 1 -g 5 -F 0 --in_layout NHWC --fil_layout NHWC --out_layout NHWC",
      "convfp16 -n 3 -c 6 -H 5 -W 5 -k 4 -y 2 -x 3 -u 2 -v 1 -F 0 --in_layout CHWN --fil_layout HWCN --out_layout WHNC",
      "conv --spatial_dim 1 -n 2 -c 4 -H 17 -k 3 -y 4 -p 2 -u 3 -l 2 -F 0 --in_layout NHC",
      "conv -_ 3 -n 2 -c 4 --in_d 5 -H 4 -W 6 -k 4 --fil_d 3 -y 2 -x 3 --pad_d 1 -p 0 -q 1 --conv_stride_d 2 -u 1 "
      "-v 2 --dilation_d 1 -l 2 -j 1 -g 2 -F 0 --in_layout NDHWC --fil_layout NDHWC --out_layout NDHWC",
      "conv -m trans -n 2 -c 4 -H 5 -W 4 -k 6 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -Y 1 -X 0 -g 2 -F 0",
      "convbfp16 -m trans -n 1 -c 3 -H 4 -W 3 -k 2 -y 2 -x 4 -u 3 -v 1 -l 1 -j 2 -Y 2 -F 0 --in_layout NHWC "
      "--fil_layout NHWC --out_layout NHWC",
      "conv -m trans -_ 3 -n 1 -c 2 --in_d 3 -H 3 -W 2 -k 2 --fil_d 2 -y 3 -x 2 --conv_stride_d 2 -u 1 -v 2 "
      "--trans_output_pad_d 1 -X 1 -F 0",
  };
  for (const char* command : commands) {
    SCOPED_TRACE(command);
    testing::ReferenceRun run = run_reference(command);
    ASSERT_EQ(run.results.size(), 3u);
    // Arguments of -F 0: x, w, dy. Results: y, dx, dw.
    const double fwd = inner_product(run.results[0], run.args[2]);
    const double data = inner_product(run.args[0], run.results[1]);
    const double weight = inner_product(run.args[1], run.results[2]);
    const double scale = std::abs(fwd) + 1.0;
    EXPECT_NEAR(data, fwd, 1e-12 * scale);
    EXPECT_NEAR(weight, fwd, 1e-12 * scale);
    EXPECT_GT(std::abs(fwd), 1e-6) << "degenerate test: the inner product is zero";
  }
}

// The bias gradient is the adjoint of adding a broadcast bias: <b, db> = <broadcast(b), dy>.
TEST(ConvReferenceTest, BiasGradientIsTheAdjointOfTheBias) {
  for (const char* command : {"conv -n 2 -c 4 -H 5 -W 6 -k 6 -y 3 -x 3 -F 0 -b 1",
                              "convbfp16 -n 3 -c 4 -H 4 -W 3 -k 2 -y 1 -x 1 -F 10 --out_layout NHWC",
                              "conv -m trans -n 2 -c 2 -H 3 -W 3 -k 4 -y 2 -x 2 -u 2 -v 2 -F 7"}) {
    SCOPED_TRACE(command);
    testing::ReferenceRun run = run_reference(command);
    const auto& sig = dynamic_cast<const ConvSignature&>(*run.sig);
    const std::vector<TensorSpec> args = sig.arguments();
    size_t dy_index = 0;
    while (args[dy_index].name != "dy") ++dy_index;
    const base::HostTensor& dy = run.args[dy_index];
    const base::HostTensor& db = run.results.back();
    // Direct per-channel sums of dy.
    std::vector<double> sums(static_cast<size_t>(sig.k), 0.0);
    const TensorSpec& s = dy.spec();
    const int64_t per_channel = s.numel() / (s.shape[0] * s.shape[1]);
    for (int64_t i = 0; i < s.numel(); ++i) sums[static_cast<size_t>((i / per_channel) % s.shape[1])] += dy.load(base::offset_of_linear(s, i));
    for (int64_t k = 0; k < sig.k; ++k) EXPECT_NEAR(db.load(k), sums[static_cast<size_t>(k)], 1e-12);
    if (sig.directions & kConvForward) {
      // Forward with bias minus forward without bias is the broadcast bias.
      ConvSignature plain = sig;
      plain.bias = false;
      plain.directions = kConvForward;
      std::vector<base::HostTensor> plain_args{base::convert_tensor(run.args[0], run.args[0].spec()),
                                               base::convert_tensor(run.args[1], run.args[1].spec())};
      auto y_plain = ops::conv::conv_reference(plain, plain_args);
      ASSERT_TRUE(y_plain.ok());
      const base::HostTensor& y_bias = run.results[0];
      const base::HostTensor& b = run.args[2];
      for (int64_t i = 0; i < y_bias.spec().numel(); ++i) {
        const int64_t k = (i / per_channel) % sig.k;
        EXPECT_NEAR(y_bias.load(base::offset_of_linear(y_bias.spec(), i)) -
                        (*y_plain)[0].load(base::offset_of_linear((*y_plain)[0].spec(), i)),
                    b.load(k), 1e-12);
      }
    }
  }
}

// Inputs are a function of the logical index, so every layout must give the
// same logical results (bit for bit: the reference sums in the same order).
TEST(ConvReferenceTest, LayoutsDoNotChangeLogicalResults) {
  const std::string base_cmd = "convbfp16 -n 2 -c 6 -H 5 -W 7 -k 4 -y 3 -x 3 -p 1 -q 1 -u 2 -v 1 -g 2 -F 0";
  testing::ReferenceRun reference = run_reference(base_cmd);
  for (const char* layouts : {" --in_layout NHWC --fil_layout NHWC --out_layout NHWC",
                              " --in_layout CHWN --fil_layout WHCN --out_layout HNWC"}) {
    testing::ReferenceRun other = run_reference(base_cmd + layouts);
    for (size_t r = 0; r < 3; ++r) EXPECT_EQ(logical_values(other.results[r]), logical_values(reference.results[r])) << layouts;
  }
}

// The forward of a transposed conv is the backward-data of the regular conv
// with the same filter (and the shapes swapped).
TEST(ConvReferenceTest, TransposedForwardIsRegularBackwardData) {
  testing::ReferenceRun trans = run_reference("conv -m trans -n 2 -c 6 -H 4 -W 5 -k 4 -y 3 -x 3 -u 2 -v 2 -p 1 -q 1 -Y 1 -g 2 -F 1");
  const auto& tsig = dynamic_cast<const ConvSignature&>(*trans.sig);
  // Regular conv from the transposed output (4 channels, 8x9) to its input (6 channels, 4x5).
  ConvSignature regular = tsig;
  regular.transposed = false;
  regular.output_padding = {0, 0};
  regular.c = tsig.k;
  regular.k = tsig.c;
  regular.input_size = {tsig.y_spec().shape[2], tsig.y_spec().shape[3]};
  regular.directions = kConvBackwardData;
  ASSERT_TRUE(regular.validate().ok());
  ASSERT_EQ(regular.output_size(), tsig.input_size);
  // Arguments of backward-data: dy (= the transposed input), w (same filter tensor).
  std::vector<base::HostTensor> args{base::convert_tensor(trans.args[0], regular.y_spec()),
                                     base::convert_tensor(trans.args[1], regular.w_spec())};
  auto dx = ops::conv::conv_reference(regular, args);
  ASSERT_TRUE(dx.ok()) << dx.status().to_string();
  EXPECT_EQ(logical_values((*dx)[0]), logical_values(trans.results[0]));
}

// The transposed forward against a direct scatter loop written here, independent of the reference's
// faces: every input element x[n, c, i] adds x * w[c, kk, r] to y[n, group(c) * K/g + kk, i*stride - pad + r*dil].
TEST(ConvReferenceTest, TransposedForwardMatchesADirectScatter) {
  const char* commands[] = {
      "conv -m trans -n 2 -c 6 -H 4 -W 5 -k 4 -y 3 -x 3 -u 2 -v 2 -p 1 -q 1 -Y 1 -g 2 -F 1",
      "conv -m trans -n 1 -c 3 -H 3 -W 4 -k 5 -y 2 -x 3 -u 3 -v 1 -p 0 -q 2 -l 2 -j 1 -X 0 -F 1",
      "convbfp16 -m trans -n 2 -c 4 -H 5 -W 3 -k 4 -y 3 -x 2 -u 1 -v 2 -p 2 -q 0 -l 1 -j 2 -Y 0 -X 1 -g 4 -b 1 -F 1 "
      "--in_layout NHWC --fil_layout NHWC --out_layout NHWC",
  };
  for (const char* command : commands) {
    testing::ReferenceRun run = run_reference(command);
    const auto& sig = dynamic_cast<const ConvSignature&>(*run.sig);
    const base::HostTensor& x = run.args[0];
    const base::HostTensor& w = run.args[1];
    const int64_t n = sig.n, c = sig.c, k = sig.k, g = sig.groups, h = sig.input_size[0], wd = sig.input_size[1];
    const int64_t fy = sig.filter_size[0], fx = sig.filter_size[1];
    ASSERT_EQ(w.spec().shape, (std::vector<int64_t>{c, k / g, fy, fx})) << command;
    const std::vector<int64_t> out = sig.output_size();
    const int64_t oh = out[0], ow = out[1];
    // The output size from its definition: (in - 1) * stride - 2 * pad + dil * (filter - 1) + output_pad + 1.
    ASSERT_EQ(oh, (h - 1) * sig.stride[0] - 2 * sig.padding[0] + sig.dilation[0] * (fy - 1) + sig.output_padding[0] + 1);
    ASSERT_EQ(ow, (wd - 1) * sig.stride[1] - 2 * sig.padding[1] + sig.dilation[1] * (fx - 1) + sig.output_padding[1] + 1);
    std::vector<double> y(static_cast<size_t>(n * k * oh * ow), 0.0);
    for (int64_t in = 0; in < n; ++in)
      for (int64_t ci = 0; ci < c; ++ci)
        for (int64_t i = 0; i < h; ++i)
          for (int64_t j = 0; j < wd; ++j) {
            const double xv = x.at({in, ci, i, j});
            const int64_t group = ci / (c / g);
            for (int64_t kk = 0; kk < k / g; ++kk)
              for (int64_t r = 0; r < fy; ++r)
                for (int64_t s = 0; s < fx; ++s) {
                  const int64_t oy = i * sig.stride[0] - sig.padding[0] + r * sig.dilation[0];
                  const int64_t ox = j * sig.stride[1] - sig.padding[1] + s * sig.dilation[1];
                  if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
                  const int64_t ko = group * (k / g) + kk;
                  y[static_cast<size_t>(((in * k + ko) * oh + oy) * ow + ox)] += xv * w.at({ci, kk, r, s});
                }
          }
    if (sig.bias)
      for (int64_t i = 0; i < static_cast<int64_t>(y.size()); ++i) y[static_cast<size_t>(i)] += run.args[2].at({(i / (oh * ow)) % k});
    const std::vector<double> reference = logical_values(run.results[0]);
    ASSERT_EQ(reference.size(), y.size()) << command;
    for (size_t i = 0; i < y.size(); ++i)
      ASSERT_NEAR(reference[i], y[i], 1e-12 * (1 + std::abs(y[i]))) << command << " at logical index " << i;
  }
}

// The sampled reference (each element on its own, used above 2e9 FLOP) equals the whole one, for every
// result of every direction, grouped, strided, dilated, transposed, 1/2/3-D and in other layouts.
TEST(ConvReferenceTest, SampledElementsEqualTheWholeReference) {
  const char* commands[] = {
      "conv -n 2 -c 4 -H 9 -W 8 -k 6 -y 3 -x 3 -p 1 -q 2 -u 2 -v 3 -l 2 -j 1 -g 2 -b 1 -F 0",
      "convbfp16 -n 2 -c 6 -H 6 -W 7 -k 6 -y 3 -x 3 -p 1 -q 1 -g 3 -F 0 --in_layout NHWC --fil_layout NHWC "
      "--out_layout NHWC",
      "conv --spatial_dim 1 -n 2 -c 4 -H 17 -k 4 -y 4 -p 2 -u 3 -l 2 -g 2 -F 0 --in_layout NHC",
      "conv -_ 3 -n 2 -c 4 --in_d 5 -H 4 -W 6 -k 4 --fil_d 3 -y 2 -x 3 --pad_d 1 -p 0 -q 1 --conv_stride_d 2 -u 1 "
      "-v 2 --dilation_d 1 -l 2 -j 1 -g 2 -F 0",
      "conv -m trans -n 2 -c 4 -H 5 -W 4 -k 6 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -Y 1 -X 0 -g 2 -F 0",
  };
  for (const char* command : commands) {
    testing::ReferenceRun run = run_reference(command);
    const ops::OpDefinition* op = ops::find_op(run.sig->op_name());
    const std::vector<TensorSpec> specs = run.sig->results();
    ASSERT_EQ(run.results.size(), specs.size());
    for (size_t r = 0; r < specs.size(); ++r) {
      std::vector<int64_t> every(static_cast<size_t>(specs[r].numel()));
      for (int64_t i = 0; i < specs[r].numel(); ++i) every[static_cast<size_t>(i)] = i;
      Result<std::vector<double>> sampled = op->reference_sample(*run.sig, run.args, r, every);
      ASSERT_TRUE(sampled.ok()) << command << ": " << sampled.status().to_string();
      const std::vector<double> whole = logical_values(run.results[r]);
      for (size_t i = 0; i < whole.size(); ++i)
        ASSERT_NEAR((*sampled)[i], whole[i], 1e-12 * (1 + std::abs(whole[i])))
            << command << ": result " << specs[r].name << " at logical index " << i;
    }
  }
}

// A 3-D conv whose extra dim changes nothing is planned as a 2-D conv of the same memory (fewer_spatial_dims):
// the reference of that 2-D signature on the same bytes gives the same bytes, in every direction.
TEST(ConvReferenceTest, FewerSpatialDimsComputeTheSameConv) {
  struct Case {
    std::string command, folded;
  } cases[] = {
      // Patchify along depth (BOO's 413): D x (H x W) rows, the filter's depth its height.
      {"convbfp16 -n 2 -c 8 --in_d 4 -H 3 -W 5 -k 6 --fil_d 2 -y 1 -x 1 --pad_d 0 --conv_stride_d 2 --spatial_dim 3 "
       "-F 1 -b 1 --in_layout NDHWC --out_layout NDHWC --fil_layout NDHWC",
       "convbfp16 -n 2 -c 8 -H 4 -W 15 -k 6 -y 2 -x 1 -p 0 -q 0 -u 2 -v 1"},
      {"conv -n 2 -c 3 --in_d 5 -H 2 -W 4 -k 4 --fil_d 3 -y 1 -x 1 --pad_d 1 --conv_stride_d 1 --spatial_dim 3 -F 1",
       "conv -n 2 -c 3 -H 5 -W 8 -k 4 -y 3 -x 1 -p 1 -q 0"},
      // Depth of one tap: the depths are images (channels-last only).
      {"convbfp16 -n 2 -c 8 --in_d 3 -H 5 -W 4 -k 6 --fil_d 1 -y 3 -x 3 --pad_d 0 -p 1 -q 1 --spatial_dim 3 -g 2 -F 1 "
       "--in_layout NDHWC --out_layout NDHWC --fil_layout NDHWC",
       "convbfp16 -n 6 -c 8 -H 5 -W 4 -k 6 -y 3 -x 3 -p 1 -q 1 -g 2"},
  };
  for (const Case& c : cases) {
    for (const char* direction : {" -F 1", " -F 2", " -F 4"}) {
      std::string command = c.command;
      command.replace(command.find(" -F 1"), 5, direction);
      SCOPED_TRACE(command);
      const ConvSignature sig = conv_of(command);
      const std::optional<ConvSignature> folded = ops::conv::fewer_spatial_dims(sig);
      ASSERT_TRUE(folded.has_value());
      EXPECT_EQ(folded->spatial_dims, 2);
      // Its shape is the expected 2-D conv's (the layouts' letters aside).
      const ConvSignature expected = conv_of(c.folded + direction);
      EXPECT_EQ(folded->n, expected.n);
      EXPECT_EQ(folded->input_size, expected.input_size);
      EXPECT_EQ(folded->filter_size, expected.filter_size);
      EXPECT_EQ(folded->stride, expected.stride);
      EXPECT_EQ(folded->padding, expected.padding);
      EXPECT_EQ(folded->output_size(), std::vector<int64_t>(expected.output_size()));
      // The same bytes in, the same bytes out.
      std::vector<base::HostTensor> args, folded_args;
      const std::vector<TensorSpec> specs = sig.arguments(), folded_specs = folded->arguments();
      ASSERT_EQ(specs.size(), folded_specs.size());
      for (size_t i = 0; i < specs.size(); ++i) {
        base::HostTensor a(specs[i]), b(folded_specs[i]);
        ASSERT_EQ(a.size_bytes(), b.size_bytes()) << specs[i].name;
        for (int64_t e = 0; e < static_cast<int64_t>(a.size_bytes() / dtype_size_bytes(specs[i].dtype)); ++e) {
          const double v = static_cast<double>((e * 5 + i * 3) % 7) - 3;
          a.store(e, v);
          b.store(e, v);
        }
        args.push_back(std::move(a));
        folded_args.push_back(std::move(b));
      }
      Result<std::vector<base::HostTensor>> r = ops::conv::conv_reference(sig, args);
      Result<std::vector<base::HostTensor>> f = ops::conv::conv_reference(*folded, folded_args);
      ASSERT_TRUE(r.ok() && f.ok());
      ASSERT_EQ(r->size(), f->size());
      for (size_t i = 0; i < r->size(); ++i) {
        ASSERT_EQ((*r)[i].size_bytes(), (*f)[i].size_bytes());
        const int64_t n = static_cast<int64_t>((*r)[i].size_bytes() / dtype_size_bytes((*r)[i].spec().dtype));
        for (int64_t e = 0; e < n; ++e) ASSERT_EQ((*r)[i].load(e), (*f)[i].load(e)) << "element " << e;
      }
    }
  }
  // Not folded: a depth of one tap where the depth is not next to the batch (NCDHW: more images would not be
  // one stride apart), filters of several taps in every dim, and 2-D convs.
  for (const std::string command : {
           "conv -n 2 -c 3 --in_d 3 -H 5 -W 4 -k 4 --fil_d 1 -y 3 -x 3 -p 1 -q 1 --spatial_dim 3 -F 1",
           "conv -n 2 -c 3 --in_d 3 -H 5 -W 4 -k 4 --fil_d 3 -y 3 -x 3 -p 1 -q 1 --spatial_dim 3 -F 1",
           "conv -n 2 -c 3 -H 5 -W 4 -k 4 -y 1 -x 1 -F 1",
       })
    EXPECT_FALSE(ops::conv::fewer_spatial_dims(conv_of(command)).has_value()) << command;
}

}  // namespace
}  // namespace boo
