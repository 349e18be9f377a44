// boo tests: scaled dot-product attention (ops/aten/sdpa.hpp) — the ATen
// forms and their errors, the float64 reference against attention computed
// here directly, the gradients against finite differences, and the
// gpu:aten:sdpa_flash plan; the backward forms, their consistent inputs and
// reference, and the gpu:aten:sdpa_flash_backward plan.
#include <gtest/gtest.h>

#include <cstdlib>

#include <cmath>
#include <cstring>
#include <random>

#include "ops/aten/device/sdpa_backward_params.cuh"
#include "ops/aten/device/sdpa_params.cuh"
#include "ops/aten/sdpa.hpp"
#include "plan_util.hpp"
#include "test_util.hpp"

namespace boo {
namespace {

using ops::aten::SdpaDesc;
using ops::aten::SdpaSignature;

const char* kSample =
    R"(aten::scaled_dot_product_attention "[[32, 8, 128, 64], [32, 8, 128, 64], [32, 8, 128, 64], [], [], [], [], []]" "['c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', '', 'Scalar', 'Scalar', 'Scalar', 'Scalar']" "[[65536, 8192, 64, 1], [65536, 8192, 64, 1], [65536, 8192, 64, 1], [], [], [], [], []]" "['', '', '', 'None', '0.0', 'True', 'None', 'False']")";

// The public op's line for q [B, H, L, E], k/v [B, Hkv, S, E|Ev], contiguous unless strides are given.
std::string sdpa_line(const std::string& dtype, std::vector<int64_t> q, std::vector<int64_t> k, std::vector<int64_t> v,
                      const std::string& causal, const std::string& scale, const std::string& gqa = "False",
                      std::vector<std::vector<int64_t>> strides = {}) {
  if (strides.empty()) strides = {contiguous_strides(q), contiguous_strides(k), contiguous_strides(v)};
  const std::string d = "'" + dtype + "'";
  auto list = [](const std::vector<int64_t>& x) { return "[" + base::join_ints(x, ", ") + "]"; };
  return "aten::scaled_dot_product_attention \"[" + list(q) + ", " + list(k) + ", " + list(v) +
         ", [], [], [], [], []]\" \"[" + d + ", " + d + ", " + d + ", '', 'Scalar', 'Scalar', 'Scalar', 'Scalar']\" \"[" +
         list(strides[0]) + ", " + list(strides[1]) + ", " + list(strides[2]) + ", [], [], [], [], []]\" \"['', '', '', "
         "'None', '0.0', '" + causal + "', '" + scale + "', '" + gqa + "']\"";
}

Result<ParsedCommand> parse(const std::string& line) { return parse_command(std::string_view(line)); }

const SdpaSignature& sdpa_of(const ParsedCommand& p) { return dynamic_cast<const SdpaSignature&>(*p.signature); }

void expect_error(const std::string& line, StatusCode code, const std::string& needle) {
  Result<ParsedCommand> p = parse(line);
  ASSERT_FALSE(p.ok()) << line;
  EXPECT_EQ(p.status().code(), code) << p.status().to_string();
  EXPECT_NE(p.status().message().find(needle), std::string::npos) << "'" << needle << "' not in " << p.status().to_string();
}

TEST(SdpaParseTest, SampleLine) {
  Result<ParsedCommand> p = parse(kSample);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  const SdpaSignature& s = sdpa_of(*p);
  EXPECT_EQ(s.op_name(), "aten_sdpa");
  const SdpaDesc& d = s.desc();
  EXPECT_EQ(d.batch, 32);
  EXPECT_EQ(d.heads, 8);
  EXPECT_EQ(d.kv_heads, 8);
  EXPECT_EQ(d.queries, 128);
  EXPECT_EQ(d.keys, 128);
  EXPECT_EQ(d.head_dim, 64);
  EXPECT_TRUE(d.causal);
  EXPECT_DOUBLE_EQ(d.scale, 0.125);  // scale None: 1 / sqrt(64)
  EXPECT_EQ(s.query().dtype, DType::kBF16);
  const TensorSpec out = s.results().at(0);
  EXPECT_EQ(out.shape, (std::vector<int64_t>{32, 8, 128, 64}));
  EXPECT_EQ(out.dtype, DType::kBF16);
  EXPECT_EQ(s.command(), kSample);  // the canonical command is the profiler's line
  Result<ParsedCommand> again = parse(s.command());
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->signature->equals(s));
  EXPECT_EQ(s.flop_count(), 2.0 * 32 * 8 * 128 * 128 * (64 + 64));
}

TEST(SdpaParseTest, FormsAndVariants) {
  // Explicit scale, not causal, strides of a [B, L, H, E] tensor viewed as [B, H, L, E] (a transpose).
  const std::vector<int64_t> bhle{2, 4, 16, 64}, strided{4096, 64, 256, 1};
  Result<ParsedCommand> t = parse(sdpa_line("c10::Half", bhle, bhle, bhle, "False", "0.5", "False",
                                            {strided, strided, strided}));
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_FALSE(sdpa_of(*t).desc().causal);
  EXPECT_DOUBLE_EQ(sdpa_of(*t).desc().scale, 0.5);
  EXPECT_EQ(sdpa_of(*t).query().strides, strided);
  // Grouped-query attention: 8 query heads over 2 kv heads, a longer key sequence, Ev != E.
  Result<ParsedCommand> g = parse(sdpa_line("float", {1, 8, 5, 16}, {1, 2, 7, 16}, {1, 2, 7, 32}, "True", "None", "True"));
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_EQ(sdpa_of(*g).desc().group(), 4);
  EXPECT_EQ(sdpa_of(*g).results().at(0).shape, (std::vector<int64_t>{1, 8, 5, 32}));
  // Only the tensors: every optional argument at its default.
  Result<ParsedCommand> bare = parse(
      R"(aten::scaled_dot_product_attention "[[1, 2, 3, 8], [1, 2, 4, 8], [1, 2, 4, 8]]" "['float', 'float', 'float']" "[[48, 24, 8, 1], [64, 32, 8, 1], [64, 32, 8, 1]]" "['', '', '']")");
  ASSERT_TRUE(bare.ok()) << bare.status().to_string();
  EXPECT_FALSE(sdpa_of(*bare).desc().causal);
  EXPECT_DOUBLE_EQ(sdpa_of(*bare).desc().scale, 1.0 / std::sqrt(8.0));
  // The backends' forms, as a trace records them under the public op.
  Result<ParsedCommand> flash = parse(
      R"(aten::_scaled_dot_product_flash_attention "[[2, 4, 16, 64], [2, 4, 16, 64], [2, 4, 16, 64], [], [], [], []]" "['c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', 'Scalar', 'Scalar', 'Scalar', 'Scalar']" "[[4096, 1024, 64, 1], [4096, 1024, 64, 1], [4096, 1024, 64, 1], [], [], [], []]" "['', '', '', '0.0', 'True', 'False', '0.25']")");
  ASSERT_TRUE(flash.ok()) << flash.status().to_string();
  EXPECT_TRUE(sdpa_of(*flash).desc().causal);
  EXPECT_DOUBLE_EQ(sdpa_of(*flash).desc().scale, 0.25);
  EXPECT_EQ(flash->signature->command().rfind("aten::_scaled_dot_product_flash_attention ", 0), 0u);
  Result<ParsedCommand> efficient = parse(
      R"(aten::_scaled_dot_product_efficient_attention "[[2, 4, 16, 64], [2, 4, 16, 64], [2, 4, 16, 64], [], [], [], [], []]" "['c10::Half', 'c10::Half', 'c10::Half', '', 'Scalar', 'Scalar', 'Scalar', 'Scalar']" "[[4096, 1024, 64, 1], [4096, 1024, 64, 1], [4096, 1024, 64, 1], [], [], [], [], []]" "['', '', '', 'None', 'True', '0.0', 'False', 'None']")");
  ASSERT_TRUE(efficient.ok()) << efficient.status().to_string();
  EXPECT_FALSE(sdpa_of(*efficient).desc().causal);
  Result<ParsedCommand> cudnn = parse(
      R"(aten::_scaled_dot_product_cudnn_attention "[[2, 4, 16, 128], [2, 4, 16, 128], [2, 4, 16, 128], [], [], [], [], [], []]" "['c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', '', 'Scalar', 'Scalar', 'Scalar', 'Scalar', 'Scalar']" "[[8192, 2048, 128, 1], [8192, 2048, 128, 1], [8192, 2048, 128, 1], [], [], [], [], [], []]" "['', '', '', 'None', 'False', '0.0', 'True', 'False', 'None']")");
  ASSERT_TRUE(cudnn.ok()) << cudnn.status().to_string();
  EXPECT_TRUE(sdpa_of(*cudnn).desc().causal);
  EXPECT_DOUBLE_EQ(sdpa_of(*cudnn).desc().scale, 1.0 / std::sqrt(128.0));
}

TEST(SdpaParseTest, BadCallsSayWhat) {
  const std::string s = kSample;
  auto with_values = [&](const std::string& values) {
    return s.substr(0, s.rfind('"', s.size() - 2) + 1) + values + "\"";
  };
  expect_error(with_values("['', '', '', 'None', '0.1', 'True', 'None', 'False']"), StatusCode::kUnimplemented,
               "argument 4 of aten::scaled_dot_product_attention (dropout_p) is 0.1; boo's attention runs without dropout");
  expect_error(with_values("['', '', '', 'None', '0.0', 'maybe', 'None', 'False']"), StatusCode::kInvalidArgument,
               "argument 5 of aten::scaled_dot_product_attention is 'maybe', expected True or False");
  expect_error(with_values("['', '', '', 'None', '0.0', 'True', 'big', 'False']"), StatusCode::kInvalidArgument,
               "argument 6 of aten::scaled_dot_product_attention is 'big', expected a number");
  expect_error(with_values("['', '', '', 'None', '0.0', 'True', 'inf', 'False']"), StatusCode::kInvalidArgument,
               "argument 6 of aten::scaled_dot_product_attention is 'inf', expected a number");
  // A mask tensor.
  expect_error(
      R"(aten::scaled_dot_product_attention "[[1, 2, 3, 8], [1, 2, 4, 8], [1, 2, 4, 8], [3, 4]]" "['float', 'float', 'float', 'float']" "[[48, 24, 8, 1], [64, 32, 8, 1], [64, 32, 8, 1], [4, 1]]" "['', '', '', '']")",
      StatusCode::kUnimplemented, "(attn_mask) is a tensor; boo's attention takes attn_mask None only");
  // Head counts differ without enable_gqa; a group that does not divide.
  expect_error(sdpa_line("float", {1, 8, 5, 16}, {1, 2, 7, 16}, {1, 2, 7, 16}, "False", "None"),
               StatusCode::kInvalidArgument, "query has 8 heads but key and value 2 (different head counts need enable_gqa=True)");
  expect_error(sdpa_line("float", {1, 8, 5, 16}, {1, 3, 7, 16}, {1, 3, 7, 16}, "False", "None", "True"),
               StatusCode::kInvalidArgument, "query's 8 heads are not a multiple of key's 3");
  expect_error(sdpa_line("float", {1, 2, 5, 16}, {1, 2, 7, 8}, {1, 2, 7, 16}, "False", "None"),
               StatusCode::kInvalidArgument, "do not fit [B, H, L, E], [B, Hkv, S, E], [B, Hkv, S, Ev]");
  expect_error(sdpa_line("float", {1, 2, 5, 16}, {1, 2, 7, 16}, {1, 2, 6, 16}, "False", "None"),
               StatusCode::kInvalidArgument, "do not fit");
  expect_error(sdpa_line("float", {1, 2, 0, 16}, {1, 2, 7, 16}, {1, 2, 7, 16}, "False", "None"),
               StatusCode::kUnimplemented, "empty attention");
  // Mixed dtypes, 3-D tensors, too few arguments, an integer tensor.
  expect_error(
      R"(aten::scaled_dot_product_attention "[[1, 2, 3, 8], [1, 2, 4, 8], [1, 2, 4, 8]]" "['float', 'c10::Half', 'float']" "[[48, 24, 8, 1], [64, 32, 8, 1], [64, 32, 8, 1]]" "['', '', '']")",
      StatusCode::kInvalidArgument, "key is float16 but query is float32 (one dtype for query, key and value)");
  expect_error(
      R"(aten::scaled_dot_product_attention "[[2, 3, 8], [2, 4, 8], [2, 4, 8]]" "['float', 'float', 'float']" "[[24, 8, 1], [32, 8, 1], [32, 8, 1]]" "['', '', '']")",
      StatusCode::kUnimplemented, "query has shape [2, 3, 8]; boo's attention takes 4-D [batch, heads, sequence, head dim]");
  expect_error(
      R"(aten::scaled_dot_product_attention "[[1, 2, 3, 8], [1, 2, 4, 8]]" "['float', 'float']" "[[48, 24, 8, 1], [64, 32, 8, 1]]" "['', '']")",
      StatusCode::kInvalidArgument, "has 2 arguments, expected 3 to 8: scaled_dot_product_attention(Tensor query");
  expect_error(
      R"(aten::scaled_dot_product_attention "[[1, 2, 3, 8], [1, 2, 4, 8], [1, 2, 4, 8]]" "['float', 'float', 'long int']" "[[48, 24, 8, 1], [64, 32, 8, 1], [64, 32, 8, 1]]" "['', '', '']")",
      StatusCode::kUnimplemented, "argument 2 of aten::scaled_dot_product_attention (value) is a long int tensor");
  // The flash form has no enable_gqa: head counts must agree.
  expect_error(
      R"(aten::_scaled_dot_product_flash_attention "[[1, 4, 16, 64], [1, 2, 16, 64], [1, 2, 16, 64]]" "['c10::Half', 'c10::Half', 'c10::Half']" "[[4096, 1024, 64, 1], [2048, 1024, 64, 1], [2048, 1024, 64, 1]]" "['', '', '']")",
      StatusCode::kInvalidArgument, "(this form takes equal head counts)");
}

// Attention computed directly: scores, mask, softmax, weighted sum (float64).
double direct(const std::vector<base::HostTensor>& t, const SdpaDesc& d, int64_t b, int64_t h, int64_t i, int64_t e) {
  const int64_t hk = h / d.group();
  std::vector<double> w(static_cast<size_t>(d.keys));
  double max = -INFINITY, sum = 0;
  for (int64_t j = 0; j < d.keys; ++j) {
    double s = 0;
    for (int64_t c = 0; c < d.head_dim; ++c) s += t[0].at({b, h, i, c}) * t[1].at({b, hk, j, c});
    w[static_cast<size_t>(j)] = d.causal && j > i ? -INFINITY : s * d.scale;
    max = std::max(max, w[static_cast<size_t>(j)]);
  }
  for (double& x : w) sum += x = std::exp(x - max);
  double o = 0;
  for (int64_t j = 0; j < d.keys; ++j) o += w[static_cast<size_t>(j)] / sum * t[2].at({b, hk, j, e});
  return o;
}

TEST(SdpaReferenceTest, EqualsAttentionComputedDirectly) {
  const std::vector<int64_t> q{2, 4, 5, 8}, kv{2, 2, 7, 8}, v{2, 2, 7, 3};
  for (const std::string& line :
       {sdpa_line("float", q, kv, v, "True", "None", "True"), sdpa_line("c10::BFloat16", q, kv, v, "False", "0.7", "True"),
        // strided: q as a transposed [B, L, H, E] view, k padded rows.
        sdpa_line("float", {2, 2, 5, 8}, {2, 2, 9, 8}, {2, 2, 9, 8}, "True", "None", "False",
                  {{80, 8, 16, 1}, {320, 160, 16, 1}, {144, 72, 8, 1}})}) {
    SCOPED_TRACE(line);
    testing::ReferenceRun run = testing::run_reference(line);
    ASSERT_EQ(run.results.size(), 1u);
    const SdpaDesc& d = dynamic_cast<const SdpaSignature&>(*run.sig).desc();
    const base::HostTensor& out = run.results[0];
    int64_t checked = 0;
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t h = 0; h < d.heads; ++h)
        for (int64_t i = 0; i < d.queries; ++i)
          for (int64_t e = 0; e < d.value_dim; ++e, ++checked)
            EXPECT_NEAR(out.at({b, h, i, e}), direct(run.args, d, b, h, i, e), 1e-12) << b << h << i << e;
    EXPECT_EQ(checked, out.spec().numel());
  }
  // Causal query 0 sees key 0 only: its output is v's row 0.
  testing::ReferenceRun run = testing::run_reference(sdpa_line("float", {1, 1, 3, 4}, {1, 1, 3, 4}, {1, 1, 3, 4}, "True", "None"));
  for (int64_t e = 0; e < 4; ++e) EXPECT_DOUBLE_EQ(run.results[0].at({0, 0, 0, e}), run.args[2].at({0, 0, 0, e}));
}

