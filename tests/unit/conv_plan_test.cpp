// boo tests: gpu:conv:implicit_gemm's launch plans, computed on the host (no
// GPU): odd channel counts run the forward and weight faces on channel-padded
// copies in the workspace (x, w; dy for the weight face), and every other
// tensor is bound where it lives.
#include <gtest/gtest.h>

#include "ops/conv/conv_direct_impl.hpp"
#include "ops/conv/conv_igemm_impl.hpp"
#include "ops/conv/device/conv_direct_params.cuh"
#include "ops/conv/device/conv_igemm_params.cuh"
#include "plan_util.hpp"

namespace boo::ops {
namespace {

using test::Planned;
using test::params_of;

Planned plan_of(const std::string& command) { return test::plan_of(conv::implicit_gemm_implementation(), command); }

bool in_workspace(const Planned& p, uint64_t address) {
  return address >= p.workspace && address < p.workspace + p.workspace_bytes;
}

TEST(ConvPlanTest, OddChannelsRunOnPaddedCopies) {
  const Planned p = plan_of("convbfp16 -n 2 -c 5 -H 9 -W 9 -k 16 -y 3 -x 3 -p 1 -q 1 -F 0 "
                            "--in_layout NHWC --fil_layout NHWC --out_layout NHWC");
  ASSERT_GE(p.entries.size(), 6u);
  EXPECT_EQ(p.entries[0], "boo_conv_pad_x");
  EXPECT_EQ(p.entries[1], "boo_conv_pad_w");
  EXPECT_EQ(p.entries.back(), "boo_conv_unpad_dw");
  // x (2*9*9 pixels) and w, dw (16*3*3 taps) padded to 8 channels of 2 bytes.
  EXPECT_GE(p.workspace_bytes, (2 * 81 * 8 + 2 * 16 * 9 * 8) * 2u);
  const auto pad_x = params_of<ConvChannelPadParams>(p.launches[0]);
  EXPECT_EQ(pad_x.strided, p.address.at("x"));
  EXPECT_TRUE(in_workspace(p, pad_x.dense));
  EXPECT_EQ(pad_x.channels, 5);
  EXPECT_EQ(pad_x.padded_channels, 8);
  const auto pad_w = params_of<ConvChannelPadParams>(p.launches[1]);
  EXPECT_EQ(pad_w.strided, p.address.at("w"));
  int faces_seen = 0;
  for (size_t i = 2; i + 1 < p.launches.size(); ++i) {
    const std::string& e = p.entries[i];
    const auto g = params_of<ConvIgemmParams>(p.launches[i]);
    if (e.rfind("boo_igemm_y", 0) == 0) {  // reads the padded x and w, writes y
      EXPECT_EQ(g.a, pad_x.dense);
      EXPECT_EQ(g.w, pad_w.dense);
      EXPECT_EQ(g.out, p.address.at("y"));
      faces_seen |= 1;
    } else if (e.rfind("boo_igemm_dx", 0) == 0) {  // the data face writes the real dx from the real w
      EXPECT_EQ(g.a, p.address.at("dx"));
      EXPECT_EQ(g.w, p.address.at("w"));
      faces_seen |= 2;
    } else if (e.rfind("boo_igemm_dw", 0) == 0) {  // reads the padded x, writes dw padded
      EXPECT_EQ(g.a, pad_x.dense);
      EXPECT_EQ(g.b, p.address.at("dy"));
      EXPECT_TRUE(in_workspace(p, g.out));
      EXPECT_EQ(g.w, g.out);
      faces_seen |= 4;
    }
  }
  EXPECT_EQ(faces_seen, 7) << "a GEMM of each face";
  const auto unpad = params_of<ConvChannelPadParams>(p.launches.back());
  EXPECT_EQ(unpad.strided, p.address.at("dw"));
  EXPECT_TRUE(in_workspace(p, unpad.dense));
  EXPECT_NE(unpad.dense, pad_w.dense);
}

// An odd output channel count (K = 35): the weight gradient also reads dy from a
// channel-padded copy, and writes dw as [K padded][taps][C padded] before the copy out.
TEST(ConvPlanTest, OddOutputChannelsPadDyForTheWeightGradient) {
  const Planned p = plan_of("convbfp16 -n 4 -c 35 -H 6 -W 5 -k 35 -y 1 -x 1 -F 4 "
                            "--in_layout NHWC --fil_layout NHWC --out_layout NHWC");
  ASSERT_GE(p.entries.size(), 4u);
  EXPECT_EQ(p.entries[0], "boo_conv_pad_x");
  EXPECT_EQ(p.entries[1], "boo_conv_pad_dy");
  EXPECT_EQ(p.entries.back(), "boo_conv_unpad_dw");
  const auto pad_x = params_of<ConvChannelPadParams>(p.launches[0]);
  const auto pad_dy = params_of<ConvChannelPadParams>(p.launches[1]);
  EXPECT_EQ(pad_dy.strided, p.address.at("dy"));
  EXPECT_EQ(pad_dy.channels, 35);
  EXPECT_EQ(pad_dy.padded_channels, 40);
  EXPECT_TRUE(in_workspace(p, pad_dy.dense));
  // x, dy (4*30 pixels) and dw (40*40) with 40 channels of 2 bytes.
  EXPECT_GE(p.workspace_bytes, (2 * 4 * 30 * 40 + 40 * 40) * 2u);
  const auto g = params_of<ConvIgemmParams>(p.launches[2]);
  ASSERT_EQ(p.entries[2].rfind("boo_igemm_dw", 0), 0u);
  EXPECT_EQ(g.a, pad_x.dense);
  EXPECT_EQ(g.b, pad_dy.dense);
  EXPECT_TRUE(in_workspace(p, g.out));
  const auto unpad = params_of<ConvChannelPadParams>(p.launches.back());
  EXPECT_EQ(unpad.strided, p.address.at("dw"));
  EXPECT_EQ(unpad.dense, g.out);
  EXPECT_EQ(unpad.channels, 35);
  EXPECT_EQ(unpad.padded_channels, 40);
  EXPECT_EQ(unpad.sizes[0], 35) << "only the real output channels are copied out";
  // Only dy odd: x is not copied, dw still goes through the padded buffer.
  const Planned only_dy = plan_of("convbfp16 -n 4 -c 32 -H 6 -W 5 -k 35 -y 1 -x 1 -F 4 "
                                  "--in_layout NHWC --fil_layout NHWC --out_layout NHWC");
  EXPECT_EQ(only_dy.entries.at(0), "boo_conv_pad_dy");
  const auto unpad_only = params_of<ConvChannelPadParams>(only_dy.launches.back());
  EXPECT_EQ(unpad_only.channels, 32);
  EXPECT_EQ(unpad_only.padded_channels, 32);
}

TEST(ConvPlanTest, ThreeChannelsPadToFour) {
  const Planned p = plan_of("convbfp16 -n 2 -c 3 -H 17 -W 15 -k 16 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 -F 1 "
                            "--in_layout NHWC --fil_layout NHWC --out_layout NHWC");
  ASSERT_EQ(p.entries.at(0), "boo_conv_pad_x");
  EXPECT_EQ(params_of<ConvChannelPadParams>(p.launches[0]).padded_channels, 4);
}

TEST(ConvPlanTest, VectorizableChannelsAreNotCopied) {
  for (const char* command : {"convbfp16 -n 2 -c 16 -H 9 -W 9 -k 16 -y 3 -x 3 -p 1 -q 1 -F 0 --in_layout NHWC "
                              "--fil_layout NHWC --out_layout NHWC",
                              "conv -n 2 -c 5 -H 9 -W 9 -k 16 -y 3 -x 3 -p 1 -q 1 -F 0",  // fp32: FFMA path
                              "convbfp16 -n 2 -c 12 -H 9 -W 9 -k 16 -y 3 -x 3 -F 4 --in_layout NHWC "
                              "--fil_layout NHWC --out_layout NHWC",  // 8-byte vectors already
                              "convbfp16 -n 2 -c 5 -H 9 -W 9 -k 16 -y 3 -x 3 -p 1 -q 1 -F 2"}) {  // data face only
    SCOPED_TRACE(command);
    for (const std::string& e : plan_of(command).entries) EXPECT_EQ(e.find("pad"), std::string::npos) << e;
  }
}

// NCHW tensors (channels not contiguous) run on dense channels-last copies:
// arguments transposed in, the result transposed out; narrow channels are
// padded in the same copy. An NHWC output (as MIOpen logs mixed layouts) is
// written in place.
TEST(ConvPlanTest, NchwOperandsRunOnChannelsLastCopies) {
  const Planned p = plan_of("convfp16 -n 2 -c 16 -H 9 -W 9 -k 32 -y 3 -x 3 -p 1 -q 1 -F 1");
  ASSERT_EQ(p.entries, (std::vector<std::string>{"boo_conv_stage_x", "boo_conv_stage_w", "boo_igemm_y",
                                                 "boo_conv_unstage_y"}));
  const auto x = params_of<ConvChannelPadParams>(p.launches[0]);
  const auto w = params_of<ConvChannelPadParams>(p.launches[1]);
  const auto gemm = params_of<ConvIgemmParams>(p.launches[2]);
  const auto y = params_of<ConvChannelPadParams>(p.launches[3]);
  EXPECT_EQ(x.strided, p.address.at("x"));
  EXPECT_EQ(w.strided, p.address.at("w"));
  EXPECT_EQ(y.strided, p.address.at("y"));
  EXPECT_EQ(gemm.a, x.dense);
  EXPECT_EQ(gemm.w, w.dense);
  EXPECT_EQ(gemm.b, y.dense);
  EXPECT_EQ(gemm.out, y.dense);
  for (uint64_t dense : {x.dense, w.dense, y.dense}) EXPECT_TRUE(in_workspace(p, dense));
  EXPECT_NE(x.dense, y.dense);
  EXPECT_EQ(x.strides[1], 81);  // NCHW: channel stride H*W, pixels contiguous
  // Few pixels: each tile is whole runs of memory (both images' 16 x 81 blocks; all 32 filters' 16 x 9), read
  // and written in 16-byte vectors.
  EXPECT_NE(p.config.find("boo_conv_stage_x(16->16 tiles 2x16x81 run v8/8)"), std::string::npos) << p.config;
  EXPECT_NE(p.config.find("boo_conv_stage_w(16->16 tiles 32x16x9 run v8/8)"), std::string::npos) << p.config;
  EXPECT_NE(p.config.find("A vecK8 B vecK8"), std::string::npos) << p.config;
  EXPECT_EQ(p.launches[0].shared_bytes, 2u * 16 * 81 * 2);

  // Pixels a multiple of 8 and channels of whole 16-byte vectors: 8 x 8 blocks through registers, 16-byte
  // accesses both sides, warps of 8 pixel blocks x 4 channel vectors.
  const Planned wide = plan_of("convfp16 -n 2 -c 64 -H 64 -W 64 -k 32 -y 3 -x 3 -p 1 -q 1 -F 1");
  EXPECT_NE(wide.config.find("boo_conv_stage_x(64->64 blocks 8x4 v8/8)"), std::string::npos) << wide.config;
  EXPECT_NE(wide.config.find("boo_conv_unstage_y(32->32 blocks 8x4 v8/8)"), std::string::npos) << wide.config;

  // 5 channels padded to 8: runs of 5 x 81 elements, read one element at a time, the dense pixels whole.
  const Planned narrow = plan_of("convbfp16 -n 2 -c 5 -H 9 -W 9 -k 16 -y 3 -x 3 -F 1");
  EXPECT_EQ(narrow.entries.at(0), "boo_conv_pad_x");
  EXPECT_NE(narrow.config.find("boo_conv_pad_x(5->8 tiles 2x8x81 run v1/8)"), std::string::npos) << narrow.config;

  const Planned mixed = plan_of("convfp16 -n 2 -c 16 -H 9 -W 9 -k 32 -y 3 -x 3 -p 1 -q 1 -F 1 --out_layout NHWC");
  EXPECT_EQ(mixed.entries.back(), "boo_igemm_y");
  EXPECT_EQ(params_of<ConvIgemmParams>(mixed.launches.back()).out, mixed.address.at("y"));
}

// A 1x1 conv at stride 1 without padding reads its planar (NCHW) x in place, 16-byte vectors along the pixels
// (an image's dense pixels, a multiple of the vector: rows of 14 are read across), and writes its planar y through
// its strides: no copies, at any channel counts (1024 -> 256 too, where the copies' share of the work, 1/C + 1/K,
// is 1/205). Still on channels-last copies: 7x7 images (49 pixels), strided 1x1 convs and an NHWC y (x copied).
TEST(ConvPlanTest, PlanarPointwiseForwardReadsXInPlace) {
  for (const char* command : {"conv -n 4 -c 256 -H 56 -W 56 -k 128 -y 1 -x 1 -F 1",
                              "conv -n 4 -c 192 -H 14 -W 14 -k 64 -y 1 -x 1 -F 1",
                              "conv -n 4 -c 128 -H 28 -W 28 -k 512 -y 1 -x 1 -F 1",
                              "conv -n 32 -c 1024 -H 14 -W 14 -k 256 -y 1 -x 1 -F 1"}) {
    SCOPED_TRACE(command);
    const Planned p = plan_of(command);
    ASSERT_EQ(p.entries, (std::vector<std::string>{"boo_igemm_y"})) << p.config;
    EXPECT_NE(p.config.find("A vecMN4 B vecK4"), std::string::npos) << p.config;
    const auto gemm = params_of<ConvIgemmParams>(p.launches[0]);
    EXPECT_EQ(gemm.a, p.address.at("x"));
    EXPECT_EQ(gemm.out, p.address.at("y"));
    EXPECT_EQ(p.workspace_bytes, 0u);
  }
  for (const char* command : {"conv -n 4 -c 960 -H 7 -W 7 -k 160 -y 1 -x 1 -F 1",
                              "conv -n 4 -c 256 -H 56 -W 56 -k 512 -y 1 -x 1 -u 2 -v 2 -F 1",
                              "conv -n 4 -c 192 -H 14 -W 14 -k 64 -y 1 -x 1 -F 1 --out_layout NHWC"}) {
    SCOPED_TRACE(command);
    EXPECT_EQ(plan_of(command).entries.front(), "boo_conv_stage_x");
  }
}

// Full-precision fp32 sums at most 4096 terms per split-K slice, on tiles 32
// columns wide (warp tiles of 32x32, whose FFMA threads keep two-level sums:
// mainloop_ffma.cuh); TF32 keeps every tile width, and short reductions too.
TEST(ConvPlanTest, LongFp32ReductionsAreSplit) {
  auto splits_and_cols = [](const std::string& command) {
    const Planned p = plan_of(command);
    const size_t at = p.config.find("splits "), tile = p.config.find(" tile ");
    EXPECT_NE(at, std::string::npos) << p.config;
    EXPECT_NE(tile, std::string::npos) << p.config;
    if (at == std::string::npos || tile == std::string::npos) return std::pair<long long, long long>{0, 0};
    return std::pair<long long, long long>{std::stoll(p.config.substr(at + 7)),
                                           std::stoll(p.config.substr(p.config.find('x', tile) + 1))};
  };
  const auto [splits, cols] = splits_and_cols("conv -n 128 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 4");
  EXPECT_GE(splits, (128 * 56 * 56 + 4095) / 4096);
  EXPECT_EQ(cols, 32);
  for (const char* line : {"conv -n 64 -c 144 -H 56 -W 56 -k 24 -y 1 -x 1 -F 4",
                           "conv -n 32 -c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 -F 4"}) {
    SCOPED_TRACE(line);
    EXPECT_EQ(splits_and_cols(line).second, 32);
    EXPECT_GT(splits_and_cols(std::string(line) + " --fp32-math tf32").second, 32);
  }
  EXPECT_GT(splits_and_cols("conv -n 32 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1").second, 32);  // K = 576
}

// Full-precision fp32 runs on 3xTF32 on the weight face where the cost model prefers it (issue 17's
// weight gradient: its slices and 32-column tiles kept), on FFMA on the forward and data faces (3xTF32
// measured slower there); --fp32-math tf32 names no math (it is not a choice there).
TEST(ConvPlanTest, ThreeTf32OnTheWeightFaceAndTyped) {
  const std::string line = "conv -n 128 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 4";
  const Planned p = plan_of(line);
  EXPECT_NE(p.config.find(" math 3xtf32"), std::string::npos) << p.config;
  EXPECT_NE(p.config.find(" tile 128x32x32 "), std::string::npos) << p.config;
  EXPECT_GE(std::stoll(p.config.substr(p.config.find("splits ") + 7)), (128 * 56 * 56 + 4095) / 4096) << p.config;
  EXPECT_EQ(plan_of(line + " --fp32-math tf32").config.find(" math "), std::string::npos);
  for (const char* face : {" -F 1", " -F 2"}) {
    const std::string other = "conv -n 128 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1" + std::string(face);
    EXPECT_EQ(plan_of(other).config.find(" math 3xtf32"), std::string::npos) << plan_of(other).config;
  }
}

}  // namespace
// gpu:conv:direct's weight face of a filter of few weights splits the positions over blocks (grid y), each
// block's sum an fp32 partial in the workspace, which a second kernel adds in split order into dw: the 413's
// 2 -> 2-channel 1x1 weight gradient (4 weights, 6144 positions: 6 splits of 1024, 4 a thread). A filter of
// many weights keeps one kernel, a block a weight.
TEST(ConvPlanTest, DirectWeightFaceOfFewWeightsSplitsThePositions) {
  const Planned p = test::plan_of(conv::direct_implementation(),
                                  "convbfp16 -n 16 -c 2 -H 24 -W 16 -k 2 -y 1 -x 1 -F 4 --in_layout NHWC "
                                  "--out_layout NHWC --fil_layout NHWC");
  ASSERT_EQ(p.entries, (std::vector<std::string>{"boo_conv_direct_dw_partials", "boo_conv_direct_dw"}));
  EXPECT_NE(p.config.find("conv_weight_partials_sum<int, boo::bf16, 6>"), std::string::npos) << p.config;
  EXPECT_EQ(p.launches[0].grid.x, 4u);
  EXPECT_EQ(p.launches[0].grid.y, 6u);
  EXPECT_EQ(p.workspace_bytes, 6u * 4 * sizeof(float));
  ConvFaceParams partials, sum;
  ASSERT_EQ(p.launches[0].params.size(), sizeof partials);
  std::memcpy(&partials, p.launches[0].params.data(), sizeof partials);
  std::memcpy(&sum, p.launches[1].params.data(), sizeof sum);
  EXPECT_EQ(partials.a, p.address.at("x"));
  EXPECT_EQ(partials.b, p.address.at("dy"));
  EXPECT_EQ(partials.w, p.workspace);
  EXPECT_EQ(sum.a, p.workspace);
  EXPECT_EQ(sum.w, p.address.at("dw"));
  EXPECT_EQ(sum.w_strides[0], 2);  // dw's own strides (KRSC: k, then c contiguous)
  EXPECT_EQ(sum.w_strides[1], 1);

  const Planned many = test::plan_of(conv::direct_implementation(),
                                     "convbfp16 -n 16 -c 64 -H 24 -W 16 -k 64 -y 3 -x 3 -p 1 -q 1 -g 64 -F 4");
  EXPECT_EQ(many.entries, (std::vector<std::string>{"boo_conv_direct_dw"}));
  EXPECT_EQ(many.launches[0].grid.y, 1u);
}

}  // namespace boo::ops
