// boo tests: the CPU reference batch normalization — hand-computed statistics
// and running averages, gradients against finite differences of the training
// forward, saved statistics, and layouts that change only the strides.
#include <gtest/gtest.h>

#include <cmath>

#include "boo/batchnorm.hpp"
#include "ops/norm/batchnorm_ref.hpp"
#include "test_util.hpp"

namespace boo {
namespace {

using ops::norm::batch_norm_reference;
using testing::logical_values;
using testing::run_reference;

BatchNormSignature signature_of(const std::string& command) {
  Result<ParsedCommand> p = parse_command(command);
  EXPECT_TRUE(p.ok()) << p.status().to_string();
  return dynamic_cast<const BatchNormSignature&>(*p->signature);
}

TensorSpec as_f64(TensorSpec spec) {
  spec.dtype = DType::kF64;
  return spec;
}

// Logical values into a float64 tensor of `spec`'s shape and layout.
base::HostTensor tensor_of(const TensorSpec& spec, const std::vector<double>& values) {
  base::HostTensor t(as_f64(spec));
  for (size_t i = 0; i < values.size(); ++i)
    t.store(base::offset_of_linear(t.spec(), static_cast<int64_t>(i)), values[i]);
  return t;
}

TEST(BatchNormReferenceTest, HandComputedChannelAndRunningStatistics) {
  // Spatial, 2 samples x 1 channel x 1 x 2: x = {1, 2, 3, 6}: mean 3, var 3.5 (biased).
  BatchNormSignature sig = signature_of("bnorm -n 2 -c 1 -H 1 -W 2 -m 1 -F 1 -s 1 -r 1 --momentum 0.25 --eps 0.5");
  const std::vector<TensorSpec> specs = sig.arguments();  // x, scale, bias, running_mean_in, running_variance_in
  std::vector<base::HostTensor> args{tensor_of(specs[0], {1, 2, 3, 6}), tensor_of(specs[1], {2}),
                                     tensor_of(specs[2], {10}), tensor_of(specs[3], {1}), tensor_of(specs[4], {2})};
  Result<std::vector<base::HostTensor>> r = batch_norm_reference(sig, args);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const double invstd = 1 / std::sqrt(3.5 + 0.5);
  const std::vector<double> y = logical_values((*r)[0]);
  const double xs[] = {1, 2, 3, 6};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(y[i], (xs[i] - 3) * invstd * 2 + 10, 1e-12);
  EXPECT_NEAR((*r)[1].load(0), 3, 1e-12);                               // saved mean
  EXPECT_NEAR((*r)[2].load(0), invstd, 1e-12);                          // saved inverse variance
  EXPECT_NEAR((*r)[3].load(0), 0.75 * 1 + 0.25 * 3, 1e-12);             // running mean
  EXPECT_NEAR((*r)[4].load(0), 0.75 * 2 + 0.25 * 3.5 * 4 / 3, 1e-12);   // running variance, unbiased
}

// L(x, scale, bias) = <y, dy> of the training forward; the backward's dx,
// dscale and dbias must be its gradients, for both modes and a channels-last layout.
TEST(BatchNormReferenceTest, GradientsMatchFiniteDifferences) {
  for (const char* shape : {"-n 3 -c 2 -H 2 -W 3 -m 1", "-n 4 -c 2 -H 1 -W 3 -m 0",
                            "-n 2 -c 3 -H 2 -W 2 -m 1 --layout NHWC"}) {
    SCOPED_TRACE(shape);
    const std::string geometry = std::string("bnorm ") + shape + " --eps 0.01";
    testing::ReferenceRun back = run_reference(geometry + " -F 0 -b 1", 5);  // args x, dy, scale
    BatchNormSignature fwd = signature_of(geometry + " -F 1");
    base::HostTensor x = base::convert_tensor(back.args[0], as_f64(back.args[0].spec()));
    const base::HostTensor& dy = back.args[1];
    base::HostTensor scale = base::convert_tensor(back.args[2], as_f64(back.args[2].spec()));
    base::HostTensor bias(as_f64(fwd.param_spec("bias", DType::kF32)));
    auto objective = [&] {
      Result<std::vector<base::HostTensor>> y = batch_norm_reference(fwd, {x, scale, bias});
      EXPECT_TRUE(y.ok());
      return testing::inner_product((*y)[0], dy);
    };
    auto central = [&](base::HostTensor& t, int64_t i) {
      const int64_t offset = base::offset_of_linear(t.spec(), i);
      const double h = 1e-6, v = t.load(offset);
      t.store(offset, v + h);
      const double up = objective();
      t.store(offset, v - h);
      const double down = objective();
      t.store(offset, v);
      return (up - down) / (2 * h);
    };
    const std::vector<double> dx = logical_values(back.results[0]), dscale = logical_values(back.results[1]),
                              dbias = logical_values(back.results[2]);
    for (int64_t i = 0; i < x.spec().numel(); ++i) EXPECT_NEAR(dx[static_cast<size_t>(i)], central(x, i), 1e-6) << i;
    for (int64_t i = 0; i < scale.spec().numel(); ++i) {
      EXPECT_NEAR(dscale[static_cast<size_t>(i)], central(scale, i), 1e-6) << i;
      EXPECT_NEAR(dbias[static_cast<size_t>(i)], central(bias, i), 1e-6) << i;
    }
  }
}

// The saved statistics the backward reads are x's own: the same gradients as
// recomputing them (to float32 rounding of the saved values).
TEST(BatchNormReferenceTest, SavedStatisticsBackwardMatchesRecomputed) {
  testing::ReferenceRun saved = run_reference("bnorm -n 4 -c 3 -H 3 -W 2 -m 1 -F 0 -b 1 -s 1");
  testing::ReferenceRun recomputed = run_reference("bnorm -n 4 -c 3 -H 3 -W 2 -m 1 -F 0 -b 1");
  for (size_t r = 0; r < 3; ++r) {
    const std::vector<double> a = logical_values(saved.results[r]), b = logical_values(recomputed.results[r]);
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5 * (1 + std::abs(b[i]))) << r << " " << i;
  }
}

// A backward's saved statistics (make_arguments, from batch_statistics_of) are,
// value for value, the ones the training reference saves for the same x.
TEST(BatchNormReferenceTest, BackwardInputsSaveWhatTrainingSaves) {
  for (const char* line : {"bnormbfp16 -n 3 -c 4 -H 2 -W 3 -m 1", "bnormbfp16 -n 3 -c 4 -H 2 -W 3 -m 1 --layout NHWC",
                           "bnorm -n 3 -c 4 -H 2 -W 3 -m 0", "bnorm -n 2 -c 3 -D 2 -H 2 -W 3 -m 1 --layout NDHWC"}) {
    SCOPED_TRACE(line);
    testing::ReferenceRun backward = run_reference(std::string(line) + " -F 0 -b 1 -s 1");
    ASSERT_EQ(backward.args.size(), 5u);  // x, dy, scale, saved_mean, saved_inv_variance
    BatchNormSignature training = signature_of(std::string(line) + " -F 1 -s 1");
    std::vector<base::HostTensor> args;
    for (const TensorSpec& spec : training.arguments()) {
      base::HostTensor t(spec);
      for (int64_t j = 0; j < spec.numel(); ++j)
        t.store(base::offset_of_linear(spec, j), spec.name == "scale" ? 1 : 0);
      args.push_back(spec.name == "x" ? backward.args[0] : std::move(t));
    }
    Result<std::vector<base::HostTensor>> saved = batch_norm_reference(training, args);
    ASSERT_TRUE(saved.ok()) << saved.status().to_string();
    const std::vector<TensorSpec> results = training.results();  // y, saved_mean, saved_inv_variance
    ASSERT_EQ(results[1].name, "saved_mean");
    for (size_t k = 0; k < 2; ++k) {
      const std::vector<double> made = logical_values(backward.args[3 + k]);
      const std::vector<double> want = logical_values((*saved)[1 + k]);
      ASSERT_EQ(made.size(), want.size());
      for (size_t i = 0; i < made.size(); ++i)
        EXPECT_EQ(made[i], static_cast<double>(static_cast<float>(want[i]))) << k << " " << i;
    }
  }
}

TEST(BatchNormReferenceTest, LayoutsChangeOnlyStrides) {
  for (const char* mode : {"-m 0", "-m 1"}) {
    for (const char* pass : {"-F 1 -s 1 -r 1", "-F 2 -r 1", "-F 0 -b 1"}) {
      SCOPED_TRACE(std::string(mode) + " " + pass);
      const std::string rest = std::string(" ") + mode + " " + pass;
      testing::ReferenceRun nchw = run_reference("bnormbfp16 -n 3 -c 4 -H 2 -W 3" + rest);
      testing::ReferenceRun nhwc = run_reference("bnormbfp16 -n 3 -c 4 -H 2 -W 3 --layout NHWC" + rest);
      ASSERT_EQ(nchw.results.size(), nhwc.results.size());
      EXPECT_NE(nchw.args[0].spec().strides, nhwc.args[0].spec().strides);
      for (size_t r = 0; r < nchw.results.size(); ++r)
        EXPECT_EQ(logical_values(nchw.results[r]), logical_values(nhwc.results[r])) << r;
      testing::ReferenceRun ncdhw = run_reference("bnorm -n 2 -c 3 -D 2 -H 2 -W 3" + rest);
      testing::ReferenceRun ndhwc = run_reference("bnorm -n 2 -c 3 -D 2 -H 2 -W 3 --layout NDHWC" + rest);
      for (size_t r = 0; r < ncdhw.results.size(); ++r)
        EXPECT_EQ(logical_values(ncdhw.results[r]), logical_values(ndhwc.results[r])) << r;
    }
  }
}

}  // namespace
}  // namespace boo