base::HostTensor random_f64(std::vector<int64_t> shape, std::mt19937& rng) {
  std::vector<int64_t> strides = contiguous_strides(shape);
  base::HostTensor t(TensorSpec{"t", std::move(shape), std::move(strides), DType::kF64, ""});
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int64_t n = 0; n < t.spec().numel(); ++n) t.store(n, u(rng));
  return t;
}

// f = sum(out * dO): its gradients by central differences against the reference's backward.
TEST(SdpaReferenceTest, GradientsMatchFiniteDifferences) {
  for (const bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "full");
    SdpaDesc d;
    d.batch = 2;
    d.heads = 4;
    d.kv_heads = 2;
    d.queries = 5;
    d.keys = 6;
    d.head_dim = 3;
    d.value_dim = 4;
    d.causal = causal;
    d.scale = 0.8;
    std::mt19937 rng(7);
    std::vector<base::HostTensor> t{random_f64({2, 4, 5, 3}, rng), random_f64({2, 2, 6, 3}, rng),
                                    random_f64({2, 2, 6, 4}, rng)};
    const base::HostTensor dout = random_f64({2, 4, 5, 4}, rng);
    const ops::aten::SdpaGradients g = ops::aten::sdpa_backward_reference(d, t[0], t[1], t[2], dout);
    const base::HostTensor* grads[3] = {&g.dq, &g.dk, &g.dv};
    auto f = [&] {
      const base::HostTensor out = ops::aten::sdpa_forward_reference(d, t[0], t[1], t[2]);
      double s = 0;
      for (int64_t n = 0; n < out.spec().numel(); ++n) s += out.load(n) * dout.load(n);
      return s;
    };
    constexpr double kStep = 1e-6;
    for (int which = 0; which < 3; ++which) {
      ASSERT_EQ(grads[which]->spec().shape, t[static_cast<size_t>(which)].spec().shape);
      double largest = 0;
      for (int64_t n = 0; n < t[static_cast<size_t>(which)].spec().numel(); ++n) {
        base::HostTensor& x = t[static_cast<size_t>(which)];
        const double x0 = x.load(n);
        x.store(n, x0 + kStep);
        const double up = f();
        x.store(n, x0 - kStep);
        const double down = f();
        x.store(n, x0);
        const double numeric = (up - down) / (2 * kStep);
        EXPECT_NEAR(grads[which]->load(n), numeric, 1e-7) << "tensor " << which << " element " << n;
        largest = std::max(largest, std::abs(numeric));
      }
      EXPECT_GT(largest, 1e-3) << "tensor " << which << ": gradients this small test nothing";
    }
  }
}

