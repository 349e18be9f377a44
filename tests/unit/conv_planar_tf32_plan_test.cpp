// boo tests: gpu:conv:planar_tf32, planned on the host (no GPU): the fp32
// pointwise forwards of planar tensors it takes (one launch, the tensors bound
// where they lie, the GEMM and strides in its Cfg), the width its wave model
// picks, and what it leaves to the other tiers, with the reason.
#include <gtest/gtest.h>

#include "ops/conv/conv_planar_tf32_impl.hpp"
#include "ops/conv/device/conv_igemm_params.cuh"
#include "ops/op_definition.hpp"
#include "plan_util.hpp"

namespace boo::ops {
namespace {

using test::Planned;
using test::params_of;

const GpuImplementation& tier() { return conv::planar_tf32_implementation(); }

void expect_constants(const Planned& p, std::initializer_list<const char*> constants) {
  for (const char* constant : constants)
    EXPECT_NE(p.source.text.find(constant), std::string::npos) << constant << " in\n" << p.source.text;
}

std::string decline_of(const std::string& command) {
  std::unique_ptr<OpProblem> problem = test::problem_of(command);
  if (!problem) return "no problem";
  const Status s = tier().accepts(*problem, test::sm90());
  return s.ok() ? "accepts" : s.message();
}

TEST(ConvPlanarTf32PlanTest, ForwardIsOneGemmOverEveryImagesPixelsWithTheEpilogue) {
  // D (64 x 196 pixels = 12544, 64 channels) = x (12544 x 384) * w^T: 98 pixel tiles of one 128-wide channel tile,
  // bias, relu and a residual fused, full precision.
  const Planned p = test::plan_of(
      tier(), "conv -n 64 -c 384 -H 14 -W 14 -k 64 -y 1 -x 1 -F 1 -b 1 --activation relu --residual 1");
  ASSERT_EQ(p.launches.size(), 1u);
  EXPECT_EQ(p.config, "y: planar 3xtf32 gemm 12544x64x384 tile 128x128x32 stages 4");
  EXPECT_EQ(p.workspace_bytes, 0u);
  const test::ResolvedLaunch& l = p.launches[0];
  EXPECT_EQ(l.entry, "boo_planar_tf32_y");
  EXPECT_EQ(l.grid.x, 98u);
  EXPECT_EQ(l.block.x, 384u);
  const auto params = params_of<ConvIgemmParams>(l);
  EXPECT_EQ(params.a, p.address.at("x"));
  EXPECT_EQ(params.w, p.address.at("w"));
  EXPECT_EQ(params.out, p.address.at("y"));
  EXPECT_EQ(params.bias, p.address.at("b"));
  EXPECT_EQ(params.residual, p.address.at("z"));
  EXPECT_NE(p.source.text.find("#include \"boo/conv/conv_planar_tf32.cuh\""), std::string::npos);
  expect_constants(p, {"kM = 12544;", "kN = 64;", "kK = 384;", "kHW = 196;", "XN = 75264;", "XC = 196;", "YN = 12544;",
                       "YC = 196;", "WK = 384;", "BN = 128;", "kVecX = true;", "kPairs = true;",
                       "kBias = true;", "kResidual = true;", "kAct = 1;"});
}

TEST(ConvPlanarTf32PlanTest, OddImagesCopyAndStoreElementsOneAtATime) {
  // 49 pixels an image: neither 16-byte copies of x nor pixel pairs of y stay within a channel.
  const Planned p = test::plan_of(tier(), "conv -n 3 -c 44 -H 7 -W 7 -k 72 -y 1 -x 1 -F 1");
  EXPECT_EQ(p.config.rfind("y: planar 3xtf32 gemm 147x72x44 ", 0), 0u) << p.config;
  expect_constants(p, {"kVecX = false;", "kPairs = false;", "kBias = false;", "kResidual = false;"});
}

TEST(ConvPlanarTf32PlanTest, StridedConvsReadTheirInputPixelsOneAtATime) {
  // ResNet-50's downsampling 1x1 (stride 2): output pixel (h, w) reads x's (2h, 2w); 32 x 28 x 28 = 25088 pixels.
  const Planned p = test::plan_of(tier(), "conv -n 32 -c 256 -H 56 -W 56 -k 512 -y 1 -x 1 -u 2 -v 2 -F 1");
  EXPECT_EQ(p.config.rfind("y: planar 3xtf32 gemm 25088x512x256 ", 0), 0u) << p.config;
  expect_constants(p, {"kHW = 784;", "kOHW = 784;", "kOW = 28;", "XN = 802816;", "XC = 3136;",
                       "XH = 112;", "XW = 2;", "YN = 401408;", "YC = 784;", "kVecX = false;", "kPairs = true;"});
}

TEST(ConvPlanarTf32PlanTest, NarrowTilesWhereWideOnesLeaveSmsIdle) {
  // 3136 pixels x 160 channels: 25 pixel tiles; 50 tiles of 96 would leave 82 SMs idle, 125 of 32 fill them.
  EXPECT_EQ(test::plan_of(tier(), "conv -n 64 -c 576 -H 7 -W 7 -k 160 -y 1 -x 1 -F 1").config,
            "y: planar 3xtf32 gemm 3136x160x576 tile 128x32x32 stages 4");
  // 49 pixel tiles x 2 of 128 channels is one wave already.
  EXPECT_EQ(test::plan_of(tier(), "conv -n 32 -c 1024 -H 14 -W 14 -k 256 -y 1 -x 1 -F 1").config,
            "y: planar 3xtf32 gemm 6272x256x1024 tile 128x128x32 stages 4");
}

TEST(ConvPlanarTf32PlanTest, DeclinesWhatItCannotReadInPlaceWithTheReason) {
  EXPECT_EQ(decline_of("convbfp16 -n 4 -c 64 -H 8 -W 8 -k 64 -y 1 -x 1 -F 1"),
            "gpu:conv:planar_tf32 takes fp32 only, not bfloat16");
  EXPECT_NE(decline_of("conv -n 4 -c 64 -H 8 -W 8 -k 64 -y 1 -x 1 -F 2").find("the forward face alone"),
            std::string::npos);
  EXPECT_NE(decline_of("conv -n 4 -c 64 -H 8 -W 8 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1").find("1x1 convs"),
            std::string::npos);
  EXPECT_NE(decline_of("conv -n 4 -c 64 -H 8 -W 8 -k 64 -y 1 -x 1 -p 1 -q 1 -F 1").find("without padding"),
            std::string::npos);
  EXPECT_NE(decline_of("conv -n 4 -c 64 -H 8 -W 8 -k 64 -y 1 -x 1 -g 2 -F 1").find("groups 1"), std::string::npos);
  EXPECT_EQ(decline_of("conv -n 4 -c 64 -H 8 -W 8 -k 64 -y 1 -x 1 -F 1 --fp32-math tf32"),
            "gpu:conv:planar_tf32 takes full-precision fp32 only; --fp32-math tf32 runs on gpu:conv:implicit_gemm's "
            "TF32 mma.sync");
  EXPECT_EQ(decline_of("conv -n 4 -c 30 -H 8 -W 8 -k 64 -y 1 -x 1 -F 1"),
            "gpu:conv:planar_tf32 takes input channels that are a multiple of 4, not 30");
  EXPECT_NE(decline_of("conv -n 4 -c 64 -H 8 -W 8 -k 64 -y 1 -x 1 -F 1 --in_layout NHWC --fil_layout NHWC "
                       "--out_layout NHWC")
                .find("channels' pixels are contiguous"),
            std::string::npos);
  // The filter channels-last: its input channels are contiguous still, its rows of 64 16-byte aligned.
  EXPECT_EQ(decline_of("conv -n 4 -c 64 -H 8 -W 8 -k 64 -y 1 -x 1 -F 1 --fil_layout NHWC"), "accepts");
}

}  // namespace
}  // namespace boo::ops
