// boo tests: the gemm op — parsing, the float64 reference, and the mapping of
// a GEMM onto the conv tiers (checked on the CPU by running the mapped conv's
// reference on the staged operands) and its launch plans.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

#include "boo/gemm.hpp"
#include "ops/conv/conv_direct_impl.hpp"
#include "ops/conv/conv_igemm_impl.hpp"
#include "ops/conv/conv_problem.hpp"
#include "ops/conv/conv_ref.hpp"
#include "ops/conv/conv_wgmma_impl.hpp"
#include "ops/conv/device/conv_direct_params.cuh"
#include "ops/conv/device/conv_igemm_params.cuh"
#include "ops/gemm/device/gemm_copy_params.cuh"
#include "ops/gemm/gemm_conv_impl.hpp"
#include "ops/gemm/gemm_op.hpp"
#include "plan_util.hpp"
#include "test_util.hpp"

namespace boo {
namespace {

using ops::gemm::ConvMapping;
using ops::gemm::GemmDesc;
using ops::gemm::GemmProblem;
using ops::gemm::MatrixView;

const GemmSignature& gemm_of(const ParsedCommand& p) { return dynamic_cast<const GemmSignature&>(*p.signature); }

TEST(GemmParseTest, BooFlagsAndRoundTrips) {
  // BOO's sample lines: m = --a_w, k = --a_h, n = --b_w.
  Result<ParsedCommand> p = parse_command("gemmfp16 --a_w 32 --a_h 64 --b_w 128 --transA 1");
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  const GemmSignature& g = gemm_of(*p);
  EXPECT_EQ(g.dtype, DType::kF16);
  EXPECT_EQ(g.m, 32);
  EXPECT_EQ(g.k, 64);
  EXPECT_EQ(g.n, 128);
  EXPECT_TRUE(g.trans_a);
  EXPECT_EQ(g.func_name(), "gemm_float16_forward_32x64x128_transA");
  EXPECT_EQ(g.arguments().at(0).shape, (std::vector<int64_t>{64, 32}));  // A stored k x m
  EXPECT_EQ(g.results().at(0).shape, (std::vector<int64_t>{32, 128}));
  for (const char* line :
       {"gemm -k 5 -m 7 -n 3 -u 1 -v 1 -F 2", "gemmbfp16 --a_w 4 --a_h 8 --b_w 2 -F 3 --batch_count 3",
        "gemm -A 0.5 -B 2 --bias 1 --activation leaky_relu:0.2 -b 2", "gemm --fp32-math tf32"}) {
    Result<ParsedCommand> first = parse_command(line);
    ASSERT_TRUE(first.ok()) << line << ": " << first.status().to_string();
    Result<ParsedCommand> second = parse_command(first->signature->command());
    ASSERT_TRUE(second.ok()) << first->signature->command() << ": " << second.status().to_string();
    EXPECT_TRUE(second->signature->equals(*first->signature)) << line;
  }
  Result<ParsedCommand> grad = parse_command("gemm -k 5 -m 7 -n 3 -u 1 -F 2");
  ASSERT_TRUE(grad.ok());
  EXPECT_EQ(gemm_of(*grad).func_name(), "gemm_float32_a_backward_5x7x3_transA");
  EXPECT_EQ(grad->signature->arguments().at(0).name, "dd");
  EXPECT_EQ(grad->signature->results().at(0).shape, (std::vector<int64_t>{7, 5}));  // da stored as a is
}

// d = act(alpha * op(a) @ op(b) + beta * c + bias) by hand.
TEST(GemmReferenceTest, HandComputed) {
  Result<ParsedCommand> p =
      parse_command("gemm --a_w 2 --a_h 3 --b_w 2 --transA 1 --alpha 2 --beta -1 --bias 1 --activation relu");
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  const OpSignature& sig = *p->signature;
  const std::vector<TensorSpec> specs = sig.arguments();
  // a stored 3 x 2 (transposed): op(a) = [[1, 2, 3], [4, 5, 6]].
  std::vector<base::HostTensor> args{testing::tensor_from(specs[0], {1, 4, 2, 5, 3, 6}),
                                     testing::tensor_from(specs[1], {1, 0, 0, 1, 1, 1}),
                                     testing::tensor_from(specs[2], {1, 1, 100, 1}),
                                     testing::tensor_from(specs[3], {0.5, -20})};
  Result<std::vector<base::HostTensor>> r = ops::find_op("gemm")->reference(sig, args);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  // op(a) @ b = [[4, 5], [10, 11]]; 2x - c + bias = [[7.5, -11], [-79.5, 1]]; relu.
  EXPECT_EQ(testing::logical_values(r->at(0)), (std::vector<double>{7.5, 0, 0, 1}));
  // The sampled reference agrees.
  Result<std::vector<double>> s = ops::find_op("gemm")->reference_sample(sig, args, 0, {0, 3});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, (std::vector<double>{7.5, 1}));
}

TEST(GemmReferenceTest, GradientsAreTheTransposedProducts) {
  // da = dd @ op(b)^T and db = op(a)^T @ dd, as the forward's inner products say: <d, dd> = <a, da> = <b, db>.
  for (const char* flags : {"", " --transA 1", " --transB 1", " --transA 1 --transB 1 --batch_count 2"}) {
    const std::string sizes = std::string("gemm --a_w 5 --a_h 4 --b_w 3") + flags;
    testing::ReferenceRun fwd = testing::run_reference(sizes);
    testing::ReferenceRun da = testing::run_reference(sizes + " -F 2");
    testing::ReferenceRun db = testing::run_reference(sizes + " -F 3");
    // Same names, same seeds: dd, a and b hold the same values in every run.
    const double d_dd = testing::inner_product(fwd.results[0], da.args[0]);
    EXPECT_NEAR(testing::inner_product(fwd.args[0], da.results[0]), d_dd, 1e-9 * std::abs(d_dd) + 1e-12) << flags;
    EXPECT_NEAR(testing::inner_product(fwd.args[1], db.results[0]), d_dd, 1e-9 * std::abs(d_dd) + 1e-12) << flags;
  }
}

int64_t at(const MatrixView& v, int64_t b, int64_t r, int64_t c) {
  return b * v.strides[0] + r * v.strides[1] + c * v.strides[2];
}

// The plan's data flow on the CPU: operands copied through their views (staged or in place), the
// mapped conv's reference, the result read through its view -- or, where the conv does not fuse
// the epilogue, its sums laid out as ConvProblem::fp32_result's (groups, M, N) read through
// m.sums and given the epilogue; it must equal the GEMM's reference.
void expect_mapping_matches(const ops::OpDefinition& op, const OpSignature& sig, bool channels_last) {
  Result<std::unique_ptr<ops::OpProblem>> problem = op.make_problem(sig);
  ASSERT_TRUE(problem.ok()) << problem.status().to_string();
  const GemmDesc& d = dynamic_cast<const GemmProblem&>(**problem).desc;
  const ConvMapping m = ops::gemm::map_to_conv(d, channels_last);
  ASSERT_TRUE(m.conv.validate().ok()) << m.conv.command();
  Result<std::vector<base::HostTensor>> args = op.make_arguments(sig, {});
  ASSERT_TRUE(args.ok());
  const std::vector<TensorSpec> specs = sig.arguments();
  auto arg = [&](const std::string& name) -> const base::HostTensor& {
    for (size_t i = 0; i < specs.size(); ++i)
      if (specs[i].name == name) return (*args)[i];
    ADD_FAILURE() << "no argument " << name;
    return (*args)[0];
  };
  auto fill = [&](const ConvMapping::Operand& o, TensorSpec spec) {
    base::HostTensor t(std::move(spec));
    const MatrixView& dst = o.staged ? o.staged_view : o.view;
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t r = 0; r < o.rows; ++r)
        for (int64_t c = 0; c < o.cols; ++c) t.store(at(dst, b, r, c), arg(o.view.tensor).load(at(o.view, b, r, c)));
    return t;
  };
  std::vector<base::HostTensor> conv_args{fill(m.x, m.conv.x_spec()), fill(m.w, m.conv.w_spec())};
  if (m.conv.bias) {
    base::HostTensor b(m.conv.bias_spec());
    const MatrixView v = *d.fused_bias();  // a copy: fused_bias() returns an optional by value
    for (int64_t j = 0; j < d.n; ++j) b.store(j, arg(v.tensor).load(at(v, 0, 0, j)));
    conv_args.push_back(std::move(b));
  }
  Result<std::vector<base::HostTensor>> y = ops::conv::conv_reference(m.conv, conv_args);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  Result<std::vector<base::HostTensor>> expected = op.reference(sig, *args);
  ASSERT_TRUE(expected.ok());
  const MatrixView& y_view = m.y.staged ? m.y.staged_view : m.y.view;
  // The conv's y [n, k, h] as the dense fp32 sums (group, n x h, a group's channel).
  const TensorSpec ys = m.conv.y_spec();
  const int64_t groups = m.conv.groups, per_group = m.conv.k / groups, pixels = ys.shape[2];
  std::vector<double> sums(static_cast<size_t>(ys.numel()));
  for (int64_t n = 0; n < ys.shape[0]; ++n)
    for (int64_t k = 0; k < ys.shape[1]; ++k)
      for (int64_t h = 0; h < pixels; ++h)
        sums[static_cast<size_t>(((k / per_group) * ys.shape[0] * pixels + n * pixels + h) * per_group +
                                 k % per_group)] =
            y->at(0).load(n * ys.strides[0] + k * ys.strides[1] + h * ys.strides[2]);
  if (m.epilogue) {
    EXPECT_FALSE(m.y.staged) << "the epilogue kernel writes out itself";
  }
  double worst = 0;
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t j = 0; j < d.n; ++j) {
        double v = m.epilogue ? sums[static_cast<size_t>(at({"", m.sums}, b, i, j))] : y->at(0).load(at(y_view, b, i, j));
        if (m.epilogue) {
          v *= d.alpha;
          if (d.c) v += d.beta * arg(d.c->tensor).load(at(*d.c, b, i, j));
          if (d.bias) v += arg(d.bias->tensor).load(at(*d.bias, b, i, j));
          v = d.activation.apply(v);
        }
        worst = std::max(worst, std::abs(v - expected->at(0).load(at(d.out, b, i, j))));
      }
  EXPECT_LT(worst, 1e-9) << sig.command() << (channels_last ? " (channels last)" : "") << ": " << m.conv.command();
}

