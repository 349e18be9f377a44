// boo tests: gpu:conv:pointwise planned on the host (no GPU): which convs it
// takes (memory-bound pointwise convs of planar tensors) and why it declines
// the others, one launch per forward or data face with the tensors bound where
// they lie, the weight face's partials and reduce, the tile constants its
// kernel reads, and the gate of a kernel awaiting its first GPU run.
#include <gtest/gtest.h>

#include "ops/conv/conv_pointwise_impl.hpp"
#include "ops/conv/device/conv_pointwise_params.cuh"
#include "plan_util.hpp"

namespace boo::ops {
namespace {

using test::Planned;
using test::params_of;

const GpuImplementation& tier() { return conv::pointwise_implementation(); }

void expect_constants(const Planned& p, std::initializer_list<const char*> constants) {
  for (const char* constant : constants)
    EXPECT_NE(p.source.text.find(constant), std::string::npos) << constant << " in\n" << p.source.text;
}

std::string decline_reason(const std::string& command) {
  std::unique_ptr<OpProblem> problem = test::problem_of(command);
  if (!problem) return "unparsed";
  const Status s = tier().accepts(*problem, test::sm90());
  return s.ok() ? "accepted" : s.to_string();
}

// The command-parse fuzzer's finding (CI, 2026-11-26): a bias gradient alone (-F 7) of an NCHW 1x1 conv has no
// face, and the tie check with the Hopper tier's native path read the first one. Both decline it; the mma.sync
// tier's bias-gradient step runs it.
TEST(ConvPointwisePlanTest, ABiasGradientAloneIsNotItsAndDispatchRunsIt) {
  const std::string command = "convfp16 -n 32 -c 1024 -H 14 -W 12 -k 32 -y 1 -x 1 -F 7";
  EXPECT_NE(decline_reason(command).find("a bias gradient alone"), std::string::npos) << decline_reason(command);
  for (const GpuImplementation* impl : find_op("conv")->gpu_implementations())
    if (impl->name() == "gpu:conv:implicit_gemm")
      EXPECT_EQ(test::plan_of(*impl, command).entries, (std::vector<std::string>{"boo_conv_db"}));
}

TEST(ConvPointwisePlanTest, ForwardStreamsPixelTilesAgainstTheFilter) {
  test::UnverifiedKernelsEnabled gate;
  // y (16 x 802816 columns) = w (16 x 32) x (32 x 802816): tiles of 256 pixels (3136), 16-byte vectors;
  // shared: filter 16 x 40, two stages of 32 x 264, the output tile 16 x 264 (43520 bytes: 5 blocks an SM);
  // registers: 16 accumulators + 48, 4 blocks an SM, which the launch bounds ask for.
  const Planned p =
      test::plan_of(tier(), "convbfp16 -n 64 -c 32 -H 112 -W 112 -k 16 -y 1 -x 1 -F 1 -b 1 --activation relu");
  EXPECT_EQ(p.config,
            "dtype=bfloat16, pixel tiles over N x pixels; y: face 0 mma.sync rows 16 x 32 tile 256 pixels, vec in 8 out 8, "
            "warps 1x8, grid 528 (4 an SM)");
  ASSERT_EQ(p.launches.size(), 1u);
  EXPECT_EQ(p.workspace_bytes, 0u);
  const test::ResolvedLaunch& l = p.launches[0];
  EXPECT_EQ(l.entry, "boo_pointwise_y");
  EXPECT_EQ(l.grid.x, 528u);
  EXPECT_EQ(l.block.x, 256u);
  EXPECT_EQ(l.shared_bytes, 43520u);
  const auto params = params_of<ConvPointwiseParams>(l);
  EXPECT_EQ(params.a, p.address.at("x"));
  EXPECT_EQ(params.w, p.address.at("w"));
  EXPECT_EQ(params.out, p.address.at("y"));
  EXPECT_EQ(params.bias, p.address.at("b"));
  EXPECT_EQ(params.workspace, 0u);
  expect_constants(p, {"kTensorCores = true;", "kTP = 256;", "kHW = 12544LL;", "kL = 802816LL;", "kTiles = 3136LL;",
                       "kM = 16;", "kR = 32;", "kMPad = 16;", "kRPad = 32;", "kFPitch = 40;", "kInPitch = 264;",
                       "IN_N = 401408LL;", "IN_C = 12544LL;", "OUT_N = 200704LL;", "OUT_C = 12544LL;", "FM = 32LL;",
                       "FR = 1LL;", "kBias = true;", "kAct = 1;", "__launch_bounds__(256, 4) boo_pointwise_y",
                       "boo::pointwise::forward<Cfg_y>(p)"});
}

TEST(ConvPointwisePlanTest, DataFaceReadsTheFilterTransposed) {
  test::UnverifiedKernelsEnabled gate;
  // dx (16 rows) = w^T (16 x 96) x dy: W(m, r) = w[r][m], so FM is w's channel stride and FR its row stride.
  const Planned p = test::plan_of(tier(), "convfp16 -n 64 -c 16 -H 112 -W 112 -k 96 -y 1 -x 1 -F 2");
  ASSERT_EQ(p.launches.size(), 1u);
  EXPECT_NE(p.config.find("dx: face 1 mma.sync rows 16 x 96 tile 256 pixels"), std::string::npos) << p.config;
  const auto params = params_of<ConvPointwiseParams>(p.launches[0]);
  EXPECT_EQ(params.a, p.address.at("dy"));
  EXPECT_EQ(params.out, p.address.at("dx"));
  EXPECT_EQ(params.w, p.address.at("w"));
  EXPECT_EQ(params.bias, 0u);
  expect_constants(p, {"kM = 16;", "kR = 96;", "FM = 1LL;", "FR = 16LL;", "IN_C = 12544LL;", "IN_N = 1204224LL;",
                       "OUT_N = 200704LL;", "kBias = false;"});
}

TEST(ConvPointwisePlanTest, WeightFaceSumsPartialsPerSplitThenReduces) {
  test::UnverifiedKernelsEnabled gate;
  // dw (24 x 144) = sum over 64 x 3136 pixels of dy x^T: 18 blocks of 16 x 16 over 4 warp groups (5 each),
  // 2 pixel splits; 784 tiles of 256 over the splits; partials [splits][24][144] in fp32.
  const Planned p = test::plan_of(tier(), "convbfp16 -n 64 -c 144 -H 56 -W 56 -k 24 -y 1 -x 1 -F 4");
  ASSERT_EQ(p.launches.size(), 2u);
  EXPECT_EQ(p.launches[0].entry, "boo_pointwise_dw");
  EXPECT_EQ(p.launches[1].entry, "boo_pointwise_dw_reduce");
  const long long splits = p.launches[0].grid.x;
  EXPECT_NE(p.config.find("dw: face 2 mma.sync rows 24 x 144 tile 256 pixels, vec in 8 out 1, 4 warp groups x 2 "
                          "pixel splits, splits " + std::to_string(splits)),
            std::string::npos)
      << p.config;
  EXPECT_EQ(p.workspace_bytes, static_cast<size_t>(splits * 24 * 144 * 4));
  EXPECT_EQ(p.launches[1].grid.x, static_cast<uint32_t>((24 * 144 + 255) / 256));
  for (const test::ResolvedLaunch& l : p.launches) {
    const auto params = params_of<ConvPointwiseParams>(l);
    EXPECT_EQ(params.a, p.address.at("x"));
    EXPECT_EQ(params.b, p.address.at("dy"));
    EXPECT_EQ(params.out, p.address.at("dw"));
    EXPECT_EQ(params.workspace, p.workspace);
  }
  expect_constants(p, {"kM = 24;", "kN = 144;", "kMPad = 32;", "kNPad = 144;", "kOutGroups = 4;", "kPixSplits = 2;",
                       "kBlocksPerWarp = 5;", "A_C = 3136LL;", "B_C = 3136LL;",
                       "FM = 144LL;", "FN = 1LL;", "kFp32Out = false;", "weight_reduce<Cfg_dw>(p)"});
}

TEST(ConvPointwisePlanTest, Fp32RunsOnFfmaWithTwoLevelWeightSums) {
  test::UnverifiedKernelsEnabled gate;
  const Planned f = test::plan_of(tier(), "conv -n 64 -c 144 -H 56 -W 56 -k 24 -y 1 -x 1 -F 1");
  EXPECT_NE(f.config.find("y: face 0 ffma rows 24 x 144"), std::string::npos) << f.config;
  // The filter row pitch odd (145): the transposed filter's writes, a row apart, in distinct banks.
  expect_constants(f, {"kTensorCores = false;", "kInVec = 4;", "kFPitch = 145;"});
  // 6 x 36 micro-tiles of 4 x 4 over 256 threads (one pixel split: each thread one or none... at most 2).
  const Planned w = test::plan_of(tier(), "conv -n 64 -c 192 -H 28 -W 28 -k 32 -y 1 -x 1 -F 4");
  EXPECT_NE(w.config.find("dw: face 2 ffma rows 32 x 192"), std::string::npos) << w.config;
  expect_constants(w, {"kOutThreads = 256;", "kPixSplits = 1;", "kBlocksPerWarp = 2;"});
  const Planned small = test::plan_of(tier(), "conv -n 64 -c 32 -H 112 -W 112 -k 16 -y 1 -x 1 -F 4");
  expect_constants(small, {"kOutThreads = 32;", "kPixSplits = 8;", "kBlocksPerWarp = 1;"});
}

TEST(ConvPointwisePlanTest, OddPixelCountsCopyNarrowerVectorsAcrossImages) {
  test::UnverifiedKernelsEnabled gate;
  // (14x14 images run on gpu:conv:wgmma_sm90's native path, which this tier yields to; here it does not take them.)
  const test::ScopedEnv no_native("BOO_WGMMA_NATIVE_VECTOR4", "0");
  // 7x7 = 49 pixels: element copies; 14x14 = 196: 4 elements (8 bytes); tiles span images either way.
  const Planned odd = test::plan_of(tier(), "convfp16 -n 64 -c 96 -H 7 -W 7 -k 24 -y 1 -x 1 -F 1");
  EXPECT_NE(odd.config.find("vec in 1 out 1"), std::string::npos) << odd.config;
  expect_constants(odd, {"kHW = 49LL;", "kL = 3136LL;"});
  const Planned even = test::plan_of(tier(), "convbfp16 -n 64 -c 192 -H 14 -W 14 -k 64 -y 1 -x 1 -F 1");
  EXPECT_NE(even.config.find("vec in 4 out 4"), std::string::npos) << even.config;
  EXPECT_GE(even.launches.size(), 1u);
}

// Small images (64 x 14x14 = 12544 columns: fewer than 4 tiles of 64 per SM): 32-column tiles where
// they leave the busiest SM fewer bytes to move, the wider tiles still boo tune's alternatives.
TEST(ConvPointwisePlanTest, SmallImagesTakeNarrowTilesWhereTheBusiestSmMovesLess) {
  test::UnverifiedKernelsEnabled gate;
  {
    // 14x14 images are gpu:conv:wgmma_sm90's native path's (8-byte pixel vectors): the tie is its.
    std::unique_ptr<OpProblem> native = test::problem_of("convfp16 -n 64 -c 64 -H 14 -W 14 -k 384 -y 1 -x 1 -F 2");
    ASSERT_TRUE(native);
    const Status declined = tier().accepts(*native, test::sm90());
    EXPECT_NE(declined.message().find("native NCHW 1x1 path runs it as fast"), std::string::npos) << declined.to_string();
  }
  // The tiles this tier plans where that path does not take them.
  const test::ScopedEnv no_native("BOO_WGMMA_NATIVE_VECTOR4", "0");
  // dx (64 rows) = w^T (64 x 384) x dy: 64-wide, 196 tiles in two rounds on 132 SMs (one 170 KB block an SM);
  // 32-wide, 392 tiles in three: the busiest SM reads the filter once and 3 x 32 columns, not 2 x 64.
  const std::string small = "convfp16 -n 64 -c 64 -H 14 -W 14 -k 384 -y 1 -x 1 -F 2";
  const Planned p = test::plan_of(tier(), small);
  EXPECT_EQ(p.config,
            "dtype=float16, pixel tiles over N x pixels; dx: face 1 mma.sync rows 64 x 384 tile 32 pixels, vec in 4 "
            "out 4, warps 4x2, grid 132 (1 an SM)");
  // shared: filter 64 x 392, two stages of 384 x 40, the output tile 64 x 40.
  EXPECT_EQ(p.launches[0].shared_bytes, static_cast<uint32_t>((64 * 392 + 2 * 384 * 40 + 64 * 40) * 2));
  expect_constants(p, {"kTP = 32;", "kTiles = 392LL;", "kWarpsM = 4;", "kWarpsN = 2;", "FM = 1LL;", "FR = 64LL;"});
  std::unique_ptr<OpProblem> problem = test::problem_of(small);
  ASSERT_TRUE(problem);
  Result<ConfigList> list = tier().candidates(*problem, test::sm90());
  ASSERT_TRUE(list.ok()) << list.status().to_string();
  std::vector<std::string> tiles;
  for (const std::unique_ptr<const Config>& c : *list) {
    const std::string t = c->text();
    const size_t at = t.find(" tile ") + 6;
    tiles.push_back(t.substr(at, t.find(" pixels", at) - at));
  }
  EXPECT_EQ(tiles, (std::vector<std::string>{"32", "64"}));  // 128 and wider exceed 64 accumulators a thread
  // 192 x 64: the filter (27.6 KB) is most of a 32-wide tile's bytes; 196 tiles of 64 in one round of 2 blocks an
  // SM move less on the busiest SM than 392 of 32 in 3 blocks an SM.
  EXPECT_NE(test::plan_of(tier(), "convfp16 -n 64 -c 192 -H 14 -W 14 -k 64 -y 1 -x 1 -F 2").config.find("tile 64 pixels"),
            std::string::npos);
  // 384 output rows fit only 32-wide (48 accumulators a thread), so the tier takes them (they went to a staged GEMM).
  EXPECT_NE(test::plan_of(tier(), "convfp16 -n 64 -c 384 -H 14 -W 14 -k 96 -y 1 -x 1 -F 2").config.find(
                "dx: face 1 mma.sync rows 384 x 96 tile 32 pixels"),
            std::string::npos);
  // The weight face keeps the wide tiles (each CTA's partial is M x N bytes more).
  EXPECT_NE(test::plan_of(tier(), "convfp16 -n 64 -c 64 -H 14 -W 14 -k 96 -y 1 -x 1 -F 4").config.find("tile 64 pixels"),
            std::string::npos);
  // Larger problems never: 64 x 35x35 = 1225 tiles of 64. (384 x 96 fits no wider tile: declined, as before.)
  const std::string large = "convfp16 -n 64 -c 384 -H 35 -W 35 -k 96 -y 1 -x 1 -F 2";
  std::unique_ptr<OpProblem> large_problem = test::problem_of(large);
  ASSERT_TRUE(large_problem);
  const Status configured = tier().configure(*large_problem, test::sm90()).status();
  EXPECT_NE(configured.to_string().find("no pixel tile"), std::string::npos) << configured.to_string();
}

TEST(ConvPointwisePlanTest, EveryDirectionOneDimensionalTransposedAndBiasGradient) {
  test::UnverifiedKernelsEnabled gate;
  const Planned all = test::plan_of(tier(), "convbfp16 --spatial_dim 1 -n 16 -c 48 -H 1000 -k 16 -y 1 -F 0 -b 1");
  std::vector<std::string> entries;
  for (const auto& l : all.launches) entries.push_back(l.entry);
  EXPECT_EQ(entries, (std::vector<std::string>{"boo_pointwise_y", "boo_pointwise_dx", "boo_pointwise_dw",
                                               "boo_pointwise_dw_reduce", "boo_conv_db"}));
  // A transposed conv's forward is the data face (x plays B: its C = 64 channels are the reduction's).
  const Planned t = test::plan_of(tier(), "convfp16 -n 8 -c 64 -H 28 -W 28 -k 16 -y 1 -x 1 -m trans -F 1");
  EXPECT_NE(t.config.find("y: face 1 mma.sync rows 16 x 64"), std::string::npos) << t.config;
  const auto params = params_of<ConvPointwiseParams>(t.launches[0]);
  EXPECT_EQ(params.a, t.address.at("x"));
  EXPECT_EQ(params.out, t.address.at("y"));
}

TEST(ConvPointwisePlanTest, DeclinesWhatItDoesNotTakeAndSaysWhy) {
  test::UnverifiedKernelsEnabled gate;
  struct Case {
    std::string command, reason;
  };
  for (const Case& c : {
           Case{"convbfp16 -n 64 -c 32 -H 56 -W 56 -k 16 -y 3 -x 3 -p 1 -q 1 -F 1", "1x1 filters at stride 1"},
           Case{"convbfp16 -n 64 -c 32 -H 56 -W 56 -k 16 -y 1 -x 1 -u 2 -v 2 -F 1", "1x1 filters at stride 1"},
           Case{"convbfp16 -n 64 -c 32 -H 56 -W 56 -k 32 -y 1 -x 1 -g 2 -F 1", "groups 1, not 2"},
           Case{"convbfp16 -n 64 -c 32 -H 56 -W 56 -k 16 -y 1 -x 1 -F 1 --in_layout NHWC --out_layout NHWC",
                "pixels are contiguous"},
           // 512 x 2048 channels: compute-bound, the GEMM tiers' (its multiply-adds outlast its bytes).
           Case{"convbfp16 -n 32 -c 512 -H 7 -W 7 -k 2048 -y 1 -x 1 -F 2", "memory-bound convs"},
           Case{"conv -n 64 -c 192 -H 14 -W 14 -k 64 -y 1 -x 1 -F 1", "the FFMA rate"},
           // Memory-bound, but the Hopper tier's native NCHW path (verified) reaches the copy bound too: a tie is its.
           Case{"convfp16 -n 32 -c 64 -H 56 -W 56 -k 64 -y 1 -x 1 -F 1", "native NCHW 1x1 path runs it as fast"},
           Case{"convbfp16 -n 32 -c 256 -H 56 -W 56 -k 128 -y 1 -x 1 -F 4", "native NCHW 1x1 path runs it as fast"},
       }) {
    SCOPED_TRACE(c.command);
    EXPECT_NE(decline_reason(c.command).find(c.reason), std::string::npos) << decline_reason(c.command);
  }
}

}  // namespace
}  // namespace boo::ops