const ops::GpuImplementation& flash_tier() {
  const ops::GpuImplementation& tier = *ops::find_op("aten_sdpa")->gpu_implementations()[0];
  EXPECT_EQ(tier.name(), "gpu:aten:sdpa_flash");
  return tier;
}

TEST(SdpaPlanTest, TheFlashTierTakesTheSampleLine) {
  Result<ParsedCommand> parsed = parse_command(std::string_view(kSample));
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  Result<std::unique_ptr<ops::OpProblem>> problem = ops::find_op("aten_sdpa")->make_problem(*parsed->signature);
  ASSERT_TRUE(problem.ok());
  EXPECT_TRUE(flash_tier().accepts(**problem, ops::test::sm90()).ok());
}

TEST(SdpaPlanTest, SampleLinePlansOneKernel) {
  const ops::test::Planned p = ops::test::plan_of(flash_tier(), kSample);
  ASSERT_EQ(p.launches.size(), 1u);
  // 32 x 8 heads x one block of 128 queries = 256 CTAs >= 132 SMs: 128 queries per CTA, 8 warps.
  EXPECT_EQ(p.config, "dtype=bfloat16;head_dim=64;block_m=128;block_n=64;causal=1");
  const ops::test::ResolvedLaunch& l = p.launches[0];
  EXPECT_EQ(l.grid.x, 256u);
  EXPECT_EQ(l.grid.y, 1u);
  EXPECT_EQ(l.block.x, 256u);
  EXPECT_EQ(l.shared_bytes, 2u * 64 * (128 + 4 * 64));
  EXPECT_NE(p.source.text.find("boo::sdpa_flash_forward<boo::bf16, 64, 128, true>(p)"), std::string::npos)
      << p.source.text;
  SdpaParams params;
  ASSERT_EQ(l.params.size(), sizeof params);
  std::memcpy(&params, l.params.data(), sizeof params);
  EXPECT_EQ(params.q, p.address.at("query"));
  EXPECT_EQ(params.k, p.address.at("key"));
  EXPECT_EQ(params.v, p.address.at("value"));
  EXPECT_EQ(params.out, p.address.at("out"));
  EXPECT_EQ(params.q_strides[0], 65536);
  EXPECT_EQ(params.q_strides[1], 8192);
  EXPECT_EQ(params.q_strides[2], 64);
  EXPECT_EQ(params.heads, 8);
  EXPECT_EQ(params.group, 1);
  EXPECT_EQ(params.queries, 128);
  EXPECT_EQ(params.keys, 128);
  EXPECT_FLOAT_EQ(params.scale_log2, static_cast<float>(0.125 * M_LOG2E));
}

