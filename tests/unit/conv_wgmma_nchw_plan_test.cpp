// boo tests: gpu:conv:wgmma_sm90's native path for pointwise convs of planar
// (NCHW) activations, planned on the host (no GPU): one GEMM launch per
// direction (plus the weight face's split-K reduce), no staged copies, the
// operands bound where they lie; and the convs it leaves to the staged path,
// with the reason in the config (`boo explain`).
#include <gtest/gtest.h>

#include <cstdlib>

#include "ops/conv/conv_wgmma_impl.hpp"
#include "ops/conv/device/conv_igemm_params.cuh"
#include "ops/op_definition.hpp"
#include "plan_util.hpp"

namespace boo::ops {
namespace {

using test::Planned;
using test::params_of;

const GpuImplementation& tier() { return conv::wgmma_sm90_implementation(); }

void expect_constants(const Planned& p, std::initializer_list<const char*> constants) {
  for (const char* constant : constants)
    EXPECT_NE(p.source.text.find(constant), std::string::npos) << constant << " in\n" << p.source.text;
}

bool stages_nothing(const Planned& p) {
  for (const std::string& entry : p.entries)
    if (entry.find("stage") != std::string::npos || entry.find("flip") != std::string::npos) return false;
  return p.config.find("copies") == std::string::npos;
}


TEST(ConvWgmmaNchwPlanTest, ForwardIsOneGemmPerImageWithTheEpilogue) {
  // y[n] (128 x 3136) = w (128 x 256, K-major) * x[n] (256 x 3136, N-major): 32 images x 1 row tile x 17
  // pixel tiles of 192 (3136 = 16 x 192 + 64: a partial last tile), bias per output channel (a GEMM row), relu.
  const Planned p =
      test::plan_of(tier(), "convfp16 -n 32 -c 256 -H 56 -W 56 -k 128 -y 1 -x 1 -F 1 -b 1 --activation relu");
  ASSERT_EQ(p.launches.size(), 1u);
  EXPECT_EQ(p.config,
            "tile 128x192x64 stages 5 warpgroups 1 producer + 2 consumers, persistent; y: face 0 as a GEMM per image, "
            "native NCHW 1x1: w K-major, pixels N-major, filter by TMA, x by TMA (a plain matrix): one producer thread, "
            "y by TMA");
  EXPECT_TRUE(stages_nothing(p));
  EXPECT_EQ(p.workspace_bytes, 0u);
  const test::ResolvedLaunch& l = p.launches[0];
  EXPECT_EQ(l.entry, "boo_wgmma_y");
  EXPECT_EQ(l.grid.x, 132u);  // 544 tiles over the SMs
  const auto params = params_of<ConvWgmmaStoreParams>(l).base.p;
  EXPECT_EQ(params.a, p.address.at("x"));
  EXPECT_EQ(params.w, p.address.at("w"));
  EXPECT_EQ(params.out, p.address.at("y"));
  EXPECT_EQ(params.bias, p.address.at("b"));
  EXPECT_NE(p.source.text.find("#include \"boo/conv/conv_wgmma_nchw.cuh\""), std::string::npos);
  EXPECT_NE(p.source.text.find("conv_wgmma_nchw<Cfg>(p.p, &p.tma_b, &p.tma_a, &s.tma_y)"), std::string::npos);
  expect_constants(p, {"kM = 128;", "kN = 3136;", "kK = 256;", "kImages = 32;", "kHW = 3136;", "XN = 802816;",
                       "XC = 3136;", "YN = 401408;", "YC = 3136;", "WK = 256;", "WC = 1;", "kAMnMajor = false;",
                       "kBias = true;", "kAct = 1;", "kType = 1;", "kTmaX = true;"});
}

// The native forward's tiles by TMA (produce_planar_tma): w as {256 reduced channels, 128 output channels},
// box {64, 128} (an A tile); x as {3136 pixels, 256 channel rows, 32 images}, box {64, 64, 1} (one atom
// column of a B tile, within one image: so too where the channels are not a multiple of 64); y stored by
// TMA as {3136 pixels, 128 channel rows, 32 images}, box {64, 32, 1} (store_tile_tma's); the cp.async
// producer is boo tune's second candidate.
TEST(ConvWgmmaNchwPlanTest, ForwardLoadsItsTilesByTma) {
  const std::string command = "convfp16 -n 32 -c 256 -H 56 -W 56 -k 128 -y 1 -x 1 -F 1 -b 1 --activation relu";
  std::unique_ptr<OpProblem> problem = test::problem_of(command);
  ASSERT_TRUE(problem);
  const ArchSpec arch = test::sm90();
  Result<ConfigList> list = tier().candidates(*problem, arch);
  ASSERT_TRUE(list.ok() && list->size() > 1);
  Result<Plan> plan = tier().plan(*problem, *(*list)[0], arch);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  ASSERT_EQ(plan->steps.size(), 1u);
  const std::vector<TensorMapSlot>& maps = plan->steps[0].tensor_maps;
  ASSERT_EQ(maps.size(), 3u);
  const TensorMapSlot& w = maps[0];
  EXPECT_EQ(w.dims[0], 256u);
  EXPECT_EQ(w.dims[1], 128u);
  EXPECT_EQ(w.strides[0], 256u * 2);
  EXPECT_EQ(w.box[0], 64u);
  EXPECT_EQ(w.box[1], 128u);
  // A dense 16-bit planar tensor of 32 images of 3136 pixels as {pixels, `rows` channel rows, images}, boxes
  // of 64 pixels x `box_rows` rows of one image.
  auto expect_planar = [](const TensorMapSlot& m, uint64_t rows, uint32_t box_rows) {
    EXPECT_EQ(m.rank, 3u);
    EXPECT_EQ(m.dims[0], 3136u);
    EXPECT_EQ(m.dims[1], rows);
    EXPECT_EQ(m.dims[2], 32u);
    EXPECT_EQ(m.strides[0], 3136u * 2);
    EXPECT_EQ(m.strides[1], rows * 3136 * 2);
    EXPECT_EQ(m.box[0], 64u);
    EXPECT_EQ(m.box[1], box_rows);
    EXPECT_EQ(m.box[2], 1u);
  };
  const TensorMapSlot& x = maps[1];
  expect_planar(x, 256, 64);
  EXPECT_EQ(w.box_bytes() + 3 * x.box_bytes(), 128u * 128 + 192u * 128);  // a stage's A and B tiles
  EXPECT_EQ(maps[2].params_offset, offsetof(ConvWgmmaStoreParams, tma_y));
  expect_planar(maps[2], 128, 32);
  // boo tune's candidates: the heuristic's, its tiling with plain stores, then with the cp.async producer.
  EXPECT_EQ((*list)[1]->text() + ", y by TMA", (*list)[0]->text());
  EXPECT_NE((*list)[2]->text().find("native NCHW 1x1: w K-major, pixels N-major; no TMA: boo tune's candidate"),
            std::string::npos)
      << (*list)[2]->text();
  for (const char* other : {"convbfp16 -n 4 -c 200 -H 56 -W 56 -k 128 -y 1 -x 1 -F 1",
                            "convbfp16 -n 1 -c 200 -H 64 -W 64 -k 128 -y 1 -x 1 -F 1"}) {
    const Planned p = test::plan_of(tier(), other);
    EXPECT_NE(p.config.find("x by TMA (a plain matrix): one producer thread, y by TMA"), std::string::npos)
        << p.config;
  }
  // One image: its stride, never stepped, is its rows' extent.
  std::unique_ptr<OpProblem> one = test::problem_of("convbfp16 -n 1 -c 200 -H 64 -W 64 -k 128 -y 1 -x 1 -F 1");
  ASSERT_TRUE(one);
  Result<std::unique_ptr<const Config>> one_config = tier().configure(*one, arch);
  ASSERT_TRUE(one_config.ok());
  Result<Plan> one_plan = tier().plan(*one, **one_config, arch);
  ASSERT_TRUE(one_plan.ok() && one_plan->steps.size() == 1u && one_plan->steps[0].tensor_maps.size() == 3u);
  EXPECT_EQ(one_plan->steps[0].tensor_maps[1].strides[1], 200u * 4096 * 2);
  // Plain stores where asked (A/B runs), and where the loads are cp.async (the 14 x 14 images' 8-byte vectors).
  const Planned plain = [&] {
    const test::ScopedEnv no_tma_stores("BOO_WGMMA_TMA_STORE", "0");
    return test::plan_of(tier(), command);
  }();
  EXPECT_EQ(plain.config.find("y by TMA"), std::string::npos) << plain.config;
  // Nor with a GELU in the epilogue (its registers spill beside the TMA store's staging).
  for (const char* gelu : {"gelu", "gelu_tanh"}) {
    const Planned p = test::plan_of(tier(), command.substr(0, command.find("relu")) + gelu);
    EXPECT_NE(p.config.find("x by TMA (a plain matrix): one producer thread"), std::string::npos) << p.config;
    EXPECT_EQ(p.config.find("y by TMA"), std::string::npos) << p.config;
  }
  const Planned small = test::plan_of(tier(), "convbfp16 -n 32 -c 256 -H 14 -W 14 -k 256 -y 1 -x 1 -F 1");
  EXPECT_NE(small.config.find("no TMA: the native NCHW path maps x by TMA where its pixels"), std::string::npos)
      << small.config;
  EXPECT_EQ(small.config.find("y by TMA"), std::string::npos) << small.config;
}

TEST(ConvWgmmaNchwPlanTest, BackwardDataReadsTheFilterMMajor) {
  // dx[n] (256 x 3136) = w^T (256 x 128: w's rows are contiguous along M) * dy[n] (128 x 3136).
  const Planned p = test::plan_of(tier(), "convbfp16 -n 32 -c 256 -H 56 -W 56 -k 128 -y 1 -x 1 -F 2");
  ASSERT_EQ(p.launches.size(), 1u);
  EXPECT_NE(p.config.find("dx: face 1 as a GEMM per image, native NCHW 1x1: w M-major, pixels N-major"),
            std::string::npos)
      << p.config;
  EXPECT_TRUE(stages_nothing(p));
  EXPECT_EQ(p.workspace_bytes, 0u);
  EXPECT_EQ(p.launches[0].entry, "boo_wgmma_dx");
  const auto params = params_of<ConvIgemmParams>(p.launches[0]);
  EXPECT_EQ(params.a, p.address.at("dy"));
  EXPECT_EQ(params.w, p.address.at("w"));
  EXPECT_EQ(params.out, p.address.at("dx"));
  EXPECT_EQ(params.bias, 0u);
  expect_constants(p, {"kM = 256;", "kN = 3136;", "kK = 128;", "kImages = 32;", "XN = 401408;", "XC = 3136;",
                       "YN = 802816;", "YC = 3136;", "WK = 1;", "WC = 256;", "kAMnMajor = true;", "kBias = false;",
                       "kType = 0;"});
}

TEST(ConvWgmmaNchwPlanTest, BackwardWeightReducesOverThePixelsOfEveryImage) {
  // dw (128 x 256) = sum over 32 x 3136 pixels (1568 k-blocks) of dy x^T, both K-major; split across the SMs.
  const Planned p = test::plan_of(tier(), "convbfp16 -n 32 -c 256 -H 56 -W 56 -k 128 -y 1 -x 1 -F 4");
  ASSERT_EQ(p.launches.size(), 2u);
  EXPECT_NE(p.config.find("dw: face 2 as weight gradient, native NCHW 1x1: K-major tiles over the pixels, splits "),
            std::string::npos)
      << p.config;
  EXPECT_TRUE(stages_nothing(p));
  EXPECT_EQ(p.launches[0].entry, "boo_wgmma_dw");
  EXPECT_EQ(p.launches[1].entry, "boo_wgmma_dw_reduce");
  for (const test::ResolvedLaunch& l : p.launches) {
    const auto params = params_of<ConvIgemmParams>(l);
    EXPECT_EQ(params.a, p.address.at("x"));
    EXPECT_EQ(params.b, p.address.at("dy"));
    EXPECT_EQ(params.out, p.address.at("dw"));
    EXPECT_EQ(params.workspace, p.workspace);
  }
  EXPECT_NE(p.source.text.find("conv_wgmma_nchw_weight<Cfg>(p)"), std::string::npos);
  EXPECT_NE(p.source.text.find("conv_wgmma_weight_reduce<Cfg>(p)"), std::string::npos);
  expect_constants(p, {"kM = 128;", "kN = 256;", "kC = 256;", "kL = 100352;", "kHW = 3136;", "XN = 802816;",
                       "XC = 3136;", "YN = 401408;", "YC = 3136;", "WK = 256;", "R = 1;", "S = 1;"});
}

TEST(ConvWgmmaNchwPlanTest, TakesPartialTilesInEveryDimension) {
  // 28 x 28 = 784 pixels (6 tiles of 128 and 16), 200 input channels (three k-blocks and 8 channels), 136
  // output channels (a row tile and 8 rows): every face natively.
  for (const char* direction : {"1", "2", "4"}) {
    const std::string command = std::string("convfp16 -n 16 -c 200 -H 28 -W 28 -k 136 -y 1 -x 1 -F ") + direction;
    SCOPED_TRACE(command);
    std::unique_ptr<OpProblem> problem = test::problem_of(command);
    ASSERT_TRUE(problem);
    EXPECT_TRUE(tier().accepts(*problem, test::sm90()).ok());
    const Planned p = test::plan_of(tier(), command);
    EXPECT_NE(p.config.find("native NCHW 1x1"), std::string::npos) << p.config;
    EXPECT_TRUE(stages_nothing(p));
  }
}

TEST(ConvWgmmaNchwPlanTest, ConsumersSplitTheColumnsOfTilesOfAtMostSixtyFourRows) {
  // 64 output channels (forward) or input channels (data face): 128- or 256-wide tiles whose columns the two
  // consumers split; BOO_WGMMA_NATIVE_HALF_COLUMNS=0 keeps the row split (consumer 1 idle) and 192 columns.
  for (const char* command : {"convfp16 -n 32 -c 64 -H 56 -W 56 -k 64 -y 1 -x 1 -F 1",
                              "convfp16 -n 32 -c 64 -H 56 -W 56 -k 256 -y 1 -x 1 -F 2"}) {
    SCOPED_TRACE(command);
    std::unique_ptr<OpProblem> problem = test::problem_of(command);
    ASSERT_TRUE(problem);
    Result<ConfigList> list = tier().candidates(*problem, test::sm90());
    ASSERT_TRUE(list.ok()) << list.status().to_string();
    for (const std::unique_ptr<const Config>& c : *list) {
      EXPECT_EQ(c->text().find("tile 128x192"), std::string::npos) << c->text();
      EXPECT_NE(c->text().find("consumers split the columns"), std::string::npos) << c->text();
    }
    const Planned p = test::plan_of(tier(), command);
    EXPECT_EQ(p.source.text.find("kConsumersSplitRows"), std::string::npos);
    const test::ScopedEnv rows("BOO_WGMMA_NATIVE_HALF_COLUMNS", "0");
    const Planned off = test::plan_of(tier(), command);
    EXPECT_EQ(off.config.find("consumers split the columns"), std::string::npos) << off.config;
    EXPECT_NE(off.source.text.find("kConsumersSplitRows = true;"), std::string::npos);
  }
  // 128 output channels keep the row split, every width.
  const Planned wide = test::plan_of(tier(), "convfp16 -n 32 -c 64 -H 56 -W 56 -k 128 -y 1 -x 1 -F 1");
  EXPECT_EQ(wide.config.find("consumers split the columns"), std::string::npos) << wide.config;
}

TEST(ConvWgmmaNchwPlanTest, TakesImagesOfPixelsAMultipleOfFourWithEightByteVectors) {
  // 14 x 14 = 196 pixels: every face natively, its planar copies and stores 4 pixels (8 bytes) each, the
  // forward face's x by cp.async (a TMA map's rows are 16-byte multiples); 7 x 7 = 49 pixels are staged.
  for (const char* direction : {"1", "2", "4"}) {
    const std::string command = std::string("convfp16 -n 64 -c 96 -H 14 -W 14 -k 576 -y 1 -x 1 -F ") + direction;
    SCOPED_TRACE(command);
    const Planned p = test::plan_of(tier(), command);
    EXPECT_NE(p.config.find("native NCHW 1x1"), std::string::npos) << p.config;
    EXPECT_NE(p.config.find(", pixels in vectors of 4"), std::string::npos) << p.config;
    EXPECT_TRUE(stages_nothing(p));
    expect_constants(p, {"kHW = 196;", "kPixelVector = 4;"});
    if (std::string(direction) == "1") {
      EXPECT_NE(p.config.find("no TMA: the native NCHW path maps x by TMA where its pixels and strides are multiples "
                              "of 8 (16-byte rows)"),
                std::string::npos)
          << p.config;
    }
  }
  const Planned wide = test::plan_of(tier(), "convfp16 -n 32 -c 256 -H 56 -W 56 -k 128 -y 1 -x 1 -F 1");
  EXPECT_EQ(wide.source.text.find("kPixelVector"), std::string::npos);
  // A channels-last input keeps the 8-pixel rule (8-byte vectors unmeasured beside it): staged.
  const Planned mixed =
      test::plan_of(tier(), "convbfp16 -n 64 -c 512 -H 14 -W 14 -k 256 -y 1 -x 1 -F 1 --in_layout NHWC");
  EXPECT_NE(mixed.config.find("staged: the native NCHW path takes a channels-last input where the planar result's "
                              "pixels per image are a multiple of 8, not 196"),
            std::string::npos)
      << mixed.config;
  const Planned odd = test::plan_of(tier(), "convfp16 -n 64 -c 576 -H 7 -W 7 -k 160 -y 1 -x 1 -F 1");
  EXPECT_NE(odd.config.find("staged: the native NCHW 1x1 path takes pixels per image that are a multiple of 4 "
                            "(8-byte vectors) only, not 49"),
            std::string::npos)
      << odd.config;
}

TEST(ConvWgmmaNchwPlanTest, TakesOneDimensionTransposedConvsAndSixtyFourChannels) {
  for (const std::string& command : {
           std::string("convbfp16 --spatial_dim 1 -n 64 -c 128 -H 1024 -k 256 -y 1 -F 1 -b 1"),
           std::string("convbfp16 --spatial_dim 1 -n 64 -c 128 -H 1024 -k 256 -y 1 -F 4"),
           std::string("convfp16 -n 32 -c 256 -H 28 -W 28 -k 128 -y 1 -x 1 -m trans -F 1"),
           std::string("convfp16 -n 32 -c 256 -H 28 -W 28 -k 128 -y 1 -x 1 -m trans -F 2"),
           // 64 output channels fill one consumer; the staged path wants 128.
           std::string("convfp16 -n 32 -c 64 -H 56 -W 56 -k 64 -y 1 -x 1 -F 1"),
           std::string("convfp16 -n 32 -c 256 -H 56 -W 56 -k 64 -y 1 -x 1 -F 4"),
       }) {
    SCOPED_TRACE(command);
    const Planned p = test::plan_of(tier(), command);
    EXPECT_NE(p.config.find("native NCHW 1x1"), std::string::npos) << p.config;
    EXPECT_TRUE(stages_nothing(p));
  }
  // The transposed forward is the data face: w (C = 256 rows of K = 128) read M-major.
  const Planned t = test::plan_of(tier(), "convfp16 -n 32 -c 256 -H 28 -W 28 -k 128 -y 1 -x 1 -m trans -F 1");
  expect_constants(t, {"kM = 128;", "kK = 256;", "kAMnMajor = true;"});
}

// A channels-last input of the forward or data face (x, dy) with a planar result is read where it lies,
// K-major, by TMA (conv_wgmma_nchw.cuh's kBKMajor): the GEMM of a transposed A by a transposed B. The data
// face's M-major w loads by TMA as two boxes an A tile. Without TMA the operands are staged, saying why.
TEST(ConvWgmmaNchwPlanTest, ChannelsLastInputsAreReadKMajorByTma) {
  struct Case {
    std::string command, config;
    std::initializer_list<const char*> constants;
  };
  for (const Case& c : {
           Case{"convbfp16 -n 2 -c 512 -H 64 -W 64 -k 256 -y 1 -x 1 -F 1 --in_layout NHWC",
                "y: face 0 as a GEMM per image, native NCHW 1x1: w K-major, pixels K-major (channels-last), filter by "
                "TMA, x by TMA (a plain matrix): one producer thread",
                {"kM = 256;", "kK = 512;", "kImages = 2;", "kHW = 4096;", "kAMnMajor = false;", "kBKMajor = true;"}},
           Case{"convbfp16 -n 1 -c 512 -H 64 -W 64 -k 256 -y 1 -x 1 -F 2 --out_layout NHWC",
                "dx: face 1 as a GEMM per image, native NCHW 1x1: w M-major, pixels K-major (channels-last), filter "
                "by TMA, x by TMA (a plain matrix): one producer thread",
                {"kM = 512;", "kK = 256;", "kImages = 1;", "kAMnMajor = true;", "kBKMajor = true;"}},
       }) {
    SCOPED_TRACE(c.command);
    const Planned p = test::plan_of(tier(), c.command);
    EXPECT_NE(p.config.find(c.config), std::string::npos) << p.config;
    EXPECT_TRUE(stages_nothing(p)) << p.config;
    ASSERT_EQ(p.launches.size(), 1u);
    expect_constants(p, c.constants);
    const Planned off = [&] {
      const test::ScopedEnv no_tma("BOO_WGMMA_TMA", "0");
      return test::plan_of(tier(), c.command);
    }();
    EXPECT_NE(off.config.find("; staged: the native NCHW path reads a channels-last input by TMA only"),
              std::string::npos)
        << off.config;
    EXPECT_EQ(off.source.text.find("kBKMajor"), std::string::npos);
  }
  // A planar data face loads by TMA too, its filter M-major, and stores dx by TMA.
  const Planned planar = test::plan_of(tier(), "convbfp16 -n 1 -c 512 -H 64 -W 64 -k 256 -y 1 -x 1 -F 2");
  EXPECT_NE(planar.config.find("w M-major, pixels N-major, filter by TMA, x by TMA (a plain matrix): one producer "
                               "thread, y by TMA"),
            std::string::npos)
      << planar.config;
  // The weight face keeps its cp.async producer.
  const Planned weight = test::plan_of(tier(), "convbfp16 -n 1 -c 512 -H 64 -W 64 -k 256 -y 1 -x 1 -F 4");
  EXPECT_NE(weight.config.find("no TMA: the native NCHW path loads its weight face with cp.async"), std::string::npos)
      << weight.config;
}

TEST(ConvWgmmaNchwPlanTest, StagesWhatTheNativePathCannotReadAndSaysWhy) {
  struct Case {
    std::string command, reason;
  };
  for (const Case& c : {
           Case{"convbfp16 -n 128 -c 256 -H 7 -W 7 -k 512 -y 1 -x 1 -F 1", "pixels per image that are a multiple of 4"},
           Case{"convbfp16 -n 32 -c 256 -H 28 -W 28 -k 256 -y 1 -x 1 -F 1 --out_layout NHWC", "not y's"},
           Case{"convbfp16 -n 32 -c 256 -H 28 -W 28 -k 256 -y 1 -x 1 -F 4 --in_layout NHWC", "not x's"},
       }) {
    SCOPED_TRACE(c.command);
    const Planned p = test::plan_of(tier(), c.command);
    EXPECT_NE(p.config.find("copies boo_conv_"), std::string::npos) << p.config;
    EXPECT_NE(p.config.find("; staged: the native NCHW 1x1 path takes"), std::string::npos) << p.config;
    EXPECT_NE(p.config.find(c.reason), std::string::npos) << p.config;
  }
  // Channels-last convs and NCHW convs that are not pointwise say nothing of it.
  for (const std::string& command : {
           std::string("convbfp16 -n 32 -c 256 -H 28 -W 28 -k 256 -y 1 -x 1 -F 1 --in_layout NHWC --fil_layout NHWC "
                       "--out_layout NHWC"),
           std::string("convfp16 -n 32 -c 256 -H 28 -W 28 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1"),
           std::string("convfp16 -n 32 -c 256 -H 28 -W 28 -k 256 -y 1 -x 1 -u 2 -v 2 -F 1"),
       }) {
    SCOPED_TRACE(command);
    EXPECT_EQ(test::plan_of(tier(), command).config.find("staged:"), std::string::npos);
  }
}

}  // namespace
}  // namespace boo::ops
