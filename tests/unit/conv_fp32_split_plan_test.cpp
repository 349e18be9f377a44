// boo tests (no GPU): gpu:conv:fp32_bf16x6 — which strict fp32 convs it takes,
// the sextupled bf16 conv it plans and the parameter blocks of its split copies.
#include <gtest/gtest.h>

#include <string>

#include "ops/conv/conv_fp32_split_impl.hpp"
#include "ops/conv/device/conv_fp32_split_params.cuh"
#include "ops/conv/device/conv_igemm_params.cuh"
#include "plan_util.hpp"

namespace boo::ops::conv {
namespace {

using test::params_of;

const GpuImplementation& tier() { return fp32_bf16x6_implementation(); }

// Segment s's part at bits 2s: A (hi, hi, mid, mid, hi, lo), B (hi, mid, hi, mid, lo, hi).
constexpr int kPatternA = (1 << 4) | (1 << 6) | (2 << 10), kPatternB = (1 << 2) | (1 << 6) | (2 << 8);

TEST(ConvFp32SplitTest, SegmentsPairIntoTheSixProducts) {
  // Every product but mid*lo, lo*mid and lo*lo, once.
  int seen[3][3] = {};
  for (int s = 0; s < 6; ++s) ++seen[(kPatternA >> (2 * s)) & 3][(kPatternB >> (2 * s)) & 3];
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) EXPECT_EQ(seen[a][b], a + b <= 2 ? 1 : 0) << a << " x " << b;
}

const std::string kForward = "conv -n 32 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1";

// Verified on an H100 (the focus block and 86 nchw-models lines, 2026-11-26): no longer gated.
TEST(ConvFp32SplitTest, RunsWithoutTheUnverifiedKernelsVariable) {
  std::unique_ptr<OpProblem> problem = test::problem_of(kForward);
  ASSERT_TRUE(problem);
  ::unsetenv(kUnverifiedKernelsVariable);
  EXPECT_TRUE(tier().accepts(*problem, test::sm90()).ok());
}

TEST(ConvFp32SplitTest, ForwardOfNchwSplitsChannels) {
  const test::Planned p = test::plan_of(tier(), kForward);
  ASSERT_GE(p.launches.size(), 4u);
  EXPECT_NE(p.config.find("conv convbfp16 -n 32 -c 1536 -H 14 -W 14 -k 256"), std::string::npos) << p.config;
  EXPECT_NE(p.config.find("fp32 result"), std::string::npos) << p.config;
  // Promoted sums: a second set of accumulators, so 128-wide tiles only.
  EXPECT_NE(p.config.find("sums promoted per k-block"), std::string::npos) << p.config;
  EXPECT_NE(p.config.find("tile 128x128x64"), std::string::npos) << p.config;
  EXPECT_NE(p.source.text.find("static constexpr bool kPromote = true;"), std::string::npos);
  EXPECT_EQ(p.entries.front(), "boo_fp32_split_x");
  EXPECT_EQ(p.entries[1], "boo_fp32_split_w");
  EXPECT_EQ(p.entries.back(), "boo_conv_unstage_y");
  EXPECT_NE(p.source.text.find("boo::conv_split_fp32<true>(p)"), std::string::npos);  // NCHW: along pixels
  const ConvSplitParams x = params_of<ConvSplitParams>(p.launches[0]);
  EXPECT_EQ(x.src, p.address.at("x"));
  EXPECT_EQ(x.strides[0], 256 * 196);
  EXPECT_EQ(x.strides[1], 196);
  EXPECT_EQ(x.strides[3], 14);
  EXPECT_EQ(x.strides[4], 1);
  EXPECT_EQ(x.sizes[0], 32);
  EXPECT_EQ(x.outer, 32);
  EXPECT_EQ(x.channels, 256);
  EXPECT_EQ(x.padded, 256);
  EXPECT_EQ(x.seg_stride, 256);  // [n][pixel][6][256]
  EXPECT_EQ(x.pixel_stride, 6 * 256);
  EXPECT_EQ(x.outer_stride, 196 * 6 * 256);
  EXPECT_EQ(x.pattern, kPatternA);
  const ConvSplitParams w = params_of<ConvSplitParams>(p.launches[1]);
  EXPECT_EQ(w.src, p.address.at("w"));
  EXPECT_EQ(w.sizes[0], 256);
  EXPECT_EQ(w.sizes[2] * w.sizes[3], 9);  // taps as pixels
  EXPECT_EQ(w.pattern, kPatternB);
  EXPECT_EQ(w.dst, x.dst + (32LL * 196 * 6 * 256 * 2 + 255) / 256 * 256);  // after x's segments
  // The bf16 conv reads the segments and leaves its sums at the workspace's start.
  const ConvIgemmParams conv = params_of<ConvIgemmParams>(p.launches[2]);
  EXPECT_EQ(conv.a, x.dst);
  EXPECT_EQ(conv.w, w.dst);
  EXPECT_EQ(conv.workspace, p.workspace);
  EXPECT_EQ(conv.out, 0u);
  const ConvChannelPadParams out = params_of<ConvChannelPadParams>(p.launches.back());
  EXPECT_EQ(out.dense, p.workspace);
  EXPECT_EQ(out.strided, p.address.at("y"));
  EXPECT_EQ(out.padded_channels, 256);
  EXPECT_GE(p.workspace_bytes, w.dst - p.workspace + 256ULL * 9 * 6 * 256 * 2);
}

TEST(ConvFp32SplitTest, DataFaceSplitsTheFilterAlongItsRows) {
  // C = 120: the result's channels padded to 128 (the wgmma tier's narrowest tile).
  const test::Planned p = test::plan_of(tier(), "conv -n 32 -c 120 -H 28 -W 28 -k 512 -y 3 -x 3 -p 1 -q 1 -F 2");
  ASSERT_GE(p.launches.size(), 4u);
  EXPECT_NE(p.config.find("conv convbfp16 -n 32 -c 128 -H 28 -W 28 -k 3072"), std::string::npos) << p.config;
  const ConvSplitParams dy = params_of<ConvSplitParams>(p.launches[0]);
  EXPECT_EQ(dy.src, p.address.at("dy"));
  EXPECT_EQ(dy.padded, 512);
  EXPECT_EQ(dy.seg_stride, 512);
  EXPECT_EQ(dy.pattern, kPatternA);
  const ConvSplitParams w = params_of<ConvSplitParams>(p.launches[1]);
  EXPECT_EQ(w.sizes[0], 512);  // rows k: [6][512][9][128]
  EXPECT_EQ(w.channels, 120);
  EXPECT_EQ(w.padded, 128);
  EXPECT_EQ(w.seg_stride, 512 * 9 * 128);
  EXPECT_EQ(w.outer_stride, 9 * 128);
  EXPECT_EQ(w.pixel_stride, 128);
  EXPECT_EQ(w.pattern, kPatternB);
  const ConvChannelPadParams out = params_of<ConvChannelPadParams>(p.launches.back());
  EXPECT_EQ(out.strided, p.address.at("dx"));
  EXPECT_EQ(out.channels, 120);
  EXPECT_EQ(out.padded_channels, 128);
}

TEST(ConvFp32SplitTest, WeightFaceSplitsTheBatch) {
  const test::Planned p =
      test::plan_of(tier(), "conv -n 16 -c 256 -H 28 -W 28 -k 256 -y 3 -x 3 -p 1 -q 1 -F 4 --in_layout NHWC "
                            "--fil_layout NHWC --out_layout NHWC");
  ASSERT_GE(p.launches.size(), 4u);
  EXPECT_NE(p.config.find("conv convbfp16 -n 96 -c 256 -H 28 -W 28 -k 256"), std::string::npos) << p.config;
  EXPECT_NE(p.source.text.find("boo::conv_split_fp32<false>(p)"), std::string::npos);  // NHWC: along channels
  const ConvSplitParams dy = params_of<ConvSplitParams>(p.launches[0]), x = params_of<ConvSplitParams>(p.launches[1]);
  EXPECT_EQ(dy.src, p.address.at("dy"));
  EXPECT_EQ(x.src, p.address.at("x"));
  EXPECT_EQ(dy.seg_stride, 16LL * 784 * 256);  // [6][16][784][256]
  EXPECT_EQ(dy.outer_stride, 784 * 256);
  EXPECT_EQ(x.seg_stride, 16LL * 784 * 256);
  EXPECT_EQ(dy.pattern, kPatternA);
  EXPECT_EQ(x.pattern, kPatternB);
  EXPECT_EQ(p.entries.back(), "boo_conv_unstage_dw");
  EXPECT_NE(p.config.find("sums promoted per k-block"), std::string::npos) << p.config;
  // boo tune's alternatives keep the promoted width.
  std::unique_ptr<OpProblem> problem = test::problem_of(
      "conv -n 16 -c 256 -H 28 -W 28 -k 256 -y 3 -x 3 -p 1 -q 1 -F 4 --in_layout NHWC --fil_layout NHWC --out_layout NHWC");
  ASSERT_TRUE(problem);
  Result<ConfigList> list = tier().candidates(*problem, test::sm90());
  ASSERT_TRUE(list.ok()) << list.status().to_string();
  for (const std::unique_ptr<const Config>& c : *list) EXPECT_NE(c->text().find("tile 128x128x64"), std::string::npos) << c->text();
}

TEST(ConvFp32SplitTest, BiasAndActivationOnTheSums) {
  const test::Planned p = test::plan_of(tier(), kForward + " -b 1 --activation relu");
  ASSERT_GE(p.launches.size(), 5u);
  EXPECT_EQ(p.entries[p.entries.size() - 2], "boo_fp32_sums_epilogue");
  EXPECT_NE(p.source.text.find("boo::conv_sums_epilogue<true, 1>(p)"), std::string::npos) << p.source.text;
  const ConvSumsEpilogueParams e = params_of<ConvSumsEpilogueParams>(p.launches[p.launches.size() - 2]);
  EXPECT_EQ(e.sums, p.workspace);
  EXPECT_EQ(e.bias, p.address.at("b"));
  EXPECT_EQ(e.elements, 32LL * 196 * 256);
  EXPECT_EQ(e.channels_padded, 256);
  EXPECT_EQ(e.channels, 256);
  // K = 100 padded to 128: the epilogue stops at the bias's 100 entries.
  const test::Planned padded = test::plan_of(tier(), "conv -n 32 -c 256 -H 28 -W 28 -k 100 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1");
  ASSERT_GE(padded.launches.size(), 5u);
  const ConvSumsEpilogueParams pe = params_of<ConvSumsEpilogueParams>(padded.launches[padded.launches.size() - 2]);
  EXPECT_EQ(pe.channels_padded, 128);
  EXPECT_EQ(pe.channels, 100);
}

TEST(ConvFp32SplitTest, DeclinesWithReasons) {
  const std::pair<std::string, std::string> cases[] = {
      {kForward + " --fp32-math tf32", "full-precision fp32 only"},
      {"convbfp16 -n 32 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1", "full-precision fp32 only"},
      {"conv -n 32 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -F 3", "one direction at a time"},
      {"conv -n 32 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -g 2 -F 1", "groups 1 only"},
      {"conv -n 32 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -m trans -F 1", "groups 1 only"},
      // The stem: C = 3 padded to 8 and K = 64 to 128 cost more than FFMA.
      {"conv -n 32 -c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 -F 1", "cost model"},
      // A strided data face: stride phases do not leave fp32 sums.
      {"conv -n 32 -c 256 -H 28 -W 28 -k 256 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 2", "without stride phases"},
  };
  for (const auto& [command, reason] : cases) {
    SCOPED_TRACE(command);
    std::unique_ptr<OpProblem> problem = test::problem_of(command);
    ASSERT_TRUE(problem);
    const Status s = tier().accepts(*problem, test::sm90());
    EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
    EXPECT_NE(s.message().find(reason), std::string::npos) << s.to_string();
  }
}

}  // namespace
}  // namespace boo::ops::conv
