// boo tests: TMA tensor maps without a GPU — the maps gpu:conv:wgmma_sm90
// plans for the operands it loads with TMA (gated: BOO_UNVERIFIED_KERNELS=1),
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

Planned plan(const std::string& command) {
  Planned out;
  out.problem = test::problem_of(command);
  if (!out.problem) return out;
  const ArchSpec arch = test::sm90();
  EXPECT_TRUE(tier().accepts(*out.problem, arch).ok()) << command;
  Result<std::unique_ptr<const Config>> config = tier().configure(*out.problem, arch);
  EXPECT_TRUE(config.ok()) << config.status().to_string();
  if (!config.ok()) return out;
  out.config = (*config)->text();
  Result<Plan> p = tier().plan(*out.problem, **config, arch);
  EXPECT_TRUE(p.ok()) << p.status().to_string();
  if (!p.ok()) return out;
  const OpSignature& sig = out.problem->signature();
  const Status valid = p->validate(sig.arguments().size(), sig.results().size());
  EXPECT_TRUE(valid.ok()) << valid.to_string();
  out.plan = std::move(p).value();
  return out;
}

TensorBinding argument(const Planned& p, const char* name) {
  return *TensorRoles(p.problem->signature()).argument(name);
}

bool operator==(const TensorBinding& a, const TensorBinding& b) {
  return a.source == b.source && a.index == b.index && a.offset == b.offset;
}

TEST(TensorMapTest, ForwardFilterIsOneBoxPerKBlockOnlyWhenGated) {
  // The 3x3, 256-channel forward line of docs/wgmma-tma-design.md §5: B is the KRSC filter as the 2-D matrix
  // {3 x 3 x 256 = 2304 packed (r, s, c) columns, 256 rows}, rows 2304 x 2 bytes apart; box {64, BN}.
  const std::string command = "convbfp16 -n 128 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1" + kNhwc;
  {
    const Planned off = plan(command);
    ASSERT_FALSE(off.plan.steps.empty());
    EXPECT_TRUE(off.plan.steps.back().tensor_maps.empty());
    EXPECT_EQ(off.config.find("TMA"), std::string::npos) << off.config;
    EXPECT_NE(off.plan.source.text.find("kTma = false;"), std::string::npos);
  }
  test::UnverifiedKernelsEnabled gate;
  const Planned p = plan(command);
  EXPECT_NE(p.config.find(", filter by TMA"), std::string::npos) << p.config;
  ASSERT_EQ(p.plan.steps.size(), 1u);
  const LaunchStep& step = p.plan.steps[0];
  EXPECT_EQ(step.params.size(), sizeof(ConvWgmmaParams));
  ASSERT_EQ(step.tensor_maps.size(), 1u);
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
                                    "boo::wgmma_conv::conv_wgmma<Cfg>(p.p, &p.tma_b); }"),
            std::string::npos)
      << p.plan.source.text;
  // The implicit GEMM's addresses sit in the block's first member, as without TMA.
  ASSERT_FALSE(step.addresses.empty());
  for (const LaunchStep::AddressSlot& a : step.addresses) EXPECT_LT(a.params_offset, sizeof(ConvIgemmParams));
}

TEST(TensorMapTest, StagedFilterIsMappedInTheWorkspace) {
  // KCRS is staged into a dense KRSC copy: the map reads the copy. C = 72: the packed columns (3 x 3 x 72 = 648)
  // end inside the eleventh k-block, whose box reads zeros past them.
  test::UnverifiedKernelsEnabled gate;
  const Planned p = plan("convbfp16 -n 32 -c 72 -H 28 -W 28 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1");
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
  // two a k-block (the A tile's two atom columns, 16 KiB together).
  test::UnverifiedKernelsEnabled gate;
  const Planned p = plan("convbfp16 -n 128 -c 128 -H 28 -W 28 -k 128 -y 3 -x 3 -p 1 -q 1 -F 4" + kNhwc);
  EXPECT_NE(p.config.find(", dy by TMA"), std::string::npos) << p.config;
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
  // Split K: the reduce reads only the implicit GEMM's block, and has no maps.
  if (p.plan.steps.size() > 1) {
    EXPECT_EQ(p.plan.steps[1].entry, "boo_wgmma_dw_reduce");
    EXPECT_EQ(p.plan.steps[1].params.size(), sizeof(ConvIgemmParams));
    EXPECT_TRUE(p.plan.steps[1].tensor_maps.empty());
    EXPECT_NE(p.plan.source.text.find("_reduce(const boo::ConvIgemmParams p)"), std::string::npos);
  }
}

TEST(TensorMapTest, ShapesThatDoNotQualifySayWhy) {
  test::UnverifiedKernelsEnabled gate;
  struct Case {
    std::string command, why;
  } cases[] = {
      {"convbfp16 -n 16 -c 768 -H 48 -W 32 -k 2048 -y 3 -x 3 -p 1 -q 1 -F 2" + kNhwc,
       "; no TMA: the data face's flipped filter changes taps inside a k-block"},
      {"convbfp16 -n 16 -c 256 -H 56 -W 56 -k 256 -y 3 -x 3 -p 1 -q 1 -g 2 -F 1" + kNhwc,
       "; no TMA: groups = 1 only, not 2"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.command);
    const Planned p = plan(c.command);
    EXPECT_NE(p.config.find(c.why), std::string::npos) << p.config;
    EXPECT_EQ(p.config.find("by TMA"), std::string::npos) << p.config;
    for (const LaunchStep& s : p.plan.steps) EXPECT_TRUE(s.tensor_maps.empty()) << s.entry;
  }
}

TEST(TensorMapTest, ValidateChecksTheSlot) {
  test::UnverifiedKernelsEnabled gate;
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
runtime::EncodeTiledFn fake_encode() {
  static void* lib = dlopen(BOO_FAKE_CUDA_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(lib, nullptr) << dlerror();
  return lib ? reinterpret_cast<runtime::EncodeTiledFn>(dlsym(lib, "cuTensorMapEncodeTiled")) : nullptr;
}

TEST(TensorMapTest, LaunchEncodesAMapOnlyWhenItsTensorMoved) {
  test::UnverifiedKernelsEnabled gate;
  const Planned p = plan("convbfp16 -n 128 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1" + kNhwc);
  ASSERT_EQ(p.plan.steps.size(), 1u);
  const runtime::EncodeTiledFn encode = fake_encode();
  ASSERT_NE(encode, nullptr);
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
  EXPECT_EQ(map_word(1), 2304u);
  EXPECT_EQ(map_word(2), 256u);
  EXPECT_EQ(map_word(6), 4608u);
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

}  // namespace
}  // namespace boo::ops
