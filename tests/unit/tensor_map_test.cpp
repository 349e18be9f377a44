// boo tests: TMA tensor maps without a GPU — the maps gpu:conv:wgmma_sm90
// plans for the operands it loads with TMA (the default; BOO_WGMMA_TMA=0 plans cp.async instead),
// Plan::validate's checks of a map slot, and the launch's encoding of the maps
// (runtime/tensor_maps.hpp) through the stand-in libcuda's
// cuTensorMapEncodeTiled (tests/fake_cuda), which checks what the driver
// checks and packs its arguments into the map's bytes.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>

#include "ops/conv/conv_wgmma_impl.hpp"
#include "ops/conv/device/conv_wgmma_params.cuh"
#include "ops/gemm/gemm_conv_impl.hpp"
#include "ops/op_definition.hpp"
#include "plan_util.hpp"
#include "runtime/tensor_maps.hpp"

namespace boo::ops {
namespace {

const GpuImplementation& tier() { return conv::wgmma_sm90_implementation(); }
const std::string kNhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";

struct Planned {
  std::string config;
  Plan plan;
  std::unique_ptr<OpProblem> problem;
};

// `impl`'s plan of `command` on sm_90a (the conv tier's, or a GEMM tier's that maps onto it): the heuristic's
// config, or boo tune's candidate `candidate`.
Planned plan_with(const GpuImplementation& impl, const std::string& command, int candidate = -1) {
  Planned out;
  out.problem = test::problem_of(command);
  if (!out.problem) return out;
  const ArchSpec arch = test::sm90();
  EXPECT_TRUE(impl.accepts(*out.problem, arch).ok()) << command;
  Result<std::unique_ptr<const Config>> config = impl.configure(*out.problem, arch);
  EXPECT_TRUE(config.ok()) << config.status().to_string();
  if (!config.ok()) return out;
  if (candidate >= 0) {
    Result<ConfigList> list = impl.candidates(*out.problem, arch);
    EXPECT_TRUE(list.ok() && static_cast<int>(list->size()) > candidate);
    if (!list.ok() || static_cast<int>(list->size()) <= candidate) return out;
    config = std::move((*list)[candidate]);
  }
  out.config = (*config)->text();
  Result<Plan> p = impl.plan(*out.problem, **config, arch);
  EXPECT_TRUE(p.ok()) << p.status().to_string();
  if (!p.ok()) return out;
  const OpSignature& sig = out.problem->signature();
  const Status valid = p->validate(sig.arguments().size(), sig.results().size());
  EXPECT_TRUE(valid.ok()) << valid.to_string();
  out.plan = std::move(p).value();
  return out;
}

Planned plan(const std::string& command) { return plan_with(tier(), command); }

// The forward face's filter by TMA beside x by cp.async: not the heuristic's choice (it was slower on
// average), boo tune's second candidate.
Planned plan_filter_alone_by_tma(const std::string& command) { return plan_with(tier(), command, 1); }

// The step that runs the Hopper kernel (entry boo_wgmma_<result>), or null.
const LaunchStep* wgmma_step(const Plan& plan) {
  for (const LaunchStep& s : plan.steps)
    if (s.entry.rfind("boo_wgmma_", 0) == 0 && s.entry.find("_reduce") == std::string::npos) return &s;
  return nullptr;
}

// BOO_WGMMA_TMA=0 for a scope: the Hopper tier's cp.async producers, as without TMA.
struct CpAsyncProducers : test::ScopedEnv {
  CpAsyncProducers() : ScopedEnv("BOO_WGMMA_TMA", "0") {}
};

// BOO_WGMMA_TMA_STORE=0 for a scope: y by plain stores, so that a load test sees the loads' maps alone
// (y's map is ForwardYIsStoredByTma's).
struct PlainStores : test::ScopedEnv {
  PlainStores() : ScopedEnv("BOO_WGMMA_TMA_STORE", "0") {}
};

// Clusters sharing the filter tile as the heuristic's choice (boo tune's candidate otherwise).
struct Clusters : test::ScopedEnv {
  Clusters() : ScopedEnv("BOO_WGMMA_CLUSTER", "1") {}
};
const std::string kClustered = ", clusters of 2 CTAs along the rows share the filter tile";

// Whether one of boo tune's candidates for the planned problem has `part` in its text.
bool some_candidate_says(const Planned& p, const std::string& part) {
  Result<ConfigList> list = tier().candidates(*p.problem, test::sm90());
  EXPECT_TRUE(list.ok());
  if (!list.ok()) return false;
  for (const auto& candidate : *list)
    if (candidate->text().find(part) != std::string::npos) return true;
  return false;
}

TensorBinding argument(const Planned& p, const char* name) {
  return *TensorRoles(p.problem->signature()).argument(name);
}

bool operator==(const TensorBinding& a, const TensorBinding& b) {
  return a.source == b.source && a.index == b.index && a.offset == b.offset;
}

TEST(TensorMapTest, ForwardFilterIsOneBoxPerKBlockUnlessTurnedOff) {
  const PlainStores plain_stores;
  // The 3x3, 256-channel forward line of docs/wgmma-tma-design.md §5: B is the KRSC filter as the 2-D matrix
  // {3 x 3 x 256 = 2304 packed (r, s, c) columns, 256 rows}, rows 2304 x 2 bytes apart; box {64, BN}.
  const std::string command = "convbfp16 -n 128 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1" + kNhwc;
  {
    const CpAsyncProducers cp_async;
    const Planned off = plan(command);
    ASSERT_FALSE(off.plan.steps.empty());
    EXPECT_TRUE(off.plan.steps.back().tensor_maps.empty());
    EXPECT_NE(off.config.find("; no TMA: BOO_WGMMA_TMA=0"), std::string::npos) << off.config;
    EXPECT_NE(off.plan.source.text.find("kTma = false;"), std::string::npos);
  }
  const Planned p = plan(command);
  EXPECT_NE(p.config.find(", filter by TMA"), std::string::npos) << p.config;
  ASSERT_EQ(p.plan.steps.size(), 1u);
  const LaunchStep& step = p.plan.steps[0];
  EXPECT_EQ(step.params.size(), sizeof(ConvWgmmaParams));
  // (And x by its im2col map: C is a multiple of 64, ForwardIm2colAIsOneCopyPerKBlock.)
  ASSERT_EQ(step.tensor_maps.size(), 2u);
  const TensorMapSlot& m = step.tensor_maps[0];
  EXPECT_EQ(m.params_offset, offsetof(ConvWgmmaParams, tma_b));
  EXPECT_EQ(m.params_offset % 64, 0u);
  EXPECT_TRUE(m.tensor == argument(p, "w"));
  EXPECT_EQ(m.byte_offset, 0u);
  EXPECT_EQ(m.rank, 2u);
  EXPECT_EQ(m.dims[0], 2304u);
  EXPECT_EQ(m.dims[1], 256u);
  EXPECT_EQ(m.strides[0], 2304u * 2);
  EXPECT_EQ(m.box[0], 64u);
  const int bn = p.config.find("tile 128x256x64") == 0 ? 256 : p.config.find("tile 128x128x64") == 0 ? 128 : 192;
  EXPECT_EQ(m.box[1], static_cast<uint32_t>(bn));
  EXPECT_EQ(m.box_bytes(), static_cast<uint64_t>(bn) * 128);  // the B tile: what the stage's barrier expects
  EXPECT_EQ(m.swizzle, TensorMapSlot::Swizzle::k128B);
  EXPECT_EQ(m.text(), "tensor map at byte " + std::to_string(offsetof(ConvWgmmaParams, tma_b)) + ": dims 2304x256, strides 4608 B, box 64x" + std::to_string(bn) + " (" +
                          std::to_string(bn * 128) + " B), 128-byte swizzle");
  EXPECT_NE(p.plan.source.text.find("kTma = true;"), std::string::npos);
  EXPECT_NE(p.plan.source.text.find("(const __grid_constant__ boo::ConvWgmmaParams p) { "
                                    "boo::wgmma_conv::conv_wgmma<Cfg>(p.p, &p.tma_b, &p.tma_a); }"),
            std::string::npos)
      << p.plan.source.text;
  // The implicit GEMM's addresses sit in the block's first member, as without TMA.
  ASSERT_FALSE(step.addresses.empty());
  for (const LaunchStep::AddressSlot& a : step.addresses) EXPECT_LT(a.params_offset, sizeof(ConvIgemmParams));
}

TEST(TensorMapTest, StagedFilterIsMappedInTheWorkspace) {
  // KCRS is staged into a dense KRSC copy: the map reads the copy. C = 72: the packed columns (3 x 3 x 72 = 648)
  // end inside the eleventh k-block, whose box reads zeros past them.
  const Planned p = plan_filter_alone_by_tma("convbfp16 -n 32 -c 72 -H 28 -W 28 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1");
  ASSERT_GE(p.plan.steps.size(), 2u);
  const LaunchStep* kernel = nullptr;
  for (const LaunchStep& s : p.plan.steps)
    if (s.entry == "boo_wgmma_y") kernel = &s;
  ASSERT_NE(kernel, nullptr);
  ASSERT_EQ(kernel->tensor_maps.size(), 1u);
  const TensorMapSlot& m = kernel->tensor_maps[0];
  EXPECT_EQ(m.tensor.source, TensorBinding::Source::kWorkspace);
  EXPECT_EQ(m.dims[0], 648u);
  EXPECT_EQ(m.dims[1], 256u);
  EXPECT_EQ(m.strides[0], 648u * 2);
}

TEST(TensorMapTest, WeightFaceDyIsTwoBoxesPerKBlock) {
  // dy [128, 28, 28, 128] dense: {128 channels, 128 x 28 x 28 pixels}, pixels 128 x 2 bytes apart; box {64, 64},
  // two a k-block (the A tile's two atom columns, 16 KiB together). C = 136: x by cp.async beside it.
  const Planned p = plan("convbfp16 -n 128 -c 136 -H 28 -W 28 -k 128 -y 3 -x 3 -p 1 -q 1 -F 4" + kNhwc);
  EXPECT_NE(p.config.find(", dy by TMA; x by cp.async: an im2col x needs input channels that are a multiple of 64"),
            std::string::npos)
      << p.config;
  const LaunchStep& step = p.plan.steps[0];
  ASSERT_EQ(step.tensor_maps.size(), 1u);
  const TensorMapSlot& m = step.tensor_maps[0];
  EXPECT_EQ(m.params_offset, offsetof(ConvWgmmaParams, tma_a));
  EXPECT_TRUE(m.tensor == argument(p, "dy"));
  EXPECT_EQ(m.dims[0], 128u);
  EXPECT_EQ(m.dims[1], 128u * 28 * 28);
  EXPECT_EQ(m.strides[0], 128u * 2);
  EXPECT_EQ(m.box[0], 64u);
  EXPECT_EQ(m.box[1], 64u);
  EXPECT_EQ(2 * m.box_bytes(), 128u * 128);  // the A tile
  EXPECT_NE(p.plan.source.text.find("conv_wgmma_weight<Cfg>(p.p, &p.tma_a)"), std::string::npos);
  EXPECT_EQ(p.plan.source.text.find("kTmaX"), std::string::npos);
  // Split K: the reduce reads only the implicit GEMM's block, and has no maps.
  if (p.plan.steps.size() > 1) {
    EXPECT_EQ(p.plan.steps[1].entry, "boo_wgmma_dw_reduce");
    EXPECT_EQ(p.plan.steps[1].params.size(), sizeof(ConvIgemmParams));
    EXPECT_TRUE(p.plan.steps[1].tensor_maps.empty());
    EXPECT_NE(p.plan.source.text.find("_reduce(const boo::ConvIgemmParams p)"), std::string::npos);
  }
}

// A 1x1 data face at stride 1 by TMA reads its filter in place: the filter slot maps w (KRSC: c contiguous) as
// {C columns, K rows}, box {64, 64}: one of the B tile's BN / 64 N-major atom columns; x's slot dy as {K
// channels, pixels}, y's dx. No flipped copy.
TEST(TensorMapTest, PointwiseDataFaceMapsTheFilterInPlace) {
  const std::string command = "convbfp16 -n 16 -c 288 -H 48 -W 32 -k 384 -y 1 -x 1 -F 2" + kNhwc;
  const Planned p = plan(command);
  EXPECT_NE(p.config.find(", filter in place by TMA (N-major), x by TMA (a plain matrix): one producer thread, y by TMA"),
            std::string::npos)
      << p.config;
  ASSERT_EQ(p.plan.steps.size(), 1u);
  const LaunchStep& step = p.plan.steps[0];
  ASSERT_EQ(step.tensor_maps.size(), 3u);
  const TensorMapSlot& w = step.tensor_maps[0];
  EXPECT_EQ(w.params_offset, offsetof(ConvWgmmaParams, tma_b));
  EXPECT_TRUE(w.tensor == argument(p, "w"));
  EXPECT_EQ(w.dims[0], 288u);  // C: the GEMM's columns, contiguous
  EXPECT_EQ(w.dims[1], 384u);  // K: the reduction
  EXPECT_EQ(w.strides[0], 288u * 2);
  EXPECT_EQ(w.box[0], 64u);
  EXPECT_EQ(w.box[1], 64u);
  const TensorMapSlot& x = step.tensor_maps[1];
  EXPECT_TRUE(x.tensor == argument(p, "dy"));
  EXPECT_EQ(x.dims[0], 384u);
  EXPECT_EQ(x.dims[1], 16u * 48 * 32);
  EXPECT_EQ(step.tensor_maps[2].dims[0], 288u);  // dx's channels, stored by TMA
  EXPECT_NE(p.plan.source.text.find("kBNMajor = true;"), std::string::npos);
  // Without TMA (the cp.async producer) and where dy is staged (a filter of odd k), the flipped copy is read.
  {
    test::ScopedEnv off("BOO_WGMMA_TMA", "0");
    EXPECT_NE(plan(command).config.find("copies boo_conv_flip_w"), std::string::npos);
  }
  const Planned odd = plan("convbfp16 -n 16 -c 288 -H 48 -W 32 -k 419 -y 1 -x 1 -F 2" + kNhwc);
  EXPECT_NE(odd.config.find("boo_conv_flip_w"), std::string::npos) << odd.config;
  EXPECT_EQ(odd.config.find("in place"), std::string::npos) << odd.config;
  // Filters of several taps, and strided data faces, read it in place too (DataFaceReadsTheFilterInPlaceWithItsTaps).
  EXPECT_NE(plan("convbfp16 -n 16 -c 288 -H 48 -W 32 -k 384 -y 3 -x 3 -p 1 -q 1 -F 2" + kNhwc).config.find(
                "dx: face 1 as forward, filter in place by TMA (N-major), x by TMA (im2col)"),
            std::string::npos);
  EXPECT_NE(plan("convbfp16 -n 16 -c 288 -H 48 -W 32 -k 384 -y 1 -x 1 -u 2 -v 2 -F 2" + kNhwc).config.find(
                "2x2 stride phases, filter in place by TMA (N-major), x by TMA"),
            std::string::npos);
}

TEST(TensorMapTest, GroupedWeightFaceMapsEveryGroupsChannels) {
  const test::ScopedEnv gemm_path("BOO_WGMMA_TAPS", "0");  // (the shifted taps' maps: ShiftedTapsMaps*)
  // 6 groups of 64: dy's map spans all 384 channels and x's im2col map all 384 (a group's boxes start at
  // its own channels, conv_wgmma_weight.cuh's GW and GA), not a group's 64.
  const Planned p = plan("convbfp16 -n 128 -c 384 -H 48 -W 32 -k 384 -y 3 -x 3 -p 1 -q 1 -g 6 -F 4" + kNhwc);
  EXPECT_NE(p.config.find("6 groups, dy by TMA, x by TMA (im2col)"), std::string::npos) << p.config;
  const LaunchStep& step = p.plan.steps[0];
  ASSERT_EQ(step.tensor_maps.size(), 2u);
  EXPECT_EQ(step.tensor_maps[0].dims[0], 384u);
  EXPECT_EQ(step.tensor_maps[0].dims[1], 128u * 48 * 32);
  EXPECT_EQ(step.tensor_maps[0].box[0], 64u);
  EXPECT_EQ(step.tensor_maps[1].dims[0], 384u);
  EXPECT_EQ(step.tensor_maps[1].channels_per_pixel, 64u);
}

TEST(TensorMapTest, WeightFaceXIsAnIm2colBoxPerAtomColumn) {
  // C = 128, a multiple of 64: beside dy's two boxes, x [128, 28, 28, 128] as the im2col map {128, 28, 28, 128}
  // with the forward face's corners {-1, -1} {-1, -1}, 64 channels x 64 pixels a box (one B atom column: a
  // k-block's 64 pixels, 64 columns of one tap), in the B slot; one producer thread (kTmaX, kIm2colX).
  const Planned p = plan("convbfp16 -n 128 -c 128 -H 28 -W 28 -k 128 -y 3 -x 3 -p 1 -q 1 -F 4" + kNhwc);
  EXPECT_NE(p.config.find(", dy by TMA, x by TMA (im2col): one producer thread"), std::string::npos) << p.config;
  const LaunchStep& step = p.plan.steps[0];
  ASSERT_EQ(step.tensor_maps.size(), 2u);
  EXPECT_EQ(step.tensor_maps[0].params_offset, offsetof(ConvWgmmaParams, tma_a));
  EXPECT_TRUE(step.tensor_maps[0].tensor == argument(p, "dy"));
  const TensorMapSlot& x = step.tensor_maps[1];
  EXPECT_EQ(x.params_offset, offsetof(ConvWgmmaParams, tma_b));
  EXPECT_TRUE(x.tensor == argument(p, "x"));
  EXPECT_EQ(x.mode, TensorMapSlot::Mode::kIm2col);
  EXPECT_EQ(x.rank, 4);
  EXPECT_EQ(x.dims[0], 128u);
  EXPECT_EQ(x.dims[1], 28u);
  EXPECT_EQ(x.dims[2], 28u);
  EXPECT_EQ(x.dims[3], 128u);
  EXPECT_EQ(x.strides[0], 128u * 2);
  EXPECT_EQ(x.strides[1], 28u * 128 * 2);
  EXPECT_EQ(x.strides[2], 28u * 28 * 128 * 2);
  EXPECT_EQ(x.lower_corner[0], -1);
  EXPECT_EQ(x.lower_corner[1], -1);
  EXPECT_EQ(x.upper_corner[0], -1);
  EXPECT_EQ(x.upper_corner[1], -1);
  EXPECT_EQ(x.channels_per_pixel, 64u);
  EXPECT_EQ(x.pixels_per_column, 64u);
  EXPECT_EQ(x.box_bytes(), 64u * 128);  // an atom column
  EXPECT_NE(p.plan.source.text.find("  static constexpr bool kTmaX = true;\n  static constexpr bool kIm2colX = true;\n};"),
            std::string::npos);
  EXPECT_NE(p.plan.source.text.find("conv_wgmma_weight<Cfg>(p.p, &p.tma_a, &p.tma_b)"), std::string::npos);
}

TEST(TensorMapTest, PlainForwardAIsOneBoxPerKBlockWithTheFilter) {
  const PlainStores plain_stores;
  // Where x is a plain matrix {C channels, N x H x W pixels} (1x1 filter, stride 1, no padding, pixels evenly
  // spaced), A is a second map, box {64, 128} (an A tile), and one producer thread issues both boxes (kTmaX).
  struct Case {
    std::string command;
    uint64_t channels, pixels, pixel_bytes, k;
    bool staged_x = false, gemm = false;
  } cases[] = {
      // ResNet's 1x1 expansion: M = 64 x 28 x 28 (a multiple of 128), C = 256 (four k-blocks).
      {"convbfp16 -n 64 -c 256 -H 28 -W 28 -k 512 -y 1 -x 1 -F 1" + kNhwc, 256, 64 * 28 * 28, 512, 512},
      // M = 7 x 30 x 30 = 6300, not a multiple of 128 (the last row tile's box reads zero rows past it); C = 72:
      // the one k-block's box reads zero channels past it. fp16, bias and activation.
      {"convfp16 -n 7 -c 72 -H 30 -W 30 -k 256 -y 1 -x 1 -F 1 -b 1 --activation relu" + kNhwc, 72, 6300, 144, 256},
      // A 1-D conv (H = 1).
      {"convbfp16 --spatial_dim 1 -n 8 -c 512 -H 1000 -k 256 -y 1 -F 1 --in_layout NHC --fil_layout NHC "
       "--out_layout NHC",
       512, 8000, 1024, 256},
      // GEMMs (m = --a_w rows of A, k = --a_h, n = --b_w) as 1x1 convs of m one-pixel images: A (k x m when
      // transposed, then staged m x k in the workspace) is x, {k channels, m pixels}; B, staged or not, the
      // filter {k, n}. k = 1000: the last k-block's box reads zero channels past it; m = 6000 and 2000 are
      // not multiples of 128. (With a bias: without, the plain, transA and transA-transB products are read
      // in place by other faces, gemm::map_in_place.)
      {"gemmbfp16 --a_w 4096 --a_h 4096 --b_w 4096 --bias 1", 4096, 4096, 8192, 4096, false, true},
      {"gemmbfp16 --a_w 4096 --a_h 4096 --b_w 4096 --transA 1 --bias 1", 4096, 4096, 8192, 4096, true, true},
      {"gemmbfp16 --a_w 6000 --a_h 1000 --b_w 2048 --transB 1", 1000, 6000, 2000, 2048, false, true},
      {"gemmbfp16 --a_w 2000 --a_h 2048 --b_w 8192 --transA 1 --transB 1 --bias 1", 2048, 2000, 4096, 8192, true, true},
      {"gemmbfp16 --a_w 1024 --a_h 8192 --b_w 512 --alpha 0.5", 8192, 1024, 16384, 512, false, true},
      // The gradient dA = dD B^T (x = dD, m x n as it is). (dB = A^T dD is the weight face's, in place.)
      {"gemmbfp16 --a_w 4096 --a_h 2048 --b_w 1024 -F 2", 1024, 4096, 2048, 2048, false, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.command);
    const Planned p = plan_with(c.gemm ? gemm::gemm_via_conv_wgmma() : tier(), c.command);
    EXPECT_NE(p.config.find(", filter by TMA, x by TMA (a plain matrix): one producer thread"), std::string::npos)
        << p.config;
    EXPECT_EQ(p.config.find("x by cp.async"), std::string::npos) << p.config;
    const LaunchStep* step = wgmma_step(p.plan);
    ASSERT_NE(step, nullptr);
    ASSERT_EQ(step->tensor_maps.size(), 2u);
    const TensorMapSlot& b = step->tensor_maps[0];
    const TensorMapSlot& a = step->tensor_maps[1];
    EXPECT_EQ(b.params_offset, offsetof(ConvWgmmaParams, tma_b));
    EXPECT_EQ(a.params_offset, offsetof(ConvWgmmaParams, tma_a));
    EXPECT_EQ(a.rank, 2u);
    EXPECT_EQ(a.dims[0], c.channels);
    EXPECT_EQ(a.dims[1], c.pixels);
    EXPECT_EQ(a.strides[0], c.pixel_bytes);
    EXPECT_EQ(a.box[0], 64u);
    EXPECT_EQ(a.box[1], 128u);
    EXPECT_EQ(a.box_bytes(), 128u * 128);  // the A tile
    EXPECT_EQ(a.swizzle, TensorMapSlot::Swizzle::k128B);
    EXPECT_EQ(a.byte_offset, 0u);
    EXPECT_EQ(a.tensor.source == TensorBinding::Source::kWorkspace, c.staged_x);
    if (!c.staged_x) {
      const char* x = !c.gemm ? "x" : c.command.find("-F 2") != std::string::npos ? "dd" : "a";
      EXPECT_TRUE(a.tensor == argument(p, x)) << x;
    }
    // The filter's map: {R x S x C = C columns, K rows}, box {64, BN}.
    EXPECT_EQ(b.dims[0], c.channels);
    EXPECT_EQ(b.dims[1], c.k);
    EXPECT_EQ(b.box[0], 64u);
    EXPECT_NE(p.plan.source.text.find("  static constexpr bool kTmaX = true;\n};"), std::string::npos);
    EXPECT_NE(p.plan.source.text.find("conv_wgmma<Cfg>(p.p, &p.tma_b, &p.tma_a); }"), std::string::npos)
        << p.plan.source.text;
    // boo explain prints both maps.
    EXPECT_NE(a.text().find("box 64x128 (16384 B), 128-byte swizzle"), std::string::npos) << a.text();
  }
}

TEST(TensorMapTest, ForwardIm2colAIsOneCopyPerKBlock) {
  const PlainStores plain_stores;
  // Where every k-block is one tap's 64 channels (C a multiple of 64), A is an im2col map of x {C, W, H, N}:
  // corners {-PW, -PH} and {PW - (S-1) DW, PH - (R-1) DH}, element strides {1, SW, SH, 1}, 64 channels x 128
  // pixels a copy (an A tile); the filter is the tiled map as before.
  struct Case {
    std::string command;
    std::array<uint64_t, 4> dims;
    std::array<int32_t, 2> lower, upper;  // W, H
    uint32_t stride_w, stride_h;
  } cases[] = {
      // The profiled 3x3 line: padding 1.
      {"convbfp16 -n 128 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1" + kNhwc, {256, 14, 14, 128}, {-1, -1},
       {-1, -1}, 1, 1},
      // Padding 0, M = 7 x 26 x 26 = 4732 (not a multiple of 128: the last tile's rows run into image 7, zeros).
      {"convbfp16 -n 7 -c 128 -H 28 -W 28 -k 256 -y 3 -x 3 -F 1" + kNhwc, {128, 28, 28, 7}, {0, 0}, {-2, -2}, 1, 1},
      // Stride 2 (the bounding box walked every second pixel), fp16 with bias and relu.
      {"convfp16 -n 64 -c 256 -H 56 -W 56 -k 512 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 1 -b 1 --activation relu" + kNhwc,
       {256, 56, 56, 64}, {-1, -1}, {-1, -1}, 2, 2},
      // Dilation 2.
      {"convbfp16 -n 32 -c 256 -H 28 -W 28 -k 256 -y 3 -x 3 -p 2 -q 2 -l 2 -j 2 -F 1" + kNhwc, {256, 28, 28, 32},
       {-2, -2}, {-2, -2}, 1, 1},
      // 1x1 filters that are not pointwise: padding 1, stride 2; a 1x3 filter (R = 1, S = 3) with padding 0 x 1.
      {"convbfp16 -n 64 -c 256 -H 28 -W 28 -k 512 -y 1 -x 1 -p 1 -q 1 -F 1" + kNhwc, {256, 28, 28, 64}, {-1, -1},
       {1, 1}, 1, 1},
      {"convbfp16 -n 64 -c 256 -H 56 -W 56 -k 512 -y 1 -x 1 -u 2 -v 2 -F 1" + kNhwc, {256, 56, 56, 64}, {0, 0},
       {0, 0}, 2, 2},
      {"convbfp16 -n 32 -c 128 -H 28 -W 28 -k 256 -y 1 -x 3 -q 1 -F 1" + kNhwc, {128, 28, 28, 32}, {-1, 0}, {-1, 0},
       1, 1},
      // A 1-D conv (H = 1).
      {"convbfp16 --spatial_dim 1 -n 8 -c 512 -H 1000 -k 256 -y 5 -p 2 -F 1 --in_layout NHC --fil_layout NHC "
       "--out_layout NHC",
       {512, 1000, 1, 8}, {-2, 0}, {-2, 0}, 1, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.command);
    const Planned p = plan(c.command);
    EXPECT_NE(p.config.find(", filter by TMA, x by TMA (im2col): one producer thread"), std::string::npos)
        << p.config;
    const LaunchStep* step = wgmma_step(p.plan);
    ASSERT_NE(step, nullptr);
    ASSERT_EQ(step->tensor_maps.size(), 2u);
    const TensorMapSlot& a = step->tensor_maps[1];
    EXPECT_EQ(a.params_offset, offsetof(ConvWgmmaParams, tma_a));
    EXPECT_EQ(a.mode, TensorMapSlot::Mode::kIm2col);
    EXPECT_TRUE(a.tensor == argument(p, "x"));
    EXPECT_EQ(a.rank, 4u);
    for (int d = 0; d < 4; ++d) EXPECT_EQ(a.dims[d], c.dims[d]) << d;
    // Dense NHWC (a dim of extent 1 takes the nested stride).
    EXPECT_EQ(a.strides[0], c.dims[0] * 2);
    EXPECT_EQ(a.strides[1], c.dims[0] * c.dims[1] * 2);
    EXPECT_EQ(a.strides[2], c.dims[0] * c.dims[1] * c.dims[2] * 2);
    EXPECT_EQ(a.lower_corner[0], c.lower[0]);
    EXPECT_EQ(a.lower_corner[1], c.lower[1]);
    EXPECT_EQ(a.upper_corner[0], c.upper[0]);
    EXPECT_EQ(a.upper_corner[1], c.upper[1]);
    EXPECT_EQ(a.element_strides, (std::array<uint32_t, 5>{1, c.stride_w, c.stride_h, 1, 1}));
    EXPECT_EQ(a.channels_per_pixel, 64u);
    EXPECT_EQ(a.pixels_per_column, 128u);
    EXPECT_EQ(a.box_bytes(), 128u * 128);  // the A tile: what the stage's barrier expects with B's box
    EXPECT_NE(p.plan.source.text.find("  static constexpr bool kTmaX = true;\n  static constexpr bool kIm2colX = true;\n};"),
              std::string::npos);
    EXPECT_EQ(a.text().rfind("im2col map at byte " + std::to_string(offsetof(ConvWgmmaParams, tma_a)) + ": dims ", 0),
              0u)
        << a.text();
    EXPECT_NE(a.text().find(", corners {" + std::to_string(c.lower[0]) + "," + std::to_string(c.lower[1]) + "} {" +
                            std::to_string(c.upper[0]) + "," + std::to_string(c.upper[1]) + "}, element strides 1x" +
                            std::to_string(c.stride_w) + "x" + std::to_string(c.stride_h) +
                            "x1, 64 channels x 128 pixels (16384 B)"),
              std::string::npos)
        << a.text();
  }
}

TEST(TensorMapTest, ForwardIm2colOfA1x1FilterTakesAPartialLastCopy) {
  const PlainStores plain_stores;
  // A strided 1x1 filter (not pointwise) of 96 channels: x by the im2col map all the same, its second copy
  // of a pixel's channels 64 ... 127 partly past C = 96 (TMA's zeros), the filter's box as far past its 96
  // columns; the cp.async producers with their reason as boo tune's second candidate, and the heuristic's
  // under BOO_WGMMA_PARTIAL_IM2COL=0.
  const std::string line = "convbfp16 -n 64 -c 96 -H 56 -W 56 -k 256 -y 1 -x 1 -u 2 -v 2 -F 1" + kNhwc;
  const std::string packed_why =
      "; no TMA: the filter alone by TMA was slower; x by cp.async: an im2col x needs input channels that are a "
      "multiple of 64 (one tap a copy), not 96";
  const Planned p = plan(line);
  EXPECT_NE(p.config.find(", filter by TMA, x by TMA (im2col): one producer thread"), std::string::npos) << p.config;
  const LaunchStep* step = wgmma_step(p.plan);
  ASSERT_NE(step, nullptr);
  ASSERT_EQ(step->tensor_maps.size(), 2u);
  const TensorMapSlot& w = step->tensor_maps[0];
  EXPECT_EQ(w.rank, 2u);
  EXPECT_EQ(w.dims[0], 96u);  // the filter's (tap, channel) columns: one tap
  EXPECT_EQ(w.box[0], 64u);
  const TensorMapSlot& a = step->tensor_maps[1];
  EXPECT_EQ(a.mode, TensorMapSlot::Mode::kIm2col);
  EXPECT_EQ(a.dims[0], 96u);
  EXPECT_EQ(a.channels_per_pixel, 64u);
  EXPECT_EQ(a.element_strides, (std::array<uint32_t, 5>{1, 2, 2, 1, 1}));
  EXPECT_NE(p.plan.source.text.find("  static constexpr int kC = 96;\n"), std::string::npos);
  EXPECT_NE(p.plan.source.text.find("  static constexpr bool kIm2colX = true;\n"), std::string::npos);

  // (Candidate 1 is the chosen config in clusters of two.)
  const Planned packed = plan_with(tier(), line, 2);
  EXPECT_NE(packed.config.find(packed_why), std::string::npos) << packed.config;
  ASSERT_NE(wgmma_step(packed.plan), nullptr);
  EXPECT_TRUE(wgmma_step(packed.plan)->tensor_maps.empty());
  {
    const test::ScopedEnv off("BOO_WGMMA_PARTIAL_IM2COL", "0");
    const Planned h = plan(line);
    EXPECT_EQ(h.config, packed.config);
    const Planned second = plan_with(tier(), line, 1);  // (the filter alone by TMA third)
    EXPECT_NE(second.config.find(", x by TMA (im2col)"), std::string::npos) << second.config;
  }
  // A tuning row's config is found among every candidate, also past the ones boo tune times.
  const std::unique_ptr<OpProblem> problem = test::problem_of(line);
  ASSERT_NE(problem, nullptr);
  Result<ConfigList> timed = tier().candidates(*problem, test::sm90());
  Result<ConfigList> every = tier().every_candidate(*problem, test::sm90());
  ASSERT_TRUE(timed.ok() && every.ok());
  EXPECT_EQ(timed->size(), std::min(every->size(), kMaxCandidates));
  Result<std::unique_ptr<const Config>> last = tier().config_from_text(*problem, test::sm90(), every->back()->text());
  ASSERT_TRUE(last.ok()) << last.status().to_string();
  EXPECT_EQ((*last)->text(), every->back()->text());
}

TEST(TensorMapTest, ForwardAThatTmaCannotLoadSaysWhy) {
  // x by cp.async, the filter alone by TMA, and the generated Cfg without kTmaX (as before).
  struct Case {
    std::string command, why;
  } cases[] = {
      // C = 72: a k-block ends one tap and starts the next (each tap's channels padded to whole copies of 64
      // would load a third more k-blocks).
      {"convbfp16 -n 32 -c 72 -H 28 -W 28 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1" + kNhwc,
       "; x by cp.async: an im2col x needs input channels that are a multiple of 64 (one tap a copy), not 72"},
      // x of 64 x 30 x 30 bf16 = 112.5 KiB (many tiles: K = 8448).
      {"convbfp16 -n 1 -c 64 -H 30 -W 30 -k 8448 -y 3 -x 3 -p 1 -q 1 -F 1" + kNhwc,
       "; x by cp.async: x below 128 KiB (a driver issue's workaround is not built)"},
      // Padding past the rank-4 corners' range.
      {"convbfp16 -n 1 -c 64 -H 100 -W 100 -k 256 -y 3 -x 3 -p 130 -q 1 -F 1" + kNhwc,
       "; x by cp.async: an im2col x along H needs padding up to 128"},
  };
  {  // Turned off: no maps, and no kTmaX line in the source.
    const CpAsyncProducers cp_async;
    const Planned off = plan("convbfp16 -n 64 -c 256 -H 28 -W 28 -k 512 -y 1 -x 1 -F 1" + kNhwc);
    EXPECT_NE(off.config.find("; no TMA: BOO_WGMMA_TMA=0"), std::string::npos) << off.config;
    EXPECT_EQ(off.plan.source.text.find("kTmaX"), std::string::npos);
    ASSERT_NE(wgmma_step(off.plan), nullptr);
    EXPECT_TRUE(wgmma_step(off.plan)->tensor_maps.empty());
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(c.command);
    // The heuristic's: no TMA at all, and why.
    const Planned h = plan(c.command);
    EXPECT_NE(h.config.find("; no TMA: the filter alone by TMA was slower" + c.why), std::string::npos) << h.config;
    EXPECT_TRUE(wgmma_step(h.plan)->tensor_maps.empty());
    const Planned p = plan_filter_alone_by_tma(c.command);
    EXPECT_NE(p.config.find(", filter by TMA; x by cp.async: "), std::string::npos) << p.config;
    EXPECT_NE(p.config.find(c.why), std::string::npos) << p.config;
    const LaunchStep* step = wgmma_step(p.plan);
    ASSERT_NE(step, nullptr);
    EXPECT_EQ(step->tensor_maps.size(), 1u);
    EXPECT_EQ(p.plan.source.text.find("kTmaX"), std::string::npos);
    EXPECT_EQ(p.plan.source.text.find("kIm2colX"), std::string::npos);
  }
}

TEST(TensorMapTest, DataFaceFlippedFilterIsAMapOfItsTaps) {
  const test::ScopedEnv flipped_copy("BOO_WGMMA_IN_PLACE_TAPS", "0");  // (boo tune's candidate: the heuristic reads it in place)
  // ResNet-50's 256-channel 3x3 data face at stride 1: the forward conv of dy with the flipped copy
  // [tap][c][kb] (9 x 256 x 256), read as the 4-D map {256 kb, 256 c, 9 taps, 1}, a box {64, 128, 1, 1} per
  // k-block (one tap's 64 kb of the tile's 128 rows; Cfg kBTaps), beside dy by im2col and dx stored by TMA.
  const Planned p = plan("convbfp16 -n 128 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -F 2" + kNhwc);
  EXPECT_NE(p.config.find("filter by TMA, x by TMA (im2col): one producer thread, y by TMA"), std::string::npos)
      << p.config;
  const LaunchStep* step = wgmma_step(p.plan);
  ASSERT_NE(step, nullptr);
  ASSERT_EQ(step->tensor_maps.size(), 3u);
  const TensorMapSlot* filter = nullptr;
  for (const TensorMapSlot& m : step->tensor_maps)
    if (m.params_offset == offsetof(ConvWgmmaParams, tma_b)) filter = &m;
  ASSERT_NE(filter, nullptr);
  EXPECT_EQ(filter->mode, TensorMapSlot::Mode::kTiled);
  EXPECT_EQ(filter->rank, 4u);
  EXPECT_EQ(filter->dims, (std::array<uint64_t, 5>{256, 256, 9, 1, 1}));
  EXPECT_EQ(filter->strides, (std::array<uint64_t, 4>{512, 256 * 512, 9 * 256 * 512, 0}));
  EXPECT_EQ(filter->box, (std::array<uint32_t, 5>{64, 128, 1, 1, 1}));
  EXPECT_NE(p.plan.source.text.find("kBTaps = true;"), std::string::npos);
  EXPECT_NE(p.plan.source.text.find("kIm2colX = true;"), std::string::npos);
}

TEST(TensorMapTest, GroupedForwardLoadsEachGroupsChannelsByTma) {
  const PlainStores plain_stores;
  // Groups of 64 or 128 channels: x's map is all its channels (a unit's boxes start at its group's, Cfg GA
  // apart), the filter's all its rows (a group's from its first output channel); the cp.async producers with
  // their reason as boo tune's second candidate, the heuristic's under BOO_WGMMA_GROUPED_TMA=0.
  struct Case {
    std::string command;
    int groups, group_channels;
    bool im2col;
    std::string taps_columns;  // the filter map's (tap, channel) columns
    uint64_t filter_rows;      // and its rows: every group's output channels
  } cases[] = {
      {"convbfp16 -n 128 -c 384 -H 48 -W 32 -k 384 -y 3 -x 3 -p 1 -q 1 -g 6 -F 1" + kNhwc, 6, 64, true, "576", 384},
      // 80 output channels a group in 128-wide tiles: a box's last rows are the next group's (never stored).
      {"convbfp16 -n 32 -c 512 -H 28 -W 28 -k 320 -y 3 -x 3 -p 1 -q 1 -g 4 -F 1" + kNhwc, 4, 128, true, "1152", 320},
      {"convbfp16 -n 32 -c 256 -H 28 -W 28 -k 256 -y 1 -x 1 -g 2 -F 1" + kNhwc, 2, 128, false, "128", 256},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.command);
    const std::string groups = ", " + std::to_string(c.groups) + " groups";
    const Planned p = plan(c.command);
    EXPECT_NE(p.config.find(groups + ", filter by TMA, x by TMA (" + (c.im2col ? "im2col" : "a plain matrix") +
                            "): one producer thread"),
              std::string::npos)
        << p.config;
    const LaunchStep* step = wgmma_step(p.plan);
    ASSERT_NE(step, nullptr);
    ASSERT_EQ(step->tensor_maps.size(), 2u);
    EXPECT_EQ(std::to_string(step->tensor_maps[0].dims[0]), c.taps_columns);
    EXPECT_EQ(step->tensor_maps[0].dims[1], c.filter_rows);
    EXPECT_EQ(step->tensor_maps[1].mode,
              c.im2col ? TensorMapSlot::Mode::kIm2col : TensorMapSlot::Mode::kTiled);
    EXPECT_EQ(step->tensor_maps[1].dims[0], static_cast<uint64_t>(c.groups * c.group_channels));
    EXPECT_NE(p.plan.source.text.find("  static constexpr int kGroups = " + std::to_string(c.groups) + ";\n"),
              std::string::npos);
    EXPECT_NE(p.plan.source.text.find("  static constexpr int GA = " + std::to_string(c.group_channels) + ";\n"),
              std::string::npos);
    const std::string declined = groups + "; no TMA: groups = 1 only, not " + std::to_string(c.groups);
    EXPECT_TRUE(some_candidate_says(p, declined)) << "the cp.async producers among boo tune's candidates";
    const test::ScopedEnv off("BOO_WGMMA_GROUPED_TMA", "0");
    EXPECT_NE(plan(c.command).config.find(declined), std::string::npos);
  }
}

TEST(TensorMapTest, GroupedDataFaceLoadsEachGroupsKbOfTheFlippedCopy) {
  // The flipped copy of a grouped filter is [tap][c][kb]: a group's C / groups channels by every group's kb. Its
  // map is {kb, C / groups, taps, 1} (a unit's boxes start at its group's kb, Cfg GW apart; rows past a group's
  // channels are the map's zeros), dy's im2col map all its channels (GA apart).
  const PlainStores plain_stores;
  const std::string line = "convbfp16 -n 32 -c 320 -H 28 -W 28 -k 256 -y 3 -x 3 -p 1 -q 1 -g 4 -F 2" + kNhwc;
  const Planned p = plan(line);
  EXPECT_NE(p.config.find(", 4 groups; copies boo_conv_flip_w(256->256 tiles 1x64x80 v8/8), filter by TMA, x by TMA "
                          "(im2col): one producer thread"),
            std::string::npos)
      << p.config;
  const LaunchStep* step = wgmma_step(p.plan);
  ASSERT_NE(step, nullptr);
  ASSERT_EQ(step->tensor_maps.size(), 2u);
  const TensorMapSlot& w = step->tensor_maps[0];
  EXPECT_EQ(w.rank, 4u);
  EXPECT_EQ(w.dims[0], 256u);  // every group's kb
  EXPECT_EQ(w.dims[1], 80u);   // a group's dx channels
  EXPECT_EQ(w.dims[2], 9u);
  EXPECT_EQ(w.strides[0], 256u * 2);
  EXPECT_EQ(w.strides[1], 80u * 256 * 2);
  EXPECT_EQ(step->tensor_maps[1].dims[0], 256u);  // dy's channels
  EXPECT_NE(p.plan.source.text.find("  static constexpr int GA = 64;\n  static constexpr int GW = 64;\n"),
            std::string::npos);
  EXPECT_NE(p.plan.source.text.find("  static constexpr bool kBTaps = true;\n"), std::string::npos);
  const test::ScopedEnv off("BOO_WGMMA_GROUPED_TMA", "0");
  EXPECT_NE(plan(line).config.find("; no TMA: the data face's flipped filter changes taps inside a k-block"),
            std::string::npos);
}

TEST(TensorMapTest, StridePhasesShareOneIm2colMapOfDy) {
  // The strided data face's phases (conv_wgmma_slices.cuh) are stride-1 convs of dy with their own padding pad'
  // and taps. One im2col map of dy serves them all: its lower corner -max pad' (Cfg kPhasePadH/W), its
  // bounding box the phases' P x Q grid, so the upper corner is P - H_dy - max pad'; the flipped copy
  // [r'][s'][c][kb] is a 4-D map {kb, c, S, R}, a box one tap's 64 kb (boo tune's candidate: the heuristic
  // reads the filter in place, DataFaceReadsTheFilterInPlaceWithItsTaps).
  const PlainStores plain_stores;
  const test::ScopedEnv flipped_copy("BOO_WGMMA_IN_PLACE_TAPS", "0");
  struct Case {
    std::string command;
    int pad_h, pad_w;                 // the largest pad' of a phase with taps
    std::array<uint64_t, 4> dy;       // dy's map: {K, W, H, N}
    std::array<int32_t, 2> upper;     // W, H: Q - W_dy - pad_w, P - H_dy - pad_h
    std::array<uint64_t, 4> flipped;  // {kb, c, S, R}
  } cases[] = {
      // 3x3, stride 2, padding 1 (ResNet-50): 56 -> 28; both phases of pad' 0 (2 taps from dy's pixel t - 1
      // ... t, 1 tap from t), dy and the grid 28 x 28.
      {"convbfp16 -n 128 -c 128 -H 56 -W 56 -k 128 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 2" + kNhwc, 0, 0,
       {128, 28, 28, 128}, {0, 0}, {128, 128, 3, 3}},
      // 4x4, stride 2, padding 1: phases of pad' 0 and 1 (taps from t - 1 and t), so tap j of the pad' 0 phase
      // is read at offset j + 1; dy 28 x 28.
      {"convbfp16 -n 16 -c 64 -H 56 -W 56 -k 128 -y 4 -x 4 -p 1 -q 1 -u 2 -v 2 -F 2" + kNhwc, 1, 1,
       {128, 28, 28, 16}, {-1, -1}, {128, 64, 4, 4}},
      // Stride 2 along H only: along W one phase of pad' 1 (a stride-1 3x3 of padding 1), 41 wide.
      {"convbfp16 -n 16 -c 128 -H 40 -W 41 -k 192 -y 3 -x 3 -p 1 -q 1 -u 2 -v 1 -F 2" + kNhwc, 0, 1,
       {192, 41, 20, 16}, {-1, 0}, {192, 128, 3, 3}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.command);
    const Planned p = plan(c.command);
    EXPECT_NE(p.config.find(" stride phases; copies boo_conv_flip_w("), std::string::npos) << p.config;
    EXPECT_NE(p.config.find("), filter by TMA, x by TMA (im2col): one producer thread"), std::string::npos)
        << p.config;
    const LaunchStep* step = wgmma_step(p.plan);
    ASSERT_NE(step, nullptr);
    ASSERT_EQ(step->tensor_maps.size(), 2u);
    const TensorMapSlot& w = step->tensor_maps[0];
    EXPECT_EQ(w.rank, 4u);
    for (int d = 0; d < 4; ++d) EXPECT_EQ(w.dims[d], c.flipped[d]) << d;
    EXPECT_EQ(w.strides[1], c.flipped[0] * c.flipped[1] * 2);  // one tap s' of the copy
    EXPECT_EQ(w.strides[2], c.flipped[0] * c.flipped[1] * c.flipped[2] * 2);
    const TensorMapSlot& a = step->tensor_maps[1];
    EXPECT_EQ(a.mode, TensorMapSlot::Mode::kIm2col);
    for (int d = 0; d < 4; ++d) EXPECT_EQ(a.dims[d], c.dy[d]) << d;
    EXPECT_EQ(a.lower_corner[0], -c.pad_w);
    EXPECT_EQ(a.lower_corner[1], -c.pad_h);
    EXPECT_EQ(a.upper_corner[0], c.upper[0]);
    EXPECT_EQ(a.upper_corner[1], c.upper[1]);
    EXPECT_EQ(a.element_strides, (std::array<uint32_t, 5>{1, 1, 1, 1, 1}));
    EXPECT_NE(p.plan.source.text.find("  static constexpr bool kBTaps = true;\n  static constexpr int kPhasePadH = " +
                                      std::to_string(c.pad_h) + ";\n  static constexpr int kPhasePadW = " +
                                      std::to_string(c.pad_w) + ";\n"),
              std::string::npos);
    const test::ScopedEnv off("BOO_WGMMA_PHASED_TMA", "0");
    EXPECT_NE(plan(c.command).config.find("; no TMA: the data face's flipped filter changes taps inside a k-block"),
              std::string::npos);
  }
}

TEST(TensorMapTest, DataFaceReadsTheFilterInPlaceWithItsTaps) {
  // A data face of several taps, or of stride phases, whose dy channels are whole 64-k boxes reads W[k][r][s][c]
  // where it lies: a 4-D map {C, S, R, K} (KRSC strides), BN / 64 N-major boxes {64 c, 1, 1, 64 k} a k-block of
  // the unflipped tap (Cfg kBNMajor, kBInPlaceTaps), no flipped copy and no copy kernel; boo tune's candidates
  // keep the flipped copy (the config without in-place taps).
  const PlainStores plain_stores;
  struct Case {
    std::string command, phases;
    std::array<uint64_t, 5> dims;     // {C, S, R, K, 1}
    std::array<uint64_t, 4> strides;  // bytes: s, r, k
  } cases[] = {
      {"convbfp16 -n 128 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -F 2" + kNhwc, "",
       {256, 3, 3, 256, 1}, {512, 3 * 512, 9 * 512, 0}},
      {"convbfp16 -n 128 -c 128 -H 56 -W 56 -k 128 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 2" + kNhwc, ", 2x2 stride phases",
       {128, 3, 3, 128, 1}, {256, 3 * 256, 9 * 256, 0}},
      {"convbfp16 -n 16 -c 64 -H 56 -W 56 -k 128 -y 4 -x 4 -p 1 -q 1 -u 2 -v 2 -F 2" + kNhwc, ", 2x2 stride phases",
       {64, 4, 4, 128, 1}, {128, 4 * 128, 16 * 128, 0}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.command);
    const Planned p = plan(c.command);
    EXPECT_NE(p.config.find("dx: face 1 as forward" + c.phases +
                            ", filter in place by TMA (N-major), x by TMA (im2col): one producer thread"),
              std::string::npos)
        << p.config;
    EXPECT_EQ(p.config.find("boo_conv_flip_w"), std::string::npos) << p.config;
    ASSERT_EQ(p.plan.steps.size(), 1u);
    const LaunchStep* step = wgmma_step(p.plan);
    ASSERT_NE(step, nullptr);
    const TensorMapSlot& w = step->tensor_maps.at(0);
    EXPECT_EQ(w.params_offset, offsetof(ConvWgmmaParams, tma_b));
    EXPECT_EQ(w.rank, 4u);
    EXPECT_EQ(w.dims, c.dims);
    EXPECT_EQ(w.strides, c.strides);
    EXPECT_EQ(w.box, (std::array<uint32_t, 5>{64, 1, 1, 64, 1}));
    EXPECT_TRUE(w.tensor == argument(p, "w"));
    EXPECT_NE(p.plan.source.text.find("  static constexpr bool kBNMajor = true;\n  static constexpr bool kBInPlaceTaps = true;\n"),
              std::string::npos);
    EXPECT_EQ(p.plan.source.text.find("kBTaps"), std::string::npos);
    EXPECT_TRUE(some_candidate_says(p, "boo_conv_flip_w")) << "the flipped copy among boo tune's candidates";
    const test::ScopedEnv off("BOO_WGMMA_IN_PLACE_TAPS", "0");
    EXPECT_NE(plan(c.command).config.find("boo_conv_flip_w"), std::string::npos);
  }
}

TEST(TensorMapTest, ShapesThatDoNotQualifySayWhy) {
  struct Case {
    std::string command, why;
  } cases[] = {
      // Stride phases over dy's 200 channels: a 64-kb box would run into the next tap's.
      {"convbfp16 -n 16 -c 768 -H 48 -W 32 -k 200 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 2" + kNhwc,
       "; no TMA: the data face's flipped filter changes taps inside a k-block"},
      {"convbfp16 -n 16 -c 256 -H 28 -W 28 -k 200 -y 3 -x 3 -p 1 -q 1 -F 2" + kNhwc,
       "; no TMA: the data face's flipped filter changes taps inside a k-block"},
      // A group's 96 channels: a 64-channel box of x would run into the next group's.
      {"convbfp16 -n 16 -c 480 -H 48 -W 32 -k 480 -y 3 -x 3 -p 1 -q 1 -g 5 -F 1" + kNhwc,
       "; no TMA: groups = 1 only, not 5"},
      // 80 of dy's channels a group: a 64-kb box of the flipped copy would run into the next group's.
      {"convbfp16 -n 16 -c 256 -H 56 -W 56 -k 320 -y 3 -x 3 -p 1 -q 1 -g 4 -F 2" + kNhwc,
       "; no TMA: the data face's flipped filter changes taps inside a k-block"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.command);
    const Planned p = plan(c.command);
    EXPECT_NE(p.config.find(c.why), std::string::npos) << p.config;
    EXPECT_EQ(p.config.find("by TMA"), std::string::npos) << p.config;
    for (const LaunchStep& s : p.plan.steps) EXPECT_TRUE(s.tensor_maps.empty()) << s.entry;
  }
}

// The forward face's y stored by TMA (the default where the epilogue is the plain one): y as the matrix
// {K channels, N x P x Q pixels} (of one image: a 3-D map), a box per 32 pixels x 64 channels (store_tile_tma's), its map after the
// loads' in the kernel's own block; not with split K, groups, a residual, cp.async producers or plain
// stores asked for, and
// boo tune weighs the plain stores (every tiling with them first, then with TMA stores).
TEST(TensorMapTest, ForwardYIsStoredByTma) {
  const std::string command = "convbfp16 -n 128 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1" + kNhwc;
  const Planned p = plan(command);
  EXPECT_NE(p.config.find(", y by TMA"), std::string::npos) << p.config;
  ASSERT_EQ(p.plan.steps.size(), 1u);
  const LaunchStep& step = p.plan.steps[0];
  EXPECT_EQ(step.params.size(), sizeof(ConvWgmmaStoreParams));
  ASSERT_EQ(step.tensor_maps.size(), 3u);
  EXPECT_EQ(step.tensor_maps[0].params_offset, offsetof(ConvWgmmaParams, tma_b));  // the base block first
  const TensorMapSlot& y = step.tensor_maps[2];
  EXPECT_EQ(y.params_offset, offsetof(ConvWgmmaStoreParams, tma_y));
  EXPECT_TRUE(y.tensor == *TensorRoles(p.problem->signature()).result("y"));
  EXPECT_EQ(y.rank, 3u);  // (store_tile_tma's one form: the native path's images are its third dim)
  EXPECT_EQ(y.dims[0], 256u);
  EXPECT_EQ(y.dims[1], 128u * 14 * 14);
  EXPECT_EQ(y.dims[2], 1u);
  EXPECT_EQ(y.strides[0], 256u * 2);
  EXPECT_EQ(y.box[0], 64u);
  EXPECT_EQ(y.box[1], 32u);
  EXPECT_EQ(y.box[2], 1u);
  EXPECT_EQ(y.swizzle, TensorMapSlot::Swizzle::k128B);
  EXPECT_NE(p.plan.source.text.find("  static constexpr bool kTmaY = true;\n"), std::string::npos);
  EXPECT_NE(p.plan.source.text.find("(const __grid_constant__ boo::ConvWgmmaStoreParams s) { const "
                                    "boo::ConvWgmmaParams& p = s.base; boo::wgmma_conv::conv_wgmma<Cfg>(p.p, "
                                    "&p.tma_b, &p.tma_a, &s.tma_y); }"),
            std::string::npos)
      << p.plan.source.text;
  const size_t arguments = p.problem->signature().arguments().size(), results = p.problem->signature().results().size();
  EXPECT_TRUE(p.plan.validate(arguments, results).ok());
  // The candidates: the heuristic's with TMA stores first of all, then the same in clusters
  // (ForwardClustersShareTheFilterTile), then the 16 tilings' with plain stores (a tuning row's config is
  // one of them).
  Result<ConfigList> list = tier().candidates(*p.problem, test::sm90());
  ASSERT_TRUE(list.ok());
  EXPECT_EQ((*list)[0]->text(), p.config);
  EXPECT_EQ((*list)[1]->text(), p.config + kClustered);
  EXPECT_EQ((*list)[2]->text() + ", y by TMA", p.config);
  // Not stored by TMA: asked not to, a residual, groups.
  {
    const PlainStores plain_stores;
    const Planned off = plan(command);
    EXPECT_EQ(off.config.find("y by TMA"), std::string::npos) << off.config;
    EXPECT_EQ(off.plan.steps[0].params.size(), sizeof(ConvWgmmaParams));
  }
  for (const char* other : {" --residual 1", " -g 2"}) {
    const Planned q = plan(command + other);
    EXPECT_EQ(q.config.find("y by TMA"), std::string::npos) << other << ": " << q.config;
  }
  // Nor beside cp.async producers (x of 200 channels; the data face's flipped filter): measured slower.
  for (const char* other : {"convbfp16 -n 16 -c 200 -H 28 -W 28 -k 128 -y 3 -x 3 -p 1 -q 1 -F 1",
                            "convbfp16 -n 16 -c 144 -H 24 -W 16 -k 144 -y 3 -x 3 -p 1 -q 1 -F 2"}) {
    const Planned q = plan(other + kNhwc);
    EXPECT_EQ(q.config.find(" by TMA;"), std::string::npos) << q.config;
    EXPECT_EQ(q.config.find("y by TMA"), std::string::npos) << q.config;
  }
}

TEST(TensorMapTest, ValidateChecksTheSlot) {
  const PlainStores plain_stores;
  const Planned p = plan("convbfp16 -n 128 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1" + kNhwc);
  ASSERT_EQ(p.plan.steps.size(), 1u);
  const size_t arguments = p.problem->signature().arguments().size(), results = p.problem->signature().results().size();
  auto broken = [&](auto&& edit) {
    Plan copy = p.plan;
    edit(copy.steps[0].tensor_maps[0], copy.steps[0]);
    const Status s = copy.validate(arguments, results);
    EXPECT_EQ(s.code(), StatusCode::kInternal) << s.to_string();
    return std::string(s.message());
  };
  EXPECT_NE(broken([](TensorMapSlot& m, LaunchStep&) { m.params_offset -= 8; }).find("not 64-byte aligned"),
            std::string::npos);
  EXPECT_NE(broken([](TensorMapSlot& m, LaunchStep& s) { s.addresses[0].params_offset = m.params_offset; })
                .find("overlaps an address slot"),
            std::string::npos);
  EXPECT_NE(broken([](TensorMapSlot& m, LaunchStep&) { m.params_offset += 64; }).find("outside the parameter block"),
            std::string::npos);
  EXPECT_NE(broken([](TensorMapSlot& m, LaunchStep&) { m.strides[0] += 8; }).find("multiple of 16"),
            std::string::npos);
  EXPECT_NE(broken([](TensorMapSlot& m, LaunchStep&) { m.strides[0] = 2048; }).find("smaller than the dims"),
            std::string::npos);
  EXPECT_NE(broken([](TensorMapSlot& m, LaunchStep&) { m.box[0] = 128; }).find("wider than the 128-byte swizzle"),
            std::string::npos);
  EXPECT_NE(broken([](TensorMapSlot& m, LaunchStep&) { m.box[1] = 512; }).find("box dim outside 1..256"),
            std::string::npos);
  EXPECT_NE(broken([](TensorMapSlot& m, LaunchStep&) { m.byte_offset = 8; }).find("not 16-byte aligned"),
            std::string::npos);
  EXPECT_NE(broken([](TensorMapSlot& m, LaunchStep&) { m.tensor.index = 9; }).find("past the signature's tensors"),
            std::string::npos);
}

// The stand-in libcuda's cuTensorMapEncodeTiled, loaded by path (it has no soname: nothing else finds it).
runtime::TensorMapEncoders fake_encode() {
  static void* lib = dlopen(BOO_FAKE_CUDA_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(lib, nullptr) << dlerror();
  if (!lib) return {};
  return {reinterpret_cast<runtime::EncodeTiledFn>(dlsym(lib, "cuTensorMapEncodeTiled")),
          reinterpret_cast<runtime::EncodeIm2colFn>(dlsym(lib, "cuTensorMapEncodeIm2col"))};
}

TEST(TensorMapTest, LaunchEncodesAMapOnlyWhenItsTensorMoved) {
  // C = 72: x by cp.async (not a multiple of 64), the filter {648 packed columns, 256 rows} the one map.
  const Planned p = plan_filter_alone_by_tma("convbfp16 -n 32 -c 72 -H 28 -W 28 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1" + kNhwc);
  ASSERT_EQ(p.plan.steps.size(), 1u);
  ASSERT_EQ(p.plan.steps[0].tensor_maps.size(), 1u);
  const runtime::TensorMapEncoders encode = fake_encode();
  ASSERT_NE(encode.tiled, nullptr);
  ASSERT_NE(encode.im2col, nullptr);
  const LaunchStep& step = p.plan.steps[0];
  const TensorMapSlot& slot = step.tensor_maps[0];
  std::vector<std::byte> params = step.params;
  runtime::StepTensorMaps maps(step.tensor_maps);
  uint64_t w_address = 0x7f0000100000;
  auto address_of = [&](const TensorBinding& t) -> uint64_t {
    EXPECT_TRUE(t == argument(p, "w"));
    return w_address;
  };
  // The fake packs its arguments into the map: [0] the address, [1-2] dims, [6] the stride, [10] the boxes.
  auto map_word = [&](int i) {
    uint64_t v = 0;
    std::memcpy(&v, params.data() + slot.params_offset + 8 * i, sizeof v);
    return v;
  };
  Result<int> first = maps.refresh(encode, address_of, params);
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  EXPECT_EQ(*first, 1);
  EXPECT_EQ(map_word(0), w_address);
  EXPECT_EQ(map_word(1), 648u);
  EXPECT_EQ(map_word(2), 256u);
  EXPECT_EQ(map_word(6), 1296u);
  EXPECT_EQ(map_word(10) & 0xFF, 63u);
  EXPECT_EQ(map_word(10) >> 8 & 0xFF, slot.box[1] - 1);
  // The rest of the block is the plan's.
  EXPECT_EQ(std::memcmp(params.data(), step.params.data(), slot.params_offset), 0);
  // The same address: nothing encoded, the map kept.
  Result<int> again = maps.refresh(encode, address_of, params);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 0);
  EXPECT_EQ(map_word(0), w_address);
  // Another address: encoded again.
  w_address += 1 << 20;
  Result<int> moved = maps.refresh(encode, address_of, params);
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(*moved, 1);
  EXPECT_EQ(map_word(0), w_address);
  // An address the driver refuses (not 16-byte aligned): the error, then encoded again at the next launch.
  w_address += 8;
  Result<int> refused = maps.refresh(encode, address_of, params);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.status().to_string().find("cuTensorMapEncodeTiled"), std::string::npos)
      << refused.status().to_string();
  Result<int> retried = maps.refresh(encode, address_of, params);
  EXPECT_FALSE(retried.ok());  // (still refused: the same address is tried again, not skipped)
  w_address += 8;
  Result<int> recovered = maps.refresh(encode, address_of, params);
  ASSERT_TRUE(recovered.ok()) << recovered.status().to_string();
  EXPECT_EQ(*recovered, 1);
  EXPECT_EQ(map_word(0), w_address);
}

