// boo tests: the numbers of --verify-numerics verdicts, pinned. The check's
// host work is made faster (inputs made elsewhere, results of the timed run
// reused, typed loops over dense tensors); none of that may move a verdict by
// a bit. Each case runs check_numerics on the CPU and compares every statistic
// (exactly, as %a), every flag, the reference's description and every note
// with the values the straightforward implementation produced.
#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "bench/fault_backend.hpp"
#include "bench/numerics.hpp"
#include "bench/numerics_check.hpp"
#include "boo/registry.hpp"
#include "ops/input_generation.hpp"
#include "ops/op_registry.hpp"

namespace boo::bench {
namespace {

// A backend whose results do not depend on the inputs (seeded values in [-1, 1)): cheap at any
// size, so the sampled reference path (above VerifyOptions::full_reference_flops) runs in a unit test.
class PatternBackend final : public Backend {
 public:
  explicit PatternBackend(uint64_t seed) : seed_(seed) {}
  std::string name() const override { return "pattern"; }
  Result<BackendRun> run(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                         const RunOptions&) override {
    BackendRun out;
    for (TensorSpec& spec : sig.results()) {
      base::HostTensor t(std::move(spec));
      ops::fill_uniform(t, seed_, ops::input_stream(t.spec().name));
      out.results.push_back(std::move(t));
    }
    out.device = "cpu";
    out.implementation = "pattern (" + std::to_string(args.size()) + " arguments)";
    return out;
  }

 private:
  uint64_t seed_;
};

std::string stats_text(const char* label, const ErrorStats& s) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s mean=%a stddev=%a max=%a n=%lld\n", label, s.mean, s.stddev, s.max_abs,
                static_cast<long long>(s.samples));
  return buf;
}

// Everything a verdict says, as text.
std::string verdict_text(const NumericsVerdict& v) {
  std::string out = stats_text("boo", v.boo) + stats_text("vendor", v.vendor) + stats_text("diff", v.diff);
  out += std::string("flags mean=") + (v.mean_ok ? "1" : "0") + " stddev=" + (v.stddev_ok ? "1" : "0") +
         " nan=" + (v.nan_ok ? "1" : "0") + " tolerance=" + (v.tolerance_ok ? "1" : "0") +
         " structured=" + (!v.structured_ok ? "-" : *v.structured_ok ? "1" : "0") + "\n";
  out += "reference " + v.reference + "\n";
  for (const std::string& n : v.notes) out += "note " + n + "\n";
  if (!v.error.empty()) out += "error " + v.error + "\n";
  return out;
}

std::unique_ptr<OpSignature> signature(const std::string& command) {
  Result<ParsedCommand> parsed = parse_command(command);
  EXPECT_TRUE(parsed.ok()) << command << ": " << parsed.status().to_string();
  return parsed.ok() ? std::move(parsed->signature) : nullptr;
}

std::unique_ptr<Backend> faulty(const char* name) {
  Result<std::unique_ptr<Backend>> b = make_faulty_backend(name, 1);
  EXPECT_TRUE(b.ok()) << b.status().to_string();
  return b.ok() ? std::move(*b) : nullptr;
}

struct PinCase {
  const char* command;
  const char* candidate;  // "cpu", "pattern" (seed 77), "pattern2" (seed 78) or a faulty backend's name
  const char* vendor;     // the same, or "" for none
  const char* expected;
};

std::unique_ptr<Backend> backend(const std::string& name) {
  if (name == "cpu") return make_cpu_backend(1);
  if (name == "pattern") return std::make_unique<PatternBackend>(77);
  if (name == "pattern2") return std::make_unique<PatternBackend>(78);
  return faulty(name.c_str());
}

