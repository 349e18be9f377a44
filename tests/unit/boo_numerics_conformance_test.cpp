// boo tests: conformance with upstream BOO's numerics verdict (issue 26). Each test re-states a case of
// iree-turbine's tests/kernel/boo/driver/numerics_smoke_test.py (the class::test it mirrors is named above
// it) on boo's verdict code; where boo deliberately differs (README "Differences from BOO") the test
// asserts boo's behaviour and says so.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "base/host_tensor.hpp"
#include "bench/numerics_check.hpp"
#include "bench/verdict.hpp"

namespace boo::bench {
namespace {

ErrorStats stats(double mean, double stddev, double max_abs, int64_t samples) {
  ErrorStats s;
  s.mean = mean;
  s.stddev = stddev;
  s.max_abs = max_abs;
  s.samples = samples;
  return s;
}

// evaluate_statistical_criteria(boo, pytorch, mean_check_atol, mean_check_rtol, stddev_check_rtol): boo's
// vendor (cuDNN) stands where BOO has PyTorch.
Criteria criteria(const ErrorStats& boo, const ErrorStats& vendor, double mean_atol, double mean_rtol,
                  double stddev_rtol = 1.2) {
  NumericsOptions o;
  o.mean_atol = mean_atol;
  o.mean_rtol = mean_rtol;
  o.stddev_rtol = stddev_rtol;
  return evaluate_criteria(boo, vendor.stddev, "vendor_stddev", o);
}

bool any_contains(const std::vector<std::string>& lines, const std::string& what) {
  for (const std::string& l : lines)
    if (l.find(what) != std::string::npos) return true;
  return false;
}

// TestComputeErrorStatistics::test_basic_statistics
TEST(BooNumericsConformance, BasicStatistics) {
  const ErrorStats s = error_stats({-2.0, -1.0, 0.0, 1.0, 2.0});
  EXPECT_NEAR(s.mean, 0.0, 1e-12);
  EXPECT_NEAR(s.stddev, 1.5811388, 1.5811388 * 1e-5);  // Bessel: sqrt(10 / 4)
  EXPECT_DOUBLE_EQ(s.max_abs, 2.0);
  EXPECT_EQ(s.samples, 5);
}

// TestComputeErrorStatistics::test_zero_errors
TEST(BooNumericsConformance, ZeroErrors) {
  const ErrorStats s = error_stats(std::vector<double>(100, 0.0));
  EXPECT_EQ(s.mean, 0.0);
  EXPECT_EQ(s.stddev, 0.0);
  EXPECT_EQ(s.max_abs, 0.0);
  EXPECT_EQ(s.samples, 100);
}

// TestComputeErrorStatistics::test_single_value: Bessel's correction makes one sample's stddev NaN, and
// (as in BOO, where every comparison with NaN is false) such a set fails both statistical tests.
TEST(BooNumericsConformance, SingleValueHasNanStddev) {
  const ErrorStats s = error_stats({-0.5});
  EXPECT_DOUBLE_EQ(s.mean, -0.5);
  EXPECT_TRUE(std::isnan(s.stddev));
  EXPECT_DOUBLE_EQ(s.max_abs, 0.5);
  EXPECT_EQ(s.samples, 1);
  const Criteria c = criteria(s, stats(0, 1e-5, 1e-5, 1000), 1e-5, 0.2);
  EXPECT_FALSE(c.mean_ok);
  EXPECT_FALSE(c.stddev_ok);
  // The CSV writes it as BOO's f"{nan:.6e}" does.
  ErrorSets sets;
  sets.add(0.5, 1.0, 1.0);
  const std::vector<std::string> cells = verdict_csv_cells(decide(sets, NumericsOptions{}, 0));
  EXPECT_EQ(cells[0], "FAIL");
  EXPECT_EQ(cells[2], "nan");  // boo_vs_ref_stddev
}

// TestEvaluateStatisticalCriteria::test_all_pass
TEST(BooNumericsConformance, AllPass) {
  const Criteria c = criteria(stats(1e-8, 1e-5, 1e-4, 1000), stats(1e-8, 1e-5, 1e-4, 1000), 1e-6, 0.0);
  EXPECT_TRUE(c.mean_ok);
  EXPECT_TRUE(c.stddev_ok);
  EXPECT_TRUE(c.reasons.empty());
}

// TestEvaluateStatisticalCriteria::test_mean_too_large
TEST(BooNumericsConformance, MeanTooLarge) {
  const Criteria c = criteria(stats(1e-4, 1e-5, 1e-4, 1000), stats(1e-8, 1e-5, 1e-4, 1000), 1e-6, 0.0);
  EXPECT_FALSE(c.mean_ok);
  ASSERT_GE(c.reasons.size(), 1u);
  EXPECT_TRUE(any_contains(c.reasons, "Mean error")) << c.reasons[0];
}

// TestEvaluateStatisticalCriteria::test_stddev_ratio_too_large
TEST(BooNumericsConformance, StddevRatioTooLarge) {
  const Criteria c = criteria(stats(1e-8, 2e-4, 1e-3, 1000), stats(1e-8, 1e-4, 1e-4, 1000), 1e-6, 0.0, 1.2);
  EXPECT_FALSE(c.stddev_ok);
  ASSERT_GE(c.reasons.size(), 1u);
  EXPECT_TRUE(any_contains(c.reasons, "BOO stddev")) << c.reasons[0];
}

// TestEvaluateStatisticalCriteria::test_pytorch_zero_stddev
TEST(BooNumericsConformance, VendorZeroStddev) {
  EXPECT_TRUE(criteria(stats(1e-8, 0.0, 1e-8, 1000), stats(0.0, 0.0, 0.0, 1000), 1e-6, 0.0).stddev_ok);
}

// TestEvaluateStatisticalCriteria::test_custom_thresholds
TEST(BooNumericsConformance, CustomThresholds) {
  const ErrorStats boo = stats(5e-5, 1e-4, 1e-3, 1000), vendor = stats(1e-8, 5e-5, 1e-4, 1000);
  const Criteria strict = criteria(boo, vendor, 1e-6, 0.0);
  EXPECT_FALSE(strict.mean_ok);    // 5e-5 > 1e-6
  EXPECT_FALSE(strict.stddev_ok);  // 2.0 ratio > 1.2
  const Criteria relaxed = criteria(boo, vendor, 1e-4, 0.0, 3.0);
  EXPECT_TRUE(relaxed.mean_ok);
  EXPECT_TRUE(relaxed.stddev_ok);
}

// TestEvaluateStatisticalCriteria::test_mean_scales_with_boo_stddev
TEST(BooNumericsConformance, MeanScalesWithBooStddev) {
  const ErrorStats vendor = stats(1e-8, 1e-3, 1e-1, 1000);
  // threshold = 1e-5 + 0.2 * 1e-3 = 2.1e-4 < 5e-2
  EXPECT_FALSE(criteria(stats(5e-2, 1e-3, 1e-1, 1000), vendor, 1e-5, 0.2).mean_ok);
  // threshold = 1e-5 + 0.2 * 1.0 = 0.2 >= 5e-2
  EXPECT_TRUE(criteria(stats(5e-2, 1.0, 2.0, 1000), vendor, 1e-5, 0.2).mean_ok);
}

// TestEvaluateStatisticalCriteria::test_stddev_floor_prevents_false_failure
TEST(BooNumericsConformance, StddevFloorPreventsFalseFailure) {
  const Criteria c = criteria(stats(0.0, 1e-10, 1e-9, 1000), stats(0.0, 8e-11, 1e-9, 1000), 1e-5, 1e-4, 1.2);
  EXPECT_TRUE(c.stddev_ok);
  EXPECT_TRUE(c.reasons.empty());
}

// Difference from BOO (README): the mean's bar never drops below 4 standard errors of the mean
// (4 * stddev / sqrt(n)), so an unbiased error set of few samples is not failed for chance. At the
// 1000 samples of every upstream case above, mean_rtol 0.2 is the larger and the rules agree.
TEST(BooNumericsConformance, DifferenceMeanBarFloorsAtFourStandardErrors) {
  const ErrorStats few = stats(3e-4, 1e-3, 3e-3, 32), many = stats(3e-4, 1e-3, 3e-3, 1000);
  const ErrorStats vendor = stats(0, 1e-3, 3e-3, 32);
  EXPECT_TRUE(criteria(few, vendor, 1e-5, 0.2).mean_ok);    // BOO: 3e-4 > 1e-5 + 0.2 * 1e-3 fails
  EXPECT_FALSE(criteria(many, vendor, 1e-5, 0.2).mean_ok);  // as BOO
}

// TestGenerateStructuredTestPattern::test_basic_pattern, test_2d_shape, test_small_tensor,
// test_seed_varies_offset, test_empty_tensor, test_different_dtypes: the block of ones BOO writes into
// zeroed inputs (boo seeds the offset with the argument's position, as BOO seeds it with its index).
struct Block {
  int64_t ones = 0, zeros = 0, first = -1, last = -1;
};

Block block_of(const std::vector<int64_t>& shape, DType dtype, uint64_t index) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) strides[d - 1] = strides[d] * shape[d];
  base::HostTensor t(TensorSpec{"x", shape, strides, dtype, ""});
  apply_block_pattern(t, index);
  Block b;
  for (int64_t i = 0; i < t.spec().numel(); ++i) {
    const double v = t.load(base::offset_of_linear(t.spec(), i));
    EXPECT_TRUE(v == 0.0 || v == 1.0) << v;
    if (v == 1.0) {
      if (b.first < 0) b.first = i;
      b.last = i;
      ++b.ones;
    } else {
      ++b.zeros;
    }
  }
  return b;
}

