// boo tests: gpu:conv:small_c_data's and gpu:conv:small_c_forward's launch
// plans, computed on the host (no GPU): which convs they take ahead of the
// implicit GEMM (and why they decline the others), their tiles and windows,
// which tensor each launch writes; and a host model of small_c_forward's
// shared-memory index math (device/conv_small_c_forward.cuh).
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <vector>

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
  ASSERT_EQ(impls[4]->name(), "gpu:conv:small_c_data");
  ASSERT_EQ(impls[5]->name(), "gpu:conv:small_c_forward");
  ASSERT_EQ(impls[6]->name(), "gpu:conv:implicit_gemm");
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
           Case{"conv -n 2 -c 8 -H 32 -W 32 -k 64 -y 3 -x 3 -p 1 -q 1 -F 2", "8 result channels in 1 groups"},
           Case{"conv -n 2 -c 4 -H 32 -W 32 -k 64 -y 3 -x 3 -p 1 -q 1 -g 2 -F 2", "in 2 groups"},
           Case{"conv -n 2 -c 3 -H 32 -W 32 -k 64 -y 3 -x 3 -p 1 -q 1 -F 4", "data face alone"},
           Case{"conv -n 2 -c 3 -H 32 -W 32 -k 64 -y 3 -x 3 -p 1 -q 1 -F 0", "data face alone"},
           Case{"conv -n 2 -c 3 -H 32 -W 32 -k 64 -y 3 -x 3 -p 2 -q 2 -l 2 -j 2 -F 2", "dilation 1"},
           Case{"conv -n 2 -c 3 -H 32 -W 32 -k 64 -y 3 -x 3 -p 1 -q 1 -F 2" + nhwc, "rows contiguous"},
           Case{"conv --spatial_dim 1 -n 2 -c 3 -H 32 -k 64 -y 3 -p 1 -F 2", "2-D"},
           Case{"conv -n 2 -c 3 -H 64 -W 64 -k 64 -y 3 -x 3 -u 5 -v 5 -F 2", "up to 16 phases"},
           Case{"convfp16 -n 16 -c 3 -H 224 -W 224 -k 64 -y 3 -x 3 -p 1 -q 1 -F 2", "16-bit data faces of strided convs only"},
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

// 16-bit (issue 17's fp16 stem, 2.63x cuDNN's time on gpu:conv:implicit_gemm): the same tile, the next chunk
// through registers (chunk 2: Staged16's registers within 10), two blocks an SM; the cost model's estimates in
// the config (explain shows them). NCHW B goes element by element along rows.
TEST(ConvSmallCPlanTest, TakesSixteenBitStemsByTheCostModel) {
  const std::string line = "convfp16 -n 32 -c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 -F 2";
  const Planned p = test::plan_of(small_c(), line);
  // FFMA: 32 x 64 x 112 x 112 x 49 x 3 MACs at 25e12 x 0.7; the implicit GEMM's 128x32 tile at 150e12 x 0.7
  // with 3 of its 32 columns used.
  EXPECT_EQ(p.config, "dx small C: tile 16x32 phase pixels threads 256 pixels/thread 8 chunk 2 window 20x36 "
                      "blocks 896 16-bit B vec 1 rows cost ffma 215 us < tensor cores 383 us");
  ASSERT_EQ(p.launches.size(), 1u);
  EXPECT_EQ(p.launches[0].grid.x, 896u);
  EXPECT_EQ(p.launches[0].shared_bytes, 2u * 2 * (20 * 37 + 49 * 4) * 4);
  const std::string& src = p.source.text;
  EXPECT_NE(src.find("using T = boo::f16;"), std::string::npos) << src;
  EXPECT_NE(src.find("kBChannelsLast = false;"), std::string::npos) << src;
  EXPECT_NE(src.find("kBVec = 1;"), std::string::npos) << src;
  EXPECT_NE(src.find("boo::small_c::data_face_16bit<Cfg>(p)"), std::string::npos) << src;
  EXPECT_NE(src.find("__launch_bounds__(256, 2)"), std::string::npos) << src;
  // NHWC bf16: dy's channels contiguous, 8-byte vectors of a chunk of 4 channels (8 would not fit 48 KiB).
  const std::string nhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  const Planned v = test::plan_of(small_c(), "convbfp16 -n 32 -c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 "
                                             "-v 2 -F 2" + nhwc);
  EXPECT_EQ(v.config, "dx small C: tile 16x32 phase pixels threads 256 pixels/thread 8 chunk 4 window 20x36 "
                      "blocks 896 16-bit B vec 4 channels last cost ffma 215 us < tensor cores 383 us");
  EXPECT_NE(v.source.text.find("kBChannelsLast = true;"), std::string::npos);
  EXPECT_NE(v.source.text.find("kBVec = 4;"), std::string::npos);
  // K not a multiple of the chunk: channels last, element loads.
  const Planned odd = test::plan_of(small_c(), "convbfp16 -n 2 -c 4 -H 57 -W 57 -k 30 -y 5 -x 5 -p 2 -q 2 -u 2 -v 2 "
                                               "-F 2" + nhwc);
  EXPECT_NE(odd.source.text.find("kBVec = 1;"), std::string::npos);
  EXPECT_NE(odd.source.text.find("kBChannelsLast = true;"), std::string::npos);
  // fp32 keeps its cp.async kernel: no element type in its Cfg, three blocks an SM.
  const Planned f32 = test::plan_of(small_c(), "conv -n 32 -c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 -F 2");
  EXPECT_EQ(f32.source.text.find("using T"), std::string::npos);
  EXPECT_NE(f32.source.text.find("boo::small_c::data_face<Cfg>(p)"), std::string::npos);
  EXPECT_NE(f32.source.text.find("__launch_bounds__(256, 3)"), std::string::npos);
}

