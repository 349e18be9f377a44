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

}  // namespace
}  // namespace boo::bench
