// boo tests: BOO's statistical numerics verdict on synthetic error sets, the
// verdict formats and the structured inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "base/random.hpp"
#include "bench/numerics.hpp"
#include "bench/numerics_check.hpp"
#include "bench/verdict.hpp"
#include "boo/registry.hpp"
#include "ops/op_registry.hpp"

namespace boo::bench {
namespace {

// Adds n positions: boo = ref + bias + boo_spread * u, vendor = ref + vendor_spread * u'.
ErrorSets synthetic(int n, double bias, double boo_spread, double vendor_spread, bool with_vendor = true) {
  ErrorSets s;
  for (int i = 0; i < n; ++i) {
    const double ref = base::uniform_pm1(1, 1, static_cast<uint64_t>(i));
    const double u = base::uniform_pm1(1, 2, static_cast<uint64_t>(i));
    const double w = base::uniform_pm1(1, 3, static_cast<uint64_t>(i));
    std::optional<double> vendor;
    if (with_vendor) vendor = ref + vendor_spread * w;
    s.add(ref + bias + boo_spread * u, ref, vendor);
  }
  return s;
}

TEST(VerdictTest, UnbiasedAndNoNoisierThanTheVendorPasses) {
  NumericsVerdict v = decide(synthetic(4000, 0.0, 1e-3, 1e-3), NumericsOptions{}, 0);
  EXPECT_TRUE(v.pass()) << v.failure_reasons();
  EXPECT_EQ(v.boo.samples, 4000);
  EXPECT_NEAR(v.boo.stddev, 1e-3 / std::sqrt(3.0), 5e-5);  // uniform on [-1e-3, 1e-3)
  EXPECT_EQ(format_verdict_line(v), "Numerics: PASS");
}

TEST(VerdictTest, BiasFails) {
  NumericsVerdict v = decide(synthetic(4000, 5e-4, 1e-3, 1e-3), NumericsOptions{}, 0);
  EXPECT_FALSE(v.mean_ok);
  EXPECT_TRUE(v.stddev_ok);
  EXPECT_EQ(format_verdict_line(v), "Numerics: FAIL (mean bias)");
}

TEST(VerdictTest, FewSamplesJudgeTheMeanByItsStandardError) {
  // A mean of 0.35 stddev: chance in 32 unbiased samples (standard error 0.18
  // stddev), a real bias in 4000 (standard error 0.016 stddev).
  EXPECT_TRUE(decide(synthetic(32, 2e-4, 1e-3, 1e-3), NumericsOptions{}, 0).mean_ok);
  EXPECT_FALSE(decide(synthetic(4000, 2e-4, 1e-3, 1e-3), NumericsOptions{}, 0).mean_ok);
  // A bias of 1.7 stddev fails in 32 samples too.
  EXPECT_FALSE(decide(synthetic(32, 1e-3, 1e-3, 1e-3), NumericsOptions{}, 0).mean_ok);
}

// `--fp32-math tf32` asks for TF32 operands; cuDNN may still run full fp32 and spread a thousandth as
// much (conv_matrix's TF32 weight gradients on an H200: boo 1.1e-3 against cuDNN's 3.3e-7). The
// documented TF32 bound is then the bar, and a spread over it still fails.
TEST(VerdictTest, Tf32SpreadIsBoundedByTheToleranceNotAStricterVendor) {
  const ErrorSets tf32_like = synthetic(4000, 0.0, 1e-3, 1e-6);
  EXPECT_FALSE(decide(tf32_like, NumericsOptions{}, 2e-3).stddev_ok);
  const NumericsVerdict v = decide(tf32_like, NumericsOptions{}, 2e-3, ToleranceRole::kFloor);
  EXPECT_TRUE(v.pass()) << v.failure_reasons();
  EXPECT_FALSE(decide(tf32_like, NumericsOptions{}, 2e-4, ToleranceRole::kFloor).stddev_ok);
  // A vendor noisier than the tolerance keeps its own (looser) bar.
  EXPECT_TRUE(decide(synthetic(4000, 0.0, 1e-3, 1e-3), NumericsOptions{}, 1e-5, ToleranceRole::kFloor).stddev_ok);
}

TEST(VerdictTest, SpreadBeyondTheVendorsFails) {
  NumericsVerdict v = decide(synthetic(4000, 0.0, 2e-3, 1e-3), NumericsOptions{}, 0);
  EXPECT_TRUE(v.mean_ok);
  EXPECT_FALSE(v.stddev_ok);
  NumericsOptions lenient;
  lenient.stddev_rtol = 2.5;
  EXPECT_TRUE(decide(synthetic(4000, 0.0, 2e-3, 1e-3), lenient, 0).pass());
}

TEST(VerdictTest, NanPatternMismatchFails) {
  ErrorSets s = synthetic(100, 0, 1e-3, 1e-3);
  s.add(NAN, 1.0, 1.0);        // boo NaN where the reference is not
  s.add(NAN, NAN, NAN);        // NaN in both: dropped, fine
  s.add(1.0, 1.0, NAN);        // a vendor mismatch only warns
  NumericsVerdict v = decide(s, NumericsOptions{}, 0);
  EXPECT_FALSE(v.nan_ok);
  EXPECT_EQ(v.boo.samples, 101);
  EXPECT_NE(v.failure_reasons().find("NaN mismatch"), std::string::npos);
  bool warned = false;
  for (const std::string& n : v.notes) warned |= n.find("vendor's NaN pattern") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST(VerdictTest, WithoutAVendorTheToleranceBoundsTheSpread) {
  const ErrorSets s = synthetic(2000, 0, 1e-3, 0, false);
  EXPECT_TRUE(decide(s, NumericsOptions{}, 1e-3).pass());
  NumericsVerdict tight = decide(s, NumericsOptions{}, 1e-4);
  EXPECT_FALSE(tight.stddev_ok);
  EXPECT_FALSE(tight.has_vendor);
}

TEST(VerdictTest, FormatsAndCsv) {
  NumericsVerdict v = decide(synthetic(500, 0, 1e-3, 1e-3), NumericsOptions{}, 0);
  v.structured_ok = false;
  v.reference = "gpu:conv:reference on cuda:0 (whole results)";
  const std::string verbose = format_verdict_verbose(v, "conv -n 1", "cuDNN GPU", "float64");
  EXPECT_NE(verbose.find("Reference: gpu:conv:reference on cuda:0 (whole results)"), std::string::npos);
  EXPECT_NE(verbose.find("=== conv -n 1 ==="), std::string::npos);
  EXPECT_NE(verbose.find("BOO GPU vs float64 Reference"), std::string::npos);
  EXPECT_NE(verbose.find("Structured Test: FAIL"), std::string::npos);
  EXPECT_NE(verbose.find("VERDICT: FAIL"), std::string::npos);
  const std::vector<std::string> header = verdict_csv_header("cudnn");
  const std::vector<std::string> cells = verdict_csv_cells(v);
  ASSERT_EQ(header.size(), cells.size());
  EXPECT_EQ(header.front(), "numerics_pass");
  EXPECT_EQ(header[4], "cudnn_vs_ref_mean");
  EXPECT_EQ(header[header.size() - 2], "structured_test");
  EXPECT_EQ(header.back(), "numerics_reference");
  EXPECT_EQ(cells.front(), "FAIL");
  EXPECT_EQ(cells[cells.size() - 2], "FAIL");
  EXPECT_EQ(cells.back(), "gpu:conv:reference on cuda:0 (whole results)");
}

TEST(StructuredInputsTest, OneBlockOfOnesPerArgument) {
  Result<ParsedCommand> p = parse_command(std::string_view("conv -n 2 -c 3 -H 5 -W 4 -k 2 -y 3 -x 3 -F 1 -b 1"));
  ASSERT_TRUE(p.ok());
  const std::vector<base::HostTensor> args = structured_arguments(*p->signature);
  ASSERT_EQ(args.size(), 3u);
  for (const base::HostTensor& t : args) {
    const int64_t n = t.spec().numel();
    int64_t ones = 0, first = -1, last = -1;
    for (int64_t i = 0; i < n; ++i) {
      const double v = t.load(base::offset_of_linear(t.spec(), i));
      EXPECT_TRUE(v == 0.0 || v == 1.0);
      if (v == 1.0) {
        ++ones;
        if (first < 0) first = i;
        last = i;
      }
    }
    EXPECT_EQ(ones, std::max<int64_t>(1, std::min<int64_t>(n / 4, 128))) << t.spec().name;
    EXPECT_EQ(last - first + 1, ones) << "one contiguous block";
  }
}

TEST(NumericsCheckTest, TheCpuBackendPassesAgainstItsOwnReference) {
  Result<ParsedCommand> p = parse_command(std::string_view("convbfp16 -n 2 -c 8 -H 6 -W 5 -k 8 -y 3 -x 3 -p 1 -F 1"));
  ASSERT_TRUE(p.ok());
  std::unique_ptr<Backend> cpu = make_cpu_backend(1);
  NumericsVerdict v = check_numerics(*p->signature, *cpu, nullptr, NumericsOptions{}, 10);
  EXPECT_TRUE(v.pass()) << v.failure_reasons();
  EXPECT_GE(v.boo.samples, 1000);
  ASSERT_TRUE(v.structured_ok.has_value());
  EXPECT_TRUE(*v.structured_ok);
  EXPECT_EQ(v.reference, "cpu:conv:reference (whole results)");  // no reference given: the CPU's
}

// Above the full-reference threshold the verdict says how much of each result the reference computed.
TEST(NumericsCheckTest, TheVerdictNamesTheReferenceAndItsSample) {
  Result<ParsedCommand> p = parse_command(std::string_view("conv -n 10 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1"));
  ASSERT_TRUE(p.ok());
  ASSERT_GT(p->signature->flop_count(), VerifyOptions{}.full_reference_flops);
  std::unique_ptr<Backend> cpu = make_cpu_backend(1);
  NumericsOptions options;
  options.structured_tests = false;
  const NumericsVerdict v = check_numerics(*p->signature, *cpu, nullptr, options, 10, &cpu_reference());
  EXPECT_TRUE(v.pass()) << v.failure_reasons();
  EXPECT_EQ(v.reference.rfind("cpu:conv:reference (y at ", 0), 0u) << v.reference;
  EXPECT_NE(v.reference.find(" of 2007040 positions)"), std::string::npos) << v.reference;
}

// A small output (3 values per batch) with no vendor: the spread's bound comes from every
// batch's reference values, not the first batch's three (which can be far below typical:
// this command failed a correct kernel, and the CPU backend, before).
TEST(NumericsCheckTest, SmallOutputsBoundTheSpreadByEveryBatch) {
  Result<ParsedCommand> p = parse_command(std::string_view("t5layernormbfp16 -X 3x1 -m 5 -F 2"));
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  std::unique_ptr<Backend> cpu = make_cpu_backend(1);
  NumericsVerdict v = check_numerics(*p->signature, *cpu, nullptr, NumericsOptions{}, 10);  // the driver's default seed
  EXPECT_TRUE(v.pass()) << v.failure_reasons();
  EXPECT_EQ(v.boo.samples, 96);
}

// RMS norm's dx over rows of one element is rstd * g * (1 - xhat^2) = g * eps * rstd^3: a
// float32 kernel's difference is exact to ulps of rstd * g, not of the result. The
// cancellation allowance accepts exactly that error; without it the check fails.
TEST(NumericsTest, RmsNormShortRowsAllowForCancellation) {
  Result<ParsedCommand> p = parse_command(std::string_view("t5layernorm -X 64x1 -m 5 -F 2"));
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  const OpSignature& sig = *p->signature;
  const ops::OpDefinition* op = ops::find_op(sig.op_name());
  Result<std::vector<base::HostTensor>> args = op->make_arguments(sig, ops::InputOptions{10, {}});
  ASSERT_TRUE(args.ok());
  Result<std::vector<base::HostTensor>> reference = op->reference(sig, *args);
  ASSERT_TRUE(reference.ok());
  const std::vector<TensorSpec> arg_specs = sig.arguments(), result_specs = sig.results();
  auto arg = [&](std::string_view name) -> const base::HostTensor& {
    for (size_t i = 0; i < arg_specs.size(); ++i)
      if (arg_specs[i].name == name) return (*args)[i];
    throw std::runtime_error("no argument " + std::string(name));
  };
  // Results as a float32 kernel computes them: dx with float arithmetic, the rest rounded.
  std::vector<base::HostTensor> results;
  for (size_t i = 0; i < result_specs.size(); ++i) {
    results.emplace_back(result_specs[i]);
    for (int64_t e = 0; e < result_specs[i].numel(); ++e) results[i].store(e, (*reference)[i].load(e));
  }
  ASSERT_EQ(result_specs[0].name, "dx");
  for (int64_t r = 0; r < sig.arguments()[0].shape[0]; ++r) {
    const float x = static_cast<float>(arg("x").load(r)), dy = static_cast<float>(arg("dy").load(r));
    const float w = static_cast<float>(arg("weight").load(0)), rstd = static_cast<float>(arg("rstd").load(r));
    const float g = dy * w, xhat = x * rstd;
    results[0].store(r, rstd * (g - xhat * (g * xhat)));
  }
  Result<std::vector<Comparison>> with_allowance = compare_results(sig, *args, results, *reference);
  ASSERT_TRUE(with_allowance.ok());
  for (const Comparison& c : *with_allowance) EXPECT_TRUE(c.pass()) << c.summary();
  const double rtol = relative_tolerance(DType::kF32, 1);
  EXPECT_FALSE(compare_to_reference(results[0], (*reference)[0], rtol).pass())
      << "the float32 dx should cancel beyond rtol without the allowance";
}

// A float32 convolution in TF32 as the tensor cores compute it: both operands of every product
// rounded to 11 significant bits (to nearest, ties away, like cvt.rna.tf32.f32), the K = 864
// products summed in float32. The TF32 bound holds for every output; TF32 counted as an 11-bit
// output alone (2^-11) fails, as it did on the GPU.
TEST(VerdictTest, Tf32OperandRoundingStaysWithinTheTf32Bound) {
  constexpr int64_t kK = 864, kOutputs = 8192;
  auto to_tf32 = [](float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    bits = (bits + 0x1000u) & ~0x1fffu;  // keep 10 of the 23 stored mantissa bits, rounded
    std::memcpy(&v, &bits, sizeof v);
    return v;
  };
  const TensorSpec spec{"y", {kOutputs}, {1}, DType::kF32, ""};
  base::HostTensor result(spec), reference(spec);
  for (int64_t o = 0; o < kOutputs; ++o) {
    float sum = 0.f;
    double exact = 0.0;
    for (int64_t k = 0; k < kK; ++k) {
      const auto x = static_cast<float>(base::uniform_pm1(5, 1, static_cast<uint64_t>(o * kK + k)));
      const auto w = static_cast<float>(base::uniform_pm1(5, 2, static_cast<uint64_t>(k)));
      sum += to_tf32(x) * to_tf32(w);
      exact += static_cast<double>(x) * static_cast<double>(w);
    }
    result.store(o, sum);
    reference.store(o, exact);
  }
  const Comparison tf32 = compare_to_reference(result, reference, relative_tolerance(DType::kF32, kK, true));
  EXPECT_TRUE(tf32.pass()) << tf32.summary();
  const double output_bits_only = std::ldexp(1.0, -11) + 8.0 * std::sqrt(static_cast<double>(kK)) * std::ldexp(1.0, -24);
  EXPECT_FALSE(compare_to_reference(result, reference, output_bits_only).pass())
      << "TF32's operand rounding should exceed a bound that treats it as an 11-bit output";
}

}  // namespace
}  // namespace boo::bench
