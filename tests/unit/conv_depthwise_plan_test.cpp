// boo tests: gpu:conv:depthwise's launch plans, computed on the host (no GPU):
// which convs it takes (and why it declines the others), where it sits among
// the conv tiers, its tiles and grids, and which tensor each launch reads and
// writes.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "ops/conv/conv_depthwise_impl.hpp"
#include "ops/conv/conv_direct_impl.hpp"
#include "ops/conv/conv_igemm_impl.hpp"
#include "ops/conv/device/conv_depthwise_params.cuh"
#include "ops/conv/device/conv_direct_params.cuh"
#include "plan_util.hpp"

namespace boo::ops {
namespace {

using test::Planned;
using test::params_of;

const GpuImplementation& depthwise() { return conv::depthwise_implementation(); }
Planned plan_of(const std::string& command) { return test::plan_of(depthwise(), command); }

const std::string kNhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
// MobileNetV2's first depthwise conv (issue 17).
const std::string kMobileNet = "conv -n 64 -c 32 -H 112 -W 112 -k 32 -y 3 -x 3 -p 1 -q 1 -g 32";

Status why_declined(const std::string& command) {
  std::unique_ptr<OpProblem> problem = test::problem_of(command);
  if (!problem) return internal_error("unparsed");
  return depthwise().accepts(*problem, test::sm90());
}

TEST(ConvDepthwisePlanTest, SitsBetweenTheImplicitGemmAndTheDirectTier) {
  const auto impls = find_op("conv")->gpu_implementations();
  ASSERT_EQ(impls.size(), 11u);
  EXPECT_EQ(impls[0]->name(), "gpu:conv:pointwise");
  EXPECT_EQ(impls[1]->name(), "gpu:conv:planar_tf32");
  EXPECT_EQ(impls[2]->name(), "gpu:conv:wgmma_sm90");
  EXPECT_EQ(impls[3]->name(), "gpu:conv:fp32_bf16x6");
  EXPECT_EQ(impls[4]->name(), "gpu:conv:small_c_data");
  EXPECT_EQ(impls[5]->name(), "gpu:conv:small_c_forward");
  EXPECT_EQ(impls[6]->name(), "gpu:conv:implicit_gemm");
  EXPECT_EQ(impls[7]->name(), "gpu:conv:depthwise_planes");
  EXPECT_EQ(impls[8]->name(), "gpu:conv:depthwise_channels");
  EXPECT_EQ(impls[9]->name(), "gpu:conv:depthwise");
  EXPECT_EQ(impls[10]->name(), "gpu:conv:direct");
  // The implicit GEMM declines what this tier takes: it runs where gpu:conv:direct used to.
  for (const std::string& command : {kMobileNet + " -F 2", kMobileNet + " -F 4" + kNhwc,
                                     std::string("convbfp16 -n 8 -c 96 -H 56 -W 56 -k 96 -y 3 -x 3 -p 1 -q 1 "
                                                 "-u 2 -v 2 -g 96 -F 1")}) {
    SCOPED_TRACE(command);
    EXPECT_FALSE(test::accepts(conv::implicit_gemm_implementation(), command));
    EXPECT_TRUE(test::accepts(depthwise(), command));
  }
}

TEST(ConvDepthwisePlanTest, AcceptsDepthwiseShapesOfEveryDtypeLayoutAndRank) {
  for (const std::string& command : std::vector<std::string>{
           kMobileNet + " -F 1 -b 1 --activation clamp:0:6",
           "convfp16 -n 4 -c 144 -H 56 -W 56 -k 144 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -g 144 -F 0" + kNhwc,
           "convbfp16 -n 4 -c 240 -H 28 -W 28 -k 240 -y 5 -x 5 -p 2 -q 2 -g 240 -F 4",  // EfficientNet 5x5
           "conv -n 2 -c 8 -H 14 -W 14 -k 32 -y 3 -x 3 -p 2 -q 2 -l 2 -j 2 -g 8 -F 0",  // multiplier 4, dilation
           "conv --spatial_dim 1 -n 2 -c 8 -H 33 -k 8 -y 7 -p 3 -u 2 -g 8 -F 0",        // 1-D
           "convbfp16 -m trans -n 2 -c 16 -H 7 -W 7 -k 16 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -g 16 -F 0",
           "convfp16 -n 2 -c 32 -H 15 -W 15 -k 32 -y 3 -x 3 -p 1 -q 1 -g 32 -F 0 --out_layout NHWC",  // mixed
       }) {
    SCOPED_TRACE(command);
    EXPECT_TRUE(test::accepts(depthwise(), command));
  }
}

TEST(ConvDepthwisePlanTest, DeclinesWithTheReason) {
  struct Case {
    std::string command, reason;
  };
  for (const Case& c : {
           Case{"conv -n 2 -c 32 -H 9 -W 9 -k 32 -y 3 -x 3 -g 16 -F 1", "2 channels per group"},
           Case{"conv -n 2 -c 4 -H 9 -W 9 -k 64 -y 3 -x 3 -g 4 -F 1", "channel multiplier 16"},
           Case{"conv -_ 3 -n 1 -c 8 --in_d 5 -H 6 -W 7 -k 8 --fil_d 3 -y 3 -x 3 -g 8 -F 1", "3-D"},
           Case{"conv -n 2 -c 8 -H 19 -W 19 -k 8 -y 9 -x 9 -g 8 -F 1", "81 taps"},
           Case{"conv -n 2 -c 8 -H 9 -W 9 -k 8 -y 3 -x 3 -g 8 -F 1 --in_layout CHWN --fil_layout HWCN "
                "--out_layout WHNC",
                "channels or the width contiguous"},
       }) {
    SCOPED_TRACE(c.command);
    const Status s = why_declined(c.command);
    EXPECT_EQ(s.code(), StatusCode::kUnimplemented) << s.to_string();
    EXPECT_NE(s.message().find(c.reason), std::string::npos) << s.to_string();
  }
}

// NCHW: one channel's 56x28 output tile per block (112 = 2 x 56 = 4 x 28), a
// thread per run of 8 outputs down a column, x fastest; the 58x30 window of x
// staged in rows of 4-element loads from a multiple of 4 (36 columns); every
// direction bound where its tensors live, db last.
TEST(ConvDepthwisePlanTest, PlanarTilesAndBindingsOfEveryDirection) {
  const Planned p = plan_of(kMobileNet + " -F 0 -b 1");
  ASSERT_EQ(p.entries.size(), 5u);
  EXPECT_EQ(p.entries[0], "boo_depthwise_y");
  EXPECT_EQ(p.entries[1], "boo_depthwise_dx");
  EXPECT_EQ(p.entries[2], "boo_depthwise_dw");
  EXPECT_EQ(p.entries[3], "boo_depthwise_dw_reduce");
  EXPECT_EQ(p.entries[4], "boo_conv_db");
  EXPECT_NE(p.config.find("tile [c][y][x]"), std::string::npos) << p.config;
  EXPECT_NE(p.config.find("y: face 0 channels 1 tile 56x28 window 58x36 blocks 16384 vec A 1 B 1 runs of 8 rows by 4"),
            std::string::npos)
      << p.config;
  // The stride-1 data face runs the same tiles over dy; the weight face keeps a thread per pixel group.
  EXPECT_NE(p.config.find("dx: face 1 channels 1 tile 56x28 window 58x36 blocks 16384 vec A 1 B 1 runs of 8 rows by 4"),
            std::string::npos);
  EXPECT_NE(p.config.find("dw: face 2 channels 1 tile 32x32 window 34x34"), std::string::npos);
  EXPECT_EQ(p.launches[0].grid.x, 64u * 32 * 8);  // images x channels x 2x4 tiles
  for (const test::ResolvedLaunch& l : p.launches) {
    EXPECT_EQ(l.block.x, 256u);
    EXPECT_LE(l.shared_bytes, 48u * 1024);
  }
  const auto y = params_of<ConvDepthwiseParams>(p.launches[0]);
  EXPECT_EQ(y.a, p.address.at("x"));
  EXPECT_EQ(y.b, p.address.at("y"));
  EXPECT_EQ(y.w, p.address.at("w"));
  EXPECT_EQ(y.bias, p.address.at("b"));
  const auto dx = params_of<ConvDepthwiseParams>(p.launches[1]);
  EXPECT_EQ(dx.a, p.address.at("dx"));
  EXPECT_EQ(dx.b, p.address.at("dy"));
  EXPECT_EQ(dx.w, p.address.at("w"));
  EXPECT_EQ(dx.bias, 0u);
  const auto dw = params_of<ConvDepthwiseParams>(p.launches[2]);
  const auto reduce = params_of<ConvDepthwiseParams>(p.launches[3]);
  EXPECT_EQ(dw.a, p.address.at("x"));
  EXPECT_EQ(dw.b, p.address.at("dy"));
  EXPECT_EQ(dw.w, p.address.at("dw"));
  EXPECT_EQ(dw.partials, p.workspace);
  EXPECT_EQ(reduce.partials, p.workspace);
  EXPECT_EQ(reduce.w, p.address.at("dw"));
  // fp32 partials [slices][32 channels][9 taps], enough slices for 8 blocks per SM.
  const long long slices = p.launches[2].grid.x / 32;
  EXPECT_GE(slices * 32, 8LL * test::sm90().sm_count);
  EXPECT_EQ(p.workspace_bytes, static_cast<size_t>(slices * 32 * 9 * 4));
  const auto db = params_of<ConvFaceParams>(p.launches[4]);
  EXPECT_EQ(db.b, p.address.at("dy"));
  EXPECT_EQ(db.bias, p.address.at("db"));
}

// NHWC: tiles of 32 channels x 8x8 pixels (runs of 8 rows), stored [y][x][c]; sizes and strides compiled in.
TEST(ConvDepthwisePlanTest, ChannelsLastTilesCompileTheLayoutIn) {
  const Planned p = plan_of("convbfp16 -n 8 -c 96 -H 56 -W 56 -k 96 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -g 96 -F 1 -b 1 "
                            "--activation silu" + kNhwc);
  ASSERT_EQ(p.entries.size(), 1u);
  EXPECT_NE(p.config.find("tile [y][x][c]"), std::string::npos) << p.config;
  // 28x28 outputs in 8x8 tiles (4 x 4; 28 = 4 x 7 rows, rounded up to a run of 8), three channel blocks,
  // 8 images; a 17x17 window at stride 2.
  EXPECT_NE(p.config.find("channels 32 tile 8x8 window 17x17 blocks 384 vec A 8 B 8 runs of 8"), std::string::npos)
      << p.config;
  EXPECT_NE(p.source.text.find("kRunY = 8;"), std::string::npos);
  EXPECT_NE(p.source.text.find("kStageVecX = 1;"), std::string::npos);  // channels-last windows load along c
  const std::string& src = p.source.text;
  EXPECT_NE(src.find("kTileChannelsLast = true"), std::string::npos);
  EXPECT_NE(src.find("using T = boo::bf16"), std::string::npos);
  EXPECT_NE(src.find("kIdx32 = true"), std::string::npos);
  EXPECT_NE(src.find("kSH = 2"), std::string::npos);
  EXPECT_NE(src.find("kAct = 4"), std::string::npos);  // silu
  EXPECT_NE(src.find("kBias = true"), std::string::npos);
  // x in NHWC: (n, c, d, h, w) strides.
  EXPECT_NE(src.find("AStr(int i) { constexpr long long v[] = {301056LL, 1LL, 0LL, 5376LL, 96LL}"),
            std::string::npos)
      << src;
}

// A strided data face gathers: its window covers the B rows reaching the
// tile, about a stride-th of the tile plus the filter's reach; its tiles hold
// 4x the outputs of the other faces' (4096: 64x32 pixels of 2 channels).
TEST(ConvDepthwisePlanTest, StridedBackwardDataGathers) {
  const Planned p = plan_of("conv -n 2 -c 24 -H 64 -W 64 -k 24 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -g 24 -F 2");
  ASSERT_EQ(p.entries.size(), 1u);
  EXPECT_NE(p.config.find("dx: face 1 channels 2 tile 64x32 window 34x18"), std::string::npos) << p.config;
  EXPECT_NE(p.source.text.find("boo::depthwise::data_face<Cfg_dx>(p)"), std::string::npos);
  EXPECT_NE(p.source.text.find("kShiftH = 2"), std::string::npos);
  EXPECT_EQ(p.config.find("runs of"), std::string::npos) << p.config;  // a thread per gathered pixel
}

// A strided planar forward face of a 3x3 filter holds a quarter of the outputs (512: the window is
// about stride^2 times the tile); 5x5 filters and channels-last tiles keep theirs.
TEST(ConvDepthwisePlanTest, StridedPlanarForwardTilesAreSmaller) {
  const Planned p = plan_of("conv -n 64 -c 192 -H 28 -W 28 -k 192 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -g 192 -F 1");
  EXPECT_NE(p.config.find("y: face 0 channels 2 tile 16x14 window 33x32 blocks 6144"), std::string::npos)
      << p.config;
  const Planned nhwc =
      plan_of("conv -n 64 -c 192 -H 28 -W 28 -k 192 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -g 192 -F 1" + kNhwc);
  EXPECT_NE(nhwc.config.find("y: face 0 channels 32 tile 8x8"), std::string::npos) << nhwc.config;
  const Planned five = plan_of("conv -n 64 -c 192 -H 28 -W 28 -k 192 -y 5 -x 5 -p 2 -q 2 -u 2 -v 2 -g 192 -F 1");
  EXPECT_NE(five.config.find("y: face 0 channels 9 tile 16x14 window 35x36"), std::string::npos) << five.config;
}

// A transposed depthwise conv's forward is the relation's data face, with the epilogue.
TEST(ConvDepthwisePlanTest, TransposedForwardIsTheDataFaceWithTheEpilogue) {
  const Planned p = plan_of("convfp16 -m trans -n 2 -c 16 -H 7 -W 7 -k 16 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -g 16 -F 1 "
                            "-b 1 --activation relu");
  ASSERT_EQ(p.entries.size(), 1u);
  EXPECT_NE(p.source.text.find("boo::depthwise::data_face<Cfg_y>(p)"), std::string::npos);
  const auto y = params_of<ConvDepthwiseParams>(p.launches[0]);
  EXPECT_EQ(y.a, p.address.at("y"));
  EXPECT_EQ(y.b, p.address.at("x"));
  EXPECT_EQ(y.bias, p.address.at("b"));
  EXPECT_NE(p.source.text.find("kAct = 1"), std::string::npos);
}

// Tiles shrink until their shared memory fits (dilation 4: a 25x25-pixel
// window of a single pixel's taps); a window that never fits declines.
TEST(ConvDepthwisePlanTest, LargeWindowsShrinkTheTileOrDecline) {
  const Planned p = plan_of("conv -n 1 -c 64 -H 128 -W 128 -k 256 -y 7 -x 7 -p 12 -q 12 -l 4 -j 4 -g 64 -F 2" + kNhwc);
  ASSERT_EQ(p.launches.size(), 1u);
  EXPECT_LE(p.launches[0].shared_bytes, 48u * 1024);
  EXPECT_GT(p.launches[0].shared_bytes, 0u);
  std::unique_ptr<OpProblem> problem =
      test::problem_of("conv -n 1 -c 64 -H 128 -W 128 -k 256 -y 7 -x 7 -p 48 -q 48 -l 16 -j 16 -g 64 -F 2" + kNhwc);
  ASSERT_TRUE(problem);
  ASSERT_TRUE(depthwise().accepts(*problem, test::sm90()).ok());
  const auto config = depthwise().configure(*problem, test::sm90());
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(config.status().message().find("shared memory"), std::string::npos) << config.status().to_string();
}

const GpuImplementation& planes() { return conv::depthwise_planes_implementation(); }

// Issue 17's MobileNetV2 weight gradients (NCHW, 576 channels at 14x14): a block of 128 threads per channel
// over all 64 images, one launch, no workspace; the A planes (196 fp16) in 8-byte vectors, B's 7x7 planes
// element by element; two stages of 32 images' planes within 48 KiB.
TEST(ConvDepthwisePlanTest, PlanesTakeSmallNchwWeightGradientsInOneLaunch) {
  const std::string line = "convfp16 -n 64 -c 576 -H 14 -W 14 -k 576 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -g 576 -F 4";
  std::unique_ptr<OpProblem> problem = test::problem_of(line);
  ASSERT_TRUE(problem);
  ASSERT_TRUE(planes().accepts(*problem, test::sm90()).ok());
  const Planned p = test::plan_of(planes(), line);
  EXPECT_EQ(p.config, "dtype=float16 dw planes: threads 128 images 32 of 64 per block slices 1 vec A 4 B 1");
  ASSERT_EQ(p.entries.size(), 1u);
  EXPECT_EQ(p.entries[0], "boo_depthwise_planes_dw");
  ASSERT_EQ(p.launches.size(), 1u);
  EXPECT_EQ(p.launches[0].grid.x, 576u);
  EXPECT_EQ(p.launches[0].block.x, 128u);
  // 2 stages x (32 x 196 + 32 x 49) fp16, then 4 warps x 9 taps of floats.
  EXPECT_EQ(p.launches[0].shared_bytes, 2u * (32 * 196 * 2 + 32 * 49 * 2) + 4 * 9 * 4);
  EXPECT_EQ(p.workspace_bytes, 0u);
  const auto dw = params_of<ConvDepthwiseParams>(p.launches[0]);
  EXPECT_EQ(dw.a, p.address.at("x"));
  EXPECT_EQ(dw.b, p.address.at("dy"));
  EXPECT_EQ(dw.w, p.address.at("dw"));
  EXPECT_EQ(dw.partials, 0u);
  EXPECT_NE(p.source.text.find("kSlices = 1;"), std::string::npos) << p.source.text;
  // Stride 1: 14 rows an image; 16 images (two rounds of 128 threads) a chunk, the fewest rounds and chunks.
  const Planned s1 = test::plan_of(planes(), "convfp16 -n 64 -c 384 -H 14 -W 14 -k 384 -y 3 -x 3 -p 1 -q 1 -g 384 -F 4");
  EXPECT_EQ(s1.config, "dtype=float16 dw planes: threads 128 images 16 of 64 per block slices 1 vec A 4 B 4");
  EXPECT_EQ(s1.launches[0].grid.x, 384u);
}

// Few channels: the images are sliced for about four blocks per SM, the slices' fp32 partials fill the
// workspace and a second launch adds them in order; db comes last.
TEST(ConvDepthwisePlanTest, PlanesSliceTheImagesOfFewChannels) {
  const Planned p = test::plan_of(planes(), "conv -n 32 -c 32 -H 28 -W 28 -k 32 -y 3 -x 3 -p 1 -q 1 -g 32 -F 9");
  ASSERT_EQ(p.entries.size(), 3u);
  EXPECT_EQ(p.entries[1], "boo_depthwise_planes_dw_reduce");
  EXPECT_EQ(p.entries[2], "boo_conv_db");
  // 528 blocks wanted: 17 slices of 32 images are 16 of 2 images each.
  EXPECT_EQ(p.launches[0].grid.x, 16u * 32);
  EXPECT_EQ(p.workspace_bytes, static_cast<size_t>(16 * 32 * 9 * 4));
  const auto dw = params_of<ConvDepthwiseParams>(p.launches[0]);
  const auto reduce = params_of<ConvDepthwiseParams>(p.launches[1]);
  EXPECT_EQ(dw.partials, p.workspace);
  EXPECT_EQ(reduce.partials, p.workspace);
  EXPECT_EQ(reduce.w, p.address.at("dw"));
  EXPECT_EQ(p.launches[1].block.x, 256u);
  const auto db = params_of<ConvFaceParams>(p.launches[2]);
  EXPECT_EQ(db.b, p.address.at("dy"));
  EXPECT_EQ(db.bias, p.address.at("db"));
}

// What gpu:conv:depthwise keeps: other directions, wide rows; channels-last tensors (whose multiplier-1 weight
// gradients gpu:conv:depthwise_channels takes first).
TEST(ConvDepthwisePlanTest, PlanesDeclineWithTheReason) {
  struct Case {
    std::string command, reason;
  };
  for (const Case& c : {
           Case{"convfp16 -n 64 -c 576 -H 14 -W 14 -k 576 -y 3 -x 3 -p 1 -q 1 -g 576 -F 4" + kNhwc,
                "reads contiguous planes"},
           Case{"convfp16 -n 64 -c 576 -H 14 -W 14 -k 576 -y 3 -x 3 -p 1 -q 1 -g 576 -F 6", "weight gradient alone"},
           Case{kMobileNet + " -F 4", "rows of 112 pixels"},
           Case{"conv -n 2 -c 32 -H 9 -W 9 -k 32 -y 3 -x 3 -g 16 -F 4", "not 2 -> 2"},
       }) {
    SCOPED_TRACE(c.command);
    std::unique_ptr<OpProblem> problem = test::problem_of(c.command);
    ASSERT_TRUE(problem);
    const Status s = planes().accepts(*problem, test::sm90());
    EXPECT_EQ(s.code(), StatusCode::kUnimplemented) << s.to_string();
    EXPECT_NE(s.message().find(c.reason), std::string::npos) << s.to_string();
    if (c.reason != "not 2 -> 2") EXPECT_TRUE(depthwise().accepts(*problem, test::sm90()).ok());
  }
}

const GpuImplementation& channels() { return conv::depthwise_channels_implementation(); }

// Issue 17's NHWC MobileNetV2 weight gradients: the tier takes up to 64 channels (measured: 32 channels at
// 112x112 0.62x gpu:conv:depthwise's time, 96-960 channels slower), ahead of gpu:conv:depthwise. 64 channels of
// a 5x5 filter: 2-channel vectors (50 sums a thread), 2 blocks of 16 lanes, 528 slices of the 200704 pixels;
// the slices' partials in the workspace and a warp per weight to add them. The estimates in the config.
TEST(ConvDepthwisePlanTest, ChannelsTakeNhwcWeightGradientsAheadOfTheDepthwiseTier) {
  const std::string line = "convbfp16 -n 64 -c 64 -H 56 -W 56 -k 64 -y 5 -x 5 -p 2 -q 2 -g 64 -F 4" + kNhwc;
  const Planned p = test::plan_of(channels(), line);
  EXPECT_EQ(p.config, "dtype=bfloat16 dw channels last: vec 2 lanes 16 workers 16 channel blocks 2 slices 528 cost "
                      "dram 17 us L1 45 us");
  ASSERT_EQ(p.entries.size(), 2u);
  EXPECT_EQ(p.entries[0], "boo_depthwise_channels_dw");
  EXPECT_EQ(p.entries[1], "boo_depthwise_channels_dw_reduce");
  EXPECT_EQ(p.launches[0].grid.x, 2u * 528);
  EXPECT_EQ(p.launches[0].block.x, 256u);
  EXPECT_EQ(p.launches[0].shared_bytes, 16u * 16 * 2 * 4);  // [workers][lanes x vec] floats
  EXPECT_EQ(p.workspace_bytes, static_cast<size_t>(528 * 64 * 25 * 4));
  // A warp per weight: 64 x 25 warps of 8 a block.
  EXPECT_EQ(p.launches[1].grid.x, 64u * 25 / 8);
  EXPECT_EQ(p.launches[1].block.x, 256u);
  const auto dw = params_of<ConvDepthwiseParams>(p.launches[0]);
  const auto reduce = params_of<ConvDepthwiseParams>(p.launches[1]);
  EXPECT_EQ(dw.a, p.address.at("x"));
  EXPECT_EQ(dw.b, p.address.at("dy"));
  EXPECT_EQ(dw.partials, p.workspace);
  EXPECT_EQ(reduce.partials, p.workspace);
  EXPECT_EQ(reduce.w, p.address.at("dw"));
  EXPECT_NE(p.source.text.find("boo::depthwise::weight_reduce_warps<Cfg>(p)"), std::string::npos);
  // gpu:conv:depthwise accepts it too: the order decides, and this tier is listed first.
  EXPECT_TRUE(test::accepts(depthwise(), line));
  // Above 64 channels gpu:conv:depthwise runs them.
  EXPECT_FALSE(test::accepts(channels(), "convbfp16 -n 64 -c 576 -H 14 -W 14 -k 576 -y 3 -x 3 -p 1 -q 1 -g 576 -F 4" +
                                             kNhwc));
  // MobileNetV2's first depthwise conv in NHWC: 32 channels are one block of 4 lanes, many slices.
  const Planned m = test::plan_of(channels(), "convfp16 -n 64 -c 32 -H 112 -W 112 -k 32 -y 3 -x 3 -p 1 -q 1 -g 32 "
                                              "-F 4" + kNhwc);
  EXPECT_EQ(m.config, "dtype=float16 dw channels last: vec 8 lanes 4 workers 64 channel blocks 1 slices 1056 cost "
                      "dram 34 us L1 34 us");
  // fp32: 4 channels a vector (16 bytes); 5x5: 2 (50 sums a thread); one image of few pixels: one slice, no reduce.
  EXPECT_EQ(test::plan_of(channels(), "conv -n 64 -c 64 -H 14 -W 14 -k 64 -y 3 -x 3 -p 1 -q 1 -g 64 -F 4" + kNhwc)
                .config.substr(0, 49),
            "dtype=float32 dw channels last: vec 4 lanes 16 wo");
  EXPECT_NE(test::plan_of(channels(), "convbfp16 -n 16 -c 40 -H 28 -W 28 -k 40 -y 5 -x 5 -p 2 -q 2 -g 40 -F 4" +
                                          kNhwc)
                .config.find("vec 2 "),
            std::string::npos);
  const Planned one = test::plan_of(channels(), "convbfp16 -n 1 -c 6 -H 5 -W 5 -k 6 -y 3 -x 3 -p 1 -q 1 -g 6 -F 9" +
                                                    kNhwc);
  ASSERT_EQ(one.entries.size(), 2u);
  EXPECT_EQ(one.entries[1], "boo_conv_db");
  EXPECT_EQ(one.workspace_bytes, 0u);
  EXPECT_EQ(params_of<ConvDepthwiseParams>(one.launches[0]).w, one.address.at("dw"));
}

// The kernel's split (conv_depthwise_channels.cuh), modelled on the host from the plan's constants: every
// channel in exactly one block's lanes (no block without one), every pixel taken by exactly one (slice, worker).
TEST(ConvDepthwisePlanTest, ChannelsCoverEveryChannelAndPixelOnce) {
  const auto constant = [](const std::string& src, const std::string& name) {
    const size_t at = src.find(" " + name + " = ");
    EXPECT_NE(at, std::string::npos) << name;
    return std::stoll(src.substr(at + name.size() + 4));
  };
  for (const std::string& geometry : {"-n 64 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -g 64",
                                      "-n 64 -c 64 -H 56 -W 56 -k 64 -y 5 -x 5 -p 2 -q 2 -g 64",
                                      "-n 16 -c 40 -H 28 -W 28 -k 40 -y 5 -x 5 -p 2 -q 2 -g 40",
                                      "-n 3 -c 48 -H 9 -W 11 -k 48 -y 3 -x 3 -p 1 -q 1 -g 48",
                                      "-n 64 -c 32 -H 112 -W 112 -k 32 -y 3 -x 3 -p 1 -q 1 -g 32"}) {
    SCOPED_TRACE(geometry);
    const Planned p = test::plan_of(channels(), "convbfp16 " + geometry + " -F 4" + kNhwc);
    const std::string& src = p.source.text;
    const long long vec = constant(src, "kVec"), lanes = constant(src, "kLanes"),
                    blocks = constant(src, "kChannelBlocks"), slices = constant(src, "kSlices"),
                    threads = constant(src, "kThreads"), ca = constant(src, "kCA"),
                    pixels = constant(src, "kBatch") * constant(src, "kBH") * constant(src, "kBW");
    EXPECT_EQ(p.launches[0].grid.x, static_cast<uint32_t>(blocks * slices));
    EXPECT_EQ(ca % vec, 0);
    std::vector<int> channel_seen(ca, 0);
    for (long long b = 0; b < blocks; ++b) {
      int owned = 0;
      for (long long l = 0; l < lanes; ++l)
        for (long long c0 = (b * lanes + l) * vec, v = 0; v < vec && c0 < ca; ++v, ++owned) ++channel_seen[c0 + v];
      EXPECT_GT(owned, 0) << "block " << b;
    }
    for (int n : channel_seen) EXPECT_EQ(n, 1);
    const long long workers = threads / lanes, per_slice = (pixels + slices - 1) / slices;
    std::vector<int> pixel_seen(pixels, 0);
    for (long long s = 0; s < slices; ++s)
      for (long long w = 0; w < workers; ++w)
        for (long long e = s * per_slice + w; e < std::min(pixels, (s + 1) * per_slice); e += workers) ++pixel_seen[e];
    for (int n : pixel_seen) ASSERT_EQ(n, 1);
  }
}

// What gpu:conv:depthwise keeps: other directions, multipliers, NCHW and mixed layouts, 3-D.
TEST(ConvDepthwisePlanTest, ChannelsDeclineWithTheReason) {
  struct Case {
    std::string command, reason;
  };
  for (const Case& c : {
           Case{"convbfp16 -n 64 -c 576 -H 14 -W 14 -k 576 -y 3 -x 3 -p 1 -q 1 -g 576 -F 2" + kNhwc,
                "weight gradient alone"},
           Case{"convbfp16 -n 64 -c 576 -H 14 -W 14 -k 576 -y 3 -x 3 -p 1 -q 1 -g 576 -F 4", "reads channels-last"},
           Case{"convbfp16 -n 64 -c 576 -H 14 -W 14 -k 576 -y 3 -x 3 -p 1 -q 1 -g 576 -F 4 --out_layout NHWC",
                "reads channels-last"},
           Case{"conv -n 2 -c 32 -H 9 -W 9 -k 64 -y 3 -x 3 -g 32 -F 4" + kNhwc, "multiplier 1"},
           Case{"conv -n 2 -c 32 -H 9 -W 9 -k 32 -y 3 -x 3 -g 16 -F 4" + kNhwc, "not 2 -> 2"},
           Case{"conv -n 2 -c 32 -H 9 -W 9 -k 32 -y 9 -x 9 -p 4 -q 4 -g 32 -F 4" + kNhwc, "81 taps"},
       }) {
    SCOPED_TRACE(c.command);
    std::unique_ptr<OpProblem> problem = test::problem_of(c.command);
    ASSERT_TRUE(problem);
    const Status s = channels().accepts(*problem, test::sm90());
    EXPECT_EQ(s.code(), StatusCode::kUnimplemented) << s.to_string();
    EXPECT_NE(s.message().find(c.reason), std::string::npos) << s.to_string();
  }
}

}  // namespace
}  // namespace boo::ops
