// boo tests: group norm — MIOpenDriver's groupnorm command lines (defaults,
// ranks, canonical commands, bad lines), the CPU reference against hand
// computation and finite differences, layouts that change only strides, and
// the plan of gpu:groupnorm:groups (kernels in order, every tensor bound).
#include <gtest/gtest.h>

#include <cmath>

#include "boo/groupnorm.hpp"
#include "boo/registry.hpp"
#include "ops/norm/device/group_norm_params.cuh"
#include "ops/norm/groupnorm_ref.hpp"
#include "plan_util.hpp"
#include "test_util.hpp"

namespace boo {
namespace {

using ops::norm::group_norm_reference;
using testing::logical_values;
using testing::run_reference;

GroupNormSignature signature_of(const std::string& command) {
  Result<ParsedCommand> p = parse_command(command);
  EXPECT_TRUE(p.ok()) << command << ": " << p.status().to_string();
  if (!p.ok()) return {};
  return dynamic_cast<const GroupNormSignature&>(*p->signature);
}

TensorSpec as_f64(TensorSpec spec) {
  spec.dtype = DType::kF64;
  return spec;
}

TEST(GroupNormParseTest, MiopenDefaultsAndRanks) {
  const GroupNormSignature d = signature_of("groupnorm");
  EXPECT_EQ(d.input_shape, (std::vector<int64_t>{32, 32, 14, 14, 14}));  // MIOpenDriver's -D 14: 5-D
  EXPECT_EQ(d.groups, 4);
  EXPECT_EQ(d.layout, "NCDHW");
  EXPECT_EQ(d.directions, kNormForward);
  EXPECT_FALSE(d.affine);
  EXPECT_EQ(signature_of("groupnormfp16 -n 2 -c 6 -D 0 -H 4 -W 5 -g 3").input_shape,
            (std::vector<int64_t>{2, 6, 4, 5}));
  EXPECT_EQ(signature_of("groupnormbfp16 -n 2 -c 6 -D 0 -H 0 -W 5 -g 3").input_shape, (std::vector<int64_t>{2, 6, 5}));
  const GroupNormSignature both = signature_of("groupnorm -n 2 -c 4 -D 0 -H 3 -W 3 -g 2 -m 1 -F 0");
  EXPECT_EQ(both.directions, kNormForward | kNormBackwardData | kNormBackwardWeight | kNormBackwardBias);
  EXPECT_EQ(signature_of("groupnorm -n 2 -c 4 -D 0 -H 3 -W 3 -g 2 -F 2").directions, kNormBackwardData);
  const std::vector<TensorSpec> results = both.results();  // y, mean, rstd, dx, dweight, dbias
  ASSERT_EQ(results.size(), 6u);
  EXPECT_EQ(results[1].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(results[1].dtype, DType::kF32);
  EXPECT_EQ(results[5].shape, (std::vector<int64_t>{4}));
}

TEST(GroupNormParseTest, CanonicalCommandsRoundTrip) {
  for (const char* line : {"groupnorm", "groupnormfp16 -n 2 -c 6 -D 0 -H 4 -W 5 -g 3 -m 1 -F 0",
                           "groupnormbfp16 -n 2 -c 6 -D 0 -H 0 -W 5 -g 6 -F 2 --layout NWC",
                           "groupnorm -n 2 -c 8 -D 2 -H 3 -W 4 -g 2 -m 1 -F 2 --layout NDHWC -e 1e-3",
                           "groupnorm -n 1 -c 4 -D 0 -H 2 -W 2 -g 1 --layout nhwc"}) {
    SCOPED_TRACE(line);
    Result<ParsedCommand> first = parse_command(std::string(line));
    ASSERT_TRUE(first.ok()) << first.status().to_string();
    Result<ParsedCommand> again = parse_command(first->signature->command());
    ASSERT_TRUE(again.ok()) << first->signature->command() << ": " << again.status().to_string();
    EXPECT_TRUE(again->signature->equals(*first->signature)) << first->signature->command();
    EXPECT_EQ(again->signature->func_name(), first->signature->func_name());
  }
  EXPECT_EQ(signature_of("groupnormbfp16 -n 2 -c 6 -D 0 -H 4 -W 5 -g 3 -m 1 -F 0 --layout NHWC").func_name(),
            "group_norm_2d_bfloat16_float32_forward_backward_2x6x4x5_g3_wb_nhwc");
}

TEST(GroupNormParseTest, BadLinesSayWhatIsAccepted) {
  struct Case {
    const char* line;
    const char* message;
  };
  for (const Case& c : {Case{"groupnorm -c 6 -g 4", "must be positive and divide the 6 channels"},
                        Case{"groupnorm -g 0", "--num_groups/-g 0"},
                        Case{"groupnorm -m 2", "accepted values are 0"},
                        Case{"groupnorm -F 3", "use 1 (forward), 0 (forward and backward) or 2 (backward)"},
                        Case{"groupnorm -n 0", "--batchsize/-n must be positive"},
                        Case{"groupnorm -D 3 -H 0", "needs -H as well"},
                        Case{"groupnorm -D 0 --layout NDHWC", "accepted NCHW or NHWC"},
                        Case{"groupnorm -e 0", "--eps/-e must be positive"}}) {
    SCOPED_TRACE(c.line);
    Result<ParsedCommand> p = parse_command(std::string(c.line));
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(p.status().message().find(c.message), std::string::npos) << p.status().to_string();
  }
}

TEST(GroupNormReferenceTest, HandComputedGroups) {
  // 1 sample, 4 channels of 2 elements, 2 groups: group 0 = {1, 2, 3, 6} (mean 3, var 3.5), group 1 = {5, 5, 5, 9}.
  const GroupNormSignature sig = signature_of("groupnorm -n 1 -c 4 -D 0 -H 0 -W 2 -g 2 -m 1 -e 0.5");
  const std::vector<TensorSpec> specs = sig.arguments();  // x, weight, bias
  std::vector<base::HostTensor> args;
  for (const TensorSpec& s : specs) args.emplace_back(as_f64(s));
  const double xs[] = {1, 2, 3, 6, 5, 5, 5, 9}, w[] = {1, 2, 3, 4}, b[] = {0, 10, 20, 30};
  for (int i = 0; i < 8; ++i) args[0].store(i, xs[i]);
  for (int c = 0; c < 4; ++c) {
    args[1].store(c, w[c]);
    args[2].store(c, b[c]);
  }
  Result<std::vector<base::HostTensor>> r = group_norm_reference(sig, args);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const double rstd0 = 1 / std::sqrt(3.5 + 0.5), rstd1 = 1 / std::sqrt(3.0 + 0.5);
  const double mean[] = {3, 6}, rstd[] = {rstd0, rstd1};
  for (int i = 0; i < 8; ++i) {
    const int c = i / 2, g = c / 2;
    EXPECT_NEAR((*r)[0].load(i), (xs[i] - mean[g]) * rstd[g] * w[c] + b[c], 1e-12) << i;
  }
  EXPECT_NEAR((*r)[1].load(0), 3, 1e-12);
  EXPECT_NEAR((*r)[1].load(1), 6, 1e-12);
  EXPECT_NEAR((*r)[2].load(0), rstd0, 1e-12);
  EXPECT_NEAR((*r)[2].load(1), rstd1, 1e-12);
}

// L(x, weight, bias) = <y, dy> of the forward; the backward's dx, dweight and
// dbias must be its gradients, 1-D to 3-D, channels first and last, with and
// without the affine parameters.
TEST(GroupNormReferenceTest, GradientsMatchFiniteDifferences) {
  for (const char* geometry : {"-n 2 -c 6 -D 0 -H 2 -W 3 -g 3 -m 1", "-n 3 -c 4 -D 0 -H 0 -W 3 -g 1 -m 1",
                               "-n 2 -c 4 -D 2 -H 1 -W 2 -g 2 -m 1 --layout NDHWC",
                               "-n 2 -c 6 -D 0 -H 2 -W 2 -g 2 -m 0 --layout NHWC"}) {
    SCOPED_TRACE(geometry);
    const std::string base = std::string("groupnorm ") + geometry + " -e 0.01";
    testing::ReferenceRun back = run_reference(base + " -F 0", 5);  // x, [weight, bias,] dy
    const GroupNormSignature fwd = signature_of(base + " -F 1");
    const bool affine = fwd.affine;
    base::HostTensor x = base::convert_tensor(back.args[0], as_f64(back.args[0].spec()));
    base::HostTensor weight(as_f64(fwd.param_spec("weight"))), bias(as_f64(fwd.param_spec("bias")));
    if (affine) {
      weight = base::convert_tensor(back.args[1], as_f64(back.args[1].spec()));
      bias = base::convert_tensor(back.args[2], as_f64(back.args[2].spec()));
    }
    const base::HostTensor& dy = back.args.back();
    auto objective = [&] {
      std::vector<base::HostTensor> args{x};
      if (affine) {
        args.push_back(weight);
        args.push_back(bias);
      }
      Result<std::vector<base::HostTensor>> y = group_norm_reference(fwd, args);
      EXPECT_TRUE(y.ok());
      return testing::inner_product((*y)[0], dy);
    };
    auto central = [&](base::HostTensor& t, int64_t i) {
      const int64_t offset = base::offset_of_linear(t.spec(), i);
      const double h = 1e-6, v = t.load(offset);
      t.store(offset, v + h);
      const double up = objective();
      t.store(offset, v - h);
      const double down = objective();
      t.store(offset, v);
      return (up - down) / (2 * h);
    };
    const std::vector<double> dx = logical_values(back.results[3]);
    for (int64_t i = 0; i < x.spec().numel(); ++i) EXPECT_NEAR(dx[static_cast<size_t>(i)], central(x, i), 1e-6) << i;
    if (!affine) {
      EXPECT_EQ(back.results.size(), 4u);
      continue;
    }
    const std::vector<double> dweight = logical_values(back.results[4]), dbias = logical_values(back.results[5]);
    for (int64_t c = 0; c < weight.spec().numel(); ++c) {
      EXPECT_NEAR(dweight[static_cast<size_t>(c)], central(weight, c), 1e-6) << c;
      EXPECT_NEAR(dbias[static_cast<size_t>(c)], central(bias, c), 1e-6) << c;
    }
  }
}

// A backward alone reads the saved statistics (x's own, made by
// make_arguments): the same gradients as the forward-and-backward command.
TEST(GroupNormReferenceTest, BackwardAloneMatchesForwardAndBackward) {
  testing::ReferenceRun alone = run_reference("groupnorm -n 2 -c 6 -D 0 -H 3 -W 2 -g 3 -m 1 -F 2");
  ASSERT_EQ(alone.args.size(), 5u);  // dy, x, weight, mean, rstd
  const GroupNormSignature both = signature_of("groupnorm -n 2 -c 6 -D 0 -H 3 -W 2 -g 3 -m 1 -F 0");
  base::HostTensor bias(both.param_spec("bias"));
  Result<std::vector<base::HostTensor>> r =
      group_norm_reference(both, {alone.args[1], alone.args[2], bias, alone.args[0]});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  for (size_t k = 0; k < 3; ++k) {
    const std::vector<double> a = logical_values(alone.results[k]), b = logical_values((*r)[3 + k]);
    for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5 * (1 + std::abs(b[i]))) << k << " " << i;
  }
}

TEST(GroupNormReferenceTest, LayoutsChangeOnlyStrides) {
  for (const char* rest : {" -m 1 -F 0", " -m 0 -F 2"}) {
    SCOPED_TRACE(rest);
    for (auto [first, last] : {std::pair{"groupnormbfp16 -n 2 -c 8 -D 0 -H 3 -W 2 -g 4", " --layout NHWC"},
                               {"groupnorm -n 2 -c 4 -D 2 -H 2 -W 3 -g 2", " --layout NDHWC"},
                               {"groupnormfp16 -n 3 -c 4 -D 0 -H 0 -W 5 -g 2", " --layout NWC"}}) {
      testing::ReferenceRun planes = run_reference(std::string(first) + rest);
      testing::ReferenceRun channels_last = run_reference(std::string(first) + last + rest);
      ASSERT_EQ(planes.results.size(), channels_last.results.size());
      EXPECT_NE(planes.args[0].spec().strides, channels_last.args[0].spec().strides);
      for (size_t r = 0; r < planes.results.size(); ++r)
        EXPECT_EQ(logical_values(planes.results[r]), logical_values(channels_last.results[r])) << r;
    }
  }
}

const ops::GpuImplementation& groups_tier() { return *ops::find_op("groupnorm")->gpu_implementations()[2]; }
const ops::GpuImplementation& rows_tier() { return *ops::find_op("groupnorm")->gpu_implementations()[1]; }
const ops::GpuImplementation& fused_tier() { return *ops::find_op("groupnorm")->gpu_implementations()[0]; }

TEST(GroupNormPlanTest, ForwardAndBackwardKernelsInOrderWithEveryTensorBound) {
  for (const char* line : {"groupnormbfp16 -n 2 -c 64 -D 0 -H 16 -W 16 -g 32 -m 1 -F 0",
                           "groupnormbfp16 -n 2 -c 64 -D 0 -H 16 -W 16 -g 32 -m 1 -F 0 --layout NHWC"}) {
    SCOPED_TRACE(line);
    const ops::test::Planned p = ops::test::plan_of(groups_tier(), line);
    ASSERT_EQ(p.entries, (std::vector<std::string>{"boo_group_norm_moment_sums", "boo_group_norm_statistics",
                                                   "boo_group_norm_y", "boo_group_norm_gradient_sums",
                                                   "boo_group_norm_gradients", "boo_group_norm_param_grads",
                                                   "boo_group_norm_dx"}));
    EXPECT_GE(p.workspace_bytes, 2 * 64 * 8 + 6 * 2 * 64 * sizeof(float));  // partials (a Sum2 each) and coefficients
    for (const ops::test::ResolvedLaunch& l : p.launches) {
      SCOPED_TRACE(l.entry);
      const auto params = ops::test::params_of<GroupNormParams>(l);
      for (auto [field, name] : {std::pair{params.x, "x"}, {params.weight, "weight"}, {params.bias, "bias"},
                                 {params.dy, "dy"}, {params.y, "y"}, {params.mean, "mean"}, {params.rstd, "rstd"},
                                 {params.dx, "dx"}, {params.dweight, "dweight"}, {params.dbias, "dbias"}})
        EXPECT_EQ(field, p.address.at(name)) << name;
      EXPECT_EQ(params.partials, p.workspace);
      EXPECT_EQ(params.samples, 2);
      EXPECT_EQ(params.channels, 64);
      EXPECT_EQ(params.groups, 32);
      EXPECT_EQ(params.spatial, 256);
    }
  }
}

// gpu:groupnorm:rows: groups as many as the SMs in one block each, one launch
// (two with dweight and dbias), shared memory for the per-channel sums.
TEST(GroupNormRowsPlanTest, SmallGroupsRunABlockEach) {
  const ops::test::Planned p =
      ops::test::plan_of(rows_tier(), "groupnormbfp16 -n 8 -c 320 -D 0 -H 32 -W 32 -g 32 -m 1 -F 0 --layout NHWC");
  ASSERT_EQ(p.entries, (std::vector<std::string>{"boo_group_norm_rows", "boo_group_norm_rows_param_grads"}));
  // 10 channels a group: vectors of 2 (4 bytes divide a group's run of channels), 5 of them on 8 lanes x 32 rows.
  EXPECT_NE(p.config.find("vec=2;threads=8x32;"), std::string::npos) << p.config;
  EXPECT_EQ(p.config.find("cluster"), std::string::npos) << p.config;  // 256 groups: no cluster
  EXPECT_EQ(p.source.text.find("__cluster_dims__"), std::string::npos);
  EXPECT_EQ(p.launches[0].grid.x, 8u * 32u);
  EXPECT_EQ(p.launches[0].shared_bytes, 10u * 16u + 32u * 10u * 8u);  // float64 sums, the rows' partials
  EXPECT_EQ(p.launches[1].grid.x, 2u);  // a thread per channel
  EXPECT_EQ(p.workspace_bytes, 8u * 320u * 2u * sizeof(double));
  for (const ops::test::ResolvedLaunch& l : p.launches) {
    const auto params = ops::test::params_of<GroupNormParams>(l);
    for (auto [field, name] : {std::pair{params.x, "x"}, {params.weight, "weight"}, {params.bias, "bias"},
                               {params.dy, "dy"}, {params.y, "y"}, {params.mean, "mean"}, {params.rstd, "rstd"},
                               {params.dx, "dx"}, {params.dweight, "dweight"}, {params.dbias, "dbias"}})
      EXPECT_EQ(field, p.address.at(name)) << name;
    EXPECT_EQ(params.partials, p.workspace);
    EXPECT_EQ(params.samples, 8);
    EXPECT_EQ(params.groups, 32);
    EXPECT_EQ(params.spatial, 1024);
  }
  // Planes: a group's rows are its channels, 16-byte vectors of the planes; the forward alone needs no workspace.
  const ops::test::Planned f = ops::test::plan_of(rows_tier(), "groupnormfp16 -n 8 -c 1280 -D 0 -H 8 -W 8 -g 32 -m 1 -F 1");
  ASSERT_EQ(f.entries, (std::vector<std::string>{"boo_group_norm_rows_y"}));
  EXPECT_NE(f.config.find("vec=8;threads=8x32;"), std::string::npos) << f.config;
  EXPECT_EQ(f.launches[0].shared_bytes, 40u * 16u);
  EXPECT_EQ(f.workspace_bytes, 0u);
}

// On sm_90 a cluster of blocks shares each group, each taking a run of the
// spatial elements, where a group is too large for one block (80 KB: clusters
// of 4 bring 64 groups to about 2 blocks on each of 132 SMs) or the groups are
// few (6: clusters of 8); the cluster's totals take a second [cpg][2] doubles.
// The SD-UNet's smaller groups keep a block each (a cluster cost more than it
// saved there), and so does sm_80 (no clusters).
TEST(GroupNormRowsPlanTest, LargeGroupsOrFewShareAClusterOnSm90) {
  const char* line = "groupnormfp16 -n 1 -c 60 -D 0 -H 33 -W 33 -g 6 -m 1 -F 0 --layout NHWC";
  const ops::test::Planned p = ops::test::plan_of(rows_tier(), line);
  ASSERT_EQ(p.entries, (std::vector<std::string>{"boo_group_norm_rows", "boo_group_norm_rows_param_grads"}));
  // 10 channels a group: vectors of 2, 5 of them on 8 lanes x 32 rows.
  EXPECT_NE(p.config.find("vec=2;threads=8x32;shared=2880;cluster=8;"), std::string::npos) << p.config;
  EXPECT_NE(p.source.text.find("__cluster_dims__(8, 1, 1) boo_group_norm_rows("), std::string::npos) << p.source.text;
  EXPECT_NE(p.source.text.find("true, true, true, true, true, 8>(p)"), std::string::npos) << p.source.text;
  EXPECT_EQ(p.launches[0].grid.x, 6u * 8u);
  EXPECT_EQ(p.launches[0].shared_bytes, 2u * 10u * 16u + 32u * 10u * 8u);
  EXPECT_EQ(p.launches[1].grid.x, 1u);  // the parameter gradients' kernel has no cluster
  EXPECT_EQ(p.source.text.find("__cluster_dims__(8, 1, 1) boo_group_norm_rows_param"), std::string::npos);

  // Planes split each channel's plane: 1024 of 4096 columns a block, 128 vectors on 32 lanes.
  const char* large = "groupnormfp16 -n 2 -c 320 -D 0 -H 64 -W 64 -g 32 -m 1 -F 1";
  const ops::test::Planned f = ops::test::plan_of(rows_tier(), large);
  EXPECT_NE(f.config.find("vec=8;threads=32x8;shared=320;cluster=4;"), std::string::npos) << f.config;
  EXPECT_EQ(f.launches[0].grid.x, 64u * 4u);
  for (const char* small : {"groupnormbfp16 -n 2 -c 320 -D 0 -H 32 -W 32 -g 32 -m 1 -F 0 --layout NHWC",
                            "groupnorm -n 1 -c 320 -D 0 -H 32 -W 32 -g 32 -m 1 -F 1"})
    EXPECT_EQ(ops::test::plan_of(rows_tier(), small).config.find("cluster"), std::string::npos) << small;

  std::unique_ptr<ops::OpProblem> problem = ops::test::problem_of(line);
  ASSERT_NE(problem, nullptr);
  const ops::ArchSpec sm80 = ops::ArchSpec::of(*DeviceInfo::for_arch("sm_80"));
  Result<std::unique_ptr<const ops::Config>> config = rows_tier().configure(*problem, sm80);
  ASSERT_TRUE(config.ok()) << config.status().to_string();
  EXPECT_EQ((*config)->text().find("cluster"), std::string::npos) << (*config)->text();

  // boo tune's alternatives: half and twice the threads, then the other clusters (none, 2 and 4 blocks).
  Result<ops::ConfigList> candidates = rows_tier().candidates(*problem, ops::test::sm90());
  ASSERT_TRUE(candidates.ok());
  std::vector<std::string> clusters;
  for (const auto& c : *candidates) {
    const std::string text = c->text();
    const size_t at = text.find("cluster=");
    clusters.push_back(at == std::string::npos ? "1" : text.substr(at + 8, 1));
  }
  EXPECT_EQ(clusters, (std::vector<std::string>{"8", "8", "8", "1", "2", "4"}));
}

// Large groups stay on gpu:groupnorm:groups (the model's reason), and so do
// channels-last groups of more than 32 vectors of channels, and large
// channels-last groups whose channels make vectors under 16 bytes.
TEST(GroupNormRowsPlanTest, DeclinesLargeGroupsAndWideChannelRuns) {
  for (auto [line, reason] :
       {std::pair{"groupnormbfp16 -n 2 -c 320 -D 0 -H 128 -W 128 -g 32 -m 1 -F 1 --layout NHWC",
                  "a cluster of 4 streams of at most 49152 bytes, not 81920"},
        std::pair{"groupnormbfp16 -n 64 -c 512 -D 0 -H 8 -W 8 -g 1 -m 1 -F 1 --layout NHWC",
                  "at most 32 vectors of a group's channels per pixel, not 64"},
        std::pair{"groupnormbfp16 -n 2 -c 320 -D 0 -H 64 -W 64 -g 32 -m 1 -F 1 --layout NHWC",
                  "groups too large for a block and their channels in vectors of 4 bytes"}}) {
    SCOPED_TRACE(line);
    const std::unique_ptr<ops::OpProblem> problem = ops::test::problem_of(line);
    ASSERT_NE(problem, nullptr);
    const Status why = rows_tier().accepts(*problem, ops::test::sm90());
    EXPECT_FALSE(why.ok());
    EXPECT_NE(why.to_string().find(reason), std::string::npos) << why.to_string();
  }
  // Without clusters (sm_80), a group of 80 KB in one block.
  const std::unique_ptr<ops::OpProblem> problem =
      ops::test::problem_of("groupnormbfp16 -n 2 -c 320 -D 0 -H 64 -W 64 -g 32 -m 1 -F 1 --layout NHWC");
  ASSERT_NE(problem, nullptr);
  const Status why = rows_tier().accepts(*problem, ops::ArchSpec::of(*DeviceInfo::for_arch("sm_80")));
  EXPECT_NE(why.to_string().find("at most 49152 bytes, not 1 x 81920"), std::string::npos) << why.to_string();
}

// The per-group and per-channel kernels run a warp per (sample, group) and per
// channel: 2 x 32 groups and 64 channels at 4 warps a block.
TEST(GroupNormPlanTest, PerGroupAndPerChannelKernelsRunAWarpEach) {
  const ops::test::Planned p =
      ops::test::plan_of(groups_tier(), "groupnormbfp16 -n 2 -c 64 -D 0 -H 16 -W 16 -g 32 -m 1 -F 0 --layout NHWC");
  int checked = 0;
  for (const ops::test::ResolvedLaunch& l : p.launches) {
    SCOPED_TRACE(l.entry);
    if (l.entry == "boo_group_norm_statistics" || l.entry == "boo_group_norm_gradients") {
      EXPECT_EQ(l.grid.x * l.block.x, 2u * 32u * 32u);
      ++checked;
    } else if (l.entry == "boo_group_norm_param_grads") {
      EXPECT_EQ(l.grid.x * l.block.x, 64u * 32u);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 3);
}

// The backward alone reads the given statistics; without the affine
// parameters there are no parameter gradients.
TEST(GroupNormPlanTest, BackwardAloneReadsTheSavedStatistics) {
  const ops::test::Planned p = ops::test::plan_of(groups_tier(), "groupnorm -n 2 -c 8 -D 0 -H 5 -W 5 -g 2 -F 2");
  ASSERT_EQ(p.entries, (std::vector<std::string>{"boo_group_norm_statistics", "boo_group_norm_gradient_sums",
                                                 "boo_group_norm_gradients", "boo_group_norm_dx"}));
  for (const ops::test::ResolvedLaunch& l : p.launches) {
    const auto params = ops::test::params_of<GroupNormParams>(l);
    EXPECT_EQ(params.mean, p.address.at("mean"));
    EXPECT_EQ(params.rstd, p.address.at("rstd"));
    EXPECT_EQ(params.weight, 0u);
  }
}

// Slices of a channels-last sample's rows never cross samples (they divide
// its rows); pieces tile a plane. Few large planes are split into pieces.
TEST(GroupNormPlanTest, SlicesDivideTheSpatialRowsAndPiecesThePlanes) {
  struct Case {
    const char* line;
    bool channels_last;
    int64_t min_parts;  ///< slices per sample or pieces per plane, at least
  };
  for (const Case& c : {Case{"groupnormbfp16 -n 2 -c 320 -D 0 -H 64 -W 64 -g 32 --layout NHWC", true, 2},
                        Case{"groupnormbfp16 -n 2 -c 320 -D 0 -H 64 -W 64 -g 32", false, 1},
                        Case{"groupnorm -n 1 -c 2 -D 0 -H 7 -W 7 -g 1 --layout NHWC", true, 1},
                        Case{"groupnorm -n 1 -c 32 -D 0 -H 256 -W 256 -g 32", false, 8},
                        Case{"groupnorm -n 3 -c 5 -D 0 -H 0 -W 1 -g 5", true, 1}}) {
    SCOPED_TRACE(c.line);
    const ops::test::Planned p = ops::test::plan_of(groups_tier(), c.line);
    const auto params = ops::test::params_of<GroupNormParams>(p.launches.at(0));
    if (c.channels_last) {
      EXPECT_EQ(params.pieces, 1);
      EXPECT_EQ(params.slices_per_sample * params.rows_per_slice, params.spatial);
      EXPECT_GE(params.slices_per_sample, c.min_parts);
      EXPECT_EQ(p.launches.at(0).grid.y, params.samples * params.slices_per_sample);
    } else {
      EXPECT_EQ(params.slices_per_sample, 1);
      EXPECT_EQ(params.spatial % params.pieces, 0);
      EXPECT_GE(params.pieces, c.min_parts);
      EXPECT_EQ(p.launches.at(0).grid.x, params.samples * params.channels * params.pieces);
    }
  }
}


// gpu:groupnorm:fused: gated until it runs on a GPU; then one cooperative
// launch (the barrier's counter cleared first) of at most 2 blocks per SM
// whose blocks visit the groups tier's grid, with the groups tier's tiling,
// tensors and workspace (after 256 bytes for the counter).
TEST(GroupNormPlanTest, FusedIsOneCooperativeLaunchOfTheGroupsTiersPhases) {
  EXPECT_EQ(fused_tier().name(), "gpu:groupnorm:fused");
  EXPECT_EQ(groups_tier().name(), "gpu:groupnorm:groups");
  EXPECT_FALSE(ops::test::accepts(fused_tier(), "groupnormbfp16 -n 2 -c 320 -D 0 -H 64 -W 64 -g 32 -m 1 -F 1"));
  ops::test::UnverifiedKernelsEnabled enabled;
  const int sm_count = ops::test::sm90().sm_count;
  struct Case {
    std::string line, entry, kernel;
  };
  for (const Case& c : std::vector<Case>{
           {"groupnormbfp16 -n 2 -c 320 -D 0 -H 64 -W 64 -g 32 -m 1 -F 1 --layout NHWC", "boo_group_norm_fused_y",
            "true, 1LL, true, false, true, false>"},
           {"groupnormfp16 -n 2 -c 1280 -D 0 -H 8 -W 8 -g 32 -m 1 -F 2 --layout NCHW", "boo_group_norm_fused_dx",
            "false, 64LL, false, true, true, true>"},
           {"groupnormbfp16 -n 2 -c 640 -D 0 -H 32 -W 32 -g 32 -m 1 -F 0 --layout NCHW", "boo_group_norm_fused",
            ", true, true, true, true>"},
           {"groupnorm -n 2 -c 8 -D 0 -H 5 -W 5 -g 2 -F 2", "boo_group_norm_fused_dx",
            ", false, true, false, false>"}}) {
    SCOPED_TRACE(c.line);
    const ops::test::Planned f = ops::test::plan_of(fused_tier(), c.line);
    const ops::test::Planned g = ops::test::plan_of(groups_tier(), c.line);
    ASSERT_EQ(f.entries, std::vector<std::string>{c.entry});
    EXPECT_NE(f.source.text.find(c.kernel), std::string::npos) << f.source.text;
    const ops::test::ResolvedLaunch& l = f.launches[0];
    EXPECT_TRUE(l.cooperative);
    EXPECT_EQ(l.cleared_workspace_bytes, 4u);
    EXPECT_EQ(l.block.x, 256u);
    EXPECT_EQ(l.grid.y, 1u);
    const ops::test::ResolvedLaunch& elements = g.launches.at(g.entries[0] == "boo_group_norm_statistics" ? 1 : 0);
    const uint64_t places = uint64_t{elements.grid.x} * elements.grid.y;
    EXPECT_EQ(l.grid.x, std::min<uint64_t>(places, 2 * sm_count));
    const auto fp = ops::test::params_of<GroupNormParams>(l);
    const auto gp = ops::test::params_of<GroupNormParams>(elements);
    EXPECT_EQ(fp.blocks_x, elements.grid.x);
    EXPECT_NE(f.source.text.find("(p, " + std::to_string(elements.grid.y) + "LL)"), std::string::npos);
    EXPECT_EQ(fp.barrier, f.workspace);
    EXPECT_EQ(f.workspace_bytes, 256 + g.workspace_bytes);
    EXPECT_EQ(fp.partials - f.workspace, 256 + (gp.partials - g.workspace));
    EXPECT_EQ(fp.coefficients - f.workspace, 256 + (gp.coefficients - g.workspace));
    for (auto [field, name] : {std::pair{fp.x, "x"}, {fp.dy, "dy"}, {fp.y, "y"}, {fp.mean, "mean"},
                               {fp.rstd, "rstd"}, {fp.dx, "dx"}, {fp.weight, "weight"}, {fp.dweight, "dweight"}})
      if (f.address.count(name)) {
        EXPECT_EQ(field, f.address.at(name)) << name;
      }
    EXPECT_EQ(fp.pieces, gp.pieces);
    EXPECT_EQ(fp.slices_per_sample, gp.slices_per_sample);
    EXPECT_EQ(fp.rows_per_slice, gp.rows_per_slice);
  }
}

}  // namespace
}  // namespace boo
