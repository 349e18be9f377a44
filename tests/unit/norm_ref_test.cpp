// boo tests: the CPU reference layer and RMS normalization — hand-computed
// rows, gradients against finite differences, permuted inputs, saved
// statistics, separate and combined modes.
#include <gtest/gtest.h>

#include <cmath>

#include "boo/norm.hpp"
#include "ops/norm/norm_ref.hpp"
#include "test_util.hpp"

namespace boo {
namespace {

using ops::norm::norm_reference;
using testing::logical_values;
using testing::run_reference;
using testing::tensor_from;

template <typename Signature>
Signature signature_of(const std::string& command) {
  Result<ParsedCommand> p = parse_command(command);
  EXPECT_TRUE(p.ok()) << p.status().to_string();
  return dynamic_cast<const Signature&>(*p->signature);
}

// The argument named `name` of a reference run.
base::HostTensor& argument(testing::ReferenceRun& run, const char* name) {
  const std::vector<TensorSpec> specs = run.sig->arguments();
  for (size_t i = 0; i < specs.size(); ++i)
    if (specs[i].name == name) return run.args[i];
  throw std::runtime_error(name);
}

// `spec` in float64, so that finite-difference steps are not rounded away.
TensorSpec as_f64(TensorSpec spec) {
  spec.dtype = DType::kF64;
  return spec;
}

// d objective / d t[offset] by central differences.
template <typename Objective>
double central_difference(base::HostTensor& t, int64_t offset, const Objective& objective) {
  const double h = 1e-6, v = t.load(offset);
  t.store(offset, v + h);
  const double up = objective();
  t.store(offset, v - h);
  const double down = objective();
  t.store(offset, v);
  return (up - down) / (2 * h);
}

TEST(LayerNormReferenceTest, HandComputedRow) {
  auto sig = signature_of<LayerNormSignature>("layernorm -X 1x4 -o 1 -m 1 -e 0.25 -F 1");
  const auto specs = sig.arguments();
  std::vector<base::HostTensor> args{tensor_from(specs[0], {1, 2, 3, 4}), tensor_from(specs[1], {1, 2, 1, 1}),
                                     tensor_from(specs[2], {0, 0, 0, 10})};
  auto r = norm_reference(sig, args);
  ASSERT_TRUE(r.ok());
  // mean 2.5, biased variance 1.25, rstd = 1/sqrt(1.25 + 0.25).
  const double rstd = 1 / std::sqrt(1.5);
  const std::vector<double> y = logical_values((*r)[0]);
  const std::vector<double> expected{-1.5 * rstd, -0.5 * rstd * 2, 0.5 * rstd, 1.5 * rstd + 10};
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(y[i], expected[i], 1e-15);
  EXPECT_DOUBLE_EQ((*r)[1].load(0), 2.5);
  EXPECT_NEAR((*r)[2].load(0), rstd, 1e-15);
  EXPECT_EQ((*r)[1].spec().shape, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ((*r)[2].spec().dtype, DType::kF64);
}

// f(x, w, b) = <layernorm(x), dy>; every gradient must match central differences.
TEST(LayerNormReferenceTest, GradientsMatchFiniteDifferences) {
  for (const char* affine : {"-m 1", "-m 0"}) {
    SCOPED_TRACE(affine);
    const std::string shape = "layernorm -X 3x2x5 -o 1 -e 0.01 ";
    auto fwd = signature_of<LayerNormSignature>(shape + affine + " -F 1");
    // Inputs of the full backward: dy, x, [weight], mean, rstd (consistent with x).
    testing::ReferenceRun back = run_reference(shape + affine + " -F 14", 7);
    base::HostTensor x = base::convert_tensor(argument(back, "x"), as_f64(fwd.x_spec()));
    base::HostTensor w(as_f64(fwd.param_spec("weight"))), b(as_f64(fwd.param_spec("bias")));
    for (int64_t j = 0; j < 10; ++j) {
      w.store(j, fwd.weight ? argument(back, "weight").load(j) : 1.0);
      b.store(j, 0.25 * static_cast<double>(j));
    }
    const base::HostTensor& dy = argument(back, "dy");
    auto objective = [&]() {
      std::vector<base::HostTensor> fargs{base::convert_tensor(x, x.spec())};
      if (fwd.weight) {
        fargs.push_back(base::convert_tensor(w, w.spec()));
        fargs.push_back(base::convert_tensor(b, b.spec()));
      }
      auto y = norm_reference(fwd, fargs);
      return testing::inner_product((*y)[0], dy);
    };
    const base::HostTensor &dx = back.results[0], &dw = back.results[1], &db = back.results[2];
    for (int64_t i = 0; i < 30; ++i)
      EXPECT_NEAR(dx.load(i), central_difference(x, i, objective), 1e-7) << "dx[" << i << "]";
    if (fwd.weight) {
      for (int64_t j = 0; j < 10; ++j) {
        EXPECT_NEAR(dw.load(j), central_difference(w, j, objective), 1e-7) << "dweight[" << j << "]";
        EXPECT_NEAR(db.load(j), central_difference(b, j, objective), 1e-7) << "dbias[" << j << "]";
      }
    }
  }
}

TEST(LayerNormReferenceTest, PermutedInputGivesTheSameLogicalResults) {
  testing::ReferenceRun plain = run_reference("layernormbfp16 -X 3x4x5 -o 2 -m 1 -F 1");
  testing::ReferenceRun perm = run_reference("layernormbfp16 -X 3x4x5 -o 2 -m 1 -F 1 --input-permutation 2 0 1");
  EXPECT_NE(perm.args[0].spec().strides, plain.args[0].spec().strides);
  for (size_t r = 0; r < 3; ++r) EXPECT_EQ(logical_values(perm.results[r]), logical_values(plain.results[r]));
  testing::ReferenceRun plain_bwd = run_reference("layernorm -X 3x4x5 -o 2 -m 1 -F 14");
  testing::ReferenceRun perm_bwd = run_reference("layernorm -X 3x4x5 -o 2 -m 1 -F 14 --input-permutation 1 2 0");
  for (size_t r = 0; r < 3; ++r) EXPECT_EQ(logical_values(perm_bwd.results[r]), logical_values(plain_bwd.results[r]));
}

TEST(LayerNormReferenceTest, SeparateBackwardModesAgreeWithFullBackward) {
  testing::ReferenceRun full = run_reference("layernormfp16 -X 6x33 -o 1 -m 1 -F 14");
  testing::ReferenceRun dx = run_reference("layernormfp16 -X 6x33 -o 1 -m 1 -F 2");
  testing::ReferenceRun dw = run_reference("layernormfp16 -X 6x33 -o 1 -m 1 -F 4");
  testing::ReferenceRun db = run_reference("layernormfp16 -X 6x33 -o 1 -m 1 -F 8");
  EXPECT_EQ(logical_values(dx.results[0]), logical_values(full.results[0]));
  EXPECT_EQ(logical_values(dw.results[0]), logical_values(full.results[1]));
  EXPECT_EQ(logical_values(db.results[0]), logical_values(full.results[2]));
}

TEST(LayerNormReferenceTest, BackwardStatisticsBelongToTheInput) {
  // The saved mean/rstd given to backward kernels are the forward's, rounded to float32.
  testing::ReferenceRun fwd = run_reference("layernorm -X 4x16 -o 1 -F 1");
  testing::ReferenceRun bwd = run_reference("layernorm -X 4x16 -o 1 -F 2");
  // Arguments of -F 2 without weight: dy, x, mean, rstd. Inputs are keyed by
  // name, so x is the same tensor in both commands.
  EXPECT_EQ(logical_values(bwd.args[1]), logical_values(fwd.args[0]));
  for (int64_t r = 0; r < 4; ++r) {
    EXPECT_EQ(bwd.args[2].load(r), static_cast<float>(fwd.results[1].load(r)));
    EXPECT_EQ(bwd.args[3].load(r), static_cast<float>(fwd.results[2].load(r)));
  }
}

// MIOpen's -N -C -H -W syntax: -F 0 is the forward and the full backward of
// the same inputs, and a channels-last layout changes only the strides.
TEST(LayerNormReferenceTest, DimsSyntaxForwardBackwardAndLayouts) {
  testing::ReferenceRun both = run_reference("layernormbfp16 -N 3 -C 4 -H 2 -W 5 -o 1 -m 1 -F 0");
  testing::ReferenceRun nhwc = run_reference("layernormbfp16 -N 3 -C 4 -H 2 -W 5 --layout NHWC -o 1 -m 1 -F 0");
  testing::ReferenceRun fwd = run_reference("layernormbfp16 -X 3x4x2x5 -o 1 -m 1 -F 1");
  testing::ReferenceRun bwd = run_reference("layernormbfp16 -X 3x4x2x5 -o 1 -m 1 -F 14");
  ASSERT_EQ(both.results.size(), 6u);  // y, mean, rstd, dx, dweight, dbias
  EXPECT_NE(nhwc.args[0].spec().strides, both.args[0].spec().strides);
  for (size_t r = 0; r < 6; ++r) EXPECT_EQ(logical_values(nhwc.results[r]), logical_values(both.results[r])) << r;
  for (size_t r = 0; r < 3; ++r) EXPECT_EQ(logical_values(both.results[r]), logical_values(fwd.results[r])) << r;
  // The separate backward reads float32 statistics; -F 0 the float64 ones.
  for (size_t r = 0; r < 3; ++r) {
    const std::vector<double> a = logical_values(both.results[3 + r]), b = logical_values(bwd.results[r]);
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5 * (1 + std::abs(a[i]))) << r << " " << i;
  }
}

TEST(RmsNormReferenceTest, HandComputedRow) {
  auto sig = signature_of<RmsNormSignature>("t5layernorm -X 1x4 -e 0.5 -m 5 -F 1");
  const auto specs = sig.arguments();
  auto r = norm_reference(sig, {tensor_from(specs[0], {1, 2, 3, 4}), tensor_from(specs[1], {1, 2, 1, -1})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  // mean(x^2) = 30/4 = 7.5; rstd = 1/sqrt(7.5 + 0.5) = 1/sqrt(8).
  const double rstd = 1 / std::sqrt(8.0);
  const std::vector<double> y = logical_values((*r)[0]);
  const std::vector<double> expected{rstd, 4 * rstd, 3 * rstd, -4 * rstd};
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(y[i], expected[i], 1e-15);
  EXPECT_NEAR((*r)[1].load(0), rstd, 1e-15);
  EXPECT_EQ((*r)[1].spec().shape, (std::vector<int64_t>{1}));  // MIOpen's rstd: the leading dims
}

// f(x, w) = <rmsnorm(x, w), dy>; dx and dweight must match central differences.
TEST(RmsNormReferenceTest, GradientsMatchFiniteDifferences) {
  for (const char* mode : {"-m 5", "-m 4"}) {
    for (const char* dims : {"", " -o 1"}) {
      SCOPED_TRACE(std::string(mode) + dims);
      const std::string shape = std::string("t5layernorm -X 3x2x5 -e 0.01 ") + mode + dims;
      auto fwd = signature_of<RmsNormSignature>(shape + " -F 1");
      testing::ReferenceRun back = run_reference(shape + " -F 2", 7);
      base::HostTensor x = base::convert_tensor(argument(back, "x"), as_f64(fwd.x_shaped_spec("x")));
      base::HostTensor w(as_f64(fwd.param_spec("weight")));
      const int64_t n = fwd.row_length();
      for (int64_t j = 0; j < n; ++j) w.store(j, fwd.weight ? argument(back, "weight").load(j) : 1.0);
      const base::HostTensor& dy = argument(back, "dy");
      auto objective = [&]() {
        std::vector<base::HostTensor> fargs{base::convert_tensor(x, x.spec())};
        if (fwd.weight) fargs.push_back(base::convert_tensor(w, w.spec()));
        auto y = norm_reference(fwd, fargs);
        return testing::inner_product((*y)[0], dy);
      };
      // The backward's rstd argument is float32: compare with a tolerance that allows for it.
      const base::HostTensor& dx = back.results[0];
      for (int64_t i = 0; i < 30; ++i)
        EXPECT_NEAR(dx.load(i), central_difference(x, i, objective), 2e-6) << "dx[" << i << "]";
      if (fwd.weight) {
        for (int64_t j = 0; j < n; ++j)
          EXPECT_NEAR(back.results[1].load(j), central_difference(w, j, objective), 2e-6) << "dweight[" << j << "]";
      }
    }
  }
}

TEST(RmsNormReferenceTest, ForwardAndBackwardTogetherMatchSeparateRuns) {
  testing::ReferenceRun both = run_reference("t5layernormbfp16 -X 4x3x40 -m 5 -F 0");
  testing::ReferenceRun fwd = run_reference("t5layernormbfp16 -X 4x3x40 -m 5 -F 1");
  testing::ReferenceRun bwd = run_reference("t5layernormbfp16 -X 4x3x40 -m 5 -F 2");
  // -F 0: y, rstd, dx, dweight. Inputs are keyed by name: x, weight and dy agree.
  EXPECT_EQ(logical_values(both.results[0]), logical_values(fwd.results[0]));
  EXPECT_EQ(logical_values(both.results[1]), logical_values(fwd.results[1]));
  // The separate backward reads a float32 rstd; -F 0 uses the float64 one.
  const std::vector<double> dx_both = logical_values(both.results[2]), dx_sep = logical_values(bwd.results[0]);
  for (size_t i = 0; i < dx_both.size(); ++i) EXPECT_NEAR(dx_both[i], dx_sep[i], 1e-6 * (1 + std::abs(dx_both[i])));
  EXPECT_EQ(both.results[3].spec().shape, (std::vector<int64_t>{40}));
}

}  // namespace
}  // namespace boo
