// boo tests: the norm tiers' plans on the host — every tensor bound by role in
// each kernel's parameter block, the statistics a forward writes read back by
// the backward of the same command, permuted inputs on the simple tier only.
#include <gtest/gtest.h>

#include "ops/norm/device/norm_simple_params.cuh"
#include "ops/norm/device/row_norm_params.cuh"
#include "plan_util.hpp"

namespace boo::ops {
namespace {

using test::params_of;
using test::plan_of;
using test::Planned;

const GpuImplementation& tier(const char* op, size_t index) { return *find_op(op)->gpu_implementations()[index]; }
const GpuImplementation& layer_rows() { return tier("layernorm", 0); }
const GpuImplementation& layer_simple() { return tier("layernorm", 1); }
const GpuImplementation& rms_rows() { return tier("rmsnorm", 0); }
const GpuImplementation& rms_simple() { return tier("rmsnorm", 1); }

TEST(NormPlanTest, RowTierBindsEveryTensorOfLayerNormsFullBackward) {
  const Planned p = plan_of(layer_rows(), "layernormbfp16 -X 64x768 -o 1 -m 1 -F 14");
  ASSERT_EQ(p.entries, (std::vector<std::string>{"boo_row_norm_backward", "boo_row_norm_finalize"}));
  EXPECT_GT(p.workspace_bytes, 0u);
  for (const test::ResolvedLaunch& l : p.launches) {
    SCOPED_TRACE(l.entry);
    const auto params = params_of<RowNormParams>(l);
    EXPECT_EQ(params.dy, p.address.at("dy"));
    EXPECT_EQ(params.x, p.address.at("x"));
    EXPECT_EQ(params.weight, p.address.at("weight"));
    EXPECT_EQ(params.mean, p.address.at("mean"));
    EXPECT_EQ(params.rstd, p.address.at("rstd"));
    EXPECT_EQ(params.dx, p.address.at("dx"));
    EXPECT_EQ(params.dweight, p.address.at("dweight"));
    EXPECT_EQ(params.dbias, p.address.at("dbias"));
    EXPECT_EQ(params.partials, p.workspace);
    EXPECT_EQ(params.y, 0u);     // not in the signature
    EXPECT_EQ(params.bias, 0u);  // the backward does not read it
    EXPECT_EQ(params.rows, 64);
    EXPECT_FLOAT_EQ(params.eps, 1e-5f);
  }
}

// RMS norm's -F 0: the backward reads the rstd the forward writes (a result).
TEST(NormPlanTest, RmsForwardAndBackwardShareTheComputedRstd) {
  for (const GpuImplementation* impl : {&rms_rows(), &rms_simple()}) {
    SCOPED_TRACE(impl->name());
    const Planned p = plan_of(*impl, "t5layernorm -X 8x32 -m 5 -F 0");
    ASSERT_GE(p.launches.size(), 2u);
    for (const test::ResolvedLaunch& l : p.launches) {
      SCOPED_TRACE(l.entry);
      const uint64_t rstd = impl == &rms_rows() ? params_of<RowNormParams>(l).rstd : params_of<RmsNormParams>(l).rstd;
      EXPECT_EQ(rstd, p.address.at("rstd"));
    }
  }
}

TEST(NormPlanTest, PermutedInputRunsOnTheSimpleTierWithItsStrides) {
  const std::string command = "layernorm -X 4x6x8 -o 2 -m 1 -F 1 --input-permutation 2 0 1";
  EXPECT_FALSE(test::accepts(layer_rows(), command));
  const Planned p = plan_of(layer_simple(), command);
  ASSERT_EQ(p.entries, (std::vector<std::string>{"boo_layernorm_forward"}));
  const auto params = params_of<LayerNormParams>(p.launches.at(0));
  EXPECT_EQ(params.rank, 3);
  EXPECT_EQ(params.rows, 24);
  EXPECT_EQ(params.cols, 8);
  // Memory order 2, 0, 1: dim 2 outermost (stride 24), then dim 0 (6), dim 1 (1).
  EXPECT_EQ((std::vector<long long>(params.x_strides, params.x_strides + 3)), (std::vector<long long>{6, 1, 24}));
  EXPECT_EQ(params.x, p.address.at("x"));
  EXPECT_EQ(params.bias, p.address.at("bias"));
  EXPECT_EQ(params.mean, p.address.at("mean"));
  EXPECT_EQ(params.y, p.address.at("y"));
}

// Each tier instance runs its own op's problems only.
TEST(NormPlanTest, TiersDeclineTheOtherKind) {
  std::unique_ptr<OpProblem> rms = test::problem_of("t5layernorm -X 8x32 -m 5 -F 1");
  ASSERT_TRUE(rms);
  EXPECT_FALSE(layer_rows().accepts(*rms, test::sm90()).ok());
  EXPECT_FALSE(layer_simple().accepts(*rms, test::sm90()).ok());
  EXPECT_TRUE(rms_rows().accepts(*rms, test::sm90()).ok());
}

}  // namespace
}  // namespace boo::ops
