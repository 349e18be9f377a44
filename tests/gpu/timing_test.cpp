// boo tests (label gpu): launch timing — CUPTI's kernel times agree with CUDA
// events, and a multi-kernel op's kernels are attributed to the launch that
// issued them. Each case is named by the driver command it times.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "bench/backend.hpp"
#include "bench/launch_timer.hpp"
#include "gpu_availability.hpp"
#include "boo/registry.hpp"
#include "boo/runtime.hpp"
#include "ops/op_definition.hpp"

namespace boo::bench {
namespace {

class TimingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RuntimeOptions o;
    o.cache_enabled = false;
    Result<std::unique_ptr<Runtime>> rt = Runtime::create(o);
    if (!rt.ok() && testing::skip_for_no_gpu(rt.status())) GTEST_SKIP() << "no GPU: " << rt.status().to_string();
    ASSERT_TRUE(rt.ok()) << "Runtime::create failed: " << rt.status().to_string();
    rt_ = std::move(*rt);
    Result<LaunchTimer*> cupti = cupti_timer();
    ASSERT_TRUE(cupti.ok()) << "CUPTI must load on the GPU machine: " << cupti.status().to_string();
  }

  // Runs `command` on the boo backend with the given timing.
  BackendRun run(const std::string& command, bool cupti, int64_t iterations) {
    Result<ParsedCommand> parsed = parse_command(std::string_view(command));
    EXPECT_TRUE(parsed.ok()) << parsed.status().to_string();
    const OpSignature& sig = *parsed->signature;
    Result<std::vector<base::HostTensor>> args =
        ops::find_op(sig.op_name())->make_arguments(sig, ops::InputOptions{1, {}});
    EXPECT_TRUE(args.ok());
    std::unique_ptr<Backend> boo = make_boo_backend(*rt_, TimingOptions{false, cupti});
    Result<BackendRun> r = boo->run(sig, *args, RunOptions{iterations, true});
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? std::move(*r) : BackendRun{};
  }

  static double per_launch_mean_us(const BackendRun& r) {
    double total = 0;
    for (const KernelTiming& k : r.kernels)
      for (double us : k.samples_us) total += us;
    return total / static_cast<double>(r.timed_launches);
  }

  std::unique_ptr<Runtime> rt_;
};

// A kernel of a few hundred microseconds: launch overheads are noise there,
// so CUPTI's kernel time and the event interval must agree. (These cases run
// alone: another process on the GPU skews whichever timer runs beside it.)
TEST_F(TimingTest, CuptiAgreesWithEvents_convfp16_n32_c256_H56_W56_k256_y3_x3_p1_q1_F1_NHWC) {
  const std::string command =
      "convfp16 -n 32 -c 256 -H 56 -W 56 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1 --in_layout NHWC --out_layout NHWC "
      "--fil_layout NHWC";
  // Interleaved, so a clock change during the test weighs on both timers alike.
  double events_us = 0, cupti_us = 0;
  for (int round = 0; round < 3; ++round) {
    const BackendRun by_events = run(command, false, 30);
    const BackendRun by_cupti = run(command, true, 30);
    ASSERT_EQ(by_events.timer, "cuda events");
    ASSERT_EQ(by_cupti.timer, "cupti");
    events_us += per_launch_mean_us(by_events) / 3;
    cupti_us += per_launch_mean_us(by_cupti) / 3;
  }
  ASSERT_GT(events_us, 100.0) << "the premise: a kernel longer than 100 us";
  EXPECT_NEAR(cupti_us / events_us, 1.0, 0.05) << "cupti " << cupti_us << " us, events " << events_us << " us";
}

// conv -F 0 computes y, dx and dw: one launch of the op issues one kernel per
// direction. Every timed launch must own exactly those kernels.
TEST_F(TimingTest, MultiKernelOpIsAttributedPerLaunch_conv_n2_c16_H10_W10_k16_y3_x3_p1_q1_F0) {
  const std::string command = "conv -n 2 -c 16 -H 10 -W 10 -k 16 -y 3 -x 3 -p 1 -q 1 -F 0";
  Result<ParsedCommand> parsed = parse_command(std::string_view(command));
  ASSERT_TRUE(parsed.ok());
  Result<std::shared_ptr<Launchable>> launchable = rt_->get_launchable(*parsed->signature);
  ASSERT_TRUE(launchable.ok()) << launchable.status().to_string();
  const size_t kernels_per_launch = (*launchable)->kernel_names().size();
  ASSERT_GE(kernels_per_launch, 3u) << "one kernel per direction";

  constexpr int64_t kLaunches = 9;
  const BackendRun r = run(command, true, kLaunches);
  ASSERT_EQ(r.timer, "cupti");
  std::map<int64_t, std::vector<const KernelRecord*>> by_launch;
  for (const KernelRecord& k : r.kernel_records) {
    if (k.name == "[memset]") continue;
    by_launch[k.launch].push_back(&k);
  }
  ASSERT_EQ(by_launch.size(), static_cast<size_t>(kLaunches));
  uint64_t previous_end = 0;
  for (const auto& [launch, kernels] : by_launch) {
    EXPECT_EQ(kernels.size(), kernels_per_launch) << "launch " << launch;
    // One stream: launch i's kernels all run after launch i-1's.
    uint64_t first_start = UINT64_MAX, last_end = 0;
    for (const KernelRecord* k : kernels) {
      first_start = std::min(first_start, k->start_ns);
      last_end = std::max(last_end, k->end_ns);
    }
    EXPECT_GE(first_start, previous_end) << "launch " << launch;
    previous_end = last_end;
  }
  // Per kernel name: one sample per launch and kernel of that name.
  int64_t samples = 0;
  for (const KernelTiming& k : r.kernels) {
    if (k.name == "[memset]") continue;
    EXPECT_EQ(k.samples_us.size() % kLaunches, 0u) << k.name;
    samples += static_cast<int64_t>(k.samples_us.size());
  }
  EXPECT_EQ(samples, kLaunches * static_cast<int64_t>(kernels_per_launch));
}

}  // namespace
}  // namespace boo::bench