TEST(BooNumericsConformance, StructuredPattern) {
  const Block basic = block_of({100}, DType::kF32, 0);
  EXPECT_EQ(basic.ones, 25);  // numel / 4
  EXPECT_EQ(basic.last - basic.first + 1, basic.ones) << "one contiguous block";
  const Block two_d = block_of({10, 20}, DType::kF32, 0);
  EXPECT_GT(two_d.ones, 0);
  EXPECT_GT(two_d.zeros, 0);
  EXPECT_EQ(block_of({8}, DType::kF32, 0).ones, 2);  // max(1, min(8 / 4, 128))
  const Block a = block_of({200}, DType::kF32, 0), b = block_of({200}, DType::kF32, 1);
  EXPECT_EQ(a.ones, b.ones);
  EXPECT_NE(a.first, b.first);
  const Block empty = block_of({0}, DType::kF32, 0);
  EXPECT_EQ(empty.ones + empty.zeros, 0);
  for (DType dtype : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) EXPECT_EQ(block_of({100}, dtype, 3).ones, 25);
  EXPECT_EQ(block_of({4096}, DType::kF32, 0).ones, 128);  // STRUCTURED_BLOCK_SIZE_LIMIT
}

NumericsVerdict passing() {
  NumericsVerdict v;
  v.boo = stats(1e-7, 1e-5, 1e-4, 1000);
  v.vendor = stats(1e-7, 1e-5, 1e-4, 1000);
  v.diff = stats(1e-8, 1e-6, 1e-5, 1000);
  v.has_vendor = true;
  v.structured_ok = true;
  return v;
}