TEST(SdpaPlanTest, SmallGridsTakeBlocksOf64AndGroupsMapHeads) {
  const std::vector<int64_t> strided{1 << 20, 128, 1024, 1};  // [B, L, H, E] memory viewed as [B, H, L, E]
  const std::string line = sdpa_line("c10::Half", {2, 8, 300, 128}, {2, 2, 300, 128}, {2, 2, 300, 128}, "False", "None",
                                     "True", {strided, {300 * 256, 128, 256, 1}, {300 * 256, 128, 256, 1}});
  const ops::test::Planned p = ops::test::plan_of(flash_tier(), line);
  ASSERT_EQ(p.launches.size(), 1u);
  EXPECT_EQ(p.config, "dtype=float16;head_dim=128;block_m=64;block_n=64;causal=0");
  EXPECT_EQ(p.launches[0].grid.x, 16u);
  EXPECT_EQ(p.launches[0].grid.y, 5u);  // ceil(300 / 64)
  EXPECT_EQ(p.launches[0].block.x, 128u);
  SdpaParams params;
  std::memcpy(&params, p.launches[0].params.data(), sizeof params);
  EXPECT_EQ(params.group, 4);
  EXPECT_EQ(params.q_strides[1], 128);
  EXPECT_EQ(params.q_strides[2], 1024);
  EXPECT_EQ(params.k_strides[2], 256);
}

