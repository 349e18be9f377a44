// boo tests: the residual epilogue (--residual 1: y = act(conv(x, w) + bias + z)),
// planned on the host (no GPU). Each tier either binds z where the epilogue
// reads it (z itself where y is written in place, z's staged copy where y is
// written to a dense copy, since the epilogue reads z at y's offsets) or
// declines with a reason; the float64 GPU reference binds z with its strides.
#include <gtest/gtest.h>

#include "ops/conv/device/conv_direct_params.cuh"
#include "ops/conv/device/conv_igemm_params.cuh"
#include "ops/conv/device/conv_ref_params.cuh"
#include "ops/gpu_reference.hpp"
#include "plan_util.hpp"

namespace boo::ops {
namespace {

using test::Planned;
using test::params_of;

const std::string kNhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";

const GpuImplementation& tier(std::string_view name) {
  for (const GpuImplementation* impl : find_op("conv")->gpu_implementations())
    if (impl->name() == name) return *impl;
  ADD_FAILURE() << "no conv tier " << name;
  return *find_op("conv")->gpu_implementations().back();
}

// Why `impl` declines `command` on sm_90a ("" where it accepts).
std::string decline_of(const GpuImplementation& impl, const std::string& command) {
  std::unique_ptr<OpProblem> problem = test::problem_of(command);
  if (!problem) return "no problem";
  const Status s = impl.accepts(*problem, test::sm90());
  return s.ok() ? "" : s.message();
}

bool in_workspace(const Planned& p, uint64_t address) {
  return address >= p.workspace && address < p.workspace + p.workspace_bytes;
}

// The launches of entries starting with `prefix`.
std::vector<size_t> launches_of(const Planned& p, const std::string& prefix) {
  std::vector<size_t> out;
  for (size_t i = 0; i < p.entries.size(); ++i)
    if (p.entries[i].rfind(prefix, 0) == 0) out.push_back(i);
  return out;
}

TEST(ConvResidualPlanTest, TiersWithoutTheEpilogueDeclineAndSayWho) {
  // A memory-bound NCHW pointwise conv (gpu:conv:pointwise's), a depthwise one (gpu:conv:depthwise's),
  // a strict fp32 one gpu:conv:fp32_bf16x6 takes without the residual.
  const std::string pointwise = "convbfp16 -n 64 -c 32 -H 56 -W 56 -k 16 -y 1 -x 1 -F 1 -b 1";
  const std::string depthwise = "convbfp16 -n 8 -c 64 -H 28 -W 28 -k 64 -y 3 -x 3 -p 1 -q 1 -g 64 -F 1";
  const std::string fp32 = "conv -n 32 -c 256 -H 28 -W 28 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1" + kNhwc;
  ASSERT_EQ(decline_of(tier("gpu:conv:pointwise"), pointwise), "");
  ASSERT_EQ(decline_of(tier("gpu:conv:depthwise"), depthwise), "");
  ASSERT_EQ(decline_of(tier("gpu:conv:fp32_bf16x6"), fp32), "");
  EXPECT_NE(decline_of(tier("gpu:conv:pointwise"), pointwise + " --residual 1").find("no residual epilogue"),
            std::string::npos);
  EXPECT_NE(decline_of(tier("gpu:conv:depthwise"), depthwise + " --residual 1").find("no residual epilogue"),
            std::string::npos);
  EXPECT_NE(decline_of(tier("gpu:conv:fp32_bf16x6"), fp32 + " --residual 1").find("without a residual"),
            std::string::npos);
  // Every one of them still has a tier: the implicit GEMM or, for the depthwise conv, the direct one.
  EXPECT_EQ(decline_of(tier("gpu:conv:implicit_gemm"), pointwise + " --residual 1"), "");
  EXPECT_EQ(decline_of(tier("gpu:conv:implicit_gemm"), fp32 + " --residual 1"), "");
  EXPECT_EQ(decline_of(tier("gpu:conv:direct"), depthwise + " --residual 1"), "");
}

TEST(ConvResidualPlanTest, ImplicitGemmReadsZWhereItWritesY) {
  // Channels-last y: the GEMM writes y in place and reads z itself.
  const std::string geometry = "convbfp16 -n 2 -c 16 -H 9 -W 9 -k 32 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 --activation relu";
  const Planned nhwc = test::plan_of(tier("gpu:conv:implicit_gemm"), geometry + " --residual 1" + kNhwc);
  const std::vector<size_t> gemms = launches_of(nhwc, "boo_igemm_y");
  ASSERT_EQ(gemms.size(), 1u);
  const auto g = params_of<ConvIgemmParams>(nhwc.launches[gemms[0]]);
  EXPECT_EQ(g.out, nhwc.address.at("y"));
  EXPECT_EQ(g.residual, nhwc.address.at("z"));
  EXPECT_EQ(g.bias, nhwc.address.at("b"));
  EXPECT_NE(nhwc.source.text.find("kResidual = true"), std::string::npos);
  EXPECT_EQ(nhwc.config.find("stage_z"), std::string::npos) << nhwc.config;

  // NCHW y: written to a dense copy and copied out; z is staged into a copy of the same geometry first.
  const Planned nchw = test::plan_of(tier("gpu:conv:implicit_gemm"), geometry + " --residual 1");
  const std::vector<size_t> stage_z = launches_of(nchw, "boo_conv_stage_z");
  const std::vector<size_t> gemm = launches_of(nchw, "boo_igemm_y");
  const std::vector<size_t> unstage_y = launches_of(nchw, "boo_conv_unstage_y");
  ASSERT_EQ(stage_z.size(), 1u);
  ASSERT_EQ(gemm.size(), 1u);
  ASSERT_EQ(unstage_y.size(), 1u);
  EXPECT_LT(stage_z[0], gemm[0]);
  EXPECT_LT(gemm[0], unstage_y[0]);
  const auto copy_z = params_of<ConvChannelPadParams>(nchw.launches[stage_z[0]]);
  const auto copy_y = params_of<ConvChannelPadParams>(nchw.launches[unstage_y[0]]);
  const auto gy = params_of<ConvIgemmParams>(nchw.launches[gemm[0]]);
  EXPECT_EQ(copy_z.strided, nchw.address.at("z"));
  EXPECT_EQ(copy_y.strided, nchw.address.at("y"));
  EXPECT_EQ(gy.residual, copy_z.dense);
  EXPECT_EQ(gy.out, copy_y.dense);
  EXPECT_TRUE(in_workspace(nchw, gy.residual));
  EXPECT_NE(gy.residual, gy.out);
  EXPECT_EQ(copy_z.padded_channels, copy_y.padded_channels);

  // The same conv without the residual binds none and says so at compile time.
  const Planned plain = test::plan_of(tier("gpu:conv:implicit_gemm"), geometry + kNhwc);
  EXPECT_EQ(params_of<ConvIgemmParams>(plain.launches[launches_of(plain, "boo_igemm_y")[0]]).residual, 0u);
  EXPECT_NE(plain.source.text.find("kResidual = false"), std::string::npos);
}

TEST(ConvResidualPlanTest, SplitKReduceAndStridePhasesCarryTheResidual) {
  // Few tiles over a long reduction: split K, whose reduce applies the epilogue with z.
  const Planned split = test::plan_of(tier("gpu:conv:implicit_gemm"),
                                      "convbfp16 -n 1 -c 2048 -H 7 -W 7 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1 --residual 1" + kNhwc);
  const std::vector<size_t> reduce = launches_of(split, "boo_igemm_y_reduce");
  ASSERT_EQ(reduce.size(), 1u) << split.config;
  EXPECT_EQ(params_of<ConvIgemmParams>(split.launches[reduce[0]]).residual, split.address.at("z"));
  // A strided transposed conv's forward: the data face by stride phases, each GEMM's epilogue reading z.
  const Planned phases = test::plan_of(
      tier("gpu:conv:implicit_gemm"),
      "convfp16 -m trans -n 2 -c 16 -H 6 -W 6 -k 16 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -Y 1 -X 1 -F 1 --residual 1" + kNhwc);
  const std::vector<size_t> gemms = launches_of(phases, "boo_igemm_y_p");
  ASSERT_EQ(gemms.size(), 4u) << phases.config;
  for (size_t i : gemms) EXPECT_EQ(params_of<ConvIgemmParams>(phases.launches[i]).residual, phases.address.at("z"));
}

TEST(ConvResidualPlanTest, HopperTierBindsZAndLeavesTheNativeNchwPath) {
  const GpuImplementation& hopper = tier("gpu:conv:wgmma_sm90");
  const std::string resnet = "convbfp16 -n 128 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1 --residual 1 "
                             "--activation relu";
  const Planned nhwc = test::plan_of(hopper, resnet + kNhwc);
  ASSERT_EQ(nhwc.entries.size(), 1u) << nhwc.config;
  const auto g = params_of<ConvIgemmParams>(nhwc.launches[0]);
  EXPECT_EQ(g.residual, nhwc.address.at("z"));
  EXPECT_EQ(g.out, nhwc.address.at("y"));
  EXPECT_NE(nhwc.source.text.find("kResidual = true"), std::string::npos);
  // NCHW: x, w and z staged, y copied out; z's copy is the one the epilogue reads.
  const Planned nchw = test::plan_of(hopper, resnet);
  const std::vector<size_t> stage_z = launches_of(nchw, "boo_conv_stage_z");
  const std::vector<size_t> conv = launches_of(nchw, "boo_wgmma_y");
  ASSERT_EQ(stage_z.size(), 1u) << nchw.config;
  ASSERT_EQ(conv.size(), 1u);
  EXPECT_EQ(params_of<ConvIgemmParams>(nchw.launches[conv[0]]).residual,
            params_of<ConvChannelPadParams>(nchw.launches[stage_z[0]]).dense);
  // An NCHW 1x1 conv the tier would read natively is staged instead, and the config says why.
  const std::string pointwise = "convfp16 -n 32 -c 256 -H 56 -W 56 -k 128 -y 1 -x 1 -F 1 -b 1";
  ASSERT_EQ(test::plan_of(hopper, pointwise).config.find("staged"), std::string::npos);
  const Planned staged = test::plan_of(hopper, pointwise + " --residual 1");
  EXPECT_NE(staged.config.find("the native NCHW path has no residual epilogue"), std::string::npos) << staged.config;
  EXPECT_EQ(launches_of(staged, "boo_conv_stage_z").size(), 1u);
}

TEST(ConvResidualPlanTest, HopperSplitReduceAndGroupsCarryTheResidual) {
  const GpuImplementation& hopper = tier("gpu:conv:wgmma_sm90");
  // A small image (few tiles) with a long reduction: split K; the reduce applies the epilogue.
  const Planned split = test::plan_of(
      hopper, "convbfp16 -n 4 -c 1024 -H 7 -W 7 -k 200 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 --residual 1" + kNhwc);
  const std::vector<size_t> reduce = launches_of(split, "boo_wgmma_y_reduce");
  ASSERT_EQ(reduce.size(), 1u) << split.config;
  EXPECT_EQ(params_of<ConvIgemmParams>(split.launches[reduce[0]]).residual, split.address.at("z"));
  // Groups: slices of one launch, each storing at its group's channel offset, reading z at the same offsets.
  const Planned grouped = test::plan_of(
      hopper, "convbfp16 -n 32 -c 256 -H 28 -W 28 -k 256 -y 3 -x 3 -p 1 -q 1 -g 2 -F 1 --residual 1" + kNhwc);
  ASSERT_EQ(grouped.entries.size(), 1u) << grouped.config;
  EXPECT_EQ(params_of<ConvIgemmParams>(grouped.launches[0]).residual, grouped.address.at("z"));
}

TEST(ConvResidualPlanTest, DirectTierReadsZThroughYsStrides) {
  for (const std::string& command :
       {std::string("conv -n 2 -c 3 -H 5 -W 5 -k 4 -y 3 -x 3 -F 1 -b 1 --residual 1 --activation gelu"),
        std::string("convfp16 -m trans -n 2 -c 4 -H 3 -W 3 -k 2 -y 3 -x 3 -u 2 -v 2 -F 1 --residual 1")}) {
    SCOPED_TRACE(command);
    const Planned p = test::plan_of(tier("gpu:conv:direct"), command);
    ASSERT_EQ(p.launches.size(), 1u);
    EXPECT_EQ(params_of<ConvFaceParams>(p.launches[0]).residual, p.address.at("z"));
    // The kernel's kResidual: conv_forward_face<I, T, act, bias, false, true>, conv_data_face<I, T, act, false, true>.
    EXPECT_NE(p.config.find("false, true>(p)"), std::string::npos) << p.config;
  }
  // Without it the kernel takes no residual argument.
  const Planned plain = test::plan_of(tier("gpu:conv:direct"), "conv -n 2 -c 3 -H 5 -W 5 -k 4 -y 3 -x 3 -F 1 -b 1");
  EXPECT_EQ(params_of<ConvFaceParams>(plain.launches[0]).residual, 0u);
  EXPECT_EQ(plain.config, "dtype=float32;boo_conv_direct_y=boo::conv_forward_face<int, float, 0, true>(p)");
}

TEST(ConvResidualPlanTest, GpuReferenceBindsZWithItsStrides) {
  std::unique_ptr<OpProblem> problem =
      test::problem_of("convbfp16 -n 2 -c 8 -H 6 -W 6 -k 16 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 --residual 1 "
                       "--activation relu --out_layout NHWC");
  ASSERT_NE(problem, nullptr);
  const GpuReference* reference = find_op("conv")->gpu_reference();
  ASSERT_NE(reference, nullptr);
  Result<Plan> plan = reference->plan(*problem, ReferenceRequest{}, test::sm90());
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  ASSERT_EQ(plan->steps.size(), 1u);
  const LaunchStep& step = plan->steps[0];
  EXPECT_NE(plan->source.text.find(", true, true>(p)"), std::string::npos) << plan->source.text;
  const auto params = params_of<ConvRefParams>(test::ResolvedLaunch{step.entry, step.grid, step.block,
                                                                    step.shared_bytes, step.params});
  // z is argument 3 (x, w, b, z), bound to the residual slot; its strides are y's (NHWC): channels innermost.
  bool bound = false;
  for (const LaunchStep::AddressSlot& slot : step.addresses)
    if (slot.params_offset == offsetof(ConvRefParams, residual)) {
      EXPECT_EQ(slot.tensor.source, TensorBinding::Source::kArgument);
      EXPECT_EQ(slot.tensor.index, 3u);
      bound = true;
    }
  EXPECT_TRUE(bound);
  EXPECT_EQ(params.residual_strides[1], 1);
  EXPECT_EQ(params.residual_strides[4], 16);
}

}  // namespace
}  // namespace boo::ops