// Where FFMA is the slower (an arch whose FFMA rate is a tenth of the H100's), 16-bit declines with both estimates;
// fp32 has no tensor-core alternative of its precision and stays.
TEST(ConvSmallCPlanTest, SixteenBitDeclinesWhereTheTensorCoresCostLess) {
  ArchSpec slow = test::sm90();
  slow.ffma_macs_per_s /= 10;
  std::unique_ptr<OpProblem> h = test::problem_of("convbfp16 -n 32 -c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 "
                                                  "-u 2 -v 2 -F 2");
  ASSERT_TRUE(h);
  const Status s = small_c().accepts(*h, slow);
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented) << s.to_string();
  EXPECT_NE(s.message().find("16-bit cost: FFMA 2157 us >= the tensor-core tier's 383 us"), std::string::npos) << s.to_string();
  EXPECT_NE(s.message().find("(3 of its 32 columns)"), std::string::npos) << s.to_string();
  std::unique_ptr<OpProblem> f = test::problem_of("conv -n 32 -c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 "
                                                  "-F 2");
  ASSERT_TRUE(f);
  EXPECT_TRUE(small_c().accepts(*f, slow).ok());
}

// Staged16's walk (conv_small_c.cuh), replayed on the host from the plan's constants: the kThreads x kBLoads
// loads of a chunk put every (channel, window pixel) of the stage exactly once, a vector's channels starting on a
// multiple of kBVec; consecutive threads take consecutive channel groups of one pixel where B is channels last,
// consecutive pixels of a row otherwise.
TEST(ConvSmallCPlanTest, SixteenBitStagingCoversTheStageOnce) {
  const auto constant = [](const std::string& src, const std::string& name) {
    const size_t at = src.find(" " + name + " = ");
    EXPECT_NE(at, std::string::npos) << name;
    return std::stoll(src.substr(at + name.size() + 4));
  };
  const std::string nhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  for (const std::string& line : {"convbfp16 -n 32 -c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 -F 2" + nhwc,
                                  std::string("convfp16 -n 32 -c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 "
                                              "-F 2"),
                                  "convbfp16 -n 2 -c 4 -H 57 -W 57 -k 30 -y 5 -x 5 -p 2 -q 2 -u 2 -v 2 -F 2" + nhwc,
                                  "convfp16 -n 16 -c 3 -H 224 -W 224 -k 64 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 2" + nhwc}) {
    SCOPED_TRACE(line);
    const std::string src = test::plan_of(small_c(), line).source.text;
    const long long kc = constant(src, "kKC"), vec = constant(src, "kBVec"), threads = constant(src, "kThreads"),
                    win_h = constant(src, "kWinH"), win_w = constant(src, "kWinW");
    const bool last = src.find("kBChannelsLast = true;") != std::string::npos;
    const long long window = win_h * win_w, groups = kc / vec, loads = (groups * window + threads - 1) / threads;
    std::vector<int> seen(kc * window, 0);
    for (long long t = 0; t < threads; ++t)
      for (long long i = 0; i < loads; ++i) {
        const long long e = t + i * threads;
        if (e >= groups * window) continue;
        const long long pixel = last ? e / groups : e % window, group = last ? e % groups : e / window;
        for (long long l = 0; l < vec; ++l) ++seen[(group * vec + l) * window + pixel];
        // Thread t + 1 of the same load: the next channel group (channels last) or the next pixel.
        const long long next = e + 1;
        if (next < groups * window && next % threads != 0) {
          if (last && next % groups != 0) EXPECT_EQ(next / groups, pixel);
          if (!last && next % window != 0) EXPECT_EQ(next % window, pixel + 1);
        }
      }
    for (int n : seen) ASSERT_EQ(n, 1);
  }
}

