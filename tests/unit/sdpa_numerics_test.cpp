// boo tests: the numerics tolerance of aten_sdpa (docs/tolerances.md,
// "Attention"). gpu:aten:sdpa_flash's arithmetic emulated on the host
// (device/sdpa_flash.cuh: fp32 scores, online softmax on exp2 over tiles of
// 64 keys, P rounded to the input dtype before P V, fp32 accumulation, the
// output rounded) must pass the per-element bound on the GPU matrix's SDPA
// shapes, and the same emulation with one injected bug must fail it.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "base/float_convert.hpp"
#include "base/parallel.hpp"
#include "bench/numerics.hpp"
#include "ops/aten/sdpa.hpp"
#include "test_util.hpp"

namespace boo {
namespace {

using ops::aten::SdpaDesc;
using ops::aten::SdpaSignature;

// One injected bug each (kNone: the kernel as written).
enum class Bug {
  kNone,
  kNaturalExp,       // scores not scaled by log2(e): exp2(scale * s) instead of exp(scale * s)
  kDropLastTile,     // the last tile of keys skipped
  kCausalOffByOne,   // causal keeps key j <= i + 1
  kStaleSum,         // the running sum not rescaled when the max grows
  kWrongKvHead,      // grouped heads read kv head h % Hkv instead of h / group
};

const char* bug_name(Bug b) {
  switch (b) {
    case Bug::kNone: return "none";
    case Bug::kNaturalExp: return "natural exp";
    case Bug::kDropLastTile: return "last key tile dropped";
    case Bug::kCausalOffByOne: return "causal mask off by one";
    case Bug::kStaleSum: return "running sum not rescaled";
    case Bug::kWrongKvHead: return "wrong kv head";
  }
  return "?";
}

float round_to(DType t, float x) {
  return t == DType::kBF16 ? base::bf16_bits_to_float(base::float_to_bf16_bits(x))
                           : base::half_bits_to_float(base::float_to_half_bits(x));
}

constexpr int kTile = 64;  // device/sdpa_flash.cuh's kSdpaBlockN

// sdpa_flash_forward's arithmetic for every query row, in the result's dtype.
base::HostTensor emulate_flash(const SdpaSignature& sig, const std::vector<base::HostTensor>& t, Bug bug) {
  const SdpaDesc& d = sig.desc();
  const DType dtype = sig.query().dtype;
  const std::vector<double> q = testing::logical_values(t[0]), k = testing::logical_values(t[1]),
                            v = testing::logical_values(t[2]);
  base::HostTensor out(sig.results().at(0));  // contiguous [B, H, L, Ev]
  const float scale_log2 = static_cast<float>(d.scale * (bug == Bug::kNaturalExp ? 1.0 : M_LOG2E));
  const int64_t rows = d.batch * d.heads * d.queries;
  base::parallel_for(rows, [&](int64_t begin, int64_t end) {
    std::vector<float> s(kTile), p(kTile), o(static_cast<size_t>(d.value_dim));
    for (int64_t r = begin; r < end; ++r) {
      const int64_t i = r % d.queries, bh = r / d.queries, b = bh / d.heads, h = bh % d.heads;
      const int64_t kv = b * d.kv_heads + (bug == Bug::kWrongKvHead ? h % d.kv_heads : h / d.group());
      const double* q_row = &q[static_cast<size_t>(r * d.head_dim)];
      const double* k_head = &k[static_cast<size_t>(kv * d.keys * d.head_dim)];
      const double* v_head = &v[static_cast<size_t>(kv * d.keys * d.value_dim)];
      // Keys the row sees: a causal row's tiles past its own key hold only masked scores.
      const int64_t seen = d.causal ? std::min(d.keys, i + 1) : d.keys;
      int64_t tiles = (seen + kTile - 1) / kTile;
      if (bug == Bug::kDropLastTile) tiles = std::max<int64_t>(1, tiles - 1);
      const int64_t last = bug == Bug::kCausalOffByOne ? i + 1 : i;
      float m = -INFINITY, l = 0;
      std::fill(o.begin(), o.end(), 0.f);
      for (int64_t tile = 0; tile < tiles; ++tile) {
        float tile_max = m;
        for (int j = 0; j < kTile; ++j) {
          const int64_t key = tile * kTile + j;
          if (key >= d.keys || (d.causal && key > last)) {
            s[static_cast<size_t>(j)] = -INFINITY;
            continue;
          }
          // One m16n8k16 per 16 head dims: exact products, one float32 rounding per step.
          float acc = 0;
          for (int64_t e0 = 0; e0 < d.head_dim; e0 += 16) {
            double step = 0;
            for (int64_t e = e0; e < std::min(e0 + 16, d.head_dim); ++e) step += q_row[e] * k_head[key * d.head_dim + e];
            acc = static_cast<float>(acc + step);
          }
          s[static_cast<size_t>(j)] = acc * scale_log2;
          tile_max = std::max(tile_max, s[static_cast<size_t>(j)]);
        }
        const float shift = tile_max == -INFINITY ? 0.f : tile_max;
        const float correction = std::exp2(m - shift);
        m = tile_max;
        if (bug != Bug::kStaleSum) l *= correction;
        for (float& c : o) c *= correction;
        for (int j = 0; j < kTile; ++j) {
          p[static_cast<size_t>(j)] = std::exp2(s[static_cast<size_t>(j)] - shift);
          l += p[static_cast<size_t>(j)];
          p[static_cast<size_t>(j)] = round_to(dtype, p[static_cast<size_t>(j)]);  // P V's A operand
        }
        for (int64_t e = 0; e < d.value_dim; ++e) {
          float acc = o[static_cast<size_t>(e)];
          for (int j0 = 0; j0 < kTile; j0 += 16) {
            double step = 0;
            for (int j = j0; j < j0 + 16; ++j) {
              const int64_t key = tile * kTile + j;
              if (key < d.keys) step += static_cast<double>(p[static_cast<size_t>(j)]) * v_head[key * d.value_dim + e];
            }
            acc = static_cast<float>(acc + step);
          }
          o[static_cast<size_t>(e)] = acc;
        }
      }
      const float inv = l > 0.f ? 1.f / l : 0.f;
      for (int64_t e = 0; e < d.value_dim; ++e)
        out.store(r * d.value_dim + e, round_to(dtype, o[static_cast<size_t>(e)] * inv));
    }
  });
  return out;
}

// The GPU matrix's SDPA lines (tests/gpu/aten_matrix.txt) small enough for a unit test.
const char* kLines[] = {
    R"(aten::scaled_dot_product_attention "[[2, 4, 300, 128], [2, 4, 300, 128], [2, 4, 300, 128], [], [], [], [], []]" "['c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', '', 'Scalar', 'Scalar', 'Scalar', 'Scalar']" "[[153600, 38400, 128, 1], [153600, 38400, 128, 1], [153600, 38400, 128, 1], [], [], [], [], []]" "['', '', '', 'None', '0.0', 'True', 'None', 'False']")",
    R"(aten::scaled_dot_product_attention "[[2, 4, 300, 128], [2, 4, 300, 128], [2, 4, 300, 128], [], [], [], [], []]" "['c10::Half', 'c10::Half', 'c10::Half', '', 'Scalar', 'Scalar', 'Scalar', 'Scalar']" "[[153600, 38400, 128, 1], [153600, 38400, 128, 1], [153600, 38400, 128, 1], [], [], [], [], []]" "['', '', '', 'None', '0.0', 'False', '0.05', 'False']")",
    R"(aten::scaled_dot_product_attention "[[2, 8, 100, 64], [2, 2, 333, 64], [2, 2, 333, 64], [], [], [], [], []]" "['c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', '', 'Scalar', 'Scalar', 'Scalar', 'Scalar']" "[[51200, 6400, 64, 1], [42624, 21312, 64, 1], [42624, 21312, 64, 1], [], [], [], [], []]" "['', '', '', 'None', '0.0', 'True', 'None', 'True']")",
    R"(aten::_scaled_dot_product_efficient_attention "[[2, 4, 77, 64], [2, 4, 77, 64], [2, 4, 77, 64], [], [], [], [], []]" "['c10::Half', 'c10::Half', 'c10::Half', '', 'Scalar', 'Scalar', 'Scalar', 'Scalar']" "[[19712, 4928, 64, 1], [19712, 4928, 64, 1], [19712, 4928, 64, 1], [], [], [], [], []]" "['', '', '', 'None', 'True', '0.0', 'False', 'None']")",
    R"(aten::scaled_dot_product_attention "[[4, 8, 256, 64], [4, 8, 256, 64], [4, 8, 256, 64], [], [], [], [], []]" "['c10::Half', 'c10::Half', 'c10::Half', '', 'Scalar', 'Scalar', 'Scalar', 'Scalar']" "[[131072, 16384, 64, 1], [131072, 16384, 64, 1], [131072, 16384, 64, 1], [], [], [], [], []]" "['', '', '', 'None', '0.0', 'True', 'None', 'False']")",
    R"(aten::scaled_dot_product_attention "[[2, 8, 200, 64], [2, 8, 200, 64], [2, 8, 200, 64], [], [], [], [], []]" "['c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', '', 'Scalar', 'Scalar', 'Scalar', 'Scalar']" "[[102400, 64, 512, 1], [102400, 64, 512, 1], [102400, 64, 512, 1], [], [], [], [], []]" "['', '', '', 'None', '0.0', 'False', 'None', 'False']")",
    R"(aten::scaled_dot_product_attention "[[32, 8, 128, 64], [32, 8, 128, 64], [32, 8, 128, 64], [], [], [], [], []]" "['c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', '', 'Scalar', 'Scalar', 'Scalar', 'Scalar']" "[[65536, 8192, 64, 1], [65536, 8192, 64, 1], [65536, 8192, 64, 1], [], [], [], [], []]" "['', '', '', 'None', '0.0', 'False', 'None', 'False']")",
};

struct Line {
  testing::ReferenceRun run;
  const SdpaSignature& sig() const { return dynamic_cast<const SdpaSignature&>(*run.sig); }
};

// The largest error relative to its bound (rtol * |ref| + allowance), over the whole output.
double worst_ratio(const Line& line, const base::HostTensor& out) {
  const double rtol = bench::result_tolerance(line.sig(), 0);
  const std::vector<double> allowance = ops::aten::sdpa_error_allowances(line.sig().desc(), line.run.args[0],
                                                                         line.run.args[1], line.run.args[2], rtol, nullptr);
  double worst = 0;
  for (int64_t n = 0; n < out.spec().numel(); ++n) {
    const double ref = line.run.results[0].load(n);
    worst = std::max(worst, std::abs(out.load(n) - ref) / (rtol * std::abs(ref) + allowance[static_cast<size_t>(n)]));
  }
  return worst;
}

// On an H100 the kernel failed the rms bound rtol * (|ref| + rms(ref)) on every
// line, with the errors this emulation gives to three digits and the same worst elements: the
// rounding of P, not a bug. Each line passes the per-element bound; the bf16 causal line fails
// the rms bound (an element whose weighted terms nearly cancel).
TEST(SdpaNumericsTest, TheKernelsArithmeticPassesTheBoundOnEveryMatrixLine) {
  for (const char* text : kLines) {
    SCOPED_TRACE(text);
    const Line line{testing::run_reference(text)};
    const base::HostTensor out = emulate_flash(line.sig(), line.run.args, Bug::kNone);
    Result<std::vector<bench::Comparison>> c = bench::compare_results(line.sig(), line.run.args, {out}, line.run.results);
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    EXPECT_TRUE((*c)[0].pass()) << (*c)[0].summary();
    const double ratio = worst_ratio(line, out);
    EXPECT_LT(ratio, 1.0);
    EXPECT_GT(ratio, 0.05) << "a bound 20x above the error would hide small bugs";
  }
  const Line causal{testing::run_reference(kLines[0])};
  const base::HostTensor out = emulate_flash(causal.sig(), causal.run.args, Bug::kNone);
  EXPECT_FALSE(bench::compare_to_reference(out, causal.run.results[0], bench::result_tolerance(causal.sig(), 0)).pass());
}

TEST(SdpaNumericsTest, InjectedBugsFail) {
  // The big non-causal bf16 line adds nothing the strided 200-key one does not cover.
  for (size_t n = 0; n + 1 < std::size(kLines); ++n) {
    SCOPED_TRACE(kLines[n]);
    const Line line{testing::run_reference(kLines[n])};
    const SdpaDesc& d = line.sig().desc();
    for (Bug bug : {Bug::kNaturalExp, Bug::kDropLastTile, Bug::kCausalOffByOne, Bug::kStaleSum, Bug::kWrongKvHead}) {
      if (bug == Bug::kCausalOffByOne && !d.causal) continue;
      if (bug == Bug::kWrongKvHead && d.group() == 1) continue;
      SCOPED_TRACE(bug_name(bug));
      const base::HostTensor out = emulate_flash(line.sig(), line.run.args, bug);
      Result<std::vector<bench::Comparison>> c = bench::compare_results(line.sig(), line.run.args, {out}, line.run.results);
      ASSERT_TRUE(c.ok()) << c.status().to_string();
      EXPECT_FALSE((*c)[0].pass()) << (*c)[0].summary();
    }
  }
}

// A sampled check (signatures above 2e9 FLOP) takes the allowances at its positions.
TEST(SdpaNumericsTest, SampledChecksUseTheAllowancesOfTheirPositions) {
  const Line line{testing::run_reference(kLines[2])};  // grouped heads, causal, 333 keys
  bench::VerifyOptions sampled;
  sampled.full_reference_flops = 0;
  sampled.samples_per_result = 1024;
  for (Bug bug : {Bug::kNone, Bug::kCausalOffByOne, Bug::kWrongKvHead}) {
    SCOPED_TRACE(bug_name(bug));
    const base::HostTensor out = emulate_flash(line.sig(), line.run.args, bug);
    Result<std::vector<bench::Comparison>> c = bench::verify_results(line.sig(), line.run.args, {out}, sampled);
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    ASSERT_TRUE((*c)[0].sampled());
    EXPECT_EQ((*c)[0].pass(), bug == Bug::kNone) << (*c)[0].summary();
  }
}

base::HostTensor random_f64(std::vector<int64_t> shape, std::mt19937& rng, double range) {
  std::vector<int64_t> strides = contiguous_strides(shape);
  base::HostTensor t(TensorSpec{"t", std::move(shape), std::move(strides), DType::kF64, ""});
  std::uniform_real_distribution<double> u(-range, range);
  for (int64_t n = 0; n < t.spec().numel(); ++n) t.store(n, u(rng));
  return t;
}

// The allowance computed here from its definition (docs/tolerances.md) for grouped causal heads
// with a scale of -0.7 and odd sizes: whole, and at positions in a sample.
TEST(SdpaNumericsTest, AllowancesFollowTheirDefinition) {
  SdpaDesc d;
  d.batch = 2;
  d.heads = 6;
  d.kv_heads = 2;
  d.queries = 5;
  d.keys = 7;
  d.head_dim = 9;
  d.value_dim = 3;
  d.causal = true;
  d.scale = -0.7;
  std::mt19937 rng(3);
  const base::HostTensor q = random_f64({2, 6, 5, 9}, rng, 2), k = random_f64({2, 2, 7, 9}, rng, 2),
                         v = random_f64({2, 2, 7, 3}, rng, 1);
  const double rtol = 1e-3;
  const std::vector<double> whole = ops::aten::sdpa_error_allowances(d, q, k, v, rtol, nullptr);
  ASSERT_EQ(whole.size(), 2u * 6 * 5 * 3);
  size_t n = 0;
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t h = 0; h < d.heads; ++h)
      for (int64_t i = 0; i < d.queries; ++i) {
        const int64_t hk = h / 3;
        std::vector<double> w;
        double max = -INFINITY, sum = 0, terms = 0;
        for (int64_t j = 0; j <= i; ++j) {  // causal: keys up to the query
          double s = 0, a = 0;
          for (int64_t c = 0; c < d.head_dim; ++c) {
            s += q.at({b, h, i, c}) * k.at({b, hk, j, c});
            a += std::abs(q.at({b, h, i, c}) * k.at({b, hk, j, c}));
          }
          w.push_back(d.scale * s);
          max = std::max(max, d.scale * s);
          terms = std::max(terms, 0.7 * a);
        }
        for (double& x : w) sum += x = std::exp(x - max);
        const double sigma = std::ldexp((8 * 3.0 + 4) * terms + 4, -24);  // 8 sqrt(9) + 4 ulps per unit
        for (int64_t e = 0; e < d.value_dim; ++e, ++n) {
          double m = 0, o = 0;
          for (size_t j = 0; j < w.size(); ++j) {
            m += w[j] / sum * std::abs(v.at({b, hk, static_cast<int64_t>(j), e}));
            o += w[j] / sum * v.at({b, hk, static_cast<int64_t>(j), e});
          }
          EXPECT_NEAR(whole[n], rtol * m + sigma * (m + std::abs(o)), 1e-15) << b << h << i << e;
        }
      }
  const std::vector<int64_t> positions{0, 1, 17, 44, 45, 46, 89, 179};
  const std::vector<double> sampled = ops::aten::sdpa_error_allowances(d, q, k, v, rtol, &positions);
  ASSERT_EQ(sampled.size(), positions.size());
  for (size_t p = 0; p < positions.size(); ++p)
    EXPECT_EQ(sampled[p], whole[static_cast<size_t>(positions[p])]) << positions[p];
}

}  // namespace
}  // namespace boo
