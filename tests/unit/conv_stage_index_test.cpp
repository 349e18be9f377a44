// boo tests: the staged copies' walks (device/conv_stage_index.cuh, run by
// conv_channel_pad.cuh's conv_stage_tiles and conv_copy_pixels) replayed on
// the host without a GPU. Each copy is planned as the tiers plan it (their
// launch steps: parameter block, shared memory, the kernel's template
// arguments read back from the generated source) or built here for awkward
// shapes; the replay follows the kernel's loops unit by unit (tiles through a
// shared-memory array of the launch's size) and must move every element
// exactly as the strided definition says: dense[o][z][y][x][c] =
// tensor[origin + o*s0 + c*s1 + z*s2 + y*s3 + x*s4] (zeros for padding
// channels), each dense element (copy in) or tensor element (copy out)
// written once and nothing else touched; every vector access aligned to its
// width and inside its pixel's row.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "device_on_host.hpp"
#define __host__
#include "ops/conv/device/conv_stage_index.cuh"

#include "ops/conv/conv_fp32_split_impl.hpp"
#include "ops/conv/conv_igemm_impl.hpp"
#include "ops/conv/conv_problem.hpp"
#include "ops/conv/conv_staging.hpp"
#include "ops/conv/conv_wgmma_impl.hpp"
#include "plan_util.hpp"

