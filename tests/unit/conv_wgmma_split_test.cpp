// boo tests: gpu:conv:wgmma_sm90's split K of the forward and data faces,
// computed on the host (no GPU). Where a conv's 128 x BN tiles leave SMs idle,
// the cost model splits its reduction: the CTAs store fp32 partials in the
// workspace and a second kernel (conv_wgmma_split.cuh) adds them in a fixed
// order and applies the epilogue. Below the tier's size floor it takes a conv
// only split and only where its model beats gpu:conv:implicit_gemm's.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

#include "boo/registry.hpp"
#include "ops/conv/conv_wgmma_impl.hpp"
#include "ops/conv/device/conv_igemm_params.cuh"
#include "ops/op_definition.hpp"
#include "plan_util.hpp"

namespace boo::ops {
namespace {

using test::Planned;
using test::params_of;

const GpuImplementation& tier() { return conv::wgmma_sm90_implementation(); }
const std::string kNhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
// 480 output pixels (4 row tiles) x 576 channels over a 2048-long reduction (32 k-blocks).
const std::string kSmall = "convbfp16 -n 16 -c 2048 -H 1 -W 30 -k 576 -y 1 -x 1 -F 1 -b 1 --activation gelu" + kNhwc;
// 4096 pixels (32 row tiles) x 256 channels over 4096 (64 k-blocks): at the floor, 64 tiles of 128 x 128.
const std::string kFewTiles = "convbfp16 -n 16 -c 4096 -H 16 -W 16 -k 256 -y 1 -x 1 -F 1" + kNhwc;

// The number after `key` in a config text (0 if absent).
long long number_after(const std::string& text, const std::string& key) {
  const size_t at = text.find(key);
  return at == std::string::npos ? 0 : std::stoll(text.substr(at + key.size()));
}

TEST(ConvWgmmaSplitTest, SplitsTheReductionOfASmallConvAndReducesWithTheEpilogue) {
  // 128 x 128 tiles: 4 x 5 = 20 of them; six splits of 6, 6, 6, 6, 6 and 2 k-blocks make 120 units, one
  // wave (seven would make two). The reduce adds the six planes of 480 x 576 fp32 sums, adds the bias,
  // applies gelu and writes y.
  const Planned p = test::plan_of(tier(), kSmall);
  EXPECT_EQ(p.config,
            "tile 128x128x64 stages 6 warpgroups 1 producer + 2 consumers, persistent; y: face 0 as forward, splits 6, "
            "filter by TMA, x by TMA (a plain matrix): one producer thread");
  ASSERT_EQ(p.entries, (std::vector<std::string>{"boo_wgmma_y", "boo_wgmma_y_reduce"}));
  EXPECT_EQ(p.launches[0].grid.x, 120u);
  EXPECT_EQ(p.launches[0].block.x, 384u);
  EXPECT_EQ(p.launches[1].grid.x, 480u * 576 / 256);  // one thread per element, below 16 blocks per SM
  EXPECT_EQ(p.launches[1].block.x, 256u);
  EXPECT_EQ(p.launches[1].shared_bytes, 0u);
  EXPECT_EQ(p.workspace_bytes, 6u * 480 * 576 * 4);
  for (const test::ResolvedLaunch& l : p.launches) {
    const auto params = params_of<ConvIgemmParams>(l);
    EXPECT_EQ(params.a, p.address.at("x"));
    EXPECT_EQ(params.w, p.address.at("w"));
    EXPECT_EQ(params.out, p.address.at("y"));
    EXPECT_EQ(params.bias, p.address.at("b"));
    EXPECT_EQ(params.workspace, p.workspace);
  }
  EXPECT_NE(p.source.text.find("#include \"boo/conv/conv_wgmma_split.cuh\""), std::string::npos);
  EXPECT_NE(p.source.text.find("boo::wgmma_conv::conv_wgmma<Cfg>(p.p, &p.tma_b, &p.tma_a)"), std::string::npos);
  EXPECT_NE(p.source.text.find("boo::wgmma_conv::conv_wgmma_forward_reduce<Cfg>(p)"), std::string::npos);
  for (const char* constant : {"kM = 480;", "kN = 576;", "kC = 2048;", "kSplits = 6;", "kGroups = 1;", "kIdx32 = true;",
                               "BN = 128;", "kBias = true;", "kFp32Out = false;"})
    EXPECT_NE(p.source.text.find(constant), std::string::npos) << constant << " in\n" << p.source.text;
}

TEST(ConvWgmmaSplitTest, SplitsAtTheFloorWhereTheTilesLeaveSmsIdle) {
  // 64 tiles of 128 x 128 over 64 k-blocks: two splits make 128 units (the model: 21.5 us against 30.2
  // unsplit; 32 tiles of 128 x 256 in four splits: 22.4).
  const Planned p = test::plan_of(tier(), kFewTiles);
  EXPECT_EQ(p.config,
            "tile 128x128x64 stages 6 warpgroups 1 producer + 2 consumers, persistent; y: face 0 as forward, splits 2, "
            "filter by TMA, x by TMA (a plain matrix): one producer thread");
  ASSERT_EQ(p.entries, (std::vector<std::string>{"boo_wgmma_y", "boo_wgmma_y_reduce"}));
  EXPECT_EQ(p.launches[0].grid.x, 128u);
  EXPECT_EQ(p.workspace_bytes, 2u * 4096 * 256 * 4);
}

TEST(ConvWgmmaSplitTest, SplitsFollowTheSmCount) {
  // On a part with 66 SMs the same 64 tiles fill it: no split.
  std::unique_ptr<OpProblem> problem = test::problem_of(kFewTiles);
  ASSERT_TRUE(problem);
  ArchSpec arch = test::sm90();
  arch.sm_count = 66;
  arch.wgmma_macs_per_s /= 2;
  arch.mma_sync_macs_per_s /= 2;
  Result<std::unique_ptr<const Config>> config = tier().configure(*problem, arch);
  ASSERT_TRUE(config.ok()) << config.status().to_string();
  EXPECT_EQ((*config)->text(), "tile 128x128x64 stages 6 warpgroups 1 producer + 2 consumers, persistent; y: face 0 as forward, "
                               "filter by TMA, x by TMA (a plain matrix): one producer thread, y by TMA");
}

TEST(ConvWgmmaSplitTest, BelowTheFloorWhereTheModelWins) {
  struct Case {
    std::string command, reason;  // reason: a part of the decline, empty where the tier takes it
  };
  for (const Case& c : {
           Case{kSmall, ""},
           // 9 k-blocks: unsplit (4.7 us modelled) beats the implicit GEMM (5.9 us) by the margin.
           Case{"convbfp16 -n 16 -c 576 -H 1 -W 30 -k 2048 -y 1 -x 1 -F 1" + kNhwc, ""},
           // One k-block of 16 pixels: the implicit GEMM's smaller tiles.
           Case{"convbfp16 -n 1 -c 64 -H 4 -W 4 -k 256 -y 1 -x 1 -F 1" + kNhwc,
                "(modelled: 0.9 us in 1 splits, 0.7 us on gpu:conv:implicit_gemm)"},
           // 3x3 with padding, partial tiles in M (196 pixels) and N (200 channels); 144 k-blocks.
           Case{"convbfp16 -n 4 -c 1024 -H 7 -W 7 -k 200 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 --activation relu" + kNhwc, ""},
           // The data face: dx (576 channels) from dy's 1728 over 480 pixels; unsplit from 256 pixels at 128
           // result channels: dx (2048 channels) from dy's 576 over 480 pixels.
           Case{"convfp16 -n 16 -c 576 -H 1 -W 30 -k 1728 -y 1 -x 1 -F 2" + kNhwc, ""},
           Case{"convbfp16 -n 16 -c 2048 -H 1 -W 30 -k 576 -y 1 -x 1 -F 2" + kNhwc, ""},
           // The weight face's floor is its reduction: 256 pixels (196 here), 512 with padded copies (66
           // channels, 480 pixels here), or 4096 and more; BOO's 480-pixel 2048 -> 576 weight gradient runs.
           Case{"convbfp16 -n 1 -c 128 -H 16 -W 16 -k 256 -y 3 -x 3 -F 4" + kNhwc, "(the weight face: 256 pixels), not 196"},
           Case{"convbfp16 -n 16 -c 66 -H 1 -W 30 -k 576 -y 1 -x 1 -F 4" + kNhwc,
                "(the weight face: 512 pixels with copies), not 480"},
           Case{"convbfp16 -n 16 -c 2048 -H 1 -W 30 -k 576 -y 1 -x 1 -F 4" + kNhwc, ""},
           Case{"convbfp16 -n 16 -c 512 -H 14 -W 14 -k 512 -y 3 -x 3 -p 1 -q 1 -F 4" + kNhwc, ""},
       }) {
    SCOPED_TRACE(c.command);
    std::unique_ptr<OpProblem> problem = test::problem_of(c.command);
    ASSERT_TRUE(problem);
    const Status s = tier().accepts(*problem, test::sm90());
    if (c.reason.empty()) {
      EXPECT_TRUE(s.ok()) << s.to_string();
    } else {
      EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
      EXPECT_NE(s.message().find(c.reason), std::string::npos) << s.to_string();
    }
  }
}

TEST(ConvWgmmaSplitTest, TheDataFaceSplitsAfterItsFilterCopy) {
  const std::string command = "convfp16 -n 16 -c 576 -H 1 -W 30 -k 1728 -y 1 -x 1 -F 2" + kNhwc;
  {
    // By TMA (the default) the 1x1 data face reads the filter in place: no copy, the partials alone.
    const Planned p = test::plan_of(tier(), command);
    EXPECT_NE(p.config.find("dx: face 1 as forward, splits 6, filter in place by TMA (N-major)"), std::string::npos)
        << p.config;
    ASSERT_EQ(p.entries, (std::vector<std::string>{"boo_wgmma_dx", "boo_wgmma_dx_reduce"}));
    EXPECT_EQ(p.workspace_bytes, 6u * 480 * 576 * 4);
    EXPECT_EQ(params_of<ConvIgemmParams>(p.launches[0]).w, p.address.at("w"));
  }
  // The cp.async producer reads the flipped copy.
  test::ScopedEnv cp_async("BOO_WGMMA_TMA", "0");
  const Planned p = test::plan_of(tier(), command);
  EXPECT_NE(p.config.find("dx: face 1 as forward, splits 6; copies boo_conv_flip_w"), std::string::npos) << p.config;
  ASSERT_EQ(p.entries, (std::vector<std::string>{"boo_conv_flip_w", "boo_wgmma_dx", "boo_wgmma_dx_reduce"}));
  // The partials first (6 planes of 480 x 576), then the flipped filter.
  const size_t partials = 6u * 480 * 576 * 4;
  EXPECT_EQ(p.workspace_bytes, partials + 1728u * 576 * 2);
  const auto copy = params_of<ConvChannelPadParams>(p.launches[0]);
  EXPECT_EQ(copy.dense, p.workspace + partials);
  for (size_t i = 1; i < 3; ++i) {
    const auto params = params_of<ConvIgemmParams>(p.launches[i]);
    EXPECT_EQ(params.a, p.address.at("dy"));
    EXPECT_EQ(params.w, copy.dense);
    EXPECT_EQ(params.out, p.address.at("dx"));
    EXPECT_EQ(params.workspace, p.workspace);
  }
  for (const char* constant : {"kM = 480;", "kN = 576;", "kC = 1728;", "kSplits = 6;", "kType = 1;"})
    EXPECT_NE(p.source.text.find(constant), std::string::npos) << constant << " in\n" << p.source.text;
}

TEST(ConvWgmmaSplitTest, StagedResultsAreReducedIntoTheirCopy) {
  // NCHW operands: x and w staged channels-last, y reduced into its copy, then copied out.
  const Planned p = test::plan_of(tier(), "convbfp16 -n 8 -c 1024 -H 7 -W 7 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1");
  EXPECT_NE(p.config.find("y: face 0 as forward, splits "), std::string::npos) << p.config;
  ASSERT_EQ(p.entries, (std::vector<std::string>{"boo_conv_stage_x", "boo_conv_stage_w", "boo_wgmma_y",
                                                 "boo_wgmma_y_reduce", "boo_conv_unstage_y"}));
  const auto gemm = params_of<ConvIgemmParams>(p.launches[2]);
  const auto reduce = params_of<ConvIgemmParams>(p.launches[3]);
  const auto unstage = params_of<ConvChannelPadParams>(p.launches[4]);
  EXPECT_EQ(gemm.workspace, p.workspace);
  EXPECT_EQ(reduce.workspace, p.workspace);
  EXPECT_EQ(gemm.out, unstage.dense);
  EXPECT_EQ(reduce.out, unstage.dense);
  EXPECT_GE(unstage.dense, p.workspace + number_after(p.config, "splits ") * 392 * 256 * 4);
  EXPECT_EQ(unstage.strided, p.address.at("y"));
}

TEST(ConvWgmmaSplitTest, AGemmsFp32SumsAreReducedBeforeItsEpilogue) {
  // gpu:gemm:wgmma_sm90 (alpha 0.5): the conv's fp32 sums of 1024 x 512 over 8192, split; the reduce
  // leaves them in the first plane, where the GEMM's epilogue kernel reads them.
  const GpuImplementation* gemm = find_op("gemm")->gpu_implementations()[0];
  ASSERT_EQ(gemm->name(), "gpu:gemm:wgmma_sm90");
  const Planned p = test::plan_of(*gemm, "gemmbfp16 --a_w 1024 --a_h 8192 --b_w 512 --alpha 0.5");
  EXPECT_NE(p.config.find("y: face 0 as forward, splits 4, fp32 result"), std::string::npos) << p.config;
  ASSERT_EQ(p.entries,
            (std::vector<std::string>{"boo_gemm_stage_w", "boo_wgmma_y", "boo_wgmma_y_reduce", "boo_gemm_epilogue"}));
  EXPECT_EQ(params_of<ConvIgemmParams>(p.launches[1]).workspace, p.workspace);
  EXPECT_EQ(params_of<ConvIgemmParams>(p.launches[2]).workspace, p.workspace);
  EXPECT_GE(p.workspace_bytes, 4u * 1024 * 512 * 4);
  EXPECT_NE(p.source.text.find("kFp32Out = true;"), std::string::npos);
}

TEST(ConvWgmmaSplitTest, TuneComparesSplitAndUnsplitTilings) {
  // Each width at its cheapest split and unsplit, cheapest first: 128 in 6 splits, 192 in 8, 256 in 8,
  // then 128, 192 and 256 unsplit; each at every ring depth (18 configs; a split chosen config's y is
  // stored plainly, so no TMA-store twins).
  std::unique_ptr<OpProblem> problem = test::problem_of(kSmall);
  ASSERT_TRUE(problem);
  Result<ConfigList> list = tier().candidates(*problem, test::sm90());
  ASSERT_TRUE(list.ok()) << list.status().to_string();
  ASSERT_EQ(list->size(), 18u);
  std::vector<std::string> order;  // distinct (width, splits) in the list's order
  std::set<std::string> texts;
  for (const auto& c : *list) {
    const std::string text = c->text();
    EXPECT_TRUE(texts.insert(text).second) << text;
    const std::string tiling = std::to_string(number_after(text, "tile 128x")) + "/" +
                               std::to_string(number_after(text, "splits "));
    if (order.empty() || order.back() != tiling) order.push_back(tiling);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"128/6", "192/8", "256/8", "128/0", "192/0", "256/0"}));
  EXPECT_EQ((*list)[0]->text(), test::plan_of(tier(), kSmall).config);
  // Each plans: the split ones with their reduce.
  for (const auto& c : *list) {
    Result<Plan> plan = tier().plan(*problem, *c, test::sm90());
    ASSERT_TRUE(plan.ok()) << plan.status().to_string();
    EXPECT_EQ(plan->steps.size(), c->text().find("splits") == std::string::npos ? 1u : 2u) << c->text();
  }
}