const GpuImplementation& small_c_forward() { return conv::small_c_forward_implementation(); }

// The nchw-models stems, each ahead of the implicit GEMM: 3x3 stride 2 to 112x112 in 7 x 2 tiles of 56 rows x 16
// columns (224 threads: no padded pixel), 3x3 stride 1 at 224 in 32x32 tiles, ResNet's 7x7 stride 2 in two chunks of
// 32 channels (the window and 64 channels' filter would leave fewer than three blocks an SM).
TEST(ConvSmallCPlanTest, TakesTheStemsAheadOfTheImplicitGemm) {
  const std::string s2 = "conv -n 64 -c 3 -H 224 -W 224 -k 32 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 1 -t 1";
  EXPECT_TRUE(test::accepts(conv::implicit_gemm_implementation(), s2));
  const Planned p = test::plan_of(small_c_forward(), s2);
  EXPECT_EQ(p.config, "y small C: tile 56x16 pixels threads 224 channels 32 window 113x17 pitch 20 blocks 896");
  ASSERT_EQ(p.launches.size(), 1u);
  EXPECT_EQ(p.launches[0].grid.x, 64u * 2 * 7);  // images x 112/56 row tiles x 112/16 column tiles
  EXPECT_EQ(p.launches[0].block.x, 224u);
  // x's window: 3 channels x 113 rows x 2 column phases x 20 (pitch) floats; the filter 27 taps x 32 channels.
  EXPECT_EQ(p.launches[0].shared_bytes, (3u * 113 * 2 * 20 + 27 * 32) * 4);
  EXPECT_EQ(p.workspace_bytes, 0u);
  const auto y = params_of<ConvSmallCParams>(p.launches[0]);
  EXPECT_EQ(y.a, p.address.at("x"));
  EXPECT_EQ(y.b, p.address.at("y"));
  EXPECT_EQ(y.w, p.address.at("w"));
  EXPECT_EQ(y.bias, 0u);
  const std::string& src = p.source.text;
  EXPECT_NE(src.find("kVec = true;"), std::string::npos) << src;
  EXPECT_NE(src.find("kSegV = 2;"), std::string::npos) << src;
  EXPECT_NE(src.find("__launch_bounds__(224, 2)"), std::string::npos) << src;
  EXPECT_EQ(test::plan_of(small_c_forward(), "conv -n 16 -c 3 -H 224 -W 224 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1 -t 1").config,
            "y small C: tile 32x32 pixels threads 256 channels 64 window 34x34 pitch 36 blocks 784");
  const Planned r7 =
      test::plan_of(small_c_forward(), "conv -n 32 -c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 -F 1 -t 1");
  EXPECT_EQ(r7.config, "y small C: tile 56x16 pixels threads 224 channels 32 window 117x19 pitch 20 blocks 896");
  EXPECT_LE(r7.launches[0].shared_bytes * 3, test::sm90().max_shared_bytes_per_sm);
  // Dispatch's order: the data tier, then this one, then the implicit GEMM.
  const auto impls = find_op("conv")->gpu_implementations();
  ASSERT_EQ(impls[5]->name(), "gpu:conv:small_c_forward");
}