TEST(SdpaPlanTest, DeclinesWithReasons) {
  const std::vector<int64_t> shape{1, 2, 16, 64};
  struct Case {
    std::string line, reason;
  };
  const std::vector<Case> cases{
      {sdpa_line("float", shape, shape, shape, "False", "None"), "float32 attention has no GPU kernel yet"},
      {sdpa_line("double", shape, shape, shape, "False", "None"), "float64 runs on the CPU reference only"},
      {sdpa_line("c10::BFloat16", {1, 2, 16, 96}, {1, 2, 16, 96}, {1, 2, 16, 96}, "False", "None"),
       "head dim 96; this tier takes 64 or 128"},
      {sdpa_line("c10::BFloat16", shape, shape, {1, 2, 16, 128}, "False", "None"),
       "head dim 64 of query/key differs from value's 128"},
      {sdpa_line("c10::BFloat16", shape, shape, shape, "False", "None", "False",
                 {{2048, 1024, 1, 16}, contiguous_strides(shape), contiguous_strides(shape)}),
       "the head dim must be dense"},
      {sdpa_line("c10::BFloat16", shape, shape, shape, "False", "None", "False",
                 {{2 * 16 * 68, 16 * 68, 68, 1}, {2 * 16 * 65, 16 * 65, 65, 1}, contiguous_strides(shape)}),
       "must be multiples of 8 elements"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.line);
    std::unique_ptr<ops::OpProblem> problem = ops::test::problem_of(c.line);
    ASSERT_TRUE(problem);
    const Status s = flash_tier().accepts(*problem, ops::test::sm90());
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
    EXPECT_NE(s.message().find(c.reason), std::string::npos) << s.to_string();
  }
  // Rows padded to a multiple of 8 elements are fine.
  EXPECT_TRUE(ops::test::accepts(flash_tier(), sdpa_line("c10::BFloat16", shape, shape, shape, "True", "None", "False",
                                                         {{2 * 16 * 72, 16 * 72, 72, 1}, contiguous_strides(shape),
                                                          contiguous_strides(shape)})));
}

// --- The backward forms -----------------------------------------------------------------------

using ops::aten::SdpaBackwardSignature;

std::string list_of(const std::vector<int64_t>& x) { return "[" + base::join_ints(x, ", ") + "]"; }

// The flash backend's backward line for q [B, H, L, E], k/v [B, Hkv, S, E], contiguous, lse [B, H, L].
std::string flash_backward_line(const std::string& dtype, std::vector<int64_t> q, std::vector<int64_t> k,
                                const std::string& causal, const std::string& scale, const std::string& dropout = "0.0",
                                const std::string& lse_dtype = "float") {
  const std::string d = "'" + dtype + "'";
  const std::vector<int64_t> lse{q[0], q[1], q[2]};
  return "aten::_scaled_dot_product_flash_attention_backward \"[" + list_of(q) + ", " + list_of(q) + ", " +
         list_of(k) + ", " + list_of(k) + ", " + list_of(q) + ", " + list_of(lse) +
         ", [], [], [], [], [], [], [], [], []]\" \"[" + d + ", " + d + ", " + d + ", " + d + ", " + d + ", '" +
         lse_dtype + "', '', '', 'Scalar', 'Scalar', 'Scalar', 'Scalar', 'long int', 'long int', 'Scalar']\" \"[" +
         list_of(contiguous_strides(q)) + ", " + list_of(contiguous_strides(q)) + ", " + list_of(contiguous_strides(k)) +
         ", " + list_of(contiguous_strides(k)) + ", " + list_of(contiguous_strides(q)) + ", " +
         list_of(contiguous_strides(lse)) + ", [], [], [], [], [], [], [], [], []]\" \"['', '', '', '', '', '', '', '', '" +
         std::to_string(q[2]) + "', '" + std::to_string(k[2]) + "', '" + dropout + "', '" + causal +
         "', '', '', '" + scale + "']\"";
}