const PinCase kCases[] = {
    // Every element whole, a vendor whose spread differs (scaled), channels-last bf16.
    {"convbfp16 -n 2 -c 8 -H 6 -W 5 -k 8 -y 3 -x 3 -p 1 -F 1 --in_layout NHWC --out_layout NHWC --fil_layout NHWC",
     "cpu", "faulty:scale",
     "boo mean=0x1.631858758e38ep-12 stddev=0x1.1cb67ba2ff56bp-8 max=0x1.fe7ap-7 n=1152\n"
     "vendor mean=0x1.85b348ac8e38ep-11 stddev=0x1.57a0eaa9378b2p-6 max=0x1.379f4p-4 n=1152\n"
     "diff mean=-0x1.a84e38e38e38ep-12 stddev=0x1.4dd53bc0cd7dap-6 max=0x1p-4 n=1152\n"
     "flags mean=1 stddev=1 nan=1 tolerance=1 structured=1\n"
     "reference cpu:conv:reference (whole results)\n"},
    // A 4-element weight gradient: 32 batches, the spread bounded by the tolerance.
    {"convbfp16 -n 16 -c 2 -H 24 -W 16 -k 2 -y 1 -x 1 -F 4 --in_layout NHWC --out_layout NHWC --fil_layout NHWC",
     "cpu", "",
     "boo mean=0x1.2f19a27ebp-8 stddev=0x1.89c2af3cf0c0ap-5 max=0x1.e832ad38p-3 n=128\n"
     "vendor mean=0x0p+0 stddev=0x0p+0 max=0x0p+0 n=0\n"
     "diff mean=0x0p+0 stddev=0x0p+0 max=0x0p+0 n=0\n"
     "flags mean=1 stddev=1 nan=1 tolerance=1 structured=1\n"
     "reference cpu:conv:reference (whole results)\n"
     "note no vendor result: the spread is bounded by the documented tolerance 1.067678e-01\n"
     "note only 128 samples after 32 batches (the output is small)\n"},
    // A failing candidate (every result one element late), fp16 data gradient, grouped.
    {"convfp16 -n 2 -c 8 -H 6 -W 5 -k 8 -y 3 -x 3 -p 1 -g 2 -F 2", "faulty:shift", "cpu",
     "boo mean=-0x1.141257d27d27dp-19 stddev=0x1.1561e91064f9fp+1 max=0x1.e6a70e28p+2 n=1440\n"
     "vendor mean=-0x1.141257d27d27dp-19 stddev=0x1.53fd513dee079p-12 max=0x1.ff254p-10 n=1440\n"
     "diff mean=0x0p+0 stddev=0x1.1561f8cda8d11p+1 max=0x1.e6cp+2 n=1440\n"
     "flags mean=1 stddev=0 nan=1 tolerance=0 structured=0\n"
     "reference cpu:conv:reference (whole results)\n"
     "note over the per-element tolerance: dx: max |err| 7.60e+00, rel L2 1.48e+00, rtol 4.91e-04, 480 of 480 over (worst at logical index 467: 4.75 vs 0.0515417)\n"
     "note structured test: dx: max |err| 6.00e+00, rel L2 4.64e-01, rtol 4.91e-04, 106 of 480 over (worst at logical index 120: 4 vs 0)\n"},
    // Above the whole-reference threshold: sampled reference, results independent of inputs.
    {"conv -n 10 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1", "pattern", "pattern2",
     "boo mean=0x1.e9a6b78f3af0bp-4 stddev=0x1.e308574d7dbe2p+2 max=0x1.0b94afbd7b264p+5 n=1020\n"
     "vendor mean=0x1.cfd7a645f1a7p-4 stddev=0x1.e3841cff265cfp+2 max=0x1.0953b29d7b264p+5 n=1020\n"
     "diff mean=0x1.9cf1149494949p-8 stddev=0x1.a1a052b0f65a4p-1 max=0x1.f24c54p+0 n=1020\n"
     "flags mean=1 stddev=1 nan=1 tolerance=0 structured=0\n"
     "reference cpu:conv:reference (y at 4086 of 2007040 positions)\n"
     "note per-element tolerance of y checked at 4086 of 2007040 positions (seed 10: --seed draws others)\n"
     "note over the per-element tolerance: y: max |err| 2.82e+01, rel L2 1.00e+00, rtol 1.15e-05, 4086 of 4086 sampled (of 2007040, seed 10) over (worst at logical index 354583: 0.838772 vs -27.3424)\n"
     "note structured test: y: max |err| 1.00e+00, rel L2 3.70e+01, rtol 1.15e-05, 4086 of 4086 sampled (of 2007040, seed 10) over (worst at logical index 0: 0.704542 vs 0)\n"},
    // Norms: several results, cancellation (RMS norm's dx), small outputs in many batches.
    {"t5layernormbfp16 -X 3x1 -m 5 -F 2", "cpu", "",
     "boo mean=0x1.8f72a009fc714p-18 stddev=0x1.a2c69e0ff3b02p-15 max=0x1.f5a58b1d482p-12 n=96\n"
     "vendor mean=0x0p+0 stddev=0x0p+0 max=0x0p+0 n=0\n"
     "diff mean=0x0p+0 stddev=0x0p+0 max=0x0p+0 n=0\n"
     "flags mean=1 stddev=1 nan=1 tolerance=1 structured=1\n"
     "reference cpu:rmsnorm:reference (whole results)\n"
     "note no vendor result: the spread is bounded by the documented tolerance 7.915873e-05\n"
     "note only 96 samples after 32 batches (the output is small)\n"},
    {"layernorm -X 16x48 -o 1 -m 1 -F 14", "cpu", "faulty:outlier",
     "boo mean=-0x1.22c988e3262abp-32 stddev=0x1.ef256a12ab492p-27 max=0x1.f749684p-25 n=1536\n"
     "vendor mean=0x1.d8171a9d36774p-8 stddev=0x1.98ce24b78dafp-3 max=0x1.69bf985ed8994p+2 n=1536\n"
     "diff mean=-0x1.d8171bcp-8 stddev=0x1.98ce24b941139p-3 max=0x1.69bf986p+2 n=1536\n"
     "flags mean=1 stddev=1 nan=1 tolerance=1 structured=1\n"
     "reference cpu:layernorm:reference (whole results)\n"},
};