TEST(GemmMappingTest, TheMappedConvComputesTheGemm) {
  std::ifstream in("tests/gpu/gemm_matrix.txt");
  ASSERT_TRUE(in) << "tests run from the repository root";
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.find("4096") != std::string::npos) continue;  // small ones
    Result<ParsedCommand> p = parse_command(line);
    ASSERT_TRUE(p.ok()) << line << ": " << p.status().to_string();
    for (bool channels_last : {false, true}) expect_mapping_matches(ops::gemm::definition(), *p->signature, channels_last);
    ++lines;
  }
  EXPECT_GT(lines, 20);
}

TEST(GemmMappingTest, LayoutsInPlaceOfCopies) {
  auto mapping = [](const std::string& line) {
    std::unique_ptr<ops::OpProblem> problem = ops::test::problem_of(line);
    return ops::gemm::map_to_conv(dynamic_cast<const GemmProblem&>(*problem).desc, false);
  };
  // Every transpose of an unbatched GEMM is a conv layout: nothing is copied by the GEMM.
  for (const char* t : {"", " -u 1", " -v 1", " -u 1 -v 1"}) {
    const ConvMapping m = mapping(std::string("gemmbfp16 -k 64 -m 128 -n 96") + t);
    EXPECT_FALSE(m.x.staged || m.w.staged || m.y.staged || m.grouped || m.epilogue) << t << ": " << m.conv.command();
  }
  // Batched with both operands batched: one group per entry, A and out in place, B^T copied.
  const ConvMapping g = mapping("gemmbfp16 -k 64 -m 128 -n 96 -b 4 -v 1");
  EXPECT_TRUE(g.grouped);
  EXPECT_EQ(g.conv.groups, 4);
  EXPECT_TRUE(g.x.staged);
  EXPECT_FALSE(g.w.staged || g.y.staged);
  // A per-column bias with activation is the conv's epilogue; alpha is not.
  EXPECT_TRUE(mapping("gemm --bias 1 --activation relu").conv.bias);
  EXPECT_TRUE(mapping("gemm --bias 1 --alpha 2").epilogue);
}