// Efficient attention's backward: lse padded to a multiple of 32 queries, attn_bias None, grad_input_mask.
const char* kEfficientBackward =
    R"(aten::_scaled_dot_product_efficient_attention_backward "[[2, 4, 77, 64], [2, 4, 77, 64], [2, 4, 77, 64], [2, 4, 77, 64], [], [2, 4, 77, 64], [2, 4, 96], [], [], [], [], [], []]" "['c10::Half', 'c10::Half', 'c10::Half', 'c10::Half', '', 'c10::Half', 'float', 'long int', 'long int', 'Scalar', 'ScalarList', 'Scalar', 'Scalar']" "[[19712, 4928, 64, 1], [19712, 4928, 64, 1], [19712, 4928, 64, 1], [19712, 4928, 64, 1], [], [19712, 4928, 64, 1], [384, 96, 1], [], [], [], [], [], []]" "['', '', '', '', 'None', '', '', '', '', '0.0', '[True, True, True, False]', 'True', '0.25']")";
// cuDNN's backward: q, k, v, out in [B, L, H, E] memory, lse [B, H, L, 1].
const char* kCudnnBackward =
    R"(aten::_scaled_dot_product_cudnn_attention_backward "[[1, 2, 40, 128], [1, 2, 40, 128], [1, 2, 40, 128], [1, 2, 40, 128], [1, 2, 40, 128], [1, 2, 40, 1], [], [], [], [], [], [], [], [], [], []]" "['c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', 'float', 'long int', 'long int', '', '', '', 'Scalar', 'Scalar', 'Scalar', 'Scalar', 'Scalar']" "[[10240, 128, 256, 1], [10240, 128, 256, 1], [10240, 128, 256, 1], [10240, 128, 256, 1], [10240, 128, 256, 1], [80, 40, 1, 1], [], [], [], [], [], [], [], [], [], []]" "['', '', '', '', '', '', '', '', 'None', '', '', '40', '40', '0.0', 'False', 'None']")";

const SdpaBackwardSignature& backward_of(const ParsedCommand& p) {
  return dynamic_cast<const SdpaBackwardSignature&>(*p.signature);
}

TEST(SdpaBackwardParseTest, EachBackendsForm) {
  Result<ParsedCommand> flash = parse(flash_backward_line("c10::BFloat16", {2, 8, 50, 64}, {2, 2, 70, 64}, "True", "0.5"));
  ASSERT_TRUE(flash.ok()) << flash.status().to_string();
  const SdpaBackwardSignature& f = backward_of(*flash);
  EXPECT_EQ(f.op_name(), "aten_sdpa_backward");
  EXPECT_TRUE(f.desc().causal);
  EXPECT_DOUBLE_EQ(f.desc().scale, 0.5);
  EXPECT_EQ(f.desc().group(), 4);  // grouped by the recorded shapes
  ASSERT_EQ(f.results().size(), 3u);
  EXPECT_EQ(f.results()[0].name, "grad_query");
  EXPECT_EQ(f.results()[0].shape, (std::vector<int64_t>{2, 8, 50, 64}));
  EXPECT_EQ(f.results()[1].shape, (std::vector<int64_t>{2, 2, 70, 64}));
  EXPECT_EQ(f.results()[2].name, "grad_value");
  EXPECT_EQ(f.arguments().at(SdpaBackwardSignature::kLogsumexp).dtype, DType::kF32);
  // The line is its own command, and parses back to an equal signature.
  Result<ParsedCommand> again = parse(f.command());
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->signature->equals(f));
  // 2 * rows * S * (3E + 2Ev).
  EXPECT_DOUBLE_EQ(f.flop_count(), 2.0 * (2 * 8 * 50) * 70 * (5 * 64));

  Result<ParsedCommand> efficient = parse(kEfficientBackward);
  ASSERT_TRUE(efficient.ok()) << efficient.status().to_string();
  EXPECT_TRUE(backward_of(*efficient).desc().causal);
  EXPECT_DOUBLE_EQ(backward_of(*efficient).desc().scale, 0.25);
  EXPECT_EQ(backward_of(*efficient).arguments().at(SdpaBackwardSignature::kLogsumexp).shape,
            (std::vector<int64_t>{2, 4, 96}));

  Result<ParsedCommand> cudnn = parse(kCudnnBackward);
  ASSERT_TRUE(cudnn.ok()) << cudnn.status().to_string();
  EXPECT_FALSE(backward_of(*cudnn).desc().causal);
  EXPECT_DOUBLE_EQ(backward_of(*cudnn).desc().scale, 1.0 / std::sqrt(128.0));
  EXPECT_EQ(backward_of(*cudnn).arguments().at(SdpaBackwardSignature::kQuery).strides,
            (std::vector<int64_t>{10240, 128, 256, 1}));
}

TEST(SdpaBackwardParseTest, BadCallsSayWhat) {
  expect_error(flash_backward_line("c10::BFloat16", {1, 2, 16, 64}, {1, 2, 16, 64}, "False", "None", "0.1"),
               StatusCode::kUnimplemented, "(dropout_p) is 0.1");
  expect_error(flash_backward_line("c10::BFloat16", {1, 2, 16, 64}, {1, 2, 16, 64}, "False", "None", "0.0", "double"),
               StatusCode::kInvalidArgument, "logsumexp is float64; the backends save it as float");
  expect_error(flash_backward_line("c10::BFloat16", {1, 6, 16, 64}, {1, 4, 16, 64}, "False", "None"),
               StatusCode::kInvalidArgument, "not a multiple of key's 4");
  std::string short_lse = kEfficientBackward;
  short_lse.replace(short_lse.find("[2, 4, 96]"), 10, "[2, 4, 64]");
  expect_error(short_lse, StatusCode::kInvalidArgument, "logsumexp has shape [2, 4, 64]; expected [2, 4, L' >= 77]");
  std::string with_bias = kEfficientBackward;
  with_bias.replace(with_bias.find("[], [2, 4, 77, 64]"), 2, "[2, 4, 77, 77]");
  with_bias.replace(with_bias.find("'c10::Half', '', 'c10::Half'"), 28, "'c10::Half', 'c10::Half', 'c10::Half'");
  with_bias.replace(with_bias.find("[19712, 4928, 64, 1], [], "), 26, "[19712, 4928, 64, 1], [23716, 5929, 77, 1], ");
  with_bias.replace(with_bias.find("'None', '', ''"), 6, "''");
  expect_error(with_bias, StatusCode::kUnimplemented, "(attn_mask) is a tensor");
  expect_error("aten::_scaled_dot_product_flash_attention_backward \"[[1, 1, 2, 8]]\" \"['float']\" \"[[16, 16, 8, 1]]\" "
               "\"['']\"",
               StatusCode::kInvalidArgument, "_scaled_dot_product_flash_attention_backward(Tensor grad_out");
}

