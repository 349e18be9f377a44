// boo tests: --verify-numerics fails every known-bad result. Each fault of
// bench/fault_backend.hpp runs through check_numerics on conv and both norms,
// in every dtype and direction listed, and must fail for its reason; the same
// commands on the unfaulted CPU backend pass, so each failure is the fault's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/fault_backend.hpp"
#include "bench/numerics.hpp"
#include "bench/numerics_check.hpp"
#include "boo/registry.hpp"

namespace boo::bench {
namespace {

// Small enough that every output element is checked, in batches and in the structured test.
// Every op in every dtype and direction; the forward ones with a bias where the op has one.
std::vector<std::string> commands() {
  std::vector<std::string> out;
  for (const char* dtype : {"", "fp16", "bfp16"}) {
    const std::string d = dtype;
    out.push_back("conv" + d + " -n 2 -c 8 -H 6 -W 5 -k 8 -y 3 -x 3 -p 1 -b 1 -F 1");
    out.push_back("conv" + d + " -n 2 -c 8 -H 6 -W 5 -k 8 -y 3 -x 3 -p 1 -g 2 -F 2");
    out.push_back("conv" + d + " -n 2 -c 8 -H 6 -W 5 -k 8 -y 3 -x 3 -p 1 -g 2 -F 4");
    out.push_back("conv" + d + " -m trans -n 2 -c 8 -H 4 -W 3 -k 6 -y 3 -x 3 -u 2 -v 2 -p 1 -q 1 -b 1 -F 1");
    out.push_back("layernorm" + d + " -X 16x48 -o 1 -m 1 -F 1");
    out.push_back("layernorm" + d + " -X 16x48 -o 1 -m 1 -F 14");
    out.push_back("t5layernorm" + d + " -X 16x48 -F 1");
    out.push_back("t5layernorm" + d + " -X 16x48 -F 2");
  }
  return out;
}
const std::vector<std::string> kCommands = commands();

std::unique_ptr<OpSignature> signature(const std::string& command) {
  Result<ParsedCommand> parsed = parse_command(command);
  EXPECT_TRUE(parsed.ok()) << command << ": " << parsed.status().to_string();
  return parsed.ok() ? std::move(parsed->signature) : nullptr;
}

bool has_bias_argument(const OpSignature& sig) {
  for (const TensorSpec& spec : sig.arguments())
    if (spec.name == "b" || spec.name == "bias") return true;
  return false;
}

// The reasons each fault must be reported with: the per-element tolerance catches every wrong value
// (a NaN among them), and the statistical check's NaN pattern the NaN too.
std::vector<std::string> expected_reasons(Fault fault) {
  if (fault == Fault::kNan) return {"NaN mismatch", "tolerance"};
  return {"tolerance"};
}

TEST(FaultBackendTest, TheUnfaultedCpuBackendPassesEveryCommand) {
  for (const std::string& command : kCommands) {
    std::unique_ptr<OpSignature> sig = signature(command);
    ASSERT_TRUE(sig);
    std::unique_ptr<Backend> cpu = make_cpu_backend(1);
    const NumericsVerdict v = check_numerics(*sig, *cpu, nullptr, NumericsOptions{}, 10);
    EXPECT_TRUE(v.pass()) << command << ": " << v.failure_reasons() << " " << v.error;
  }
}

TEST(FaultBackendTest, VerifyNumericsFailsEveryFaultForItsReason) {
  int checked = 0;
  for (const FaultInfo& info : all_faults()) {
    for (const std::string& command : kCommands) {
      std::unique_ptr<OpSignature> sig = signature(command);
      ASSERT_TRUE(sig);
      if (info.fault == Fault::kMissingBias && !has_bias_argument(*sig)) continue;
      Result<std::unique_ptr<Backend>> faulty =
          make_faulty_backend(std::string(kFaultyBackendPrefix) + std::string(info.name), 1);
      ASSERT_TRUE(faulty.ok()) << faulty.status().to_string();
      const NumericsVerdict v = check_numerics(*sig, **faulty, nullptr, NumericsOptions{}, 10);
      const std::string what = std::string(info.name) + " on " + command;
      EXPECT_FALSE(v.pass()) << what << " passed --verify-numerics";
      EXPECT_TRUE(v.error.empty()) << what << ": the check did not run: " << v.error;
      for (const std::string& reason : expected_reasons(info.fault))
        EXPECT_NE(v.failure_reasons().find(reason), std::string::npos)
            << what << ": failed for '" << v.failure_reasons() << "', expected '" << reason << "' among them";
      ++checked;
    }
  }
  // 7 faults on 24 commands, missing-bias only on the 9 forward ones with a bias argument.
  EXPECT_EQ(checked, 6 * 24 + 9);
}

TEST(FaultBackendTest, EachFaultChangesTheResultsAsDocumented) {
  std::unique_ptr<OpSignature> sig = signature("conv -n 1 -c 4 -H 10 -W 10 -k 2 -y 1 -x 1 -F 1");
  ASSERT_TRUE(sig);
  const TensorSpec spec = sig->results()[0];  // 200 float32 elements
  auto values_after = [&](Fault fault) {
    base::HostTensor t(spec);
    for (int64_t i = 0; i < spec.numel(); ++i) t.store(base::offset_of_linear(spec, i), static_cast<double>(i + 1));
    apply_result_fault(fault, *sig, 0, t);
    std::vector<double> v;
    for (int64_t i = 0; i < spec.numel(); ++i) v.push_back(t.load(base::offset_of_linear(spec, i)));
    return v;
  };
  const std::vector<double> shifted = values_after(Fault::kShift);
  EXPECT_EQ(shifted[0], 200);
  EXPECT_EQ(shifted[1], 1);
  EXPECT_EQ(shifted[199], 199);
  const std::vector<double> permuted = values_after(Fault::kPermute);
  EXPECT_EQ(permuted[0], 2);
  EXPECT_EQ(permuted[1], 1);
  const std::vector<double> tail = values_after(Fault::kUnwrittenTail);
  EXPECT_EQ(tail[197], 198);
  EXPECT_EQ(tail[198], 0);  // 1% of 200: the last two
  EXPECT_EQ(tail[199], 0);
  const std::vector<double> scaled = values_after(Fault::kScale);
  EXPECT_NEAR(scaled[99] / 100.0 - 1.0, 2 * result_tolerance(*sig, 0), 1e-7);
  const std::vector<double> outlier = values_after(Fault::kOutlier);
  const std::vector<double> nan = values_after(Fault::kNan);
  int changed = 0;
  for (int64_t i = 0; i < 200; ++i) {
    if (outlier[static_cast<size_t>(i)] == static_cast<double>(i + 1)) continue;
    ++changed;
    EXPECT_NEAR(outlier[static_cast<size_t>(i)] - static_cast<double>(i + 1), 10 * std::sqrt(201.0 * 401 / 6), 1e-3);
    EXPECT_TRUE(std::isnan(nan[static_cast<size_t>(i)])) << "the NaN and the outlier hit the same interior element";
    EXPECT_GT(i, 0);
    EXPECT_LT(i, 199);
  }
  EXPECT_EQ(changed, 1);
}

// A backend right on random inputs and wrong on the structured ones (every input 0 or 1): only the
// structured test sees it, and its failure alone fails the verdict.
class WrongOnStructuredInputs final : public Backend {
 public:
  std::string name() const override { return "wrong-on-structured"; }
  Result<BackendRun> run(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                         const RunOptions& run) override {
    BOO_ASSIGN_OR_RETURN(BackendRun out, cpu_->run(sig, args, run));
    bool structured = true;
    for (const base::HostTensor& t : args)
      for (int64_t i = 0; i < t.spec().numel(); ++i) {
        const double v = t.load(base::offset_of_linear(t.spec(), i));
        structured &= v == 0.0 || v == 1.0;
      }
    if (structured) apply_result_fault(Fault::kShift, sig, 0, out.results[0]);
    return out;
  }