// Bias and activation ride on the forward; odd widths take 4-byte stores; a transposed conv's backward-data is the
// forward face, with db as a second launch.
TEST(ConvSmallCPlanTest, ForwardCarriesTheEpilogueAndTheTransposedData) {
  const Planned p = test::plan_of(small_c_forward(), "conv -n 3 -c 3 -H 37 -W 41 -k 13 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 "
                                                     "--activation leaky_relu:0.1");
  const auto y = params_of<ConvSmallCParams>(p.launches[0]);
  EXPECT_EQ(y.bias, p.address.at("b"));
  EXPECT_FLOAT_EQ(y.act_alpha, 0.1f);
  EXPECT_NE(p.source.text.find("kBias = true"), std::string::npos);
  EXPECT_NE(p.source.text.find("kAct = 7;"), std::string::npos);
  EXPECT_NE(p.source.text.find("kVec = false;"), std::string::npos);
  const Planned t = test::plan_of(small_c_forward(), "conv -m trans -n 2 -c 24 -H 20 -W 20 -k 3 -y 3 -x 3 -p 1 -q 1 -F 8");
  ASSERT_EQ(t.entries.size(), 2u);
  EXPECT_EQ(t.entries[1], "boo_conv_db");
  const auto dx = params_of<ConvSmallCParams>(t.launches[0]);
  EXPECT_EQ(dx.a, t.address.at("dy"));
  EXPECT_EQ(dx.b, t.address.at("dx"));
}

// 16-bit stems with filters up to 3x3: the same tiles, elements widened into shared memory, 8-byte stores.
TEST(ConvSmallCPlanTest, ForwardSixteenBitUpToThreeByThree) {
  const std::string line = "convbfp16 -n 16 -c 3 -H 224 -W 224 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1 -t 1";
  const Planned p = test::plan_of(small_c_forward(), line);
  EXPECT_EQ(p.config, "y small C: tile 32x32 pixels threads 256 channels 64 window 34x34 pitch 36 blocks 784");
  EXPECT_NE(p.source.text.find("using T = boo::bf16;"), std::string::npos) << p.source.text;
  const Planned db = test::plan_of(small_c_forward(), "convfp16 -m trans -n 2 -c 24 -H 20 -W 20 -k 3 -y 3 -x 3 "
                                                      "-p 1 -q 1 -F 8");
  EXPECT_NE(db.source.text.find("conv_bias_gradient<boo::f16>"), std::string::npos) << db.source.text;
}

TEST(ConvSmallCPlanTest, ForwardDeclinesWithTheReason) {
  struct Case {
    std::string command, reason;
  };
  const std::string nhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  for (const Case& c : {
           Case{"convbfp16 -n 2 -c 3 -H 32 -W 32 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 -F 1", "at most 9 taps (3x3)"},
           Case{"conv -n 2 -c 8 -H 32 -W 32 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1", "8 input channels in 1 groups"},
           Case{"conv -n 2 -c 4 -H 32 -W 32 -k 64 -y 3 -x 3 -p 1 -q 1 -g 2 -F 1", "in 2 groups"},
           Case{"conv -n 2 -c 3 -H 32 -W 32 -k 64 -y 3 -x 3 -p 1 -q 1 -F 2", "forward face alone"},
           Case{"conv -n 2 -c 3 -H 32 -W 32 -k 64 -y 3 -x 3 -p 1 -q 1 -F 0", "forward face alone"},
           Case{"conv -n 2 -c 3 -H 32 -W 32 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1 --residual 1", "no residual epilogue"},
           Case{"conv -n 2 -c 3 -H 32 -W 32 -k 64 -y 3 -x 3 -p 2 -q 2 -l 2 -j 2 -F 1", "dilation 1"},
           Case{"conv -n 2 -c 3 -H 32 -W 32 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1" + nhwc, "rows contiguous"},
           Case{"conv --spatial_dim 1 -n 2 -c 3 -H 32 -k 64 -y 3 -p 1 -F 1", "2-D"},
           Case{"conv -n 2 -c 3 -H 64 -W 64 -k 64 -y 13 -x 13 -p 6 -q 6 -F 1", "up to 11 taps"},
           Case{"conv -n 2 -c 3 -H 64 -W 64 -k 64 -y 3 -x 3 -u 5 -v 5 -F 1", "column strides up to 4"},
           Case{"conv -n 2 -c 3 -H 4096 -W 64 -k 8 -y 11 -x 3 -u 1000 -v 1 -F 1", "bytes of shared memory"},
       }) {
    SCOPED_TRACE(c.command);
    std::unique_ptr<OpProblem> problem = test::problem_of(c.command);
    ASSERT_TRUE(problem);
    const Status s = small_c_forward().accepts(*problem, test::sm90());
    EXPECT_EQ(s.code(), StatusCode::kUnimplemented) << s.to_string();
    EXPECT_NE(s.message().find(c.reason), std::string::npos) << s.to_string();
  }
}