// The generated out and logsumexp are the forward's of the generated q, k, v (rounded as the
// forward saves them: out to the dtype, logsumexp to float), at their strides; the reference is
// sdpa_backward_reference of those q, k, v and grad_out.
TEST(SdpaBackwardReferenceTest, InputsAreTheForwardsAndTheReferenceIsItsGradient) {
  for (const char* line : {kEfficientBackward, kCudnnBackward}) {
    SCOPED_TRACE(line);
    testing::ReferenceRun run = testing::run_reference(line);
    const auto& sig = dynamic_cast<const SdpaBackwardSignature&>(*run.sig);
    const SdpaDesc& d = sig.desc();
    using S = SdpaBackwardSignature;
    const base::HostTensor out =
        ops::aten::sdpa_forward_reference(d, run.args[S::kQuery], run.args[S::kKey], run.args[S::kValue]);
    const base::HostTensor lse = ops::aten::sdpa_logsumexp_reference(d, run.args[S::kQuery], run.args[S::kKey]);
    const base::HostTensor& saved_out = run.args[S::kOut];
    const base::HostTensor& saved_lse = run.args[S::kLogsumexp];
    const DType dtype = sig.arg(S::kQuery).dtype;
    const double unit = std::ldexp(1.0, dtype == DType::kBF16 ? -8 : -11);
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t h = 0; h < d.heads; ++h)
        for (int64_t i = 0; i < d.queries; ++i) {
          const double l = lse.at({b, h, i});
          const std::vector<int64_t> at = saved_lse.spec().rank() == 3 ? std::vector<int64_t>{b, h, i}
                                                                       : std::vector<int64_t>{b, h, i, 0};
          EXPECT_NEAR(saved_lse.at(at), l, std::abs(l) * 6e-8 + 1e-30);
          for (int64_t e = 0; e < d.value_dim; ++e)
            EXPECT_NEAR(saved_out.at({b, h, i, e}), out.at({b, h, i, e}),
                        std::abs(out.at({b, h, i, e})) * unit + std::ldexp(1.0, -25));  // fp16's subnormals
        }
    // logsumexp by its definition on one row: log sum_j exp(scale q . k_j).
    double sum = 0;
    const int64_t seen = d.causal ? 4 : d.keys;
    for (int64_t j = 0; j < seen; ++j) {
      double s = 0;
      for (int64_t e = 0; e < d.head_dim; ++e) s += run.args[S::kQuery].at({0, 1, 3, e}) * run.args[S::kKey].at({0, 1, j, e});
      sum += std::exp(d.scale * s);
    }
    EXPECT_NEAR(lse.at({0, 1, 3}), std::log(sum), 1e-12);
    // The reference reads the saved state as a kernel does: it is sdpa_backward_reference given the saved
    // out and logsumexp, and within their rounding of the gradients recomputed from q, k and v alone.
    ops::aten::SdpaSaved saved;
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t h = 0; h < d.heads; ++h)
        for (int64_t i = 0; i < d.queries; ++i) {
          saved.logsumexp.push_back(saved_lse.at(saved_lse.spec().rank() == 3 ? std::vector<int64_t>{b, h, i}
                                                                               : std::vector<int64_t>{b, h, i, 0}));
          for (int64_t e = 0; e < d.value_dim; ++e) saved.out.push_back(saved_out.at({b, h, i, e}));
        }
    const ops::aten::SdpaGradients g = ops::aten::sdpa_backward_reference(
        d, run.args[S::kQuery], run.args[S::kKey], run.args[S::kValue], run.args[S::kGradOut], &saved);
    const ops::aten::SdpaGradients exact = ops::aten::sdpa_backward_reference(
        d, run.args[S::kQuery], run.args[S::kKey], run.args[S::kValue], run.args[S::kGradOut]);
    ASSERT_EQ(run.results.size(), 3u);
    const base::HostTensor* want[3] = {&g.dq, &g.dk, &g.dv};
    const base::HostTensor* recomputed[3] = {&exact.dq, &exact.dk, &exact.dv};
    for (size_t r = 0; r < 3; ++r) {
      double diff = 0, norm = 0;
      for (int64_t n = 0; n < want[r]->spec().numel(); ++n) {
        ASSERT_EQ(run.results[r].load(n), want[r]->load(n)) << r << " " << n;
        diff += std::pow(want[r]->load(n) - recomputed[r]->load(n), 2);
        norm += std::pow(recomputed[r]->load(n), 2);
      }
      EXPECT_LT(std::sqrt(diff), 8 * unit * std::sqrt(norm)) << r;  // out rounded to the dtype
    }
  }
}

const ops::GpuImplementation& backward_tier() {
  const ops::GpuImplementation& tier = *ops::find_op("aten_sdpa_backward")->gpu_implementations()[0];
  EXPECT_EQ(tier.name(), "gpu:aten:sdpa_flash_backward");
  return tier;
}

