// boo tests: the CPU reference RMS normalization (t5layernorm) — a hand-computed
// row, gradients against finite differences, -F 0 against -F 1 then -F 2.
#include <gtest/gtest.h>

#include <cmath>

#include "boo/rmsnorm.hpp"
#include "ops/rmsnorm/rmsnorm_ref.hpp"
#include "test_util.hpp"

namespace boo {
namespace {

using testing::logical_values;
using testing::run_reference;
using testing::tensor_from;

RmsNormSignature rms_of(const std::string& command) {
  Result<ParsedCommand> p = parse_command(command);
  EXPECT_TRUE(p.ok()) << p.status().to_string();
  return dynamic_cast<const RmsNormSignature&>(*p->signature);
}

TEST(RmsNormReferenceTest, HandComputedRow) {
  RmsNormSignature sig = rms_of("t5layernorm -X 1x4 -e 0.5 -m 5 -F 1");
  const auto specs = sig.arguments();
  auto r = ops::rmsnorm::rmsnorm_reference(sig, {tensor_from(specs[0], {1, 2, 3, 4}), tensor_from(specs[1], {1, 2, 1, -1})});
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
      RmsNormSignature fwd = rms_of(shape + " -F 1");
      testing::ReferenceRun back = run_reference(shape + " -F 2", 7);
      const std::vector<TensorSpec> bspecs = back.sig->arguments();
      auto arg = [&](const char* name) -> base::HostTensor& {
        for (size_t i = 0; i < bspecs.size(); ++i)
          if (bspecs[i].name == name) return back.args[i];
        throw std::runtime_error(name);
      };
      auto f64 = [](TensorSpec spec) {
        spec.dtype = DType::kF64;
        return spec;
      };
      base::HostTensor x = base::convert_tensor(arg("x"), f64(fwd.dense_spec("x")));
      base::HostTensor w(f64(fwd.param_spec("weight")));
      const int64_t n = fwd.row_length();
      for (int64_t j = 0; j < n; ++j) w.store(j, fwd.weight ? arg("weight").load(j) : 1.0);
      const base::HostTensor& dy = arg("dy");
      auto objective = [&]() {
        std::vector<base::HostTensor> fargs{base::convert_tensor(x, x.spec())};
        if (fwd.weight) fargs.push_back(base::convert_tensor(w, w.spec()));
        auto y = ops::rmsnorm::rmsnorm_reference(fwd, fargs);
        return testing::inner_product((*y)[0], dy);
      };
      const double h = 1e-6;
      auto central = [&](base::HostTensor& t, int64_t offset) {
        const double v = t.load(offset);
        t.store(offset, v + h);
        const double up = objective();
        t.store(offset, v - h);
        const double down = objective();
        t.store(offset, v);
        return (up - down) / (2 * h);
      };
      // The backward's rstd argument is float32: compare with a tolerance that allows for it.
      const base::HostTensor& dx = back.results[0];
      for (int64_t i = 0; i < 30; ++i) EXPECT_NEAR(dx.load(i), central(x, i), 2e-6) << "dx[" << i << "]";
      if (fwd.weight) {
        for (int64_t j = 0; j < n; ++j) EXPECT_NEAR(back.results[1].load(j), central(w, j), 2e-6) << "dweight[" << j << "]";
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