 private:
  std::unique_ptr<Backend> cpu_ = make_cpu_backend(1);
};

TEST(FaultBackendTest, AFailingStructuredTestFailsTheVerdict) {
  std::unique_ptr<OpSignature> sig = signature("convbfp16 -n 2 -c 8 -H 6 -W 5 -k 8 -y 3 -x 3 -p 1 -F 1");
  ASSERT_TRUE(sig);
  WrongOnStructuredInputs backend;
  const NumericsVerdict v = check_numerics(*sig, backend, nullptr, NumericsOptions{}, 10);
  EXPECT_TRUE(v.tolerance_ok && v.mean_ok && v.stddev_ok && v.nan_ok) << "random inputs are right";
  ASSERT_TRUE(v.structured_ok.has_value());
  EXPECT_FALSE(*v.structured_ok);
  EXPECT_FALSE(v.pass());
  EXPECT_EQ(v.failure_reasons(), "structured test");
}

TEST(FaultBackendTest, NamesAndErrors) {
  EXPECT_TRUE(is_faulty_backend_name("faulty:shift"));
  EXPECT_TRUE(is_faulty_backend_name("faulty:missing-bias"));
  EXPECT_FALSE(is_faulty_backend_name("faulty:wrong"));
  EXPECT_FALSE(is_faulty_backend_name("shift"));
  Result<std::unique_ptr<Backend>> bad = make_faulty_backend("faulty:wrong", 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown fault 'wrong'; accepted: shift, permute, missing-bias"),
            std::string::npos)
      << bad.status().message();
  // missing-bias on a signature without a bias says so instead of passing unchanged results.
  std::unique_ptr<OpSignature> sig = signature("t5layernorm -X 4x8 -F 1");
  ASSERT_TRUE(sig);
  Result<std::unique_ptr<Backend>> faulty = make_faulty_backend("faulty:missing-bias", 1);
  ASSERT_TRUE(faulty.ok());
  const NumericsVerdict v = check_numerics(*sig, **faulty, nullptr, NumericsOptions{}, 10);
  EXPECT_NE(v.error.find("has no bias argument"), std::string::npos) << v.error;
}

TEST(FaultBackendTest, TheEnvironmentPutsAFaultOnABackend) {
  std::unique_ptr<OpSignature> sig = signature("convbfp16 -n 1 -c 4 -H 6 -W 6 -k 4 -y 3 -x 3 -F 1");
  ASSERT_TRUE(sig);
  ::unsetenv(kTestFaultVariable);
  Result<std::unique_ptr<Backend>> plain = with_test_fault_from_environment(make_cpu_backend(1));
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(check_numerics(*sig, **plain, nullptr, NumericsOptions{}, 10).pass());
  ::setenv(kTestFaultVariable, "scale", 1);
  Result<std::unique_ptr<Backend>> scaled = with_test_fault_from_environment(make_cpu_backend(1));
  ::setenv(kTestFaultVariable, "sideways", 1);
  Result<std::unique_ptr<Backend>> unknown = with_test_fault_from_environment(make_cpu_backend(1));
  ::unsetenv(kTestFaultVariable);
  ASSERT_TRUE(scaled.ok());
  EXPECT_EQ((*scaled)->name(), "cpu");
  const NumericsVerdict v = check_numerics(*sig, **scaled, nullptr, NumericsOptions{}, 10);
  EXPECT_FALSE(v.pass());
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("BOO_TEST_FAULT: unknown fault 'sideways'"), std::string::npos)
      << unknown.status().message();
}

}  // namespace
}  // namespace boo::bench
