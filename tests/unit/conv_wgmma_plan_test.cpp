// boo tests: gpu:conv:wgmma_sm90's choices and launch plans, computed on the
// host (no GPU): it takes the compute-bound bf16/fp16 forward convs of sm_90a,
// their backward data at stride 1 and their backward weight (split K), any
// layout (NCHW operands are staged), and declines everything else with a
// reason, so they stay on gpu:conv:implicit_gemm.
#include <gtest/gtest.h>

#include <cstdlib>

#include "boo/conv.hpp"
#include "boo/registry.hpp"
#include "ops/common/unverified_kernels.hpp"
#include "ops/conv/conv_wgmma_impl.hpp"
#include "ops/conv/device/conv_igemm_params.cuh"
#include "ops/op_definition.hpp"
#include "plan_util.hpp"
#include "runtime/dispatch.hpp"

namespace boo::ops {
namespace {

using test::Planned;
using test::params_of;

const GpuImplementation& tier() { return conv::wgmma_sm90_implementation(); }
const std::string kNhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";

// Every launch of a weight face's plan (the GEMM and its reduce) reads x as A and dy as B, writes dw, has the
// workspace and no bias.
void expect_weight_face_bindings(const Planned& p) {
  for (const test::ResolvedLaunch& l : p.launches) {
    const auto params = params_of<ConvIgemmParams>(l);
    EXPECT_EQ(params.a, p.address.at("x"));
    EXPECT_EQ(params.b, p.address.at("dy"));
    EXPECT_EQ(params.out, p.address.at("dw"));
    EXPECT_EQ(params.workspace, p.workspace);
    EXPECT_EQ(params.bias, 0u);
  }
}

// The text of the config the tier chooses for `command` (channels-last operands) on an H100.
std::string configured_text(const std::string& command) {
  std::unique_ptr<OpProblem> problem = test::problem_of(command + kNhwc);
  EXPECT_TRUE(problem);
  if (!problem) return std::string();
  Result<std::unique_ptr<const Config>> config = tier().configure(*problem, test::sm90());
  EXPECT_TRUE(config.ok()) << config.status().to_string();
  return config.ok() ? (*config)->text() : std::string();
}

// Why the tier declines `command` on `arch` (empty when it accepts).
std::string declined(const std::string& command, const std::string& arch = "sm_90a") {
  std::unique_ptr<OpProblem> problem = test::problem_of(command);
  if (!problem) return "no problem";
  const ArchSpec spec = ArchSpec::of(*DeviceInfo::for_arch(arch));
  Status s = tier().accepts(*problem, spec);
  if (!s.ok()) {
    EXPECT_EQ(s.code(), StatusCode::kUnimplemented) << s.to_string();
    return std::string(s.message());
  }
  return "";
}

TEST(ConvWgmmaPlanTest, RunsFirstForTheConvsItTakes) {
  const std::string command = "convbfp16 -n 16 -c 768 -H 48 -W 32 -k 2048 -y 3 -x 3 -p 1 -q 1 -F 1" + kNhwc;
  std::unique_ptr<OpProblem> problem = test::problem_of(command);
  ASSERT_TRUE(problem);
  const auto impls = find_op("conv")->gpu_implementations();
  ASSERT_FALSE(impls.empty());
  // After gpu:conv:pointwise, which takes only memory-bound pointwise convs, and gpu:conv:planar_tf32, only fp32 ones.
  EXPECT_EQ(impls[2]->name(), "gpu:conv:wgmma_sm90");
  EXPECT_EQ(declined(command), "");
}

TEST(ConvWgmmaPlanTest, PlansOneWarpSpecializedLaunch) {
  // M = 16 * 48 * 32 = 24576 pixels: 192 row tiles; K = 2048: 8 column tiles of 256; a persistent grid.
  const Planned p = test::plan_of(
      tier(), "convbfp16 -n 16 -c 768 -H 48 -W 32 -k 2048 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 --activation relu" + kNhwc);
  ASSERT_EQ(p.launches.size(), 1u);
  EXPECT_EQ(p.config, "tile 128x256x64 stages 4 warpgroups 1 producer + 2 consumers, persistent; y: face 0 as forward, "
                      "filter by TMA, x by TMA (im2col): one producer thread, y by TMA");
  const test::ResolvedLaunch& l = p.launches[0];
  EXPECT_EQ(l.entry, "boo_wgmma_y");
  EXPECT_EQ(l.grid.x, 132u);  // 192 x 8 tiles over the SMs
  EXPECT_EQ(l.block.x, 384u);
  // Four stages of a 128 x 64 A tile and a 256 x 64 B tile, 2 bytes each, the staging and the barriers.
  EXPECT_GE(l.shared_bytes, 4u * (128 + 256) * 64 * 2 + 2 * 32 * 264 * 2);
  EXPECT_LE(l.shared_bytes, 232448u);
  EXPECT_EQ(p.workspace_bytes, 0u);
  const auto params = params_of<ConvIgemmParams>(l);
  EXPECT_EQ(params.a, p.address.at("x"));
  EXPECT_EQ(params.w, p.address.at("w"));
  EXPECT_EQ(params.out, p.address.at("y"));
  EXPECT_EQ(params.bias, p.address.at("b"));
  // The kernel's constants: bf16 wgmma, the tile, the conv's geometry and its epilogue.
  for (const char* constant : {"kType = 0;", "BN = 256;", "STAGES = 4;", "kM = 24576;", "kN = 2048;", "kC = 768;",
                               "PH = 1;", "XW = 768;", "WK = 6912;", "YW = 2048;", "kAct = 1;", "kBias = true;"})
    EXPECT_NE(p.source.text.find(constant), std::string::npos) << constant << " in\n" << p.source.text;
  EXPECT_NE(p.source.text.find("__launch_bounds__(384, 1)"), std::string::npos);
}

// fp32 with --fp32-math tf32 on TF32 wgmma (m64nBNk8): a k-block is a 128-byte row of 32 fp32 reduction columns,
// so the tiles' bytes are the 16-bit ones' and every map's box is 32 fp32 wide; the epilogue's staging is twice
// the bytes, which leaves room for three stages of 128 x 256 tiles.
TEST(ConvWgmmaPlanTest, Tf32ForwardRunsOnTf32Wgmma) {
  const std::string command =
      "conv -n 16 -c 768 -H 48 -W 32 -k 2048 -y 3 -x 3 -p 1 -q 1 -F 1 --fp32-math tf32 -b 1 --activation relu" + kNhwc;
  std::unique_ptr<OpProblem> problem = test::problem_of(command);
  ASSERT_TRUE(problem);
  EXPECT_EQ(declined(command), "");
  const Planned p = test::plan_of(tier(), command);
  EXPECT_EQ(p.config, "tile 128x256x32 stages 3 warpgroups 1 producer + 2 consumers, persistent; y: face 0 as forward, "
                      "filter by TMA, x by TMA (im2col): one producer thread, y by TMA");
  for (const char* constant : {"using T = float;", "kType = 2;", "BN = 256;", "STAGES = 3;", "kC = 768;"})
    EXPECT_NE(p.source.text.find(constant), std::string::npos) << constant << " in\n" << p.source.text;
  ASSERT_EQ(p.launches.size(), 1u);
  EXPECT_GE(p.launches[0].shared_bytes, 3u * (128 + 256) * 128 + 2 * 32 * 260 * 4);
  EXPECT_LE(p.launches[0].shared_bytes, 232448u);
  const ArchSpec arch = test::sm90();
  Result<std::unique_ptr<const Config>> config = tier().configure(*problem, arch);
  ASSERT_TRUE(config.ok()) << config.status().to_string();
  Result<Plan> plan = tier().plan(*problem, **config, arch);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  const std::vector<TensorMapSlot>& maps = plan->steps[0].tensor_maps;
  ASSERT_EQ(maps.size(), 3u);  // the filter, x (im2col) and y
  for (const TensorMapSlot& m : maps) {
    EXPECT_EQ(m.dtype, DType::kF32);
    EXPECT_EQ(m.mode == TensorMapSlot::Mode::kIm2col ? m.channels_per_pixel : m.box[0], 32u);
  }
}

// Pointwise fp32 convs of planar tensors run TF32 on channels-last copies: the native NCHW path's M/N-major
// tiles are 16-bit only. A 1x1 at stride 1 reads its copy of x as a plain matrix; split K where the tiles are few.
TEST(ConvWgmmaPlanTest, Tf32PlanarPointwiseRunsOnChannelsLastCopies) {
  const Planned p = test::plan_of(tier(), "conv -n 32 -c 256 -H 56 -W 56 -k 128 -y 1 -x 1 -F 1 --fp32-math tf32");
  EXPECT_EQ(p.config.rfind("tile 128x128x32 ", 0), 0u) << p.config;
  EXPECT_NE(p.config.find("x by TMA (a plain matrix)"), std::string::npos) << p.config;
  EXPECT_NE(p.config.find("; copies "), std::string::npos) << p.config;
  EXPECT_NE(p.config.find("staged: the native NCHW path is 16-bit only"), std::string::npos) << p.config;
  EXPECT_EQ(p.launches.size(), 3u);  // x's copy, the GEMM, y's copy
  // 64 output channels: the copies would cost more than the wgmma saves.
  EXPECT_NE(declined("conv -n 32 -c 256 -H 56 -W 56 -k 64 -y 1 -x 1 -F 1 --fp32-math tf32").find("not 256 and 64"),
            std::string::npos);
}

// The TF32 data face runs as the forward conv of dy on the flipped filter's copy (K-major: TF32 wgmma cannot
// read the filter in place, an N-major B), at stride 1 and by stride phases, with dy by an im2col map.
TEST(ConvWgmmaPlanTest, Tf32DataFaceRunsOnTheFlippedCopy) {
  for (const char* command : {"conv -n 16 -c 256 -H 28 -W 28 -k 512 -y 3 -x 3 -p 1 -q 1 -F 2 --fp32-math tf32",
                              "conv -n 16 -c 256 -H 28 -W 28 -k 128 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 2 --fp32-math tf32",
                              "conv -n 32 -c 256 -H 56 -W 56 -k 512 -y 1 -x 1 -F 2 --fp32-math tf32"}) {
    SCOPED_TRACE(command);
    const Planned p = test::plan_of(tier(), command + kNhwc);
    EXPECT_EQ(p.config.find("tile 128x"), 0u) << p.config;
    EXPECT_NE(p.config.find("x32 stages"), std::string::npos) << p.config;
    EXPECT_NE(p.config.find("dx: face 1 as forward"), std::string::npos) << p.config;
    EXPECT_NE(p.config.find("boo_conv_flip_w"), std::string::npos) << p.config;
    EXPECT_EQ(p.config.find("filter in place"), std::string::npos) << p.config;
    EXPECT_NE(p.config.find("x by TMA"), std::string::npos) << p.config;
    EXPECT_NE(p.source.text.find("kType = 2;"), std::string::npos);
  }
  // Below 2^27 multiply-adds the flipped copy's launch costs more than the wgmma saves.
  EXPECT_NE(declined("conv -n 16 -c 192 -H 24 -W 16 -k 48 -y 1 -x 1 -F 2 --fp32-math tf32" + kNhwc)
                .find("the TF32 data face of at least 134217728 multiply-adds"),
            std::string::npos);
}

// TF32 operands load by TMA only (its TFLOAT32 copy rounds them; cp.async copies would leave the tensor cores to
// truncate them): a filter above 1x1 whose channels are not a multiple of 32 (no im2col map), or the cp.async
// producers asked for, decline.
TEST(ConvWgmmaPlanTest, Tf32DeclinesTheCpAsyncProducers) {
  const std::string tf32 = " --fp32-math tf32" + kNhwc;
  EXPECT_NE(declined("conv -n 8 -c 200 -H 32 -W 32 -k 136 -y 3 -x 3 -p 1 -q 1 -F 1" + tf32)
                .find("both operands load by TMA (its copy rounds them to TF32), not here: an im2col x needs input "
                      "channels that are a multiple of 32"),
            std::string::npos);
  EXPECT_EQ(declined("conv -n 8 -c 224 -H 32 -W 32 -k 136 -y 3 -x 3 -p 1 -q 1 -F 1" + tf32), "");
  ::setenv("BOO_WGMMA_TMA", "0", 1);
  EXPECT_NE(declined("conv -n 8 -c 224 -H 32 -W 32 -k 136 -y 3 -x 3 -p 1 -q 1 -F 1" + tf32).find("BOO_WGMMA_TMA=0"),
            std::string::npos);
  ::unsetenv("BOO_WGMMA_TMA");
  // boo tune's candidates are TF32 configs by TMA only.
  std::unique_ptr<OpProblem> problem = test::problem_of("conv -n 16 -c 672 -H 48 -W 32 -k 576 -y 1 -x 1 -F 1" + tf32);
  ASSERT_TRUE(problem);
  Result<ConfigList> list = tier().candidates(*problem, test::sm90());
  ASSERT_TRUE(list.ok()) << list.status().to_string();
  EXPECT_GT(list->size(), 3u);
  for (const auto& c : *list) EXPECT_NE(c->text().find("x by TMA"), std::string::npos) << c->text();
}

TEST(ConvWgmmaPlanTest, NarrowOutputsTakeTheNarrowTileAndDeeperRing) {
  // K = 128: one 128-wide column tile instead of half a 256-wide one; 32 KiB stages, six of them.
  const Planned p = test::plan_of(tier(), "convfp16 -n 8 -c 128 -H 32 -W 32 -k 128 -y 3 -x 3 -p 1 -q 1 -F 1" + kNhwc);
  ASSERT_EQ(p.launches.size(), 1u);
  EXPECT_EQ(p.config, "tile 128x128x64 stages 6 warpgroups 1 producer + 2 consumers, persistent; y: face 0 as forward, "
                      "filter by TMA, x by TMA (im2col): one producer thread, y by TMA");
  EXPECT_EQ(p.launches[0].grid.x, 8u * 32 * 32 / 128);  // fewer tiles than SMs: one CTA each
  EXPECT_NE(p.source.text.find("kType = 1;"), std::string::npos);
  EXPECT_EQ(params_of<ConvIgemmParams>(p.launches[0]).bias, 0u);
}

TEST(ConvWgmmaPlanTest, SixtyFourOutputChannelsTakeTheSixtyFourWideTile) {
  // K = 64 (ResNet's 64-channel layers): m64n64k16 tiles, not a 128-wide one half idle; 24 KiB stages, six of
  // them. Wider GEMMs keep their wider tiles (NarrowOutputsTakeTheNarrowTileAndDeeperRing). The weight face's
  // rows are the output channels, 128 a tile: it still declines 64 (DeclinesWhatItDoesNotDoWell).
  for (const char* face : {" -F 1", " -F 2"}) {
    const std::string command = std::string("convbfp16 -n 64 -c 64 -H 48 -W 32 -k 64 -y 3 -x 3 -p 1 -q 1") + face + kNhwc;
    SCOPED_TRACE(command);
    const Planned p = test::plan_of(tier(), command);
    EXPECT_EQ(p.config.rfind("tile 128x64x64 stages 6 ", 0), 0u) << p.config;
    EXPECT_NE(p.source.text.find("BN = 64;"), std::string::npos);
  }
}

TEST(ConvWgmmaPlanTest, OutputChannelsTheWideTileWouldWastePickTheMiddleOne) {
  // K = 576: three tiles of 192 (no waste), not three of 256 (a quarter wasted); 40 KiB stages, five of them.
  const Planned p = test::plan_of(tier(), "convbfp16 -n 16 -c 576 -H 48 -W 32 -k 576 -y 3 -x 3 -F 1" + kNhwc);
  ASSERT_EQ(p.launches.size(), 1u);
  EXPECT_EQ(p.config, "tile 128x192x64 stages 5 warpgroups 1 producer + 2 consumers, persistent; y: face 0 as forward, "
                      "filter by TMA, x by TMA (im2col): one producer thread, y by TMA");
  EXPECT_EQ(p.launches[0].grid.x, 132u);  // 16 * 46 * 30 = 22080 pixels: 173 x 3 tiles
}

TEST(ConvWgmmaPlanTest, BackwardDataRunsAsTheForwardConvOfDyWithTheFlippedFilter) {
  // (Through the flipped copy, as boo tune's candidate; the heuristic reads this filter in place:
  // TensorMapTest.DataFaceReadsTheFilterInPlaceWithItsTaps.)
  const test::ScopedEnv flipped_copy("BOO_WGMMA_IN_PLACE_TAPS", "0");
  // dx (C = 768) from dy (K = 2048): the GEMM's reduced channels are K, its output channels C; padding
  // dil x (3 - 1) - 1 = 1. The filter copy W'[r', s', c, k] = W[k, c, 2-r', 2-s'] is a tiled transpose per tap.
  const Planned p = test::plan_of(tier(), "convbfp16 -n 16 -c 768 -H 48 -W 32 -k 2048 -y 3 -x 3 -p 1 -q 1 -F 2" + kNhwc);
  ASSERT_EQ(p.launches.size(), 2u);
  EXPECT_EQ(p.launches[0].entry, "boo_conv_flip_w");
  EXPECT_EQ(p.launches[1].entry, "boo_wgmma_dx");
  EXPECT_NE(p.config.find("dx: face 1 as forward; copies boo_conv_flip_w(2048->2048 tiles 1x64x128 v8/8)"),
            std::string::npos) << p.config;
  EXPECT_EQ(p.workspace_bytes, 2048u * 768 * 9 * 2);
  const auto copy = params_of<ConvChannelPadParams>(p.launches[0]);
  EXPECT_EQ(copy.strided, p.address.at("w"));
  EXPECT_EQ(copy.dense, p.workspace);
  EXPECT_EQ(copy.strides[0], -768);               // tap t' reads tap 8 - t' (KRSC: taps 768 apart)
  EXPECT_EQ(copy.origin, 8 * 768);
  EXPECT_EQ(copy.strides[1], 9 * 768);            // k: a filter row
  EXPECT_EQ(copy.sizes[0], 9);
  const auto params = params_of<ConvIgemmParams>(p.launches[1]);
  EXPECT_EQ(params.a, p.address.at("dy"));
  EXPECT_EQ(params.w, p.workspace);
  EXPECT_EQ(params.out, p.address.at("dx"));
  for (const char* constant : {"kN = 768;", "kC = 2048;", "PH = 1;", "SH = 1;", "XW = 2048;", "WK = 2048;",
                               "WS = 1572864;", "YW = 768;", "kAct = 0;", "kBias = false;"})
    EXPECT_NE(p.source.text.find(constant), std::string::npos) << constant << " in\n" << p.source.text;
}

TEST(ConvWgmmaPlanTest, NchwOperandsRunOnStagedChannelsLastCopies) {
  const Planned p = test::plan_of(tier(), "convfp16 -n 32 -c 256 -H 28 -W 28 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1");
  ASSERT_EQ(p.launches.size(), 4u);
  EXPECT_EQ(p.launches[0].entry, "boo_conv_stage_x");
  EXPECT_EQ(p.launches[1].entry, "boo_conv_stage_w");
  EXPECT_EQ(p.launches[2].entry, "boo_wgmma_y");
  EXPECT_EQ(p.launches[3].entry, "boo_conv_unstage_y");
  const auto params = params_of<ConvIgemmParams>(p.launches[2]);
  EXPECT_NE(params.a, p.address.at("x"));
  EXPECT_NE(params.out, p.address.at("y"));
  EXPECT_EQ(params_of<ConvChannelPadParams>(p.launches[3]).strided, p.address.at("y"));
  // The copies are dense channels-last: x (n, h, w) strides 28 * 28 * 256, 28 * 256, 256.
  for (const char* constant : {"XN = 200704;", "XH = 7168;", "XW = 256;", "WK = 2304;", "YW = 256;"})
    EXPECT_NE(p.source.text.find(constant), std::string::npos) << constant << " in\n" << p.source.text;
}

TEST(ConvWgmmaPlanTest, BackwardWeightSplitsThePixelsAcrossTheSms) {
  const test::ScopedEnv gemm_path("BOO_WGMMA_TAPS", "0");  // (the shifted taps: BackwardWeightByShiftedTaps*)
  // dw[k][r, s, c]: the GEMM 2048 x (9 x 768) over 16 x 48 x 32 = 24576 pixels (384 k-blocks of 64);
  // 16 x 27 tiles of 128 x 256 in three splits of 128 k-blocks: 1296 units over 132 CTAs; the fp32
  // partials of each split in the workspace, summed by a second kernel into dw.
  const Planned p = test::plan_of(tier(), "convbfp16 -n 16 -c 768 -H 48 -W 32 -k 2048 -y 3 -x 3 -p 1 -q 1 -F 4" + kNhwc);
  ASSERT_EQ(p.launches.size(), 2u);
  EXPECT_EQ(p.config,
            "tile 128x256x64 stages 4 warpgroups 1 producer + 2 consumers, persistent; dw: face 2 as weight "
            "gradient, M/N-major tiles, splits 3, dy by TMA, x by TMA (im2col): one producer thread");
  EXPECT_EQ(p.launches[0].entry, "boo_wgmma_dw");
  EXPECT_EQ(p.launches[0].grid.x, 132u);
  EXPECT_EQ(p.launches[0].block.x, 384u);
  EXPECT_EQ(p.launches[1].entry, "boo_wgmma_dw_reduce");
  EXPECT_EQ(p.launches[1].block.x, 256u);
  EXPECT_EQ(p.launches[1].shared_bytes, 0u);
  EXPECT_EQ(p.workspace_bytes, 3u * 2048 * 9 * 768 * 4);
  expect_weight_face_bindings(p);
  EXPECT_NE(p.source.text.find("#include \"boo/conv/conv_wgmma_weight.cuh\""), std::string::npos);
  EXPECT_NE(p.source.text.find("conv_wgmma_weight_reduce<Cfg>"), std::string::npos);
  for (const char* constant : {"kM = 2048;", "kN = 6912;", "kC = 768;", "kL = 24576;", "kSplits = 3;", "BN = 256;",
                               "XN = 1179648;", "XW = 768;", "YN = 3145728;", "YW = 2048;", "WK = 6912;",
                               "WR = 2304;", "WS = 768;", "kIdx32 = true;", "kAct = 0;", "kBias = false;"})
    EXPECT_NE(p.source.text.find(constant), std::string::npos) << constant << " in\n" << p.source.text;
}

TEST(ConvWgmmaPlanTest, BackwardWeightWithEnoughTilesRunsUnsplit) {
  const test::ScopedEnv gemm_path("BOO_WGMMA_TAPS", "0");  // (the shifted taps: BackwardWeightByShiftedTaps*)
  // 4 x 24 tiles of 128 x 192 (K = 512, 9 x 512 columns) over 64 k-blocks: one wave without splitting,
  // so dw is written by the GEMM's own epilogue and no workspace is needed.
  const Planned p = test::plan_of(tier(), "convbfp16 -n 1 -c 512 -H 64 -W 64 -k 512 -y 3 -x 3 -p 1 -q 1 -F 4" + kNhwc);
  ASSERT_EQ(p.launches.size(), 1u);
  EXPECT_EQ(p.config,
            "tile 128x192x64 stages 5 warpgroups 1 producer + 2 consumers, persistent; dw: face 2 as weight "
            "gradient, M/N-major tiles, splits 1, dy by TMA, x by TMA (im2col): one producer thread");
  EXPECT_EQ(p.launches[0].grid.x, 96u);
  EXPECT_EQ(p.workspace_bytes, 0u);
  EXPECT_EQ(p.source.text.find("_reduce"), std::string::npos);
  EXPECT_EQ(params_of<ConvIgemmParams>(p.launches[0]).out, p.address.at("dw"));
}

TEST(ConvWgmmaPlanTest, BackwardWeightSplitsFollowTheSmCount) {
  // The same conv on a part with half the SMs needs half as many units to fill it.
  const std::string command = "convbfp16 -n 128 -c 256 -H 28 -W 28 -k 256 -y 1 -x 1 -F 4" + kNhwc;
  std::unique_ptr<OpProblem> problem = test::problem_of(command);
  ASSERT_TRUE(problem);
  ArchSpec arch = test::sm90();
  auto splits = [&](const ArchSpec& a) {
    Result<std::unique_ptr<const Config>> config = tier().configure(*problem, a);
    EXPECT_TRUE(config.ok()) << config.status().to_string();
    const std::string text = config.ok() ? (*config)->text() : "";
    return text.substr(text.find("splits ") + 7);
  };
  // 2 tiles of 128 x 256 over 1568 k-blocks: 66 splits fill 132 SMs, 33 fill 66.
  EXPECT_EQ(splits(arch), "66, dy by TMA, x by TMA (im2col): one producer thread");
  arch.sm_count = 66;
  arch.wgmma_macs_per_s /= 2;
  EXPECT_EQ(splits(arch), "33, dy by TMA, x by TMA (im2col): one producer thread");
}

TEST(ConvWgmmaPlanTest, BackwardWeightOfSixtyFourChannelsSplitsTheColumnsBetweenConsumers) {
  const test::ScopedEnv gemm_path("BOO_WGMMA_TAPS", "0");  // (the shifted taps: BackwardWeightByShiftedTaps*)
  const auto text = configured_text;
  // 576 columns: 128- or 256-wide tiles (never 192, whose half the wgmma has no width for), split.
  const std::string taps = text("convbfp16 -n 128 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 4");
  EXPECT_TRUE(taps.rfind("tile 128x128x64", 0) == 0 || taps.rfind("tile 128x256x64", 0) == 0) << taps;
  EXPECT_NE(taps.find("consumers split the columns (K <= 64)"), std::string::npos) << taps;
  // 64 columns: the 64-wide tile, which consumer 0 computes alone.
  const std::string narrow = text("convbfp16 -n 128 -c 64 -H 56 -W 56 -k 64 -y 1 -x 1 -F 4");
  EXPECT_NE(narrow.find("tile 128x64x64"), std::string::npos) << narrow;
  EXPECT_NE(narrow.find("consumer 1 idle (K <= 64)"), std::string::npos) << narrow;
  // 96 channels: both consumers have rows.
  const std::string wide = text("convbfp16 -n 16 -c 96 -H 48 -W 32 -k 96 -y 3 -x 3 -p 1 -q 1 -F 4");
  EXPECT_EQ(wide.find("idle"), std::string::npos) << wide;
  EXPECT_EQ(wide.find("split the columns"), std::string::npos) << wide;
}

TEST(ConvWgmmaPlanTest, BackwardWeightOfNchwTensorsRunsOnStagedCopies) {
  // x and dy staged channels-last, dw computed in its copy (KRSC) and copied out to KCRS.
  const Planned p = test::plan_of(tier(), "convfp16 -n 32 -c 256 -H 28 -W 28 -k 256 -y 3 -x 3 -p 1 -q 1 -F 4");
  ASSERT_EQ(p.launches.size(), 5u);
  EXPECT_EQ(p.launches[0].entry, "boo_conv_stage_x");
  EXPECT_EQ(p.launches[1].entry, "boo_conv_stage_dy");
  EXPECT_EQ(p.launches[2].entry, "boo_wgmma_dw");
  EXPECT_EQ(p.launches[3].entry, "boo_wgmma_dw_reduce");
  EXPECT_EQ(p.launches[4].entry, "boo_conv_unstage_dw");
  EXPECT_NE(p.config.find("copies boo_conv_stage_x(256->256 blocks 8x4 v8/8) boo_conv_stage_dy(256->256 blocks "
                          "8x4 v8/8) boo_conv_unstage_dw(256->256 tiles 3x256x9 run v8/8)"),
            std::string::npos)
      << p.config;
  const auto gemm = params_of<ConvIgemmParams>(p.launches[2]);
  const auto reduce = params_of<ConvIgemmParams>(p.launches[3]);
  const auto unstage = params_of<ConvChannelPadParams>(p.launches[4]);
  EXPECT_EQ(gemm.a, params_of<ConvChannelPadParams>(p.launches[0]).dense);
  EXPECT_EQ(gemm.b, params_of<ConvChannelPadParams>(p.launches[1]).dense);
  EXPECT_EQ(gemm.workspace, p.workspace);  // the partials first, then the copies
  EXPECT_EQ(reduce.out, unstage.dense);
  EXPECT_EQ(unstage.strided, p.address.at("dw"));
  EXPECT_GT(unstage.dense, p.workspace);
  // The copies are dense channels-last: x (n, h, w), dy (n, p, q) and dw (k, r, s).
  for (const char* constant : {"XN = 200704;", "XH = 7168;", "XW = 256;", "YN = 200704;", "YW = 256;", "WK = 2304;",
                               "WR = 768;", "WS = 256;"})
    EXPECT_NE(p.source.text.find(constant), std::string::npos) << constant << " in\n" << p.source.text;
}

TEST(ConvWgmmaPlanTest, BackwardWeightTakesStrideDilationAndOneDimension) {
  // x is gathered per tap, so any stride and dilation; 1-D convs are 2-D ones of height 1.
  for (const std::string& command : {
           "convbfp16 -n 8 -c 128 -H 56 -W 56 -k 256 -y 1 -x 1 -u 2 -v 2 -F 4" + kNhwc,
           "convbfp16 -n 16 -c 128 -H 28 -W 28 -k 128 -y 3 -x 3 -p 2 -q 2 -l 2 -j 2 -F 4" + kNhwc,
           std::string("convbfp16 --spatial_dim 1 -n 64 -c 128 -H 128 -k 256 -y 5 -p 2 -l 2 -F 4 --in_layout NHC "
                       "--fil_layout NHC --out_layout NHC"),
           std::string("convfp16 -n 16 -c 128 -H 16 -W 16 -k 256 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -Y 1 -X 1 -m trans -F 4"),
       }) {
    SCOPED_TRACE(command);
    EXPECT_EQ(declined(command), "");
    const Planned p = test::plan_of(tier(), command);
    EXPECT_NE(p.config.find("dw: face 2 as weight gradient"), std::string::npos) << p.config;
  }
  const Planned p = test::plan_of(tier(), "convbfp16 -n 16 -c 128 -H 28 -W 28 -k 128 -y 3 -x 3 -p 2 -q 2 -l 2 -j 2 -F 4" +
                                             kNhwc);
  for (const char* constant : {"SH = 1;", "PH = 2;", "DH = 2;", "DW = 2;", "P = 28;", "kL = 12544;"})
    EXPECT_NE(p.source.text.find(constant), std::string::npos) << constant << " in\n" << p.source.text;
}

// Reduced channels that are a multiple of 8 but not of 64 (BOO's 413: C = 288, 144, 672, ...): the
// k-blocks pack the (tap, channel) reduction, so every face of such a conv plans on the tier.
TEST(ConvWgmmaPlanTest, TakesReducedChannelsThatAreAMultipleOf8InEveryFace) {
  struct Case {
    std::string command, config;  // a part of the config
    std::vector<std::string> constants;
  };
  for (const Case& c : {
           Case{"convbfp16 -n 16 -c 288 -H 48 -W 32 -k 288 -y 3 -x 3 -p 1 -q 1 -F 1" + kNhwc,
                "tile 128x192x64 stages 5 warpgroups 1 producer + 2 consumers, persistent; y: face 0 as forward",
                {"kC = 288;", "kN = 288;", "WK = 2592;", "WS = 288;", "XW = 288;"}},
           // dx reduces over dy's 288 channels; the flipped copy's rows are 288 wide.
           Case{"convbfp16 -n 16 -c 288 -H 48 -W 32 -k 288 -y 3 -x 3 -p 1 -q 1 -F 2" + kNhwc,
                "dx: face 1 as forward; copies boo_conv_flip_w", {"kC = 288;", "kN = 288;", "WK = 288;"}},
           Case{"convfp16 -n 16 -c 144 -H 24 -W 16 -k 144 -y 3 -x 3 -p 2 -q 2 -l 2 -j 2 -F 2" + kNhwc,
                "dx: face 1 as forward", {"kType = 1;", "kC = 144;", "kN = 144;", "DH = 2;", "PH = 2;"}},
           Case{"convbfp16 -n 16 -c 672 -H 48 -W 32 -k 576 -y 1 -x 1 -F 1" + kNhwc, "y: face 0 as forward",
                {"kC = 672;", "kN = 576;", "WK = 672;"}},
           Case{"convfp16 -n 8 -c 200 -H 32 -W 32 -k 136 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 --activation relu" + kNhwc,
                "y: face 0 as forward", {"kC = 200;", "kN = 136;", "kBias = true;"}},
           // The weight face's columns: 9 taps x 288 channels, packed (2592, not 9 x 320).
           Case{"convbfp16 -n 16 -c 288 -H 48 -W 32 -k 288 -y 3 -x 3 -p 1 -q 1 -F 4" + kNhwc, "dw: face 2 as weight gradient",
                {"kM = 288;", "kN = 2592;", "kC = 288;", "kL = 24576;"}},
           Case{"convfp16 -n 16 -c 144 -H 24 -W 16 -k 144 -y 5 -x 5 -p 8 -q 8 -l 4 -j 4 -F 4" + kNhwc,
                "dw: face 2 as weight gradient", {"kN = 3600;", "kC = 144;", "DW = 4;"}},
           Case{"convbfp16 -n 16 -c 96 -H 48 -W 32 -k 128 -y 3 -x 3 -p 1 -q 1 -F 4" + kNhwc,
                "dw: face 2 as weight gradient", {"kM = 128;", "kN = 864;", "kC = 96;"}},
       }) {
    SCOPED_TRACE(c.command);
    EXPECT_EQ(declined(c.command), "");
    const Planned p = test::plan_of(tier(), c.command);
    EXPECT_NE(p.config.find(c.config), std::string::npos) << p.config;
    for (const std::string& constant : c.constants)
      EXPECT_NE(p.source.text.find(constant), std::string::npos) << constant << " in\n" << p.source.text;
  }
}

TEST(ConvWgmmaPlanTest, TakesBackwardWeightByDefault) {
  const std::string command = "convbfp16 -n 128 -c 256 -H 28 -W 28 -k 256 -y 1 -x 1 -F 4" + kNhwc;
  EXPECT_EQ(declined(command), "");
}

TEST(ConvWgmmaPlanTest, DeclinesWhatItDoesNotDoWell) {
  const std::string geometry = " -n 16 -c 768 -H 48 -W 32 -k 2048 -y 3 -x 3 -p 1 -q 1";
  struct Case {
    std::string command, arch, reason;  // a part of the reason
  };
  for (const Case& c : {
           Case{"convbfp16" + geometry + " -F 1" + kNhwc, "sm_80", "sm_90a only"},
           Case{"conv" + geometry + " -F 1" + kNhwc, "sm_90a", "fp32 with --fp32-math tf32 only, not float32 at full precision"},
           Case{"conv" + geometry + " -F 4 --fp32-math tf32" + kNhwc, "sm_90a", "tf32 on the forward and data faces only"},
           Case{"convbfp16" + geometry + " -F 0" + kNhwc, "sm_90a", "one direction at a time"},
           Case{"convbfp16" + geometry + " -F 5" + kNhwc, "sm_90a", "one direction at a time"},
           Case{"convbfp16" + geometry + " -F 4 -b 1" + kNhwc, "sm_90a", "without a bias gradient"},
           Case{"convbfp16 -n 16 -c 36 -H 48 -W 32 -k 256 -y 3 -x 3 -F 4" + kNhwc, "sm_90a",
                "input channels are a multiple of 8, not 36 (channels from 64 are padded, groups 1)"},
           Case{"convbfp16 -n 16 -c 128 -H 48 -W 32 -k 36 -y 3 -x 3 -F 4" + kNhwc, "sm_90a", "multiple of 8, not 36"},
           // (Groups are not padded.)
           Case{"convbfp16 -n 16 -c 256 -H 48 -W 32 -k 260 -y 3 -x 3 -g 2 -F 4" + kNhwc, "sm_90a",
                "output channels per group that are a multiple of 8, not 130"},
           Case{"convbfp16 -n 16 -c 128 -H 48 -W 32 -k 32 -y 3 -x 3 -F 4" + kNhwc, "sm_90a",
                "48 output channels (the weight face: 256 pixels), not 22080 and 32"},
           Case{"convbfp16 -n 1 -c 128 -H 16 -W 16 -k 256 -y 3 -x 3 -F 4" + kNhwc, "sm_90a", "4096 output pixels"},
           Case{"convbfp16 -n 16 -c 512 -H 48 -W 32 -k 1024 -y 3 -x 3 -p 1 -q 1 -g 32 -F 4" + kNhwc, "sm_90a",
                "grouped convs with at least 64 output channels per group, not 32"},
           Case{"convfp16" + geometry + " -F 4" + kNhwc, "sm_80", "sm_90a only"},
           Case{"convbfp16" + geometry + " -u 2 -v 2 -l 2 -j 2 -F 2" + kNhwc, "sm_90a",
                "strided data face (backward data) at dilation 1 only, not stride 2x2 with dilation 2x2"},
           Case{"convbfp16 -n 16 -c 768 -H 48 -W 32 -k 768 -y 3 -x 3 -g 16 -F 1" + kNhwc, "sm_90a",
                "at least 64 output channels per group, not 48"},
           Case{"convbfp16 -n 16 -c 288 -H 24 -W 16 -k 288 -y 1 -x 1 -g 3 -F 2" + kNhwc, "sm_90a",
                "grouped data face of at least 8192 output pixels, not 6144"},
           Case{"convbfp16 -n 16 -c 768 -H 48 -W 32 -k 768 -y 3 -x 3 -g 64 -F 1" + kNhwc, "sm_90a",
                "reduced channels per group that are a multiple of 8, not 12"},
           Case{"convbfp16 -n 16 -c 768 -H 48 -W 32 -k 2048 -y 1 -x 1 -p 1 -q 1 -F 2" + kNhwc, "sm_90a",
                "padding <= dilation"},
           Case{"convbfp16 -n 16 -c 36 -H 48 -W 32 -k 2048 -y 3 -x 3 -F 1" + kNhwc, "sm_90a",
                "reduced channels that are a multiple of 8, not 36"},
           Case{"convbfp16 -n 16 -c 2048 -H 48 -W 32 -k 36 -y 3 -x 3 -p 1 -q 1 -F 2" + kNhwc, "sm_90a",
                "reduced channels that are a multiple of 8, not 36 (channels from 64 are padded, groups 1)"},
           Case{"convbfp16 -n 16 -c 128 -H 48 -W 32 -k 36 -y 3 -x 3 -F 1" + kNhwc, "sm_90a", "multiple of 8, not 36"},
           // (Below the floor a forward conv runs here split where the model says that wins: conv_wgmma_split_test.cpp.)
           Case{"convbfp16 -n 1 -c 64 -H 16 -W 16 -k 256 -y 3 -x 3 -F 1" + kNhwc, "sm_90a", "4096 output pixels"},
           // Fewer than 128 output channels: the data face from 65536 pixels where it has several taps and reduces
           // fewer than 320 (from 4096 as a 1x1 or reducing more), a reduction of a k-block at least.
           Case{"convbfp16 -n 16 -c 96 -H 48 -W 32 -k 96 -y 1 -x 3 -p 0 -q 1 -F 2" + kNhwc, "sm_90a",
                "fewer than 128 output channels with at least 65536 output pixels and a reduction of 64, not 24576 and 288"},
           Case{"convbfp16 -n 16 -c 96 -H 48 -W 32 -k 48 -y 1 -x 1 -F 2" + kNhwc, "sm_90a",
                "fewer than 128 output channels with at least 4096 output pixels and a reduction of 64, not 24576 and 48"},
           Case{"convbfp16 -n 16 -c 40 -H 96 -W 64 -k 96 -y 1 -x 1 -F 1" + kNhwc, "sm_90a",
                "at least 4096 output pixels and a reduction of 64, not 98304 and 40 (96 channels)"},
           // (Below 64 channels as well: the small-GEMM exception was measured on 128 and more.)
           Case{"convbfp16 -n 1 -c 8 -H 6 -W 6 -k 8 -F 1" + kNhwc, "sm_90a",
                "at least 4096 output pixels and a reduction of 64, not 16 and 72 (8 channels)"},
           Case{"convbfp16 -_ 3 -n 4 -c 64 --in_d 8 -H 16 -W 16 -k 128 --fil_d 3 -y 3 -x 3 -F 1 "
                "--in_layout NDHWC --fil_layout NDHWC --out_layout NDHWC",
                "sm_90a", "1-D and 2-D"},
       }) {
    SCOPED_TRACE(c.command);
    const std::string why = declined(c.command, c.arch);
    EXPECT_NE(why.find(c.reason), std::string::npos) << why;
    EXPECT_NE(why.find("gpu:conv:wgmma_sm90"), std::string::npos) << why;
  }
}

// Data faces of fewer than 128 result channels run here from 4096 pixels as 1x1s or where they reduce at
// least 320 (a 3x3 of 96 channels: 864), measured faster than gpu:conv:implicit_gemm on BOO's 413.
TEST(ConvWgmmaPlanTest, TakesNarrowDataFacesThatAre1x1OrReduceEnough) {
  for (const std::string command : {"convbfp16 -n 16 -c 96 -H 48 -W 32 -k 96 -y 3 -x 3 -p 1 -q 1 -F 2" + kNhwc,
                                    "convbfp16 -n 16 -c 96 -H 48 -W 32 -k 96 -y 1 -x 1 -F 2" + kNhwc,
                                    "convbfp16 -n 16 -c 64 -H 38 -W 19 -k 64 -y 5 -x 1 -p 2 -q 0 -F 2" + kNhwc})
    EXPECT_TRUE(test::accepts(tier(), command)) << command;
}

// Every face from 48 output channels (a 64-wide tile a quarter idle; the weight face's 128-row tile 80 rows),
// measured faster there; not 40.
TEST(ConvWgmmaPlanTest, TakesEveryFaceFrom48OutputChannels) {
  for (const char* face : {"1", "2", "4"})
    EXPECT_TRUE(test::accepts(tier(), "convbfp16 -n 16 -c 48 -H 48 -W 32 -k 48 -y 3 -x 3 -p 1 -q 1 -F " +
                                          std::string(face) + kNhwc))
        << face;
  EXPECT_FALSE(test::accepts(tier(), "convbfp16 -n 16 -c 40 -H 96 -W 64 -k 40 -y 1 -x 1 -F 4" + kNhwc));
  EXPECT_FALSE(test::accepts(tier(), "convbfp16 -n 16 -c 40 -H 96 -W 64 -k 96 -y 1 -x 1 -F 2" + kNhwc));
}

// The strided data face runs as one launch of every stride phase (conv_wgmma_slices.cuh): each
// phase's stride-1 conv of dy on the phases' common output grid, its taps a stride apart in the
// flipped filter copy, its pixels a stride apart in dx.
TEST(ConvWgmmaPlanTest, StridedBackwardDataRunsItsStridePhasesInOneLaunch) {
  setenv(kUnverifiedKernelsVariable, "1", 1);
  const test::ScopedEnv flipped_copy("BOO_WGMMA_IN_PLACE_TAPS", "0");  // (the flipped copy's phases, as boo tune's candidate)
  // dx 48 x 32 (C = 2048) from dy 16 x 32 (K = 2048), 3 taps along H at stride 3: three phases of
  // one tap each on a grid of 16 x 32; 16 x 16 x 32 / 128 = 64 row tiles x 8 column tiles x 3.
  const Planned p = test::plan_of(tier(), "convbfp16 -n 16 -c 2048 -H 48 -W 32 -k 2048 -y 3 -x 1 -p 1 -q 0 -u 3 -v 1 -F 2" + kNhwc);
  ASSERT_EQ(p.launches.size(), 2u);
  EXPECT_EQ(p.launches[0].entry, "boo_conv_flip_w");
  EXPECT_EQ(p.launches[1].entry, "boo_wgmma_dx");
  EXPECT_EQ(p.launches[1].grid.x, 132u);
  EXPECT_NE(p.config.find("dx: face 1 as forward, 3x1 stride phases; copies boo_conv_flip_w"), std::string::npos)
      << p.config;
  const auto params = params_of<ConvIgemmParams>(p.launches[1]);
  EXPECT_EQ(params.a, p.address.at("dy"));
  EXPECT_EQ(params.w, p.workspace);
  EXPECT_EQ(params.out, p.address.at("dx"));
  // The copy's taps are 2048 x 2048 apart (WR: 3 of them), dx's rows 32 x 2048 (YH: 3 of them).
  for (const char* constant : {"kM = 8192;", "kN = 2048;", "kC = 2048;", "H = 16;", "P = 16;", "Q = 32;", "R = 1;",
                               "S = 1;", "SH = 1;", "PH = 0;", "WK = 2048;", "WR = 12582912;", "YH = 196608;",
                               "YW = 2048;", "kPhases = 3;", "UH = 3;", "UW = 1;", "FR = 3;", "FS = 1;", "DPH = 1;",
                               "DPW = 0;", "OH = 48;", "OW = 32;", "kGroups = 1;"})
    EXPECT_NE(p.source.text.find(constant), std::string::npos) << constant << " in\n" << p.source.text;
  unsetenv(kUnverifiedKernelsVariable);
}

// A grouped conv's groups are slices of one launch: a group's GEMM (its channels) with the
// group's offsets in x, w and y (the data face: dy, the flipped copy's columns and dx).
// Channels from 64 that are not a multiple of 8 (BOO's 413: a 1x1 conv of 419 input channels) run on copies
// padded with zeros to one: the forward face's x and filter along the reduction, its y's channels; the data
// face's dx (the GEMM's 419 columns, the last chunk stored whole into the padded copy); the weight face's x and
// dw. The kernel's GEMM keeps the real output channels (kN), so the bias of the padding is never read.
TEST(ConvWgmmaPlanTest, ChannelsThatAreNotAMultipleOf8RunOnPaddedCopies) {
  const std::string shape = " -n 128 -c 419 -H 48 -W 32 -k 384 -y 1 -x 1";
  // (The forward face pads its reduction for filters above 1x1: a 1x1 conv's copy would cost as much as it.)
  EXPECT_NE(declined("convbfp16" + shape + " -F 1" + kNhwc).find("for filters above 1x1"), std::string::npos);
  const Planned f = test::plan_of(tier(), "convbfp16 -n 128 -c 419 -H 48 -W 32 -k 384 -y 3 -x 3 -p 1 -q 1 -F 1" + kNhwc);
  EXPECT_NE(f.config.find("copies boo_conv_pad_x(419->424 pixels v8 rows 1 i32) boo_conv_pad_w(419->424"),
            std::string::npos)
      << f.config;
  for (const char* constant : {"kC = 424;", "kN = 384;", "XW = 424;", "WK = 3816;", "WS = 424;", "YW = 384;"})
    EXPECT_NE(f.source.text.find(constant), std::string::npos) << constant << " in\n" << f.source.text;
  // dx's channels are contiguous: no copy, the epilogue stores its 419-channel rows element by element.
  const Planned d = test::plan_of(tier(), "convbfp16" + shape + " -F 2" + kNhwc);
  EXPECT_NE(d.config.find(", y stored element by element (unaligned rows)"), std::string::npos) << d.config;
  ASSERT_EQ(d.launches.size(), 2u);  // the flipped filter, the GEMM
  EXPECT_EQ(d.launches[1].entry, "boo_wgmma_dx");
  EXPECT_EQ(params_of<ConvIgemmParams>(d.launches[1]).out, d.address.at("dx"));  // (no TMA: the plain block)
  for (const char* constant : {"kC = 384;", "kN = 419;", "YW = 419;", "kElementStores = true;"})
    EXPECT_NE(d.source.text.find(constant), std::string::npos) << constant << " in\n" << d.source.text;
  const Planned w = test::plan_of(tier(), "convbfp16" + shape + " -F 4" + kNhwc);
  EXPECT_NE(w.config.find("copies boo_conv_pad_x(419->424 pixels v8 rows 1 i32) boo_conv_unpad_dw(419->424"),
            std::string::npos)
      << w.config;
  for (const char* constant : {"kM = 384;", "kN = 424;", "kC = 424;", "WK = 424;"})
    EXPECT_NE(w.source.text.find(constant), std::string::npos) << constant << " in\n" << w.source.text;
  // Output channels too (the forward's y in a padded copy, the weight face's dy padded and dw's rows), and a
  // bias over the real ones; NCHW operands copy and pad in one pass.
  const Planned k = test::plan_of(tier(), "convbfp16 -n 16 -c 192 -H 24 -W 16 -k 194 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1" + kNhwc);
  EXPECT_NE(k.config.find("y stored element by element"), std::string::npos) << k.config;
  EXPECT_NE(k.source.text.find("kN = 194;"), std::string::npos) << k.source.text;
  // An NCHW y is copied out anyway: its copy is padded, and the epilogue stores 16-byte vectors into it.
  const Planned kn = test::plan_of(tier(), "convbfp16 -n 16 -c 192 -H 24 -W 16 -k 194 -y 3 -x 3 -p 1 -q 1 -F 1");
  EXPECT_NE(kn.config.find("boo_conv_unpad_y(194->200"), std::string::npos) << kn.config;
  EXPECT_EQ(kn.source.text.find("kElementStores"), std::string::npos) << kn.source.text;
  const Planned kw = test::plan_of(tier(), "convbfp16 -n 16 -c 192 -H 24 -W 16 -k 194 -y 3 -x 3 -p 1 -q 1 -F 4" + kNhwc);
  EXPECT_NE(kw.config.find("boo_conv_pad_dy(194->200"), std::string::npos) << kw.config;
  EXPECT_NE(kw.source.text.find("kM = 200;"), std::string::npos) << kw.source.text;
  // The data face's reduction (dy's 194 channels): dy and the flipped filter's kb padded alike, strided too.
  const Planned kd = test::plan_of(tier(), "convbfp16 -n 16 -c 192 -H 24 -W 16 -k 194 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 2" + kNhwc);
  EXPECT_NE(kd.config.find("copies boo_conv_flip_w(194->200"), std::string::npos) << kd.config;
  EXPECT_NE(kd.config.find("boo_conv_pad_dy(194->200"), std::string::npos) << kd.config;
  for (const char* constant : {"kC = 200;", "kN = 192;", "WK = 200;", "XW = 200;"})
    EXPECT_NE(kd.source.text.find(constant), std::string::npos) << constant << " in\n" << kd.source.text;
  const Planned n = test::plan_of(tier(), "convfp16 -n 16 -c 194 -H 24 -W 16 -k 192 -y 3 -x 3 -p 1 -q 1 -F 1");
  EXPECT_NE(n.config.find("boo_conv_pad_x(194->200"), std::string::npos) << n.config;
  EXPECT_NE(n.source.text.find("kC = 200;"), std::string::npos) << n.source.text;
}

TEST(ConvWgmmaPlanTest, SixtyFourChannelGroupsTakeTheSixtyFourWideTile) {
  // -g 6 of 384: each group's GEMM is 64 channels wide, all of a 64-wide tile.
  for (const char* face : {" -F 1", " -F 2"}) {
    const Planned p = test::plan_of(tier(), "convbfp16 -n 128 -c 384 -H 48 -W 32 -k 384 -y 3 -x 3 -p 1 -q 1 -g 6" +
                                                std::string(face) + kNhwc);
    EXPECT_EQ(p.config.rfind("tile 128x64x64", 0), 0u) << p.config;
    EXPECT_NE(p.config.find("6 groups"), std::string::npos) << p.config;
  }
}

// A grouped NCHW forward stages its filter as [K][R][S][C / groups]: the kernel steps it by a group's channels
// (it stepped by all of them, reading past each filter row: garbage on the GPU, 2026-11-27; the fix passed there).
TEST(ConvWgmmaPlanTest, GroupedNchwFilterCopyIsSteppedByAGroupsChannels) {
  const std::string command = "convfp16 -n 16 -c 384 -H 28 -W 28 -k 384 -y 3 -x 3 -p 1 -q 1 -g 6 -F 1";
  const Planned p = test::plan_of(tier(), command);
  EXPECT_NE(p.config.find("6 groups; copies boo_conv_stage_x(384->384"), std::string::npos) << p.config;
  EXPECT_NE(p.config.find("boo_conv_stage_w(64->64"), std::string::npos) << p.config;
  for (const char* constant : {"kC = 64;", "WK = 576;", "WR = 192;", "WS = 64;", "GW = 36864;", "XW = 384;"})
    EXPECT_NE(p.source.text.find(constant), std::string::npos) << constant << " in\n" << p.source.text;
}

TEST(ConvWgmmaPlanTest, GroupsAreSlicesOfOneLaunch) {
  const Planned f = test::plan_of(tier(), "convbfp16 -n 128 -c 384 -H 48 -W 32 -k 384 -y 3 -x 3 -p 1 -q 1 -g 3 -F 1 -b 1" + kNhwc);
  ASSERT_EQ(f.launches.size(), 1u);
  EXPECT_NE(f.config.find("y: face 0 as forward, 3 groups"), std::string::npos) << f.config;
  for (const char* constant : {"kN = 128;", "kC = 128;", "kGroups = 3;", "GA = 128;", "GW = 147456;", "GY = 128;",
                               "WK = 1152;", "kPhases = 1;", "kBias = true;"})
    EXPECT_NE(f.source.text.find(constant), std::string::npos) << constant << " in\n" << f.source.text;
  const Planned d = test::plan_of(tier(), "convbfp16 -n 128 -c 384 -H 48 -W 32 -k 384 -y 3 -x 3 -p 1 -q 1 -g 3 -F 2" + kNhwc);
  ASSERT_EQ(d.launches.size(), 2u);
  EXPECT_NE(d.config.find("dx: face 1 as forward, 3 groups; copies boo_conv_flip_w(384->384"), std::string::npos)
      << d.config;
  // The copy [r'][s'][c < 128][kb < 384]: group g's filter is its columns g * 128 ...
  EXPECT_EQ(d.workspace_bytes, 384u * 128 * 9 * 2);
  for (const char* constant : {"kN = 128;", "kC = 128;", "kGroups = 3;", "GA = 128;", "GW = 128;", "GY = 128;",
                               "WK = 384;", "WS = 49152;"})
    EXPECT_NE(d.source.text.find(constant), std::string::npos) << constant << " in\n" << d.source.text;
}

// The grouped weight face: group g's GEMM is group 0's with dy's channels, x's channels and dw's rows moved
// (GW, GA, GY); its units are (tile, group, split), so the workspace holds every group's partials per split.
TEST(ConvWgmmaPlanTest, GroupedWeightFacesAreUnitsOfOneLaunch) {
  const test::ScopedEnv gemm_path("BOO_WGMMA_TAPS", "0");  // (the shifted taps: BackwardWeightByShiftedTaps*)
  // 6 groups of 64 -> 64 channels: each group's GEMM 64 x (9 x 64) over 128 x 48 x 32 pixels.
  const Planned w = test::plan_of(tier(), "convbfp16 -n 128 -c 384 -H 48 -W 32 -k 384 -y 3 -x 3 -p 1 -q 1 -g 6 -F 4" + kNhwc);
  ASSERT_EQ(w.launches.size(), 2u);
  EXPECT_NE(w.config.find("dw: face 2 as weight gradient"), std::string::npos) << w.config;
  EXPECT_NE(w.config.find("consumers split the columns (K <= 64), 6 groups, dy by TMA, x by TMA (im2col)"),
            std::string::npos)
      << w.config;
  const std::string splits = w.config.substr(w.config.find("splits ") + 7);
  const long long split_count = std::stoll(splits);
  EXPECT_GT(split_count, 1) << w.config;
  EXPECT_EQ(w.workspace_bytes, static_cast<size_t>(split_count) * 6 * 64 * 576 * 4);
  for (const char* constant : {"kM = 64;", "kN = 576;", "kC = 64;", "kL = 196608;", "kGroups = 6;", "GA = 64;",
                               "GW = 64;", "GY = 36864;", "WK = 576;"})
    EXPECT_NE(w.source.text.find(constant), std::string::npos) << constant << " in\n" << w.source.text;
  // The reduce covers every group's elements.
  EXPECT_EQ(w.launches[1].entry, "boo_wgmma_dw_reduce");
  EXPECT_EQ(w.launches[1].grid.x, 6u * 64 * 576 / 256);
  // NCHW: x and dy staged channels-last, dw unstaged from (k, r, s, c < 64) rows.
  const Planned n = test::plan_of(tier(), "convfp16 -n 32 -c 256 -H 28 -W 28 -k 256 -y 3 -x 3 -p 1 -q 1 -g 2 -F 4");
  EXPECT_NE(n.config.find("2 groups; copies boo_conv_stage_x(256->256"), std::string::npos) << n.config;
  EXPECT_NE(n.config.find("boo_conv_unstage_dw(128->128"), std::string::npos) << n.config;
  for (const char* constant : {"kM = 128;", "kC = 128;", "kGroups = 2;", "GA = 128;", "GW = 128;", "GY = 147456;"})
    EXPECT_NE(n.source.text.find(constant), std::string::npos) << constant << " in\n" << n.source.text;
}

// Dispatch plans a 3-D conv whose extra dim changes nothing as the 2-D conv of the same memory
// (ConvOp::simpler_signature): BOO's patchify and one-tap-depth convs run on the Hopper tier, which takes 2-D
// convs only; the problem it plans is the 2-D one. An NCDHW conv of a one-tap depth is not folded (its
// depths are not one stride apart from its images) and stays on the tiers of 3-D convs.
TEST(ConvWgmmaPlanTest, DispatchPlansFoldableThreeDConvsAsTwoD) {
  const std::string ndhwc = " --in_layout NDHWC --out_layout NDHWC --fil_layout NDHWC";
  struct Case {
    std::string command, planned;
  } cases[] = {
      {"convbfp16 -n 16 -c 288 --in_d 8 -H 48 -W 32 -k 288 --fil_d 2 -y 1 -x 1 --conv_stride_d 2 --spatial_dim 3 -F 2" +
           ndhwc,
       "convbfp16 -n 16 -c 288 -H 8 -W 1536 -k 288 -y 2 -x 1 -p 0 -q 0 -u 2 -v 1"},
      {"convbfp16 -n 16 -c 288 --in_d 4 -H 48 -W 32 -k 288 --fil_d 1 -y 3 -x 3 -p 1 -q 1 --spatial_dim 3 -g 3 -F 4" +
           ndhwc,
       "convbfp16 -n 64 -c 288 -H 48 -W 32 -k 288 -y 3 -x 3 -p 1 -q 1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.command);
    Result<ParsedCommand> parsed = parse_command(std::string_view(c.command));
    ASSERT_TRUE(parsed.ok());
    Result<runtime::Dispatch> d = runtime::choose_gpu_implementation(*parsed->signature, *DeviceInfo::for_arch("sm_90a"));
    ASSERT_TRUE(d.ok() && d->chosen) << (d.ok() ? d->failure().to_string() : d.status().to_string());
    EXPECT_EQ(d->chosen->name(), "gpu:conv:wgmma_sm90");
    const std::string planned = d->problem->signature().command();
    EXPECT_EQ(planned.rfind(c.planned, 0), 0u) << planned;
  }
  Result<ParsedCommand> ncdhw = parse_command(
      std::string_view("convbfp16 -n 16 -c 288 --in_d 4 -H 48 -W 32 -k 288 --fil_d 1 -y 3 -x 3 -p 1 -q 1 "
                       "--spatial_dim 3 -F 1"));
  ASSERT_TRUE(ncdhw.ok());
  Result<runtime::Dispatch> d = runtime::choose_gpu_implementation(*ncdhw->signature, *DeviceInfo::for_arch("sm_90a"));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(dynamic_cast<const boo::ConvSignature&>(d->problem->signature()).spatial_dims, 3);
}

TEST(ConvWgmmaPlanTest, BackwardWeightByShiftedTapsPlansStripsAndTheReduce) {
  // ResNet-50's 64-channel 3x3 weight gradient: one tile (64 output channels by the 9 taps of 64 channels)
  // over 128 x 14 x 4 strips of 4 x 16 output pixels, split 131 ways over the SMs; three consumer warpgroups
  // (a filter row each) beside the producer: 512 threads; 6 stages of 8 KiB (dy) + 14 KiB (x's 13.5 KiB box,
  // 1024-byte aligned); the fp32 partials summed (and converted to bf16) by the weight face's reduce.
  const Planned p = test::plan_of(tier(), "convbfp16 -n 128 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 4" + kNhwc);
  EXPECT_EQ(p.config,
            "tile 64x576 (64 output channels by every tap of 64 channels) stages 6 warpgroups 1 producer + 3 "
            "consumers (one per filter row), persistent; dw: face 2 as weight gradient by shifted taps: strips of "
            "4x16 output pixels, x once per strip by TMA, splits 131");
  ASSERT_EQ(p.launches.size(), 2u);
  EXPECT_EQ(p.launches[0].entry, "boo_wgmma_dw");
  EXPECT_EQ(p.launches[0].grid.x, 131u);
  EXPECT_EQ(p.launches[0].block.x, 512u);
  EXPECT_EQ(p.launches[0].shared_bytes, 6u * (8192 + 14336) + 1024 + 256);
  EXPECT_EQ(p.launches[1].entry, "boo_wgmma_dw_reduce");
  EXPECT_EQ(p.workspace_bytes, 131u * 64 * 576 * 4);
  expect_weight_face_bindings(p);
  EXPECT_NE(p.source.text.find("#include \"boo/conv/conv_wgmma_weight_taps.cuh\""), std::string::npos);
  EXPECT_NE(p.source.text.find("__launch_bounds__(512, 1) boo_wgmma_dw("), std::string::npos) << p.source.text;
  EXPECT_NE(p.source.text.find("conv_wgmma_weight_taps<Cfg>(p.p, &p.tma_a, &p.tma_b)"), std::string::npos);
  for (const char* constant : {"kStripRows = 4;", "kStripCols = 16;", "kSplits = 131;", "kM = 64;", "kN = 576;",
                               "kC = 64;", "kL = 401408;", "kTmaX = true;"})
    EXPECT_NE(p.source.text.find(constant), std::string::npos) << constant << " in\n" << p.source.text;
  // One group's unsplit sums still go through the reduce, which writes dw in its type.
  const Planned one = test::plan_of(tier(), "convbfp16 -n 16 -c 768 -H 48 -W 32 -k 2048 -y 3 -x 3 -p 1 -q 1 -F 4" + kNhwc);
  EXPECT_NE(one.config.find("by shifted taps: strips of 4x16 output pixels, x once per strip by TMA, splits 1"),
            std::string::npos)
      << one.config;
  ASSERT_EQ(one.launches.size(), 2u);
  EXPECT_EQ(one.launches[1].entry, "boo_wgmma_dw_reduce");
  EXPECT_EQ(one.workspace_bytes, 2048u * 9 * 768 * 4);
}

TEST(ConvWgmmaPlanTest, BackwardWeightByShiftedTapsWhereItWasMeasuredFaster) {
  const auto config = configured_text;
  auto taps = [&](const std::string& command) { return config(command).find("by shifted taps") != std::string::npos; };
  // At most 64 output channels a group, enough strips: BOO's 225 x 225 and ResNet's 56 x 56, -g 6 of 384.
  EXPECT_TRUE(taps("convbfp16 -n 16 -c 64 -H 225 -W 225 -k 64 -y 3 -x 3 -p 1 -q 1 -F 4"));
  EXPECT_TRUE(taps("convbfp16 -n 16 -c 64 -H 75 -W 75 -k 64 -y 1 -x 3 -p 0 -q 1 -F 4"));
  EXPECT_TRUE(taps("convbfp16 -n 128 -c 384 -H 48 -W 32 -k 384 -y 3 -x 3 -p 1 -q 1 -g 6 -F 4"));
  // Wider, where the strips cover the output exactly (48 x 32).
  EXPECT_TRUE(taps("convbfp16 -n 16 -c 576 -H 48 -W 32 -k 576 -y 3 -x 3 -p 1 -q 1 -F 4"));
  // Wider at 28 x 28 (an eighth of the strips' pixels past the output) and too few strips: the GEMM path.
  EXPECT_FALSE(taps("convbfp16 -n 128 -c 128 -H 28 -W 28 -k 128 -y 3 -x 3 -p 1 -q 1 -F 4"));
  EXPECT_FALSE(taps("convbfp16 -n 16 -c 64 -H 38 -W 38 -k 64 -y 3 -x 3 -p 1 -q 1 -F 4"));
  {
    const test::ScopedEnv everywhere("BOO_WGMMA_TAPS", "all");
    EXPECT_TRUE(taps("convbfp16 -n 128 -c 128 -H 28 -W 28 -k 128 -y 3 -x 3 -p 1 -q 1 -F 4"));
  }
  {
    const test::ScopedEnv nowhere("BOO_WGMMA_TAPS", "0");
    EXPECT_FALSE(taps("convbfp16 -n 16 -c 64 -H 225 -W 225 -k 64 -y 3 -x 3 -p 1 -q 1 -F 4"));
  }
  // Shapes the kernel does not take, even when asked everywhere: channels not a multiple of 64, stride 2
  // along W, 5 x 5 taps, 1x1 filters, NCHW fp32 (another tier); the GEMM path's text stays as it was.
  const test::ScopedEnv everywhere("BOO_WGMMA_TAPS", "all");
  for (const char* command : {"convbfp16 -n 16 -c 96 -H 96 -W 64 -k 96 -y 3 -x 3 -p 1 -q 1 -F 4",
                              "convbfp16 -n 16 -c 64 -H 75 -W 75 -k 64 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 4",
                              "convbfp16 -n 16 -c 64 -H 48 -W 32 -k 64 -y 5 -x 5 -p 2 -q 2 -F 4",
                              "convbfp16 -n 128 -c 64 -H 56 -W 56 -k 64 -y 1 -x 1 -F 4"}) {
    const std::string text = config(command);
    EXPECT_EQ(text.find("shifted taps"), std::string::npos) << command << ": " << text;
    EXPECT_NE(text.find("M/N-major tiles"), std::string::npos) << command << ": " << text;
  }
}

TEST(ConvWgmmaPlanTest, BackwardWeightCandidatesOfferBothPaths) {
  // boo tune times the shifted taps (every strip whose box fits) beside the GEMM path's tilings, whichever
  // the heuristic chose.
  auto texts = [](const std::string& command) {
    std::vector<std::string> out;
    std::unique_ptr<OpProblem> problem = test::problem_of(command + kNhwc);
    EXPECT_TRUE(problem);
    if (!problem) return out;
    Result<ConfigList> list = tier().candidates(*problem, test::sm90());
    EXPECT_TRUE(list.ok()) << list.status().to_string();
    if (list.ok())
      for (const auto& c : *list) out.push_back(c->text());
    return out;
  };
  auto count = [](const std::vector<std::string>& list, const std::string& what) {
    return std::count_if(list.begin(), list.end(), [&](const std::string& t) { return t.find(what) != std::string::npos; });
  };
  const std::vector<std::string> resnet = texts("convbfp16 -n 128 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 4");
  ASSERT_FALSE(resnet.empty());
  EXPECT_NE(resnet.front().find("by shifted taps: strips of 4x16"), std::string::npos) << resnet.front();
  EXPECT_EQ(count(resnet, "by shifted taps"), 3);  // strips of 4 x 16, 1 x 64, 2 x 32
  EXPECT_GT(count(resnet, "M/N-major tiles"), 0);
  const std::vector<std::string> wide = texts("convbfp16 -n 128 -c 128 -H 28 -W 28 -k 128 -y 3 -x 3 -p 1 -q 1 -F 4");
  ASSERT_GT(wide.size(), 2u);
  EXPECT_NE(wide.front().find("M/N-major tiles"), std::string::npos) << wide.front();
  EXPECT_NE(wide[1].find("by shifted taps"), std::string::npos) << wide[1];
}

}  // namespace
}  // namespace boo::ops