// Over a matrix of shapes and both faces: every split has k-blocks (the kernel's static_assert), the
// grid is the units or the SMs, and the workspace holds every split's plane.
TEST(ConvWgmmaSplitTest, EverySplitHasKBlocksAndItsPlane) {
  int split = 0;
  for (const char* n : {"1", "4", "16"})
    for (const char* hw : {"-H 1 -W 30", "-H 7 -W 7", "-H 16 -W 16"})
      for (const char* c : {"576", "1024", "2048"})
        for (const char* k : {"128", "200", "576"})
          for (const char* face : {"-F 1", "-F 2"}) {
            const std::string command = std::string("convbfp16 -n ") + n + " -c " + c + " " + hw + " -k " + k +
                                        " -y 3 -x 3 -p 1 -q 1 " + face + kNhwc;
            std::unique_ptr<OpProblem> problem = test::problem_of(command);
            ASSERT_TRUE(problem);
            if (!tier().accepts(*problem, test::sm90()).ok()) continue;
            SCOPED_TRACE(command);
            const Planned p = test::plan_of(tier(), command);
            const long long splits = std::max(1LL, number_after(p.config, "splits ")), bn = number_after(p.config, "tile 128x");
            const long long reduced = 9 * std::stoll(face[3] == '1' ? c : k);
            const long long m = std::stoll(n) * number_after(p.source.text, " P = ") * number_after(p.source.text, " Q = ");
            const long long cols = std::stoll(face[3] == '1' ? k : c);
            const long long kblocks = (reduced + 63) / 64, per_split = (kblocks + splits - 1) / splits;
            EXPECT_LT((splits - 1) * per_split, kblocks);
            EXPECT_EQ(number_after(p.source.text, "kSplits = "), splits);
            const long long units = (m + 127) / 128 * ((cols + bn - 1) / bn) * splits;
            // (After the data face's filter copy where it has one.)
            const size_t gemm_step = p.entries.at(0) == "boo_conv_flip_w" ? 1 : 0;
            EXPECT_EQ(p.launches.at(gemm_step).grid.x, static_cast<uint32_t>(std::min(units, 132LL)));
            if (splits > 1) {
              ++split;
              EXPECT_LT(units / splits, 132) << "split only where the tiles leave SMs idle";
              EXPECT_GE(p.workspace_bytes, static_cast<size_t>(splits * m * cols * 4));
              EXPECT_EQ(p.entries.at(gemm_step + 1), p.entries.at(gemm_step) + "_reduce");
            }
          }
  EXPECT_GT(split, 20);
}

}  // namespace
}  // namespace boo::ops