TEST(TensorMapTest, Im2colMapIsValidatedAndEncoded) {
  const PlainStores plain_stores;
  // The profiled 3x3 line's im2col A: x [128, 14, 14, 256] as {256, 14, 14, 128}, corners {-1,-1} {-1,-1}.
  const Planned p = plan("convbfp16 -n 128 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1" + kNhwc);
  ASSERT_EQ(p.plan.steps.size(), 1u);
  ASSERT_EQ(p.plan.steps[0].tensor_maps.size(), 2u);
  const size_t arguments = p.problem->signature().arguments().size(), results = p.problem->signature().results().size();
  auto broken = [&](auto&& edit) {
    Plan copy = p.plan;
    edit(copy.steps[0].tensor_maps[1]);
    const Status s = copy.validate(arguments, results);
    EXPECT_EQ(s.code(), StatusCode::kInternal) << s.to_string();
    return std::string(s.message());
  };
  EXPECT_NE(broken([](TensorMapSlot& m) { m.lower_corner[0] = -129; }).find("im2col corner outside [-128, 128)"),
            std::string::npos);
  EXPECT_NE(broken([](TensorMapSlot& m) { m.upper_corner[1] = -15; }).find("empty im2col bounding box"),
            std::string::npos);
  EXPECT_NE(broken([](TensorMapSlot& m) { m.element_strides[1] = 9; }).find("element stride outside 1..8"),
            std::string::npos);
  EXPECT_NE(broken([](TensorMapSlot& m) { m.pixels_per_column = 2048; }).find("1..1024 pixels"), std::string::npos);
  EXPECT_NE(broken([](TensorMapSlot& m) { m.channels_per_pixel = 128; }).find("wider than the 128-byte swizzle"),
            std::string::npos);
  EXPECT_NE(broken([](TensorMapSlot& m) { m.rank = 2; }).find("not 3-5"), std::string::npos);

  const runtime::TensorMapEncoders encode = fake_encode();
  ASSERT_NE(encode.im2col, nullptr);
  const LaunchStep& step = p.plan.steps[0];
  std::vector<std::byte> params = step.params;
  runtime::StepTensorMaps maps(step.tensor_maps);
  const uint64_t x_address = 0x7f0000100000, w_address = 0x7f0000900000;
  Result<int> encoded = maps.refresh(
      encode, [&](const TensorBinding& t) { return t == argument(p, "x") ? x_address : w_address; }, params);
  ASSERT_TRUE(encoded.ok()) << encoded.status().to_string();
  EXPECT_EQ(*encoded, 2);
  // The fake packs an im2col map's arguments: [0] the address, [1-4] dims, [6-8] strides, [10] channels and
  // pixels, [11] bit 63, [12] the corners (bytes: lower W, H; upper W, H at bit 32), [13] the element strides.
  auto map_word = [&](int i) {
    uint64_t v = 0;
    std::memcpy(&v, params.data() + offsetof(ConvWgmmaParams, tma_a) + 8 * i, sizeof v);
    return v;
  };
  EXPECT_EQ(map_word(0), x_address);
  EXPECT_EQ(map_word(1), 256u);
  EXPECT_EQ(map_word(2), 14u);
  EXPECT_EQ(map_word(3), 14u);
  EXPECT_EQ(map_word(4), 128u);
  EXPECT_EQ(map_word(6), 512u);
  EXPECT_EQ(map_word(7), 14u * 512);
  EXPECT_EQ(map_word(8), 14u * 14 * 512);
  EXPECT_EQ(map_word(10), 64u | 128u << 16);
  EXPECT_EQ(map_word(11) >> 63, 1u);
  EXPECT_EQ(map_word(12), 0xFFFFu | 0xFFFFull << 32);
  EXPECT_EQ(map_word(13), 0x01010101u);
}