// TestOutputFormatters::test_format_verdict_simple_pass, _fail, _stddev_fail, _multiple_reasons, _error
TEST(BooNumericsConformance, SimpleFormat) {
  EXPECT_EQ(format_verdict_line(passing()), "Numerics: PASS");
  NumericsVerdict mean = passing();
  mean.mean_ok = false;
  EXPECT_EQ(format_verdict_line(mean), "Numerics: FAIL (mean bias)");
  NumericsVerdict spread = passing();
  spread.stddev_ok = false;
  EXPECT_EQ(format_verdict_line(spread), "Numerics: FAIL (stddev)");
  NumericsVerdict several = passing();
  several.mean_ok = several.stddev_ok = several.nan_ok = false;
  EXPECT_EQ(format_verdict_line(several), "Numerics: FAIL (mean bias, stddev, NaN mismatch)");
  NumericsVerdict error;
  error.error = "BOO compilation failed";
  EXPECT_EQ(format_verdict_line(error), "Numerics: FAIL (error)");
  EXPECT_EQ(format_verdict_line(error).find("compilation"), std::string::npos) << "the line names no details";
}

// TestOutputFormatters::test_format_verdict_verbose_with_stats. Difference: the vendor's lines name
// cuDNN where BOO's name PyTorch.
TEST(BooNumericsConformance, VerboseFormatWithStats) {
  const std::string out = format_verdict_verbose(passing(), "gemm --size 32", "cuDNN GPU", "float64");
  for (const char* want : {"gemm --size 32", "Error Statistics", "BOO GPU vs float64 Reference",
                           "cuDNN GPU vs float64 Reference", "Statistical Tests", "Stddev check", "Structured Test",
                           "VERDICT: PASS"})
    EXPECT_NE(out.find(want), std::string::npos) << want << " in\n" << out;
}

