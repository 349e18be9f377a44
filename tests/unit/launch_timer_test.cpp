// boo tests: how many input copies timed launches rotate through.
#include <gtest/gtest.h>

#include "bench/launch_timer.hpp"

namespace boo::bench {
namespace {

constexpr int64_t kL2 = 50 << 20;  // H100's 50 MiB
constexpr size_t kBudget = size_t{1} << 30;

TEST(InputRotationTest, SpansTwiceTheL2) {
  EXPECT_EQ(input_rotation_count(25 << 20, kL2, false, kBudget), 4);  // 4 x 25 MiB = 2 x L2
  EXPECT_EQ(input_rotation_count(30 << 20, kL2, false, kBudget), 4);  // rounded up
  EXPECT_EQ(input_rotation_count(100 << 20, kL2, false, kBudget), 1);  // the inputs alone evict L2
}

TEST(InputRotationTest, CappedAtEightCopiesAndByTheMemoryBudget) {
  EXPECT_EQ(input_rotation_count(1 << 10, kL2, false, kBudget), 8);
  EXPECT_EQ(input_rotation_count(20 << 20, kL2, false, 50 << 20), 2);  // 5 wanted, 2 fit
  EXPECT_EQ(input_rotation_count(20 << 20, kL2, false, 1 << 20), 1);   // never fewer than one
}

TEST(InputRotationTest, OneCopyWhenL2IsFlushedOrUnknown) {
  EXPECT_EQ(input_rotation_count(1 << 20, kL2, true, kBudget), 1);
  EXPECT_EQ(input_rotation_count(1 << 20, 0, false, kBudget), 1);
  EXPECT_EQ(input_rotation_count(0, kL2, false, kBudget), 1);
}

TEST(MinTimeTest, LaunchesSizedByTheirDuration) {
  // 100 us launches for 0.5 s: 1250 warm-up (a quarter), 5000 timed.
  LaunchCounts c = launch_counts_for_min_time(100, 0.5, 4);
  EXPECT_EQ(c.warmup, 1250);
  EXPECT_EQ(c.timed, 5000);
  // A 40 ms launch for 0.1 s: 3 timed (rounded up), warm-up at least every input copy.
  c = launch_counts_for_min_time(40000, 0.1, 2);
  EXPECT_EQ(c.timed, 3);
  EXPECT_EQ(c.warmup, 2);
}

TEST(MinTimeTest, BoundedBothWays) {
  // A second-long launch still gets a spread; a nanosecond one stops at the cap.
  EXPECT_EQ(launch_counts_for_min_time(1e6, 0.1, 1).timed, kFewestSizedLaunches);
  EXPECT_EQ(launch_counts_for_min_time(1e6, 0.1, 8).warmup, 8);
  EXPECT_EQ(launch_counts_for_min_time(1e-3, 10, 1).timed, kMostSizedLaunches);
  EXPECT_EQ(launch_counts_for_min_time(0, 10, 1).warmup, kMostSizedLaunches);
}

}  // namespace
}  // namespace boo::bench
