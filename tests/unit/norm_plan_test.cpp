// boo tests: the norm tiers' plans on the host — every tensor bound by role in
// each kernel's parameter block, the statistics a forward writes read back by
// the backward of the same command, permuted inputs on the simple tier only.
#include <gtest/gtest.h>

#include "ops/norm/device/norm_simple_params.cuh"
#include "ops/norm/device/row_norm_params.cuh"
#include "plan_util.hpp"

namespace boo::ops {
namespace {

using test::params_of;
using test::plan_of;
using test::Planned;

const GpuImplementation& tier(const char* op, size_t index) { return *find_op(op)->gpu_implementations()[index]; }
const GpuImplementation& layer_rows() { return tier("layernorm", 0); }
const GpuImplementation& layer_simple() { return tier("layernorm", 1); }
const GpuImplementation& rms_rows() { return tier("rmsnorm", 0); }
const GpuImplementation& rms_simple() { return tier("rmsnorm", 1); }

TEST(NormPlanTest, RowTierBindsEveryTensorOfLayerNormsFullBackward) {
  const Planned p = plan_of(layer_rows(), "layernormbfp16 -X 64x768 -o 1 -m 1 -F 14");
  ASSERT_EQ(p.entries, (std::vector<std::string>{"boo_row_norm_backward", "boo_row_norm_finalize"}));
  EXPECT_GT(p.workspace_bytes, 0u);
  for (const test::ResolvedLaunch& l : p.launches) {
    SCOPED_TRACE(l.entry);
    const auto params = params_of<RowNormParams>(l);
    EXPECT_EQ(params.dy, p.address.at("dy"));
    EXPECT_EQ(params.x, p.address.at("x"));
    EXPECT_EQ(params.weight, p.address.at("weight"));
    EXPECT_EQ(params.mean, p.address.at("mean"));
    EXPECT_EQ(params.rstd, p.address.at("rstd"));
    EXPECT_EQ(params.dx, p.address.at("dx"));
    EXPECT_EQ(params.dweight, p.address.at("dweight"));
    EXPECT_EQ(params.dbias, p.address.at("dbias"));
    EXPECT_EQ(params.partials, p.workspace);
    EXPECT_EQ(params.y, 0u);     // not in the signature
    EXPECT_EQ(params.bias, 0u);  // the backward does not read it
    EXPECT_EQ(params.rows, 64);
    EXPECT_FLOAT_EQ(params.eps, 1e-5f);
  }
}

// RMS norm's -F 0: the backward reads the rstd the forward writes (a result).
TEST(NormPlanTest, RmsForwardAndBackwardShareTheComputedRstd) {
  for (const GpuImplementation* impl : {&rms_rows(), &rms_simple()}) {
    SCOPED_TRACE(impl->name());
    const Planned p = plan_of(*impl, "t5layernorm -X 8x32 -m 5 -F 0");
    ASSERT_GE(p.launches.size(), 2u);
    for (const test::ResolvedLaunch& l : p.launches) {
      SCOPED_TRACE(l.entry);
      const uint64_t rstd = impl == &rms_rows() ? params_of<RowNormParams>(l).rstd : params_of<RmsNormParams>(l).rstd;
      EXPECT_EQ(rstd, p.address.at("rstd"));
    }
  }
}

TEST(NormPlanTest, PermutedInputRunsOnTheSimpleTierWithItsStrides) {
  const std::string command = "layernorm -X 4x6x8 -o 2 -m 1 -F 1 --input-permutation 2 0 1";
  EXPECT_FALSE(test::accepts(layer_rows(), command));
  const Planned p = plan_of(layer_simple(), command);
  ASSERT_EQ(p.entries, (std::vector<std::string>{"boo_layernorm_forward"}));
  const auto params = params_of<LayerNormParams>(p.launches.at(0));
  EXPECT_EQ(params.rank, 3);
  EXPECT_EQ(params.rows, 24);
  EXPECT_EQ(params.cols, 8);
  // Memory order 2, 0, 1: dim 2 outermost (stride 24), then dim 0 (6), dim 1 (1).
  EXPECT_EQ((std::vector<long long>(params.x_strides, params.x_strides + 3)), (std::vector<long long>{6, 1, 24}));
  EXPECT_EQ(params.x, p.address.at("x"));
  EXPECT_EQ(params.bias, p.address.at("bias"));
  EXPECT_EQ(params.mean, p.address.at("mean"));
  EXPECT_EQ(params.y, p.address.at("y"));
}

// Each tier instance runs its own op's problems only.
TEST(NormPlanTest, TiersDeclineTheOtherKind) {
  std::unique_ptr<OpProblem> rms = test::problem_of("t5layernorm -X 8x32 -m 5 -F 1");
  ASSERT_TRUE(rms);
  EXPECT_FALSE(layer_rows().accepts(*rms, test::sm90()).ok());
  EXPECT_FALSE(layer_simple().accepts(*rms, test::sm90()).ok());
  EXPECT_TRUE(rms_rows().accepts(*rms, test::sm90()).ok());
}

// Layer norm's full backward on wide rows (norm_rows_impl.cpp's WideRows): at
// 8192 the dweight/dbias sums in registers; there and wherever a thread holds
// one 16-byte vector of a row taking its block (1024, 4096, 6144), the rows
// through a ring of 4 stages in shared memory (x, dy and add-layernorm's x2, a
// vector a thread each a stage) after the shared sums, if any; bf16 at 12288
// in 8-byte vectors, three a thread: not with the early load and 96 KiB of
// shared sums as before but (sm_80+) through a ring of 3 stages of 48 KiB with dbias's sums
// in registers and dweight's alone in shared memory. The earlier choice is
// boo tune's first alternative. fp16 and add-layernorm at 12288 and fp32 at
// 1024 (two vectors a thread) run as before.
TEST(NormPlanTest, FullBlockRowsOfTheFullBackwardKeepTheEarlierChoiceAsAnAlternative) {
  struct Case {
    const char* command;
    const char* chosen;   // in the backward's call
    uint32_t shared;      // the backward's dynamic shared memory
    const char* earlier;  // in the first alternative's call; nullptr: the choice is as before
  };
  for (const Case& c : {
           Case{"layernormbfp16 -X 4096x8192 -o 1 -m 1 -F 14", "<boo::bf16, 8192, 8, 1024, 1024, false, false, 4, ",
                4 * 2 * 8 * 2 * 1024, "<boo::bf16, 8192, 8, 1024, 1024, true, true, 0, "},
           Case{"addlayernormfp16 -X 4096x8192 -o 1 -m 3 -F 14", "<boo::f16, 8192, 8, 1024, 1024, false, false, 4, ",
                4 * 3 * 8 * 2 * 1024, nullptr},
           Case{"layernormbfp16 -X 1024x12288 -o 1 -m 1 -F 14", "<boo::bf16, 12288, 4, 1024, 1024, false, true, 3, true, ",
                12 * 1024 * 4 + 3 * 2 * 12 * 2 * 1024, "<boo::bf16, 12288, 8, 1024, 1024, false, true, 0, false, "},
           Case{"addlayernormbfp16 -X 1024x12288 -o 1 -m 3 -F 14",
                "<boo::bf16, 12288, 8, 1024, 1024, false, true, 0, false, ", 2 * 16 * 1024 * 4, nullptr},
           Case{"layernormbfp16 -X 16384x4096 -o 1 -m 1 -F 14", "<boo::bf16, 4096, 8, 512, 512, false, true, 4, ",
                2 * 8 * 512 * 4 + 4 * 2 * 8 * 2 * 512, "<boo::bf16, 4096, 8, 512, 512, true, true, 0, "},
           Case{"layernormbfp16 -X 65536x1024 -o 1 -m 1 -F 14", "<boo::bf16, 1024, 8, 128, 128, false, true, 4, ",
                2 * 8 * 128 * 4 + 4 * 2 * 8 * 2 * 128, "<boo::bf16, 1024, 8, 128, 128, true, true, 0, "},
           Case{"layernormbfp16 -X 4096x6144 -o 1 -m 1 -F 14", "<boo::bf16, 6144, 8, 1024, 1024, false, true, 4, ",
                2 * 8 * 1024 * 4 + 4 * 2 * 8 * 2 * 1024, "<boo::bf16, 6144, 8, 1024, 1024, true, true, 0, "},
           Case{"layernorm -X 4096x1024 -o 1 -m 1 -F 14", "<float, 1024, 4, 128, 128, false, true, 0, ", 2 * 8 * 128 * 4,
                nullptr},
           Case{"layernormfp16 -X 1024x12288 -o 1 -m 1 -F 14", "<boo::f16, 12288, 8, 1024, 1024, false, true, ",
                2 * 16 * 1024 * 4, nullptr},
       }) {
    SCOPED_TRACE(c.command);
    Result<ParsedCommand> parsed = parse_command(std::string_view(c.command));
    ASSERT_TRUE(parsed.ok());
    const Planned p = plan_of(*find_op(parsed->signature->op_name())->gpu_implementations()[0], c.command);
    ASSERT_EQ(p.entries, (std::vector<std::string>{"boo_row_norm_backward", "boo_row_norm_finalize"}));
    EXPECT_NE(p.config.find(std::string("row_norm_backward") + c.chosen), std::string::npos) << p.config;
    EXPECT_EQ(p.launches[0].shared_bytes, c.shared);
    if (c.earlier == nullptr) continue;
    std::unique_ptr<OpProblem> problem = test::problem_of(c.command);
    ASSERT_TRUE(problem);
    Result<ConfigList> list = layer_rows().candidates(*problem, test::sm90());
    ASSERT_TRUE(list.ok()) << list.status().to_string();
    ASSERT_GE(list->size(), 2u);
    EXPECT_EQ((*list)[0]->text(), p.config);
    EXPECT_NE((*list)[1]->text().find(std::string("row_norm_backward") + c.earlier), std::string::npos)
        << (*list)[1]->text();
  }
}

// The forward of rows that would leave threads of a 1024-thread block idle on
// their last vector runs on 512-thread blocks the row fills exactly, bounded
// to 64 registers (two blocks an SM): bf16 and fp16 rows of 12288, three
// 16-byte vectors a thread. Add-layernorm's (x2's share too) and fp32 at
// 12288 (filling 1024 threads), rows of
// 8192 (512 threads, two vectors each, as before) and 16384 (filling 1024 threads)
// keep their blocks; so does the earlier choice, boo tune's first alternative.
TEST(NormPlanTest, WideRowForwardsWithIdleThreadsRunTwoBlocksAnSm) {
  struct Case {
    const char* command;
    const char* chosen;  // in the forward's call
    bool bounded;        // __launch_bounds__(512, 2)
  };
  for (const Case& c : {
           Case{"layernormbfp16 -X 1024x12288 -o 1 -m 1 -F 1", "<boo::bf16, 12288, 8, 512, 512, false, ", true},
           Case{"layernormfp16 -X 1024x12288 -o 1 -m 0 -F 1", "<boo::f16, 12288, 8, 512, 512, false, ", true},
           Case{"t5layernormbfp16 -X 1024x12288 -m 5 -F 1", "<boo::bf16, 12288, 8, 512, 512, false, ", true},
           Case{"layernorm -X 1024x12288 -o 1 -m 1 -F 1", "<float, 12288, 4, 1024, 1024, false, ", false},
           Case{"addlayernormbfp16 -X 1024x12288 -o 1 -m 3 -F 1", "<boo::bf16, 12288, 8, 1024, 1024, false, ", false},
           Case{"layernormbfp16 -X 4096x8192 -o 1 -m 1 -F 1", "<boo::bf16, 8192, 8, 512, 512, false, ", false},
           Case{"layernormbfp16 -X 1024x16384 -o 1 -m 1 -F 1", "<boo::bf16, 16384, 8, 1024, 1024, false, ", false},
       }) {
    SCOPED_TRACE(c.command);
    std::unique_ptr<OpProblem> problem = test::problem_of(c.command);
    ASSERT_TRUE(problem);
    Result<ParsedCommand> parsed = parse_command(std::string_view(c.command));
    ASSERT_TRUE(parsed.ok());
    const GpuImplementation& impl = *find_op(parsed->signature->op_name())->gpu_implementations()[0];
    const Planned p = plan_of(impl, c.command);
    ASSERT_EQ(p.entries, (std::vector<std::string>{"boo_row_norm_forward"}));
    EXPECT_NE(p.config.find(std::string("row_norm_forward") + c.chosen), std::string::npos) << p.config;
    EXPECT_EQ(p.source.text.find("__launch_bounds__(512, 2)") != std::string::npos, c.bounded) << p.source.text;
    if (!c.bounded) continue;
    EXPECT_EQ(p.launches[0].block.x, 512u);
    EXPECT_EQ(p.launches[0].grid.x, 2u * static_cast<uint32_t>(test::sm90().sm_count));  // resident at once
    Result<ConfigList> list = impl.candidates(*problem, test::sm90());
    ASSERT_TRUE(list.ok()) << list.status().to_string();
    ASSERT_GE(list->size(), 2u);
    EXPECT_NE((*list)[1]->text().find("row_norm_forward<boo::"), std::string::npos);
    EXPECT_NE((*list)[1]->text().find(", 12288, 8, 1024, 1024, false, "), std::string::npos) << (*list)[1]->text();
  }
}

// The dx-only backward of rows of two 16-byte vectors a thread on a 1024-thread
// block takes the cp.async ring (3 stages of x and dy, 64 KiB each): layer norm
// without weight at 12288, and RMS norm's split backward (dx, then dweight
// column-parallel) at 16384, whose rows fill the block; with a weight at
// 12288 (threads idle on their last vector) it keeps the plain loads.
TEST(NormPlanTest, DxOnlyBackwardsOfTwoVectorsAThreadTakeTheRing) {
  struct Case {
    const char* command;
    const char* chosen;  // in the backward's call
    uint32_t shared;
  };
  for (const Case& c : {
           Case{"layernormbfp16 -X 1024x12288 -o 1 -m 0 -F 2", "<boo::bf16, 12288, 8, 1024, 1024, false, false, 3, ",
                3 * 2 * 2 * 16 * 1024},
           Case{"layernormbfp16 -X 1024x12288 -o 1 -m 1 -F 2", "<boo::bf16, 12288, 8, 1024, 1024, false, false, 0, ", 0},
           Case{"t5layernormbfp16 -X 1024x16384 -m 5 -F 2", "<boo::bf16, 16384, 8, 1024, 1024, false, false, 3, ",
                3 * 2 * 2 * 16 * 1024},
       }) {
    SCOPED_TRACE(c.command);
    Result<ParsedCommand> parsed = parse_command(std::string_view(c.command));
    ASSERT_TRUE(parsed.ok());
    const Planned p = plan_of(*find_op(parsed->signature->op_name())->gpu_implementations()[0], c.command);
    EXPECT_NE(p.config.find(std::string("row_norm_backward") + c.chosen), std::string::npos) << p.config;
    ASSERT_FALSE(p.launches.empty());
    EXPECT_EQ(p.entries[0], "boo_row_norm_backward");
    EXPECT_EQ(p.launches[0].shared_bytes, c.shared);
  }
}

}  // namespace
}  // namespace boo::ops