// Verified on an H200 (the six attention-backward lines of tests/gpu/aten_matrix.txt): no longer gated.
TEST(SdpaBackwardPlanTest, AcceptsWithoutTheUnverifiedKernelsVariable) {
  ::unsetenv("BOO_UNVERIFIED_KERNELS");
  std::unique_ptr<ops::OpProblem> problem = ops::test::problem_of(kCudnnBackward);
  ASSERT_TRUE(problem);
  EXPECT_TRUE(backward_tier().accepts(*problem, ops::test::sm90()).ok());
}

TEST(SdpaBackwardPlanTest, ThreeStepsOverTheWorkspace) {
  // 2 x 8 heads over 2 x 2 kv heads, 100 queries, 150 keys, head dim 128, causal.
  const ops::test::Planned p =
      ops::test::plan_of(backward_tier(), flash_backward_line("c10::Half", {2, 8, 100, 128}, {2, 2, 150, 128}, "True", "None"));
  ASSERT_EQ(p.launches.size(), 3u);
  EXPECT_EQ(p.config, "dtype=float16;head_dim=128;block_m=64;block_n=64;block_q=32;causal=1");
  const uint64_t rows = 2 * 8 * 100, lse2_offset = (rows * 4 + 255) / 256 * 256;
  EXPECT_EQ(p.workspace_bytes, lse2_offset + rows * 4);
  EXPECT_NE(p.source.text.find("boo::sdpa_backward_delta<boo::f16, 128>(p)"), std::string::npos);
  EXPECT_NE(p.source.text.find("boo::sdpa_backward_dq<boo::f16, 128, true>(p)"), std::string::npos);
  EXPECT_NE(p.source.text.find("boo::sdpa_backward_dkdv<boo::f16, 128, true>(p)"), std::string::npos);
  const ops::test::ResolvedLaunch &delta = p.launches[0], &dq = p.launches[1], &dkdv = p.launches[2];
  EXPECT_EQ(delta.grid.x, 200u);  // 1600 rows, 8 a block
  EXPECT_EQ(delta.block.x, 256u);
  EXPECT_EQ(dq.grid.x, 16u);
  EXPECT_EQ(dq.grid.y, 2u);  // ceil(100 / 64)
  EXPECT_EQ(dq.block.x, 128u);
  EXPECT_EQ(dq.shared_bytes, 2u * 128 * (2 * 64 + 4 * 64));
  EXPECT_EQ(dkdv.grid.x, 4u);
  EXPECT_EQ(dkdv.grid.y, 3u);  // ceil(150 / 64)
  EXPECT_EQ(dkdv.shared_bytes, 2u * 128 * (2 * 64 + 4 * 32));
  for (const ops::test::ResolvedLaunch* l : {&delta, &dq, &dkdv}) {
    SdpaBackwardParams params;
    ASSERT_EQ(l->params.size(), sizeof params);
    std::memcpy(&params, l->params.data(), sizeof params);
    EXPECT_EQ(params.dout, p.address.at("grad_out"));
    EXPECT_EQ(params.q, p.address.at("query"));
    EXPECT_EQ(params.k, p.address.at("key"));
    EXPECT_EQ(params.v, p.address.at("value"));
    EXPECT_EQ(params.out, p.address.at("out"));
    EXPECT_EQ(params.lse, p.address.at("logsumexp"));
    EXPECT_EQ(params.dq, p.address.at("grad_query"));
    EXPECT_EQ(params.dk, p.address.at("grad_key"));
    EXPECT_EQ(params.dv, p.address.at("grad_value"));
    EXPECT_EQ(params.delta, p.workspace);
    EXPECT_EQ(params.lse2, p.workspace + lse2_offset);
    EXPECT_EQ(params.q_strides[1], 100 * 128);
    EXPECT_EQ(params.k_strides[0], 2 * 150 * 128);
    EXPECT_EQ(params.lse_strides[0], 800);
    EXPECT_EQ(params.lse_strides[2], 1);
    EXPECT_EQ(params.batch, 2);
    EXPECT_EQ(params.heads, 8);
    EXPECT_EQ(params.kv_heads, 2);
    EXPECT_EQ(params.group, 4);
    EXPECT_EQ(params.queries, 100);
    EXPECT_EQ(params.keys, 150);
    EXPECT_FLOAT_EQ(params.scale, static_cast<float>(1.0 / std::sqrt(128.0)));
    EXPECT_FLOAT_EQ(params.scale_log2, static_cast<float>(M_LOG2E / std::sqrt(128.0)));
  }
}

TEST(SdpaBackwardPlanTest, DeclinesWithReasons) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {flash_backward_line("float", {1, 2, 16, 64}, {1, 2, 16, 64}, "False", "None"), "float32 attention has no GPU kernel"},
      {flash_backward_line("c10::BFloat16", {1, 2, 16, 96}, {1, 2, 16, 96}, "False", "None"), "head dim 96"},
      {kCudnnBackward, ""},  // strided [B, L, H, E] rows are fine
  };
  for (const auto& [line, reason] : cases) {
    SCOPED_TRACE(line);
    std::unique_ptr<ops::OpProblem> problem = ops::test::problem_of(line);
    ASSERT_TRUE(problem);
    const Status s = backward_tier().accepts(*problem, ops::test::sm90());
    if (reason.empty()) {
      EXPECT_TRUE(s.ok()) << s.to_string();
      continue;
    }
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find(reason), std::string::npos) << s.to_string();
  }
}

}  // namespace
}  // namespace boo
