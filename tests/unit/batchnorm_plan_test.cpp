// boo tests: batch norm's plans on the host — gpu:batchnorm:slabs (two
// launches for channels-last x) against gpu:batchnorm:columns, and
// gpu:batchnorm:resident (one cooperative launch keeping x and dy in shared
// memory, ahead of slabs where they fit shared memory and L2), on ResNet-50's
// shapes at batch 128;
// the slab tiling's index arithmetic checked on the CPU.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "ops/norm/device/batch_norm_params.cuh"
#include "plan_util.hpp"
#include "runtime/dispatch.hpp"

namespace boo::ops {
namespace {

using test::params_of;
using test::plan_of;
using test::Planned;

const GpuImplementation& tier(std::string_view name) {
  for (const GpuImplementation* impl : find_op("batchnorm")->gpu_implementations())
    if (impl->name() == name) return *impl;
  ADD_FAILURE() << "no tier " << name;
  return *find_op("batchnorm")->gpu_implementations()[0];
}
const GpuImplementation& resident() { return tier("gpu:batchnorm:resident"); }
const GpuImplementation& slabs() { return tier("gpu:batchnorm:slabs"); }
const GpuImplementation& columns() { return tier("gpu:batchnorm:columns"); }

// benchmarks/norm_shapes.txt's batch norms: ResNet-50 at batch 128, NHWC bf16.
const std::vector<std::string> kResNetShapes = {
    "-n 128 -c 64 -H 112 -W 112", "-n 128 -c 64 -H 56 -W 56",  "-n 128 -c 256 -H 56 -W 56",
    "-n 128 -c 128 -H 28 -W 28",  "-n 128 -c 512 -H 28 -W 28", "-n 128 -c 256 -H 14 -W 14",
    "-n 128 -c 512 -H 14 -W 14",  "-n 128 -c 1024 -H 14 -W 14"};
const std::string kForward = " -m 1 --forw 1 -b 0 -s 1 -r 1 --layout NHWC --momentum 0.1";
const std::string kBackward = " -m 1 --forw 0 -b 1 -s 1 -r 0 --layout NHWC";

// The integer after `key=` in a config text.
int64_t field(const std::string& text, const std::string& key) {
  const size_t at = text.find(key + "=");
  EXPECT_NE(at, std::string::npos) << key << " in " << text;
  return at == std::string::npos ? -1 : std::stoll(text.substr(at + key.size() + 1));
}

TEST(BatchNormPlanTest, SlabsRunResNetShapesInThreeLaunchesOnWholeLinesOfEveryRow) {
  const int sm_count = test::sm90().sm_count;
  for (const std::string& shape : kResNetShapes) {
    for (const std::string& pass : {kForward, kBackward}) {
      const std::string command = "bnormbfp16 " + shape + pass;
      SCOPED_TRACE(command);
      const Planned s = plan_of(slabs(), command);
      ASSERT_EQ(s.launches.size(), 3u);
      const int64_t channels = std::stoll(shape.substr(shape.find("-c ") + 3));
      const int64_t slab = field(s.config, "slab"), vec = field(s.config, "vec");
      EXPECT_EQ(vec, 8);  // 16-byte vectors of bf16
      // Slabs of whole rows up to 256 channels (32 vectors of 8): a warp reads whole 128-byte lines.
      EXPECT_EQ(slab, std::min<int64_t>(channels, 256));
      for (const test::ResolvedLaunch* l : {&s.launches[0], &s.launches[2]}) {
        SCOPED_TRACE(l->entry);
        EXPECT_EQ(l->block.x, 256u);
        // Every SM busy, at most kSlabBlocksPerSm = 2 blocks each (the launch bound's minimum).
        const int64_t blocks = int64_t{l->grid.x} * l->grid.y;
        EXPECT_GE(blocks, sm_count);
        EXPECT_LE(blocks, 2 * sm_count);
        EXPECT_EQ(l->grid.x * slab, channels);
      }
      // The coefficients: 32 channels a block.
      EXPECT_EQ(s.launches[1].grid.x, static_cast<uint32_t>((channels + 31) / 32));
      EXPECT_EQ(s.launches[1].block.x, 1024u);
      // The workspace: one Sum2 per (slab channel, slice), 256-byte aligned, then six floats per channel.
      const size_t partials = (size_t{s.launches[0].grid.x} * s.launches[0].grid.y * slab * 8 + 255) / 256 * 256;
      EXPECT_EQ(s.workspace_bytes, partials + 6 * 4 * channels);
      for (const test::ResolvedLaunch& l : s.launches) {
        const auto p = params_of<BatchNormParams>(l);
        EXPECT_EQ(p.coefficients, p.partials + partials);
      }
      // Slices cover the rows exactly.
      const auto p = params_of<BatchNormParams>(s.launches[0]);
      EXPECT_GE(p.rows_per_slice * s.launches[0].grid.y, p.outer);
      EXPECT_LT(p.rows_per_slice * (s.launches[0].grid.y - 1), p.outer);
    }
  }
}

TEST(BatchNormPlanTest, SlabsBindTheTensorsEachPassUses) {
  const Planned f = plan_of(slabs(), "bnormbfp16 -n 8 -c 64 -H 14 -W 14" + kForward);
  ASSERT_EQ(f.entries, (std::vector<std::string>{"boo_batch_norm_slab_moment_sums", "boo_batch_norm_slab_coefficients",
                                                 "boo_batch_norm_slab_y"}));
  for (const test::ResolvedLaunch& l : f.launches) {
    const auto p = params_of<BatchNormParams>(l);
    EXPECT_EQ(p.x, f.address.at("x"));
    EXPECT_EQ(p.y, f.address.at("y"));
    EXPECT_EQ(p.scale, f.address.at("scale"));
    EXPECT_EQ(p.bias, f.address.at("bias"));
    EXPECT_EQ(p.saved_mean, f.address.at("saved_mean"));
    EXPECT_EQ(p.saved_inv_variance, f.address.at("saved_inv_variance"));
    EXPECT_EQ(p.mean_in, f.address.at("running_mean_in"));
    EXPECT_EQ(p.running_variance, f.address.at("running_variance"));
    EXPECT_EQ(p.partials, f.workspace);
    EXPECT_EQ(p.outer, 8 * 14 * 14);
    EXPECT_EQ(p.channels, 64);
    EXPECT_FLOAT_EQ(p.momentum, 0.1f);
  }
  EXPECT_NE(f.source.text.find("batch_norm_slab_coefficients<boo::bf16, float, 64, 1024, false, true, true>"),
            std::string::npos)
      << f.source.text;
  EXPECT_NE(f.source.text.find("batch_norm_slab_apply<boo::bf16, boo::bf16, 8, 8, 32, 4, false>"), std::string::npos)
      << f.source.text;
  const Planned b = plan_of(slabs(), "bnormbfp16 -n 8 -c 64 -H 14 -W 14" + kBackward);
  ASSERT_EQ(b.entries, (std::vector<std::string>{"boo_batch_norm_slab_gradient_sums",
                                                 "boo_batch_norm_slab_gradient_coefficients", "boo_batch_norm_slab_dx"}));
  for (const test::ResolvedLaunch& l : b.launches) {
    const auto p = params_of<BatchNormParams>(l);
    EXPECT_EQ(p.x, b.address.at("x"));
    EXPECT_EQ(p.dy, b.address.at("dy"));
    EXPECT_EQ(p.dx, b.address.at("dx"));
    EXPECT_EQ(p.scale, b.address.at("scale"));
    EXPECT_EQ(p.saved_mean, b.address.at("saved_mean"));
    EXPECT_EQ(p.saved_inv_variance, b.address.at("saved_inv_variance"));
    EXPECT_EQ(p.dscale, b.address.at("dscale"));
    EXPECT_EQ(p.dbias, b.address.at("dbias"));
    EXPECT_EQ(p.y, 0u);
  }
}

TEST(BatchNormPlanTest, SlabsTakeChannelsLastAndPerActivationLinesOnly) {
  for (const char* line : {"bnormbfp16 -n 4 -c 64 -H 7 -W 7 --layout NHWC -m 1 -F 1 -s 1 -r 1",
                           "bnorm -n 2 -c 3 -D 2 -H 5 -W 6 --layout NDHWC -m 1 -F 1",
                           "bnormfp16 -n 4 -c 6 -H 7 -W 8 -m 0 -F 1",       // per activation: inner 1
                           "bnormbfp16fp32 -n 4 -c 64 -H 7 -W 7 --layout NHWC -m 1 -F 0 -b 1 -s 1",
                           "bnormbfp16 -n 4 -c 64 -H 7 -W 7 --layout NHWC -m 1 -F 2"})  // inference, batch statistics
    EXPECT_TRUE(test::accepts(slabs(), line)) << line;
  for (const char* line : {"bnormbfp16 -n 4 -c 64 -H 7 -W 7 -m 1 -F 1",  // NCHW planes
                           "bnormbfp16 -n 4 -c 64 -H 7 -W 7 --layout NHWC -m 1 -F 2 -r 1",
                           "bnormbfp16 -n 4 -c 64 -H 7 -W 7 --layout NHWC -m 1 -F 0 -b 1 -s 0"})
    EXPECT_FALSE(test::accepts(slabs(), line)) << line;
}

// Channels-last lines whose x (and dy) fit the SMs' shared memory and L2 (about 79 MB on an H100) go to the
// resident tier, larger ones to slabs; NCHW planes stay on the columns tier.
TEST(BatchNormPlanTest, DispatchTakesResidentWhereXFitsOnChipThenSlabs) {
  struct Case {
    std::string command, tier;
  };
  for (const Case& c : std::vector<Case>{
           {"bnormbfp16 -n 128 -c 256 -H 14 -W 14" + kForward, "gpu:batchnorm:resident"},   // 13 MB
           {"bnormbfp16 -n 128 -c 512 -H 14 -W 14" + kBackward, "gpu:batchnorm:resident"},  // 51 MB of x and dy
           {"bnormbfp16 -n 128 -c 128 -H 56 -W 56" + kForward, "gpu:batchnorm:slabs"},      // 103 MB
           {"bnormbfp16 -n 128 -c 64 -H 56 -W 56" + kBackward, "gpu:batchnorm:slabs"},      // 103 MB of x and dy
           {"bnormbfp16 -n 4 -c 64 -H 7 -W 7 -m 1 -F 1", "gpu:batchnorm:columns"}}) {
    Result<ParsedCommand> parsed = parse_command(std::string_view(c.command));
    ASSERT_TRUE(parsed.ok());
    Result<runtime::Dispatch> chosen =
        runtime::choose_gpu_implementation(*parsed->signature, *DeviceInfo::for_arch("sm_90a"));
    ASSERT_TRUE(chosen.ok() && chosen->chosen) << c.command;
    EXPECT_EQ(chosen->chosen->name(), c.tier) << c.command;
  }
}

TEST(BatchNormPlanTest, ResidentTakesTheSlabsLinesThatFitOnChip) {
  // The lines it takes are the slabs tier's.
  for (const char* line : {"bnormbfp16 -n 4 -c 64 -H 7 -W 7 --layout NHWC -m 1 -F 1 -s 1 -r 1",
                           "bnorm -n 2 -c 3 -D 2 -H 5 -W 6 --layout NDHWC -m 1 -F 1",
                           "bnormfp16 -n 4 -c 6 -H 7 -W 8 -m 0 -F 1",
                           "bnormbfp16fp32 -n 4 -c 64 -H 7 -W 7 --layout NHWC -m 1 -F 0 -b 1 -s 1",
                           "bnormbfp16 -n 4 -c 64 -H 7 -W 7 --layout NHWC -m 1 -F 2"})
    EXPECT_TRUE(test::accepts(resident(), line)) << line;
  for (const char* line : {"bnormbfp16 -n 4 -c 64 -H 7 -W 7 -m 1 -F 1",  // NCHW planes
                           "bnormbfp16 -n 4 -c 64 -H 7 -W 7 --layout NHWC -m 1 -F 2 -r 1",
                           "bnormbfp16 -n 4 -c 64 -H 7 -W 7 --layout NHWC -m 1 -F 0 -b 1 -s 0"})
    EXPECT_FALSE(test::accepts(resident(), line)) << line;
  // x of 103 MB: more than 132 SMs' shared memory and the L2 hold, and the reason says so.
  const std::unique_ptr<OpProblem> large = test::problem_of("bnormbfp16 -n 128 -c 128 -H 56 -W 56" + kForward);
  ASSERT_TRUE(large);
  const Status declined = resident().accepts(*large, test::sm90());
  EXPECT_NE(declined.to_string().find("x (98 MiB) exceed the SMs' shared memory and L2 (79 MiB)"), std::string::npos)
      << declined.to_string();
}

// One cooperative launch of at most one 512-thread block per SM; each block
// keeps the first resident_rows rows of its slice in shared memory: all of
// them where x (forward) or x and dy (backward) fit the SMs' shared memory
// (about 27 MB of bf16 on 132 SMs), and as many as fit otherwise, so the
// apply pass re-reads from device memory only the rest.
TEST(BatchNormPlanTest, ResidentKeepsResNetTilesOnChipWhereTheyFit) {
  const ArchSpec arch = test::sm90();
  struct Line {
    std::string shape;
    bool forward_fits, backward_fits;
  };
  for (const Line& line : std::vector<Line>{{"-n 64 -c 64 -H 56 -W 56", true, false},
                                            {"-n 128 -c 128 -H 28 -W 28", true, false},
                                            {"-n 128 -c 512 -H 14 -W 14", true, false},
                                            {"-n 128 -c 256 -H 14 -W 14", true, true},
                                            {"-n 128 -c 2048 -H 7 -W 7", true, false},
                                            {"-n 128 -c 512 -H 7 -W 7", true, true}}) {
    for (const std::string& pass : {kForward, kBackward}) {
      const std::string command = "bnormbfp16 " + line.shape + pass;
      SCOPED_TRACE(command);
      const Planned r = plan_of(resident(), command);
      ASSERT_EQ(r.launches.size(), 1u);
      const test::ResolvedLaunch& l = r.launches[0];
      EXPECT_TRUE(l.cooperative);
      EXPECT_EQ(l.cleared_workspace_bytes, 4u);  // the barrier's counter
      EXPECT_EQ(l.block.x, 512u);
      EXPECT_LE(int64_t{l.grid.x} * l.grid.y, arch.sm_count);
      EXPECT_GE(int64_t{l.grid.x} * l.grid.y, arch.sm_count / 2);
      const int64_t slab = field(r.config, "slab");
      EXPECT_EQ(l.grid.x * slab, std::stoll(line.shape.substr(line.shape.find("-c ") + 3)));
      // A block adds its slab's partials of every slice: at most 24 KB, or 96 KB for a slab of one 128-byte
      // line of the row (bf16: 64 channels; the 64- and 128-channel lines).
      const int64_t partials = int64_t{l.grid.y} * slab * 8;
      if (slab == 64) {
        EXPECT_LE(partials, 96 * 1024);
      } else {
        EXPECT_LE(partials, 24 * 1024);
      }
      EXPECT_GE(slab, std::min<int64_t>(64, std::stoll(line.shape.substr(line.shape.find("-c ") + 3))));
      const auto p = params_of<BatchNormParams>(l);
      EXPECT_EQ(p.barrier, r.workspace);
      EXPECT_EQ(p.partials, r.workspace + 256);
      EXPECT_EQ(r.workspace_bytes, 256 + size_t{l.grid.x} * l.grid.y * slab * 8);
      EXPECT_GE(p.rows_per_slice * l.grid.y, p.outer);
      EXPECT_LT(p.rows_per_slice * (l.grid.y - 1), p.outer);
      // The kept rows and the static arrays fit one block's shared memory.
      const int64_t row_bytes = slab * (pass == kForward ? 2 : 4);
      EXPECT_EQ(l.shared_bytes, p.resident_rows * row_bytes);
      EXPECT_LE(l.shared_bytes + resident_static_shared_bytes(slab, 512), arch.max_shared_bytes_per_block);
      const bool fits = pass == kForward ? line.forward_fits : line.backward_fits;
      if (fits) {
        EXPECT_EQ(p.resident_rows, p.rows_per_slice);
      } else {
        EXPECT_LT(p.resident_rows, p.rows_per_slice);
        EXPECT_GT(l.shared_bytes + resident_static_shared_bytes(slab, 512) + row_bytes,
                  arch.max_shared_bytes_per_block)
            << "fewer rows kept than fit";
      }
      EXPECT_NE(r.source.text.find(std::string("batch_norm_resident<boo::bf16, boo::bf16, float, 8, ") +
                                   std::to_string(slab / 8) + ", " + std::to_string(512 / (slab / 8)) +
                                   (pass == kForward ? ", 8, false, true, true, false>" : ", 4, true, false, false, false>")),
                std::string::npos)
          << r.source.text;
    }
  }
  // Beyond one slab per SM (more channel vectors than 32 x SMs), it declines.
  EXPECT_FALSE(test::accepts(resident(), "bnorm -n 2 -c 20000 -H 1 -W 1 --layout NHWC -m 1 -F 1"));
}

TEST(BatchNormPlanTest, ResidentBindsTheTensorsEachPassUses) {
  const Planned f = plan_of(resident(), "bnormbfp16 -n 8 -c 64 -H 14 -W 14" + kForward);
  ASSERT_EQ(f.entries, (std::vector<std::string>{"boo_batch_norm_resident_y"}));
  auto p = params_of<BatchNormParams>(f.launches[0]);
  EXPECT_EQ(p.x, f.address.at("x"));
  EXPECT_EQ(p.y, f.address.at("y"));
  EXPECT_EQ(p.scale, f.address.at("scale"));
  EXPECT_EQ(p.bias, f.address.at("bias"));
  EXPECT_EQ(p.saved_mean, f.address.at("saved_mean"));
  EXPECT_EQ(p.saved_inv_variance, f.address.at("saved_inv_variance"));
  EXPECT_EQ(p.mean_in, f.address.at("running_mean_in"));
  EXPECT_EQ(p.running_variance, f.address.at("running_variance"));
  EXPECT_EQ(p.outer, 8 * 14 * 14);
  EXPECT_EQ(p.channels, 64);
  EXPECT_FLOAT_EQ(p.momentum, 0.1f);
  const Planned b = plan_of(resident(), "bnormbfp16 -n 8 -c 64 -H 14 -W 14" + kBackward);
  ASSERT_EQ(b.entries, (std::vector<std::string>{"boo_batch_norm_resident_dx"}));
  p = params_of<BatchNormParams>(b.launches[0]);
  EXPECT_EQ(p.x, b.address.at("x"));
  EXPECT_EQ(p.dy, b.address.at("dy"));
  EXPECT_EQ(p.dx, b.address.at("dx"));
  EXPECT_EQ(p.scale, b.address.at("scale"));
  EXPECT_EQ(p.saved_mean, b.address.at("saved_mean"));
  EXPECT_EQ(p.saved_inv_variance, b.address.at("saved_inv_variance"));
  EXPECT_EQ(p.dscale, b.address.at("dscale"));
  EXPECT_EQ(p.dbias, b.address.at("dbias"));
  EXPECT_EQ(p.y, 0u);
}

// The partials' layout: every (slab, slice, channel of the slab) has its own
// slot, and a slab's slots over its slices are one contiguous run.
TEST(BatchNormPlanTest, SlabPartialIndexIsABijectionWithContiguousSlabs) {
  const long long slabs = 3, slices = 5, slab_channels = 16;
  std::set<long long> seen;
  for (long long slab = 0; slab < slabs; ++slab) {
    for (long long slice = 0; slice < slices; ++slice)
      for (long long lane = 0; lane < slab_channels; ++lane) {
        const long long i = slab_partial_index(slab, slice, lane, slices, slab_channels);
        EXPECT_GE(i, slab * slices * slab_channels);
        EXPECT_LT(i, (slab + 1) * slices * slab_channels);
        seen.insert(i);
      }
  }
  EXPECT_EQ(seen.size(), size_t(slabs * slices * slab_channels));
  EXPECT_EQ(*seen.rbegin(), slabs * slices * slab_channels - 1);
}

// The apply kernel's reverse walk visits exactly the rows the sums' forward
// walk does, lane by lane, for short and long slices and the short last one.
TEST(BatchNormPlanTest, ReverseRowWalkVisitsTheSumsRows) {
  for (const long long rows : {1LL, 7LL, 128LL, 1000LL, 25088LL}) {
    for (const long long rows_per_slice : {1LL, 3LL, 64LL, 381LL}) {
      for (const long long lanes : {1LL, 8LL, 32LL, 128LL}) {
        const long long slices = (rows + rows_per_slice - 1) / rows_per_slice;
        std::vector<int> forward(rows, 0), reverse(rows, 0);
        for (long long s = 0; s < slices; ++s) {
          const SliceRows r = slice_rows(s, rows_per_slice, rows);
          ASSERT_LE(r.last, rows);
          for (long long lane = 0; lane < lanes; ++lane) {
            for (long long row = r.first + lane; row < r.last; row += lanes) ++forward[row];
            long long previous = r.last;
            for (long long row = last_row_of_lane(r, lane, lanes); row >= r.first; row -= lanes) {
              ASSERT_LT(row, previous);
              ASSERT_EQ((row - r.first) % lanes, lane);
              previous = row;
              ++reverse[row];
            }
          }
        }
        EXPECT_EQ(forward, std::vector<int>(rows, 1)) << rows << " " << rows_per_slice << " " << lanes;
        EXPECT_EQ(reverse, forward) << rows << " " << rows_per_slice << " " << lanes;
      }
    }
  }
}

}  // namespace
}  // namespace boo::ops