// Clusters of two CTAs on neighbouring row tiles of one column tile (conv_wgmma.cuh's produce_tma): each
// loads half of the filter tile, the map's box half as high, and multicasts it to both; the kernel declares
// its cluster size, the grid is whole clusters and says so to the runtime (LaunchStep::cluster_x), which
// trims it to the clusters that run at once. boo tune's second candidate; the heuristic's choice with
// BOO_WGMMA_CLUSTER=1.
TEST(TensorMapTest, ForwardClustersShareTheFilterTile) {
  const std::string command = "convbfp16 -n 128 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1" + kNhwc;
  const Planned single = plan(command);
  EXPECT_EQ(single.config.find(kClustered), std::string::npos) << single.config;
  EXPECT_EQ(single.plan.steps[0].cluster_x, 1u);
  EXPECT_EQ(single.plan.source.text.find("kClusterM"), std::string::npos);
  EXPECT_EQ(single.plan.source.text.find("__cluster_dims__"), std::string::npos);
  const Clusters clusters;
  const Planned p = plan(command);
  ASSERT_NE(p.config.find(kClustered), std::string::npos) << p.config;
  const int bn = p.config.find("tile 128x256x64") == 0 ? 256 : p.config.find("tile 128x128x64") == 0 ? 128 : 192;
  ASSERT_EQ(p.plan.steps.size(), 1u);
  const LaunchStep& step = p.plan.steps[0];
  EXPECT_EQ(step.cluster_x, 2u);
  EXPECT_EQ(step.grid.x % 2, 0u);
  EXPECT_LE(step.grid.x, static_cast<uint32_t>(test::sm90().sm_count));
  EXPECT_EQ(step.tensor_maps[0].params_offset, offsetof(ConvWgmmaParams, tma_b));
  EXPECT_EQ(step.tensor_maps[0].box[1], static_cast<uint32_t>(bn / 2));  // this CTA's half of the B tile
  EXPECT_NE(p.plan.source.text.find("  static constexpr int kClusterM = 2;\n"), std::string::npos);
  EXPECT_NE(p.plan.source.text.find("__launch_bounds__(384, 1) __cluster_dims__(2, 1, 1) boo_wgmma_y("),
            std::string::npos)
      << p.plan.source.text;
  const size_t arguments = p.problem->signature().arguments().size(), results = p.problem->signature().results().size();
  EXPECT_TRUE(p.plan.validate(arguments, results).ok());
  // A grid of part of a cluster is refused.
  Plan odd = p.plan;
  odd.steps[0].grid.x -= 1;
  const Status bad = odd.validate(arguments, results);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("whole clusters"), std::string::npos) << bad.message();
  // The candidates: the heuristic's clustered config, then the same without clusters.
  Result<ConfigList> list = tier().candidates(*p.problem, test::sm90());
  ASSERT_TRUE(list.ok());
  EXPECT_EQ((*list)[0]->text(), p.config);
  EXPECT_EQ((*list)[1]->text() + kClustered, p.config);
  // Not in clusters: a cp.async producer (x of 200 channels), the weight face.
  for (const std::string& other : {"convbfp16 -n 16 -c 200 -H 28 -W 28 -k 128 -y 3 -x 3 -p 1 -q 1 -F 1" + kNhwc,
                                   "convbfp16 -n 128 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -F 4" + kNhwc}) {
    const Planned q = plan(other);
    EXPECT_EQ(q.config.find(kClustered), std::string::npos) << other << ": " << q.config;
    for (const LaunchStep& s : q.plan.steps) EXPECT_EQ(s.cluster_x, 1u) << other;
  }
}