TEST(NumericsPinTest, VerdictsKeepEveryNumber) {
  for (const PinCase& c : kCases) {
    std::unique_ptr<OpSignature> sig = signature(c.command);
    ASSERT_TRUE(sig);
    std::unique_ptr<Backend> candidate = backend(c.candidate);
    std::unique_ptr<Backend> vendor = *c.vendor ? backend(c.vendor) : nullptr;
    ASSERT_TRUE(candidate);
    const NumericsVerdict v = check_numerics(*sig, *candidate, vendor.get(), NumericsOptions{}, 10);
    EXPECT_EQ(verdict_text(v), c.expected) << c.command;
  }
}

// The driver's shortcuts give the same verdicts: the first batch's inputs and results handed over
// (as the timed run computed them), the other batches' inputs from a given maker, which the
// check calls once per batch after the first.
TEST(NumericsPinTest, FirstBatchAndInputMakerKeepEveryNumber) {
  for (const PinCase& c : kCases) {
    std::unique_ptr<OpSignature> sig = signature(c.command);
    ASSERT_TRUE(sig);
    std::unique_ptr<Backend> candidate = backend(c.candidate);
    std::unique_ptr<Backend> vendor = *c.vendor ? backend(c.vendor) : nullptr;
    ASSERT_TRUE(candidate);
    const ops::OpDefinition* op = ops::find_op(sig->op_name());
    Result<std::vector<base::HostTensor>> args = op->make_arguments(*sig, ops::InputOptions{10, {}});
    ASSERT_TRUE(args.ok());
    Result<BackendRun> timed = candidate->run(*sig, *args, RunOptions{1, true});
    ASSERT_TRUE(timed.ok());
    std::optional<BackendRun> vendor_timed;
    if (vendor) {
      Result<BackendRun> v = vendor->run(*sig, *args, RunOptions{1, true});
      ASSERT_TRUE(v.ok());
      vendor_timed = std::move(*v);
    }
    std::vector<uint64_t> seeds;
    NumericsSeconds seconds;
    CheckContext context;
    context.make_arguments = [&](const OpSignature& s, const ops::InputOptions& options) {
      seeds.push_back(options.seed);
      return op->make_arguments(s, options);
    };
    context.first_batch = FirstBatch{&*args, &timed->results, vendor_timed ? &vendor_timed->results : nullptr};
    context.seconds = &seconds;
    const NumericsVerdict v = check_numerics(*sig, *candidate, vendor.get(), NumericsOptions{}, 10, nullptr, context);
    EXPECT_EQ(verdict_text(v), c.expected) << c.command;
    for (size_t i = 0; i < seeds.size(); ++i) EXPECT_EQ(seeds[i], 11 + i) << c.command;
    EXPECT_GT(seconds.reference + seconds.checks, 0) << c.command;
  }
}

}  // namespace
}  // namespace boo::bench
