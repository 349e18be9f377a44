// boo tests: gpu:conv:small_c_data's launch plans, computed on the host (no
// GPU): which convs it takes ahead of the implicit GEMM (and why it declines
// the others), its tile and window, and which tensor its launch writes.
#include <gtest/gtest.h>

#include "ops/conv/conv_igemm_impl.hpp"
#include "ops/conv/conv_small_c_impl.hpp"
#include "ops/conv/device/conv_small_c_params.cuh"
#include "plan_util.hpp"

namespace boo::ops {
namespace {

using test::Planned;
using test::params_of;

const GpuImplementation& small_c() { return conv::small_c_data_implementation(); }

// ResNet's first conv (7x7 stride 2 over RGB) backward-data, issue 17's line: the four stride phases of a
// 16x32 phase-pixel tile in one block of 256 threads (a warp per phase's 8 rows x 4 strips of 8 pixels); the
// window of dy rows u0 - 2 .. u0 + 17 (the phases read o = u + q - t, q 1 or 2, t up to 3), 4 channels a stage.
TEST(ConvSmallCPlanTest, TakesResNetsFirstBackwardDataAheadOfTheImplicitGemm) {
  const std::string line = "conv -n 32 -c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 -g 1 -F 2";
  const auto impls = find_op("conv")->gpu_implementations();
  ASSERT_EQ(impls[3]->name(), "gpu:conv:small_c_data");
  ASSERT_EQ(impls[4]->name(), "gpu:conv:implicit_gemm");
  EXPECT_TRUE(test::accepts(conv::implicit_gemm_implementation(), line));
  const Planned p = test::plan_of(small_c(), line);
  EXPECT_EQ(p.config,
            "dx small C: tile 16x32 phase pixels threads 256 pixels/thread 8 chunk 4 window 20x36 blocks 896");
  ASSERT_EQ(p.launches.size(), 1u);
  EXPECT_EQ(p.launches[0].grid.x, 32u * 7 * 4);  // images x 112/16 phase rows x 112/32 phase columns (4)
  EXPECT_EQ(p.launches[0].block.x, 256u);
  // Two stages of 4 x (20 rows x 37 (odd pitch) + 49 taps x 4 padded channels) floats.
  EXPECT_EQ(p.launches[0].shared_bytes, 2u * 4 * (20 * 37 + 49 * 4) * 4);
  EXPECT_EQ(p.workspace_bytes, 0u);
  const auto dx = params_of<ConvSmallCParams>(p.launches[0]);
  EXPECT_EQ(dx.a, p.address.at("dx"));
  EXPECT_EQ(dx.b, p.address.at("dy"));
  EXPECT_EQ(dx.w, p.address.at("w"));
  EXPECT_EQ(dx.bias, 0u);
  const std::string& src = p.source.text;
  EXPECT_NE(src.find("kQLoH = -2;"), std::string::npos) << src;
  EXPECT_NE(src.find("kTnH = 4;"), std::string::npos) << src;
  EXPECT_NE(src.find("kCPad = 4;"), std::string::npos) << src;
  EXPECT_NE(src.find("__launch_bounds__(256, 3)"), std::string::npos) << src;
  // Stride 1: one phase, 64 rows of 4 strips.
  const Planned s1 = test::plan_of(small_c(), "conv -n 16 -c 3 -H 224 -W 224 -k 64 -y 3 -x 3 -p 1 -q 1 -F 2");
  EXPECT_EQ(s1.config,
            "dx small C: tile 64x32 phase pixels threads 256 pixels/thread 8 chunk 2 window 66x34 blocks 448");
}

// A transposed conv's forward to 3 channels is the data face with the epilogue; db is the last launch.
TEST(ConvSmallCPlanTest, TransposedForwardCarriesTheEpilogue) {
  const Planned p = test::plan_of(small_c(), "conv -m trans -n 2 -c 32 -H 14 -W 14 -k 3 -y 4 -x 4 -p 1 -q 1 -u 2 -v 2 "
                                             "-F 1 -b 1 --activation tanh");
  const auto y = params_of<ConvSmallCParams>(p.launches[0]);
  EXPECT_EQ(y.a, p.address.at("y"));
  EXPECT_EQ(y.b, p.address.at("x"));
  EXPECT_EQ(y.bias, p.address.at("b"));
  EXPECT_NE(p.source.text.find("kBias = true"), std::string::npos);
  EXPECT_NE(p.source.text.find("kAct = 3;"), std::string::npos);
  const Planned db = test::plan_of(small_c(), "conv -n 2 -c 3 -H 20 -W 20 -k 16 -y 3 -x 3 -p 1 -q 1 -F 8");
  ASSERT_EQ(db.entries.size(), 2u);
  EXPECT_EQ(db.entries[1], "boo_conv_db");
}

TEST(ConvSmallCPlanTest, DeclinesWithTheReason) {
  struct Case {
    std::string command, reason;
  };
  const std::string nhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  for (const Case& c : {
           Case{"convbfp16 -n 2 -c 3 -H 32 -W 32 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 -F 2", "runs float32"},
           Case{"conv -n 2 -c 8 -H 32 -W 32 -k 64 -y 3 -x 3 -p 1 -q 1 -F 2", "8 result channels in 1 groups"},
           Case{"conv -n 2 -c 4 -H 32 -W 32 -k 64 -y 3 -x 3 -p 1 -q 1 -g 2 -F 2", "in 2 groups"},
           Case{"conv -n 2 -c 3 -H 32 -W 32 -k 64 -y 3 -x 3 -p 1 -q 1 -F 4", "data face alone"},
           Case{"conv -n 2 -c 3 -H 32 -W 32 -k 64 -y 3 -x 3 -p 1 -q 1 -F 0", "data face alone"},
           Case{"conv -n 2 -c 3 -H 32 -W 32 -k 64 -y 3 -x 3 -p 2 -q 2 -l 2 -j 2 -F 2", "dilation 1"},
           Case{"conv -n 2 -c 3 -H 32 -W 32 -k 64 -y 3 -x 3 -p 1 -q 1 -F 2" + nhwc, "rows contiguous"},
           Case{"conv --spatial_dim 1 -n 2 -c 3 -H 32 -k 64 -y 3 -p 1 -F 2", "2-D"},
           Case{"conv -n 2 -c 3 -H 64 -W 64 -k 64 -y 3 -x 3 -u 5 -v 5 -F 2", "up to 16 phases"},
           Case{"conv -n 2 -c 3 -H 64 -W 64 -k 64 -y 9 -x 9 -p 4 -q 4 -F 2", "more than 7 taps"},
       }) {
    SCOPED_TRACE(c.command);
    std::unique_ptr<OpProblem> problem = test::problem_of(c.command);
    ASSERT_TRUE(problem);
    const Status s = small_c().accepts(*problem, test::sm90());
    EXPECT_EQ(s.code(), StatusCode::kUnimplemented) << s.to_string();
    EXPECT_NE(s.message().find(c.reason), std::string::npos) << s.to_string();
  }
}

}  // namespace
}  // namespace boo::ops