// TestOutputFormatters::test_format_verdict_verbose_with_error
TEST(BooNumericsConformance, VerboseFormatWithError) {
  NumericsVerdict v;
  v.error = "Failed to parse command";
  const std::string out = format_verdict_verbose(v, "invalid", "cuDNN GPU", "float64");
  EXPECT_NE(out.find("invalid"), std::string::npos) << out;
  EXPECT_NE(out.find("ERROR: Failed to parse command"), std::string::npos) << out;
  EXPECT_NE(out.find("VERDICT: FAIL"), std::string::npos) << out;
}

// verify_numerics' failure_reasons, listed by format_verdict_verbose: each failed test with its numbers.
TEST(BooNumericsConformance, VerboseListsEachReason) {
  ErrorSets sets;
  for (int i = 0; i < 1000; ++i) sets.add(1.0 + 1e-3 + 1e-4 * ((i % 7) - 3), 1.0, 1.0 + 1e-5 * ((i % 5) - 2));
  sets.add(NAN, 1.0, 1.0);
  const NumericsVerdict v = decide(sets, NumericsOptions{}, 0);
  EXPECT_EQ(format_verdict_line(v), "Numerics: FAIL (mean bias, stddev, NaN mismatch)");
  const std::string out = format_verdict_verbose(v, "conv", "cuDNN GPU", "float64");
  for (const char* want : {"  - Mean error |", "  - BOO stddev ", "  - NaN mismatch: BOO vs reference", "VERDICT: FAIL"})
    EXPECT_NE(out.find(want), std::string::npos) << want << " in\n" << out;
}

// TestNumericsVerdictDataclass::test_default_values, and the driver's defaults (numerics.py's constants).
TEST(BooNumericsConformance, Defaults) {
  const NumericsVerdict v;
  EXPECT_TRUE(v.mean_ok);
  EXPECT_TRUE(v.stddev_ok);
  EXPECT_FALSE(v.structured_ok.has_value());
  EXPECT_TRUE(v.nan_ok);
  EXPECT_TRUE(v.reasons.empty());
  EXPECT_TRUE(v.error.empty());
  EXPECT_EQ(v.boo.samples + v.vendor.samples + v.diff.samples, 0);
  const NumericsOptions o;
  EXPECT_EQ(o.min_samples, 1000);       // MIN_SAMPLES_DEFAULT
  EXPECT_EQ(o.stddev_rtol, 1.2);        // STDDEV_CHECK_RTOL_DEFAULT
  EXPECT_EQ(o.mean_atol, 1e-5);         // MEAN_CHECK_ATOL_DEFAULT
  EXPECT_EQ(o.mean_rtol, 0.2);          // MEAN_CHECK_RTOL_DEFAULT
  EXPECT_EQ(o.stddev_atol, 1e-5);       // STDDEV_CHECK_ATOL_DEFAULT
  EXPECT_TRUE(o.structured_tests);      // run_structured_tests=True
  EXPECT_FALSE(o.reference_float32);    // reference_dtype=torch.float64
}

}  // namespace
}  // namespace boo::bench