TEST(TensorMapTest, ShiftedTapsMapAStripOfDyAndItsReceptiveFieldOfX) {
  // ResNet-50's 64-channel 3x3 weight gradient by shifted taps (conv_wgmma_weight_taps.cuh): strips of 4 x 16
  // output pixels; dy [128, 56, 56, 64] as the tiled map {64, 56, 56, 128}, box {64, 16, 4, 1} (the strip's 64
  // pixels, 8 KiB); x the same dims, box {64, 18, 6, 1}: the strip's receptive field (16 + 2 columns, 4 + 2
  // rows), 13.5 KiB, read by every tap at a shifted start. Both tiled (out-of-bounds coordinates: zeros).
  const Planned p = plan("convbfp16 -n 128 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 4" + kNhwc);
  ASSERT_NE(p.config.find("by shifted taps: strips of 4x16 output pixels"), std::string::npos) << p.config;
  const LaunchStep& step = p.plan.steps[0];
  ASSERT_EQ(step.tensor_maps.size(), 2u);
  const TensorMapSlot& dy = step.tensor_maps[0];
  const TensorMapSlot& x = step.tensor_maps[1];
  EXPECT_EQ(dy.params_offset, offsetof(ConvWgmmaParams, tma_a));
  EXPECT_TRUE(dy.tensor == argument(p, "dy"));
  EXPECT_EQ(x.params_offset, offsetof(ConvWgmmaParams, tma_b));
  EXPECT_TRUE(x.tensor == argument(p, "x"));
  for (const TensorMapSlot* m : {&dy, &x}) {
    EXPECT_EQ(m->mode, TensorMapSlot::Mode::kTiled);
    EXPECT_EQ(m->rank, 4u);
    EXPECT_EQ(m->swizzle, TensorMapSlot::Swizzle::k128B);
    EXPECT_EQ(m->dims, (std::array<uint64_t, 5>{64, 56, 56, 128, 1}));
    EXPECT_EQ(m->strides, (std::array<uint64_t, 4>{128, 56 * 128, 56 * 56 * 128, 0}));
  }
  EXPECT_EQ(dy.box, (std::array<uint32_t, 5>{64, 16, 4, 1, 1}));
  EXPECT_EQ(dy.box_bytes(), 8192u);
  EXPECT_EQ(x.box, (std::array<uint32_t, 5>{64, 18, 6, 1, 1}));
  EXPECT_EQ(x.box_bytes(), 18u * 6 * 128);
}