TEST(GemmPlanTest, TiersAndBindings) {
  const auto impls = ops::gemm::gemm_implementations();
  ASSERT_EQ(impls.size(), 3u);
  // The Hopper tier takes a large bf16 GEMM with B staged channels-last (n x k).
  ops::test::Planned big = ops::test::plan_of(*impls[0], "gemmbfp16 --a_w 4096 --a_h 4096 --b_w 4096");
  ASSERT_EQ(big.entries, (std::vector<std::string>{"boo_gemm_stage_w", "boo_wgmma_y"}));
  const auto stage = ops::test::params_of<GemmCopyParams>(big.launches[0]);
  EXPECT_EQ(stage.src, big.address["b"]);
  EXPECT_GE(stage.dst, big.workspace);
  EXPECT_EQ(stage.src_strides[1], 4096);  // element (p, j) of b, stored k x n
  EXPECT_EQ(stage.src_strides[2], 1);
  EXPECT_EQ(stage.dst_strides[1], 1);     // of the copy, stored n x k
  EXPECT_EQ(stage.dst_strides[2], 4096);
  EXPECT_NE(big.source.text.find("boo::gemm_copy<boo::bf16, boo::bf16, false, false, 0>"), std::string::npos);
  EXPECT_NE(big.source.text.find("kFp32Out = false"), std::string::npos);
  // A small fp32 GEMM with the general epilogue: the implicit GEMM leaves its fp32 sums at the
  // workspace's start (not d), then the epilogue kernel reads them and writes d.
  ops::test::Planned small =
      ops::test::plan_of(*impls[1], "gemm --a_w 40 --a_h 64 --b_w 56 --alpha 0.5 --beta 2 --bias 1 --activation gelu");
  ASSERT_EQ(small.entries, (std::vector<std::string>{"boo_conv_stage_w", "boo_igemm_y", "boo_gemm_epilogue"}));
  const auto sums = ops::test::params_of<ConvIgemmParams>(small.launches[1]);
  EXPECT_EQ(sums.workspace, small.workspace);
  EXPECT_EQ(sums.out, 0u);
  EXPECT_NE(small.source.text.find("kFp32Out = true"), std::string::npos);
  EXPECT_GE(small.workspace_bytes, size_t{40} * 56 * sizeof(float));
  const auto epi = ops::test::params_of<GemmCopyParams>(small.launches.back());
  EXPECT_EQ(epi.src, small.workspace);
  EXPECT_EQ(epi.src_strides[1], 56);  // the sums (m, n) row-major
  EXPECT_EQ(epi.src_strides[2], 1);
  EXPECT_EQ(epi.dst, small.address["d"]);
  EXPECT_EQ(epi.addend, small.address["c"]);
  EXPECT_EQ(epi.bias, small.address["bias"]);
  EXPECT_EQ(epi.alpha, 0.5f);
  EXPECT_EQ(epi.beta, 2.0f);
  EXPECT_EQ(epi.bias_strides[2], 1);
  EXPECT_NE(small.source.text.find("boo::gemm_copy<float, float, true, true, 5>"), std::string::npos);
  // Split K with the epilogue kernel: the reduce sums the slices into the fp32 plane, the epilogue rounds.
  ops::test::Planned split = ops::test::plan_of(*impls[1], "gemmbfp16 --a_w 64 --a_h 10000 --b_w 64 --alpha 0.5");
  ASSERT_EQ(split.entries, (std::vector<std::string>{"boo_conv_stage_w", "boo_igemm_y", "boo_igemm_y_reduce",
                                                     "boo_gemm_epilogue"}));
  EXPECT_EQ(ops::test::params_of<ConvIgemmParams>(split.launches[2]).workspace, split.workspace);
  EXPECT_EQ(ops::test::params_of<ConvIgemmParams>(split.launches[2]).out, 0u);
  EXPECT_EQ(ops::test::params_of<GemmCopyParams>(split.launches[3]).src, split.workspace);
  EXPECT_NE(split.source.text.find("boo::gemm_copy<boo::bf16, float, false, false, 0>"), std::string::npos);
  // The Hopper tier with alpha: its consumers store fp32 sums, y is not staged.
  ops::test::Planned scaled = ops::test::plan_of(*impls[0], "gemmbfp16 --a_w 4096 --a_h 4096 --b_w 4096 --alpha 0.5");
  ASSERT_EQ(scaled.entries, (std::vector<std::string>{"boo_gemm_stage_w", "boo_wgmma_y", "boo_gemm_epilogue"}));
  EXPECT_EQ(ops::test::params_of<ConvIgemmParams>(scaled.launches[1]).workspace, scaled.workspace);
  EXPECT_EQ(ops::test::params_of<ConvIgemmParams>(scaled.launches[1]).out, 0u);
  EXPECT_GE(scaled.workspace_bytes, size_t{4096} * 4096 * sizeof(float));
  EXPECT_EQ(ops::test::params_of<GemmCopyParams>(scaled.launches[2]).src, scaled.workspace);
  EXPECT_EQ(ops::test::params_of<GemmCopyParams>(scaled.launches[2]).dst, scaled.address["d"]);
  // The direct conv with alpha: its sums in fp32 at the workspace's start.
  ops::test::Planned tiny = ops::test::plan_of(*impls[2], "gemm --a_w 5 --a_h 2 --b_w 3 --alpha 2");
  ASSERT_EQ(tiny.entries, (std::vector<std::string>{"boo_conv_direct_y", "boo_gemm_epilogue"}));
  EXPECT_EQ(ops::test::params_of<ConvFaceParams>(tiny.launches[0]).b, tiny.workspace);
  EXPECT_NE(tiny.source.text.find("boo::conv_forward_face<float, 0, false, true>"), std::string::npos);
  // Tiny k and n: the implicit GEMM declines (depthwise-like), the direct conv runs it.
  EXPECT_FALSE(ops::test::accepts(*impls[1], "gemm --a_w 5 --a_h 2 --b_w 3"));
  EXPECT_TRUE(ops::test::accepts(*impls[2], "gemm --a_w 5 --a_h 2 --b_w 3"));
}