namespace boo::ops {
namespace {

using conv::ConvProblem;
using conv::Dims3;
using conv::StagedCopy;
using conv::Strides5;

// A copy's kernel call, as the generated source launches it: its name and template arguments.
struct Call {
  std::string kernel;
  std::vector<std::string> args;
};

Call call_of(const std::string& source, const std::string& entry) {
  const size_t at = source.find(" " + entry + "(const boo::ConvChannelPadParams p) { boo::");
  EXPECT_NE(at, std::string::npos) << entry;
  if (at == std::string::npos) return {};
  const size_t name = source.find("{ boo::", at) + 7, open = source.find('<', name), close = source.find(">(p)", open);
  Call c;
  c.kernel = source.substr(name, open - name);
  std::stringstream list(source.substr(open + 1, close - open - 1));
  for (std::string arg; std::getline(list, arg, ',');) c.args.push_back(arg.substr(arg.find_first_not_of(' ')));
  return c;
}

long long pixels_of(const ConvChannelPadParams& p) { return p.sizes[1] * p.sizes[2] * p.sizes[3]; }

// The tensor's offset of dense element (row = outer * pixels + pixel, channel).
long long tensor_offset(const ConvChannelPadParams& p, long long row, long long c) {
  const long long x = row % p.sizes[3], y = row / p.sizes[3] % p.sizes[2], z = row / (p.sizes[3] * p.sizes[2]) % p.sizes[1];
  const long long o = row / pixels_of(p);
  return p.origin + o * p.strides[0] + c * p.strides[1] + z * p.strides[2] + y * p.strides[3] + x * p.strides[4];
}

// Host memory of the copy: the tensor (every offset the definition reaches) and the dense rows, values distinct.
struct Buffers {
  std::vector<long long> tensor, dense;
  std::vector<int> tensor_writes, dense_writes;
};

constexpr long long kUntouched = -7;

Buffers buffers_of(const ConvChannelPadParams& p, bool into_dense) {
  long long size = 1;
  for (long long row = 0; row < p.sizes[0] * pixels_of(p); ++row)
    for (long long c = 0; c < p.channels; ++c) {
      const long long at = tensor_offset(p, row, c);
      EXPECT_GE(at, 0);
      size = std::max(size, at + 1);
    }
  Buffers b;
  b.tensor.assign(static_cast<size_t>(size), kUntouched);
  b.dense.assign(static_cast<size_t>(p.sizes[0] * pixels_of(p) * p.padded_channels), kUntouched);
  b.tensor_writes.assign(b.tensor.size(), 0);
  b.dense_writes.assign(b.dense.size(), 0);
  // Copy in: the tensor's elements are 1 + their offset (the padding past them stays untouched);
  // copy out: every dense element is 1 + its index, padding channels too.
  if (into_dense) {
    for (long long row = 0; row < p.sizes[0] * pixels_of(p); ++row)
      for (long long c = 0; c < p.channels; ++c) b.tensor[static_cast<size_t>(tensor_offset(p, row, c))] = 1 + tensor_offset(p, row, c);
  } else {
    for (size_t i = 0; i < b.dense.size(); ++i) b.dense[i] = 1 + static_cast<long long>(i);
  }
  return b;
}

// Checks the buffers against the definition once the replay ran.
void expect_copied(const ConvChannelPadParams& p, bool into_dense, const Buffers& b) {
  const long long rows = p.sizes[0] * pixels_of(p);
  if (into_dense) {
    for (long long row = 0; row < rows; ++row)
      for (long long c = 0; c < p.padded_channels; ++c) {
        const size_t d = static_cast<size_t>(row * p.padded_channels + c);
        ASSERT_EQ(b.dense_writes[d], 1) << "dense row " << row << " channel " << c;
        ASSERT_EQ(b.dense[d], c < p.channels ? 1 + tensor_offset(p, row, c) : 0) << "dense row " << row << " channel " << c;
      }
    for (int w : b.tensor_writes) ASSERT_EQ(w, 0);
  } else {
    std::vector<int> expected(b.tensor.size(), 0);
    for (long long row = 0; row < rows; ++row)
      for (long long c = 0; c < p.channels; ++c) {
        const size_t t = static_cast<size_t>(tensor_offset(p, row, c));
        expected[t] = 1;
        ASSERT_EQ(b.tensor[t], 1 + row * p.padded_channels + c) << "row " << row << " channel " << c;
      }
    for (size_t t = 0; t < b.tensor.size(); ++t) {
      ASSERT_EQ(b.tensor_writes[t], expected[t]) << "tensor offset " << t;
      if (expected[t] == 0) {
        ASSERT_EQ(b.tensor[t], kUntouched) << "tensor offset " << t;
      }
    }
    for (int w : b.dense_writes) ASSERT_EQ(w, 0);
  }
}

bool flag(const std::string& arg) { return arg == "true"; }

// conv_stage_tiles<T, kIntoDense, kRun, kFlip, kVecP, kVecC>, loop by loop.
void replay_tiles(const ConvChannelPadParams& p, const Call& call, uint32_t shared_bytes, long long elem_bytes) {
  ASSERT_EQ(call.args.size(), 6u);
  const bool into_dense = flag(call.args[1]), run = flag(call.args[2]), flip = flag(call.args[3]);
  const int vec_p = std::stoi(call.args[4]), vec_c = std::stoi(call.args[5]);
  ASSERT_LE(vec_p * elem_bytes, 16);
  ASSERT_LE(vec_c * elem_bytes, 16);
  ASSERT_EQ(shared_bytes % elem_bytes, 0u);
  ASSERT_LE(shared_bytes, 48u * 1024) << "beyond the static limit";
  Buffers b = buffers_of(p, into_dense);
  std::vector<long long> shared(shared_bytes / static_cast<size_t>(elem_bytes));
  const stage::View view = stage::view_of(p, flip);
  const long long moved = stage::moved_channels(p, into_dense), tiles = stage::tile_count(p, view, moved);
  const int pitch = static_cast<int>(p.tile[3]);
  // shared.at(slot(i)): an index outside the launch's shared memory throws (a failure, not a crash).
  auto slot = [](long long i) { return static_cast<size_t>(i); };
  for (long long t = 0; t < tiles; ++t) {
    const stage::Tile at = stage::tile_of(p, view, moved, t);
    std::fill(shared.begin(), shared.end(), kUntouched);
    const int runs = stage::run_units(at, run, vec_p), pieces = stage::dense_units(at, vec_c);
    std::vector<stage::RunUnit> run_list;
    for (int i = 0; i < runs; ++i) {
      const stage::RunUnit u = stage::run_unit(p, at, run, vec_p, i);
      ASSERT_EQ(u.strided % vec_p, 0) << "tile " << t << " unit " << i;
      if (run) {
        ASSERT_EQ(u.shared % vec_p, 0);
      }
      run_list.push_back(u);
    }
    std::vector<stage::DenseUnit> dense_list;
    for (int i = 0; i < pieces; ++i) {
      const stage::DenseUnit d = stage::dense_unit(p, view, at, flip, vec_c, i);
      ASSERT_EQ(d.dense % vec_c, 0) << "tile " << t << " unit " << i;
      ASSERT_LE(d.dense % p.padded_channels + vec_c, p.padded_channels) << "a vector past its pixel's row";
      dense_list.push_back(d);
    }
    if (into_dense) {
      for (const stage::RunUnit& u : run_list)
        for (int e = 0; e < vec_p; ++e) shared.at(slot(u.shared + e)) = b.tensor.at(static_cast<size_t>(u.strided + e));
      for (const stage::DenseUnit& d : dense_list)
        for (int e = 0; e < vec_c; ++e) {
          const size_t at_dense = static_cast<size_t>(d.dense + e);
          const long long v = d.channel + e < at.nc ? shared.at(slot(d.shared + static_cast<long long>(e) * pitch)) : 0;
          ASSERT_NE(v, kUntouched) << "tile " << t << " reads shared memory no run wrote";
          b.dense.at(at_dense) = v;
          ++b.dense_writes.at(at_dense);
        }
    } else {
      for (const stage::DenseUnit& d : dense_list)
        for (int e = 0; e < vec_c; ++e)
          if (d.channel + e < at.nc)
            shared.at(slot(d.shared + static_cast<long long>(e) * pitch)) = b.dense.at(static_cast<size_t>(d.dense + e));
      for (const stage::RunUnit& u : run_list)
        for (int e = 0; e < vec_p; ++e) {
          const size_t at_tensor = static_cast<size_t>(u.strided + e);
          ASSERT_NE(shared.at(slot(u.shared + e)), kUntouched) << "tile " << t << " writes what no dense read gave";
          b.tensor.at(at_tensor) = shared.at(slot(u.shared + e));
          ++b.tensor_writes.at(at_tensor);
        }
    }
  }
  expect_copied(p, into_dense, b);
}

// conv_copy_pixels<T, kIntoDense, Index, kRowDims, kVec>, unit by unit.
template <typename Index>
void replay_pixels(const ConvChannelPadParams& p, const Call& call) {
  const bool into_dense = flag(call.args[1]);
  const int row_dims = std::stoi(call.args[3]), vec = std::stoi(call.args[4]);
  Buffers b = buffers_of(p, into_dense);
  const long long units = stage::pixel_units(p, into_dense, vec);
  if (sizeof(Index) == 4) {
    ASSERT_LT(units, 1LL << 31);
  }
  const Index per_row = static_cast<Index>((stage::moved_channels(p, into_dense) + vec - 1) / vec);
  for (long long u = 0; u < units; ++u) {
    const stage::PixelUnit<Index> at = stage::pixel_unit<Index>(p, static_cast<Index>(u), per_row, row_dims, vec);
    ASSERT_EQ(at.dense % vec, 0);
    ASSERT_LE(at.dense % p.padded_channels + vec, p.padded_channels) << "a vector past its pixel's row";
    for (int e = 0; e < vec; ++e) {
      const size_t d = static_cast<size_t>(at.dense + e);
      const bool real = at.channel + e < p.channels;
      const long long t = static_cast<long long>(at.strided) + e * p.strides[1];
      if (into_dense) {
        b.dense.at(d) = real ? b.tensor.at(static_cast<size_t>(t)) : 0;
        ++b.dense_writes.at(d);
      } else if (real) {
        b.tensor.at(static_cast<size_t>(t)) = b.dense.at(d);
        ++b.tensor_writes.at(static_cast<size_t>(t));
      }
    }
  }
  expect_copied(p, into_dense, b);
}

// conv_transpose_blocks<T, kIntoDense, kVecP, kLanesC>, unit by unit: each block's accesses (kVecP pixels of a
// channel, 16-byte vectors of a pixel's channels) aligned and inside their run and row.
void replay_blocks(const ConvChannelPadParams& p, const Call& call, uint32_t shared_bytes, long long elem_bytes) {
  ASSERT_EQ(call.args.size(), 4u);
  EXPECT_EQ(shared_bytes, 0u);
  const bool into_dense = flag(call.args[1]);
  const int vec_p = std::stoi(call.args[2]), lanes_c = std::stoi(call.args[3]), e = static_cast<int>(16 / elem_bytes);
  ASSERT_EQ(e % vec_p, 0);
  ASSERT_GE(vec_p * elem_bytes, 8);
  ASSERT_EQ(32 % lanes_c, 0);
  ASSERT_EQ(pixels_of(p) % vec_p, 0) << "an access past its run";
  Buffers b = buffers_of(p, into_dense);
  const stage::BlockGrid grid = stage::block_grid(p, into_dense, e, vec_p, lanes_c);
  ASSERT_EQ(grid.units % 32, 0);
  for (int u = 0; u < grid.units; ++u) {
    const stage::BlockUnit at = stage::block_unit(p, grid, u, e, vec_p, lanes_c);
    if (!at.valid) continue;
    ASSERT_EQ(at.dense % e, 0) << "unit " << u;
    ASSERT_LE(at.dense % p.padded_channels + e, p.padded_channels) << "a vector past its pixel's row";
    for (int j = 0; j < e; ++j) {
      const bool real = at.channel + j < p.channels;
      const long long t0 = at.strided + j * p.strides[1];
      if (real) {
        ASSERT_EQ(t0 % vec_p, 0) << "unit " << u;
      }
      for (int q = 0; q < vec_p; ++q) {
        const size_t d = static_cast<size_t>(at.dense + static_cast<long long>(q) * p.padded_channels + j);
        if (into_dense) {
          b.dense.at(d) = real ? b.tensor.at(static_cast<size_t>(t0 + q)) : 0;
          ++b.dense_writes.at(d);
        } else if (real) {
          b.tensor.at(static_cast<size_t>(t0 + q)) = b.dense.at(d);
          ++b.tensor_writes.at(static_cast<size_t>(t0 + q));
        }
      }
    }
  }
  expect_copied(p, into_dense, b);
}

// Replays one launch of a copy kernel; returns its kernel's name.
std::string replay(const std::string& source, const test::ResolvedLaunch& l, long long elem_bytes) {
  SCOPED_TRACE(l.entry);
  const ConvChannelPadParams p = test::params_of<ConvChannelPadParams>(l);
  const Call call = call_of(source, l.entry);
  if (call.kernel == "conv_stage_tiles") {
    replay_tiles(p, call, l.shared_bytes, elem_bytes);
  } else if (call.kernel == "conv_copy_pixels") {
    EXPECT_EQ(l.shared_bytes, 0u);
    if (call.args.at(2) == "int")
      replay_pixels<int>(p, call);
    else
      replay_pixels<long long>(p, call);
  } else if (call.kernel == "conv_transpose_blocks") {
    replay_blocks(p, call, l.shared_bytes, elem_bytes);
  } else {
    EXPECT_EQ(call.kernel, "conv_transpose_channels");  // as it was: many pixels only, no replay here
  }
  return call.kernel;
}

// Every staged copy the tiers plan for these commands (each direction alone and all at once; 16-bit and
// fp32; NCHW, NHWC, CHWN; 1-D to 3-D; odd channels, 1x1, 3x3, 7x7, 9 to 2205 pixels; flipped filters).
TEST(ConvStageIndexTest, PlannedCopiesMoveEveryElementOnce) {
  const std::vector<std::string> geometries = {
      "-n 3 -c 3 -H 17 -W 15 -k 8 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2",  // 3 -> 4 channels, 255 pixels
      "-n 2 -c 5 -H 9 -W 9 -k 16 -y 3 -x 3 -p 1 -q 1",             // 5 -> 8
      "-n 3 -c 24 -H 7 -W 7 -k 40 -y 3 -x 3 -p 1 -q 1",            // 49 pixels, 9 taps
      "-n 2 -c 40 -H 14 -W 14 -k 24 -y 1 -x 1",                    // 196 pixels, 1x1
      "-n 2 -c 16 -H 7 -W 7 -k 16 -y 7 -x 7 -p 3 -q 3",            // 7x7 filter
      "-n 2 -c 35 -H 6 -W 5 -k 35 -y 3 -x 3 -p 1 -q 1",            // 35 -> 40
      "-n 1 -c 13 -H 45 -W 49 -k 8 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2", // 2205 pixels, odd
      "-n 2 -c 24 -H 8 -W 8 -k 136 -y 3 -x 3 -p 1 -q 1",           // 136 output channels: tiles of 64 and 8
  };
  const std::vector<std::string> layouts = {"", " --in_layout NHWC --fil_layout NHWC --out_layout NHWC",
                                            " --in_layout CHWN --fil_layout CHWN --out_layout CHWN",
                                            " --fil_layout NHWC", " --out_layout NHWC"};
  std::vector<std::string> commands;
  for (const char* dtype : {"convfp16", "convbfp16", "conv"})
    for (const std::string& g : geometries)
      for (const std::string& layout : layouts)
        for (const char* direction : {" -F 0", " -F 1", " -F 2", " -F 4"})
          commands.push_back(std::string(dtype) + " " + g + layout + direction);
  commands.push_back("convfp16 -_ 3 -n 1 -c 3 --in_d 4 -H 5 -W 5 -k 8 --fil_d 3 -y 3 -x 3 --pad_d 1 -p 1 -q 1 -F 0");
  commands.push_back("convbfp16 --spatial_dim 1 -n 2 -c 7 -H 33 -k 8 -y 5 -p 2 -F 0");
  commands.push_back("convbfp16 -n 2 -c 24 -H 9 -W 9 -k 48 -y 3 -x 3 -p 1 -q 1 -g 3 -F 2");  // grouped flip
  commands.push_back("convbfp16 -n 2 -c 16 -H 9 -W 9 -k 24 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 2");
  // The Hopper tier's data face (its floor: 4096 pixels) flips a KCRS filter as (c, tap) runs.
  commands.push_back("convbfp16 -n 4 -c 128 -H 32 -W 32 -k 128 -y 3 -x 3 -p 1 -q 1 -F 2");
  const std::vector<const GpuImplementation*> tiers = {&conv::implicit_gemm_implementation(),
                                                       &conv::wgmma_sm90_implementation(),
                                                       &conv::fp32_bf16x6_implementation()};
  test::UnverifiedKernelsEnabled unverified;
  std::map<std::string, int> kernels, walks;
  for (const std::string& command : commands) {
    SCOPED_TRACE(command);
    const long long elem_bytes = command.rfind("conv ", 0) == 0 ? 4 : 2;
    for (const GpuImplementation* tier : tiers) {
      if (!test::accepts(*tier, command)) continue;
      const test::Planned p = test::plan_of(*tier, command);
      for (const test::ResolvedLaunch& l : p.launches) {
        if (l.entry.rfind("boo_conv_", 0) != 0) continue;
        const std::string kernel = replay(p.source.text, l, elem_bytes);
        ++kernels[kernel];
        if (kernel == "conv_stage_tiles") {
          const Call call = call_of(p.source.text, l.entry);
          ++walks[std::string(flag(call.args[2]) ? "run" : "runs") + (flag(call.args[3]) ? " taps" : "") +
                  (flag(call.args[1]) ? " in" : " out") + (elem_bytes == 4 ? " fp32" : "")];
        }
        if (HasFatalFailure()) return;
      }
    }
  }
  // Each walk and direction was replayed (only the 16-bit tiers flip filters).
  for (const char* walk : {"run in", "run out", "runs in", "runs out", "runs taps in", "run in fp32", "run out fp32",
                           "runs in fp32", "runs out fp32"})
    EXPECT_GT(walks[walk], 0) << walk;
  EXPECT_GT(kernels["conv_copy_pixels"], 0);
}

// A copy built here (a hand-made layout, possibly flipped), planned by plan_walk and staged_copy_step.
test::ResolvedLaunch launch_of(StagedCopy c, long long elem_bytes, std::string& source) {
  conv::plan_walk(c, elem_bytes);
  std::unique_ptr<OpProblem> problem = test::problem_of("convbfp16 -n 2 -c 8 -H 4 -W 4 -k 8 -y 3 -x 3 -F 0");
  const TensorRoles roles(static_cast<const ConvProblem&>(*problem).conv());
  base::KernelSource module;
  Result<LaunchStep> step = conv::staged_copy_step(c, elem_bytes == 4 ? DType::kF32 : DType::kBF16, roles,
                                                   test::sm90(), module);
  EXPECT_TRUE(step.ok()) << step.status().to_string();
  source = module.text;
  if (!step.ok()) return {};
  return {step->entry, step->grid, step->block, step->shared_bytes, step->params, false, 0};
}

// Dense strides of a (outer, channel, z, y, x) tensor stored in `order` (slowest first, names o c z y x).
Strides5 strides_in(const std::string& order, long long outer, long long channels, const Dims3& size) {
  const std::map<char, int> index = {{'o', 0}, {'c', 1}, {'z', 2}, {'y', 3}, {'x', 4}};
  const long long extent[5] = {outer, channels, size[0], size[1], size[2]};
  Strides5 s{};
  long long next = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    s[static_cast<size_t>(index.at(*it))] = next;
    next *= extent[index.at(*it)];
  }
  return s;
}

StagedCopy copy_of(const std::string& order, bool input, long long outer, const Dims3& size, long long channels,
                   long long padded) {
  StagedCopy c;
  c.tensor = input ? "x" : "y";
  c.input = input;
  c.outer = c.outer_rows = outer;
  c.size = size;
  c.channels = channels;
  c.padded = padded;
  c.strides = strides_in(order, outer, channels, size);
  return c;
}

// A filter [k][c][taps] stored in `order` (names o = k, c, x = the taps), flipped as flipped_filter_copy does.
StagedCopy flip_of(const std::string& order, long long k, long long c, long long taps) {
  const Strides5 w = strides_in(order, k, c, {1, 1, taps});
  StagedCopy f;
  f.tensor = "w";
  f.flip = true;
  f.outer = f.outer_rows = taps;
  f.size = {1, 1, c};
  f.channels = f.padded = k;
  f.strides = {-w[4], w[0], 0, 0, w[1]};
  f.origin = (taps - 1) * w[4];
  return f;
}

TEST(ConvStageIndexTest, AwkwardCopiesMoveEveryElementOnce) {
  struct Case {
    StagedCopy copy;
    const char* walk;                // the expected text of the walk (16-bit elements), up to its vectors
    const char* fp32_walk = nullptr;  // where fp32's differs
  };
  std::vector<Case> cases;
  for (bool input : {true, false}) {
    const long long in_padded = input ? 8 : 3;
    cases.push_back({copy_of("oczyx", input, 3, {1, 45, 47}, 3, in_padded), "tiles 1x"});  // 2115 odd pixels
    cases.push_back({copy_of("oczyx", input, 5, {1, 1, 9}, 3, 4), "tiles 5x"});           // 3x3 taps, outer folded
    cases.push_back({copy_of("oczyx", input, 4, {1, 7, 7}, 2048, 2048), "x49 run"});
    cases.push_back({copy_of("oczyx", input, 3, {1, 14, 14}, 576, 576), "blocks 8x4 v4/8", "blocks 8x4 v4/4"});
    cases.push_back({copy_of("oczyx", input, 6, {1, 7, 7}, 13, 16), "tiles 6x"});
    cases.push_back({copy_of("oczyx", input, 2, {1, 7, 7}, 291, input ? 296 : 291), "x49 run"});  // a tile of padding
    cases.push_back({copy_of("oczyx", input, 9, {1, 1, 1}, 35, 40), "pixels"});           // 1x1: channels contiguous
    cases.push_back({copy_of("oczyx", input, 1, {1, 1, 1}, 5, 8), "rows 1 i32"});         // one pixel of one row
    cases.push_back({copy_of("ozyxc", input, 3, {2, 3, 5}, 35, 40), "rows 1 i32"});  // NDHWC
    cases.push_back({copy_of("czyxo", input, 3, {1, 5, 7}, 5, 8), "rows 2 i32"});   // CHWN
    // Pixels split by the batch: 30 of them, 2-element accesses (8 bytes in fp32 only).
    cases.push_back({copy_of("cozyx", input, 3, {2, 3, 5}, 7, 8), "tiles 1x", "blocks 16x2 v2/4"});
    cases.push_back({copy_of("oczyx", input, 2, {1, 70, 70}, 64, 64), "blocks 8x4 v4/8", "blocks 8x4 v4/4"});
    // 4970 pixels: pairs only (16-bit), the pair transpose; fp32's 8-byte pairs, blocks.
    cases.push_back({copy_of("oczyx", input, 2, {1, 70, 71}, 64, 64), "transpose pairs", "blocks 8x4 v2/4"});
    cases.push_back({copy_of("oczyx", input, 3, {1, 30, 30}, 3, in_padded), input ? "blocks 32x1 v4/8" : "tiles",
                     input ? "blocks 16x2 v4/4" : "tiles"});  // out: 3 dense channels a pixel, no vectors
    cases.push_back({copy_of("oczyx", input, 5, {2, 4, 6}, 136, 136), "blocks 8x4 v8/8", "blocks 8x4 v4/4"});
    cases.push_back({copy_of("oczyx", input, 3, {1, 6, 6}, 24, 24), "blocks 16x2 v4/8", "blocks 8x4 v4/4"});
  }
  // Flipped filters: KCRS (taps and channels one run), KRSC (a transpose per tap), CKRS (neither).
  cases.push_back({flip_of("ocx", 40, 24, 9), "tiles 1x40x"});
  cases.push_back({flip_of("ocx", 512, 3, 49), "tiles 1x64x"});
  cases.push_back({flip_of("oxc", 40, 24, 9), "tiles 1x40x24"});
  cases.push_back({flip_of("cox", 24, 8, 25), "pixels"});
  for (long long elem_bytes : {2LL, 4LL}) {
    for (const Case& k : cases) {
      std::string source;
      const test::ResolvedLaunch l = launch_of(k.copy, elem_bytes, source);
      StagedCopy planned = k.copy;
      conv::plan_walk(planned, elem_bytes);
      const std::string text = planned.text();
      SCOPED_TRACE(text + " with " + std::to_string(elem_bytes) + "-byte elements");
      EXPECT_NE(text.find(elem_bytes == 4 && k.fp32_walk ? k.fp32_walk : k.walk), std::string::npos);
      replay(source, l, elem_bytes);
      if (HasFatalFailure()) return;
    }
  }
}

// The plan's vectors: 16 bytes where every offset allows it, narrower where not.
TEST(ConvStageIndexTest, VectorsAreAsWideAsTheOffsetsAllow) {
  StagedCopy c = copy_of("oczyx", true, 64, {1, 14, 14}, 576, 576);
  conv::plan_walk(c, 2);
  EXPECT_EQ(c.text(), "boo_conv_stage_x(576->576 blocks 8x4 v4/8)");  // 196 pixels: 8-byte accesses
  c = copy_of("oczyx", true, 64, {1, 224, 224}, 3, 8);  // NCHW x of 3 channels padded to 8
  c.padding = true;
  conv::plan_walk(c, 2);
  EXPECT_EQ(c.text(), "boo_conv_pad_x(3->8 blocks 32x1 v8/8)");
  c = copy_of("oczyx", true, 512, {1, 3, 3}, 512, 512);  // KCRS w: 9 taps of 512 channels per row
  c.tensor = "w";
  conv::plan_walk(c, 2);
  EXPECT_EQ(c.text(), "boo_conv_stage_w(512->512 tiles 1x512x9 run v8/8)");
  c = copy_of("oczyx", false, 64, {1, 112, 112}, 32, 32);
  conv::plan_walk(c, 2);
  EXPECT_EQ(c.text(), "boo_conv_unstage_y(32->32 blocks 8x4 v8/8)");
  c = copy_of("oczyx", false, 2, {1, 7, 7}, 5, 8);  // 5 * 49 elements per batch, batches folded: runs of one element
  conv::plan_walk(c, 4);
  EXPECT_EQ(c.text(), "boo_conv_unstage_y(5->8 tiles 2x5x49 run v1/4)");
  // Beyond 2^30 blocks the device's int indices could overflow: the pair transpose (64-bit offsets) instead.
  c = copy_of("oczyx", true, 1LL << 20, {1, 64, 64}, 64, 64);
  conv::plan_walk(c, 2);
  EXPECT_EQ(c.text(), "boo_conv_stage_x(64->64 transpose pairs)");
  StagedCopy f = flip_of("ocx", 512, 512, 9);
  conv::plan_walk(f, 2);
  EXPECT_EQ(f.text(), "boo_conv_flip_w(512->512 tiles 1x64x128 taps v8/8)");
  c = copy_of("ozyxc", true, 64, {1, 224, 224}, 3, 4);  // NHWC x of 3 channels padded to 4: one row dimension
  c.padding = true;
  conv::plan_walk(c, 2);
  EXPECT_EQ(c.text(), "boo_conv_pad_x(3->4 pixels v4 rows 1 i32)");
}

}  // namespace
}  // namespace boo::ops
