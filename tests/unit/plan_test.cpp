// boo tests: launch plans — tensor roles resolved once, parameter slots, and
// the checks that turn a planning bug into INTERNAL instead of a bad launch.
#include <gtest/gtest.h>

#include <cstddef>

#include "ops/plan.hpp"
#include "plan_util.hpp"

namespace boo::ops {
namespace {

struct TwoAddresses {
  unsigned long long first;
  long long size;
  unsigned long long second;
};

Plan one_step_plan() {
  Plan plan;
  plan.source = base::KernelSource{"t.cu", "", {"k"}};
  plan.workspace_bytes = 256;
  StepBuilder<TwoAddresses> step("k", {4, 1, 1}, {128, 1, 1});
  step.bind(step.params.first, TensorBinding{TensorBinding::Source::kArgument, 1, 0});
  step.bind(step.params.second, TensorBinding::workspace(128));
  step.params.size = 7;
  plan.steps.push_back(std::move(step).finish());
  return plan;
}

TEST(PlanTest, StepBuilderRecordsWhereEachAddressGoes) {
  const Plan plan = one_step_plan();
  const LaunchStep& s = plan.steps.at(0);
  ASSERT_EQ(s.params.size(), sizeof(TwoAddresses));
  ASSERT_EQ(s.addresses.size(), 2u);
  EXPECT_EQ(s.addresses[0].params_offset, offsetof(TwoAddresses, first));
  EXPECT_EQ(s.addresses[1].params_offset, offsetof(TwoAddresses, second));
  EXPECT_EQ(s.addresses[1].tensor.offset, 128u);
  TwoAddresses p;
  std::memcpy(&p, s.params.data(), sizeof p);
  EXPECT_EQ(p.size, 7);
  EXPECT_TRUE(plan.validate(2, 1).ok());
}

TEST(PlanTest, ValidateRejectsInconsistentPlans) {
  Plan bad_entry = one_step_plan();
  bad_entry.steps[0].entry = "missing";
  EXPECT_EQ(bad_entry.validate(2, 1).code(), StatusCode::kInternal);

  EXPECT_EQ(one_step_plan().validate(1, 1).code(), StatusCode::kInternal);  // argument 1 of 1

  Plan past_workspace = one_step_plan();
  past_workspace.workspace_bytes = 64;
  EXPECT_EQ(past_workspace.validate(2, 1).code(), StatusCode::kInternal);

  Plan slot_outside = one_step_plan();
  slot_outside.steps[0].addresses[0].params_offset = sizeof(TwoAddresses) - 4;
  EXPECT_EQ(slot_outside.validate(2, 1).code(), StatusCode::kInternal);

  Plan big_grid = one_step_plan();
  big_grid.steps[0].grid.y = 70000;
  EXPECT_EQ(big_grid.validate(2, 1).code(), StatusCode::kInternal);
}

TEST(PlanTest, UnknownRoleNamesAreInternalErrorsNamingWhatExists) {
  std::unique_ptr<OpProblem> problem = test::problem_of("convbfp16 -n 2 -c 8 -H 4 -W 4 -k 8 -y 1 -x 1 -F 1");
  ASSERT_TRUE(problem);
  const TensorRoles roles(problem->signature());
  EXPECT_TRUE(roles.argument("x").ok());
  EXPECT_TRUE(roles.result("y").ok());
  Result<TensorBinding> dx = roles.result("dx");
  ASSERT_FALSE(dx.ok());
  EXPECT_EQ(dx.status().code(), StatusCode::kInternal);
  EXPECT_NE(dx.status().message().find("it has: y"), std::string::npos) << dx.status().message();
  EXPECT_FALSE(roles.find("dy").has_value());
  EXPECT_TRUE(roles.find("w").has_value());
}

TEST(PlanTest, GridExtentsAreChecked) {
  EXPECT_EQ(*grid_extent(65535, 65535, "y"), 65535u);
  EXPECT_EQ(grid_extent(65536, 65535, "y").status().code(), StatusCode::kInternal);
  EXPECT_EQ(grid_extent(0, 65535, "y").status().code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace boo::ops