// ConvProblem::fp32_result (what gpu:gemm asks for its epilogue kernel, gpu:conv:fp32_bf16x6 for its
// six products): every conv tier takes one forward face without bias or activation and declines the
// rest with the reason; gpu:conv:wgmma_sm90 takes the data and weight faces too, not stride phases.
TEST(GemmPlanTest, ConvTiersLeaveFp32SumsOfOneDirection) {
  const ops::ArchSpec arch = ops::test::sm90();
  auto verdict = [&](const ops::GpuImplementation& tier, const std::string& line) {
    Result<ParsedCommand> p = parse_command(line);
    EXPECT_TRUE(p.ok()) << line;
    const ops::conv::ConvProblem problem(dynamic_cast<const ConvSignature&>(*p->signature), true);
    return tier.accepts(problem, arch);
  };
  const std::string forward = "convbfp16 -n 64 -c 128 -H 64 -W 64 -k 128 -y 1 -x 1 --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  for (const ops::GpuImplementation* tier : {&ops::conv::wgmma_sm90_implementation(), &ops::conv::implicit_gemm_implementation(),
                                        &ops::conv::direct_implementation()}) {
    const bool every_face = tier == &ops::conv::wgmma_sm90_implementation();
    EXPECT_TRUE(verdict(*tier, forward + " -F 1").ok()) << tier->name();
    for (const char* rest : {" -F 2", " -F 4"})
      EXPECT_EQ(verdict(*tier, forward + rest).ok(), every_face) << tier->name() << rest;
    for (const char* rest : {" -F 1 -b 1", " -F 1 --activation relu", " -F 2 -u 2 -v 2", " -F 2 -g 2"}) {
      if (!every_face && std::string(rest) == " -F 2 -u 2 -v 2") continue;
      const Status s = verdict(*tier, forward + rest);
      EXPECT_EQ(s.code(), StatusCode::kUnimplemented) << tier->name() << rest;
      EXPECT_NE(s.message().find("fp32 sums"), std::string::npos) << s.message();
    }
  }
}

}  // namespace
}  // namespace boo