TEST(TensorMapTest, ShiftedTapsBoxesFollowStrideDilationAndGroups) {
  const test::ScopedEnv everywhere("BOO_WGMMA_TAPS", "all");
  // Stride 2 along H, dilation 2 along W, 2 x 3 taps, 24 x 20 output pixels (strips of 2 x 32 cover them in
  // 12; 4 x 16 in 12 too, with a taller box): the box spans (rows - 1) x 2 + (2 - 1) x 1 + 1 input rows and
  // 32 + 2 x 2 input columns.
  const Planned d = plan("convbfp16 -n 4 -c 64 -H 48 -W 20 -k 64 -y 2 -x 3 -p 0 -q 2 -u 2 -v 1 -l 1 -j 2 -F 4" + kNhwc);
  ASSERT_NE(d.config.find("by shifted taps: strips of 2x32"), std::string::npos) << d.config;
  EXPECT_EQ(d.plan.steps[0].tensor_maps[1].box, (std::array<uint32_t, 5>{64, 36, 4, 1, 1}));
  // 3 groups of 128 -> 192 channels: both maps span every group's channels (a group's boxes start at its own).
  const Planned g = plan("convbfp16 -n 8 -c 384 -H 32 -W 32 -k 576 -y 3 -x 3 -p 1 -q 1 -g 3 -F 4" + kNhwc);
  ASSERT_NE(g.config.find("by shifted taps"), std::string::npos) << g.config;
  EXPECT_EQ(g.plan.steps[0].tensor_maps[0].dims[0], 576u);
  EXPECT_EQ(g.plan.steps[0].tensor_maps[1].dims[0], 384u);
  EXPECT_NE(g.plan.source.text.find("GA = 128;"), std::string::npos);
  EXPECT_NE(g.plan.source.text.find("GW = 192;"), std::string::npos);
}

}  // namespace
}  // namespace boo::ops