// The integer constants of a plan's generated Cfg.
std::map<std::string, long long> cfg_constants(const std::string& source) {
  std::map<std::string, long long> out;
  static const std::regex constant(R"(static constexpr int (k\w+) = (-?\d+);)");
  for (auto it = std::sregex_iterator(source.begin(), source.end(), constant); it != std::sregex_iterator(); ++it)
    out[(*it)[1]] = std::stoll((*it)[2]);
  return out;
}

// A host model of conv_small_c_forward.cuh's shared-memory index math, from the plan's constants: for every block of
// one image and every thread, the window slot each (pixel, c, r, s) term reads holds x at (oy * sh - ph + r,
// ox * sw - pw + s) or a zero where that is padding, inside the 16-byte reads and the pitch; the filter slot holds
// w[k, c, r, s]; every tap of every pixel is summed exactly once; and a quarter warp's 16-byte window reads fall on
// distinct bank groups for the stems.
TEST(ConvSmallCPlanTest, ForwardIndexModel) {
  struct Case {
    std::string command;
    bool conflict_free;
  };
  for (const Case& line : {
           Case{"conv -n 1 -c 3 -H 224 -W 224 -k 32 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 1", true},
           Case{"conv -n 1 -c 3 -H 64 -W 64 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1", true},
           Case{"conv -n 1 -c 3 -H 70 -W 70 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 -F 1", true},
           Case{"conv -n 1 -c 2 -H 31 -W 33 -k 16 -y 3 -x 5 -p 1 -q 2 -u 1 -v 2 -F 1", false},
           Case{"conv -n 1 -c 3 -H 37 -W 41 -k 13 -y 3 -x 3 -p 1 -q 1 -F 1", false},
           Case{"conv -n 1 -c 4 -H 63 -W 63 -k 24 -y 11 -x 11 -p 2 -q 1 -u 4 -v 3 -F 1", false},
       }) {
    SCOPED_TRACE(line.command);
    const Planned p = test::plan_of(small_c_forward(), line.command);
    std::map<std::string, long long> k = cfg_constants(p.source.text);
    const long long ca = k["kCA"], cb = k["kCB"], win_h = k["kWinH"], phw = k["kPhW"], sw = k["kSW"],
                    sh = k["kSH"], pitch = k["kPitch"], g_lanes = k["kG"], th = k["kTH"], kb = k["kKB"],
                    fh = k["kFH"], fw = k["kFW"], ah = k["kAH"], aw = k["kAW"], bh = k["kBH"], bw = k["kBW"],
                    seg_v = k["kSegV"], threads = k["kThreads"];
    ASSERT_EQ(threads, th * g_lanes);
    const long long x_elems = ca * win_h * sw * pitch, taps = ca * fh * fw, tw = 4 * g_lanes;
    EXPECT_EQ(p.launches[0].shared_bytes, static_cast<uint32_t>((x_elems + taps * kb) * 4));
    EXPECT_EQ(pitch % 4, 0);
    const long long tiles_h = (bh + th - 1) / th, tiles_w = (bw + tw - 1) / tw, chunks = (cb + kb - 1) / kb;
    EXPECT_EQ(p.launches[0].grid.x, static_cast<uint32_t>(tiles_h * tiles_w * chunks));  // one image
    for (long long block = 0; block < tiles_h * tiles_w * chunks; ++block) {
      const long long tile_w = block % tiles_w, tile_h = block / tiles_w % tiles_h, chunk = block / (tiles_w * tiles_h);
      const long long oy0 = tile_h * th, ox0 = tile_w * tw, k0 = chunk * kb;
      const long long iy0 = oy0 * sh - k["kPH"], ix0 = ox0 * sw - k["kPW"];
      // The window's copy: slot -> x's element (c, iy, ix) as c * ah * aw + iy * aw + ix, or -1 for a zero.
      std::vector<long long> slot(x_elems, -2);
      for (long long e = 0; e < ca * win_h * sw * phw; ++e) {
        const long long c = e / (win_h * sw * phw), row = e / (sw * phw) % win_h, col = e % (sw * phw);
        const long long iy = iy0 + row, ix = ix0 + col;
        const long long at = ((c * win_h + row) * sw + col % sw) * pitch + col / sw;
        ASSERT_LT(at, x_elems);
        ASSERT_EQ(slot[at], -2) << "two copies land on slot " << at;
        slot[at] = iy >= 0 && iy < ah && ix >= 0 && ix < aw ? (c * ah + iy) * aw + ix : -1;
      }
      // The filter's copy: slot -> (channel, tap).
      std::vector<long long> filter(taps * kb, -2);
      for (long long e = 0; e < kb * taps; ++e) {
        const long long kc = e / taps, tap = e % taps;
        ASSERT_EQ(filter[tap * kb + kc], -2);
        filter[tap * kb + kc] = k0 + kc < cb ? (k0 + kc) * taps + tap : -1;
      }
      for (long long t_id = 0; t_id < threads; ++t_id) {
        const long long row = t_id / g_lanes, g = t_id % g_lanes, oy = oy0 + row, ox = ox0 + 4 * g;
        for (long long j = 0; j < 4; ++j) {
          std::set<long long> summed;
          for (long long c = 0; c < ca; ++c)
            for (long long r = 0; r < fh; ++r)
              for (long long ph = 0; ph < sw; ++ph) {
                const long long n_taps = ph < fw ? (fw - ph + sw - 1) / sw : 0;
                if (n_taps == 0) continue;
                const long long base = ((c * win_h + row * sh + r) * sw + ph) * pitch + 4 * g;
                ASSERT_EQ(base % 4, 0);
                const long long vectors = (4 + n_taps - 1 + 3) / 4;
                ASSERT_LE(vectors, seg_v);
                ASSERT_LE(4 * g + 4 * vectors, pitch);  // the 16-byte reads stay in the phase's row
                for (long long t = 0; t < n_taps; ++t) {
                  const long long s = ph + sw * t;
                  ASSERT_TRUE(summed.insert((c * fh + r) * fw + s).second);
                  const long long iy = oy * sh - k["kPH"] + r, ix = (ox + j) * sw - k["kPW"] + s;
                  const long long want = iy >= 0 && iy < ah && ix >= 0 && ix < aw ? (c * ah + iy) * aw + ix : -1;
                  if (oy < bh && ox + j < bw) {
                    ASSERT_EQ(slot[base + j + t], want) << oy << "," << ox + j;
                  }
                  for (long long kk = 0; kk < kb; ++kk) {
                    const long long tap = (c * fh + r) * fw + s;
                    ASSERT_EQ(filter[tap * kb + kk], k0 + kk < cb ? (k0 + kk) * taps + tap : -1);
                  }
                }
              }
          EXPECT_EQ(static_cast<long long>(summed.size()), taps);
        }
      }
    }
    // Bank groups of one quarter warp's first 16-byte window read (lanes 8q..8q+7 of warp 0).
    long long worst = 1;
    for (long long q = 0; q < 4; ++q) {
      std::map<long long, long long> groups;
      for (long long l = 8 * q; l < 8 * q + 8; ++l)
        worst = std::max(worst, ++groups[((l / g_lanes) * sh * sw * pitch + 4 * (l % g_lanes)) / 4 % 8]);
    }
    if (line.conflict_free) {
      EXPECT_EQ(worst, 1);
    }
  }
}

}  // namespace
}  // namespace boo::ops
