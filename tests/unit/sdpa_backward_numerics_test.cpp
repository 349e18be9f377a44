// boo tests: the numerics tolerance of aten_sdpa_backward (docs/tolerances.md,
// "Attention backward"). gpu:aten:sdpa_flash_backward's arithmetic emulated on
// the host (device/sdpa_backward.cuh: D in float32 from the saved out, P from
// float32 scores and the saved logsumexp on exp2, dP in float32, dS = P (dP - D),
// P and dS rounded to the input dtype before their products, float32 sums one
// m16n8k16 step at a time, results rounded) must pass the per-element bounds of
// all three gradients on the GPU matrix's backward lines, and the same emulation
// with one injected bug must fail them.
#include <gtest/gtest.h>

#include <cmath>

#include "base/float_convert.hpp"
#include "base/parallel.hpp"
#include "bench/numerics.hpp"
#include "ops/aten/sdpa.hpp"
#include "test_util.hpp"

namespace boo {
namespace {

using ops::aten::SdpaBackwardSignature;
using ops::aten::SdpaDesc;
using S = SdpaBackwardSignature;

enum class Bug {
  kNone,
  kNoDelta,         // dS = P dP: rowsum(dO * O) left out
  kNaturalLse,      // the logsumexp subtracted in natural-log units from log2 scores
  kCausalOffByOne,  // causal keeps key j <= i + 1
  kUnscaledDq,      // dQ not multiplied by scale
  kDropLastKeyTile, // dQ skips the last tile of 64 keys
  kWrongKvHead,     // grouped heads read kv head h % Hkv
  kFirstHeadOnly,   // dK and dV from the group's first head only
};

const char* bug_name(Bug b) {
  switch (b) {
    case Bug::kNone: return "none";
    case Bug::kNoDelta: return "no delta";
    case Bug::kNaturalLse: return "natural-log lse";
    case Bug::kCausalOffByOne: return "causal mask off by one";
    case Bug::kUnscaledDq: return "dq unscaled";
    case Bug::kDropLastKeyTile: return "last key tile dropped from dq";
    case Bug::kWrongKvHead: return "wrong kv head";
    case Bug::kFirstHeadOnly: return "first head of the group only";
  }
  return "?";
}

float round_to(DType t, float x) {
  return t == DType::kBF16 ? base::bf16_bits_to_float(base::float_to_bf16_bits(x))
                           : base::half_bits_to_float(base::float_to_half_bits(x));
}

// A float32 sum of exact products taken 16 terms (one m16n8k16 step) at a time.
float mma_dot(const double* a, const double* b, int64_t n, int64_t b_stride = 1) {
  float acc = 0;
  for (int64_t e0 = 0; e0 < n; e0 += 16) {
    double step = 0;
    for (int64_t e = e0; e < std::min(e0 + 16, n); ++e) step += a[e] * b[e * b_stride];
    acc = static_cast<float>(acc + step);
  }
  return acc;
}

// The three kernels' arithmetic; results dq, dk, dv in the result dtype.
std::vector<base::HostTensor> emulate_backward(const SdpaBackwardSignature& sig, const std::vector<base::HostTensor>& t,
                                               Bug bug) {
  const SdpaDesc& d = sig.desc();
  const DType dtype = sig.arg(S::kQuery).dtype;
  const std::vector<double> dout = testing::logical_values(t[S::kGradOut]), q = testing::logical_values(t[S::kQuery]),
                            k = testing::logical_values(t[S::kKey]), v = testing::logical_values(t[S::kValue]),
                            out = testing::logical_values(t[S::kOut]);
  const int64_t rows = d.batch * d.heads * d.queries;
  // sdpa_backward_delta: a warp per row (lane l adds e = l, l + 32, ..., then a butterfly), lse * log2(e).
  std::vector<float> delta(static_cast<size_t>(rows)), lse2(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    float lanes[32] = {};
    for (int64_t e = 0; e < d.value_dim; ++e)
      lanes[e % 32] += static_cast<float>(dout[static_cast<size_t>(r * d.value_dim + e)]) *
                       static_cast<float>(out[static_cast<size_t>(r * d.value_dim + e)]);
    for (int m = 16; m > 0; m >>= 1) {
      float next[32];
      for (int l = 0; l < 32; ++l) next[l] = lanes[l] + lanes[l ^ m];
      std::copy(next, next + 32, lanes);
    }
    delta[static_cast<size_t>(r)] = bug == Bug::kNoDelta ? 0.f : lanes[0];
    const int64_t i = r % d.queries, bh = r / d.queries, b = bh / d.heads, h = bh % d.heads;
    const TensorSpec& ls = t[S::kLogsumexp].spec();
    const float lse = static_cast<float>(t[S::kLogsumexp].load(b * ls.strides[0] + h * ls.strides[1] + i * ls.strides[2]));
    lse2[static_cast<size_t>(r)] = bug == Bug::kNaturalLse ? lse : lse * 1.4426950408889634f;
  }
  const float scale_log2 = static_cast<float>(d.scale * M_LOG2E), scale = static_cast<float>(d.scale);
  // P and dS / scale of every (row, key) in float32, and their rounded copies (the A operands).
  std::vector<float> p_r(static_cast<size_t>(rows * d.keys)), ds_r(static_cast<size_t>(rows * d.keys));
  base::parallel_for(rows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t i = r % d.queries, bh = r / d.queries, b = bh / d.heads, h = bh % d.heads;
      const int64_t kv = b * d.kv_heads + (bug == Bug::kWrongKvHead ? h % d.kv_heads : h / d.group());
      const int64_t last = bug == Bug::kCausalOffByOne ? i + 1 : i;
      for (int64_t j = 0; j < d.keys; ++j) {
        const size_t at = static_cast<size_t>(r * d.keys + j);
        if (d.causal && j > last) {
          p_r[at] = ds_r[at] = 0.f;
          continue;
        }
        const float s = mma_dot(&q[static_cast<size_t>(r * d.head_dim)],
                                &k[static_cast<size_t>((kv * d.keys + j) * d.head_dim)], d.head_dim);
        const float dp = mma_dot(&dout[static_cast<size_t>(r * d.value_dim)],
                                 &v[static_cast<size_t>((kv * d.keys + j) * d.value_dim)], d.value_dim);
        const float prob = std::exp2(s * scale_log2 - lse2[static_cast<size_t>(r)]);
        p_r[at] = round_to(dtype, prob);
        ds_r[at] = round_to(dtype, prob * (dp - delta[static_cast<size_t>(r)]));
      }
    }
  });
  std::vector<base::HostTensor> res;
  for (const TensorSpec& spec : sig.results()) res.emplace_back(spec);
  // dQ: 16 keys a step over the key tiles the row's CTA visits.
  base::parallel_for(rows, [&](int64_t begin, int64_t end) {
    std::vector<double> ds(static_cast<size_t>(d.keys));
    for (int64_t r = begin; r < end; ++r) {
      const int64_t i = r % d.queries, bh = r / d.queries, b = bh / d.heads, h = bh % d.heads;
      const int64_t kv = b * d.kv_heads + (bug == Bug::kWrongKvHead ? h % d.kv_heads : h / d.group());
      int64_t seen = d.keys;
      if (bug == Bug::kDropLastKeyTile) seen = std::max<int64_t>(64, (d.keys - 1) / 64 * 64);
      for (int64_t j = 0; j < d.keys; ++j) ds[static_cast<size_t>(j)] = j < seen ? ds_r[static_cast<size_t>(r * d.keys + j)] : 0.0;
      for (int64_t e = 0; e < d.head_dim; ++e) {
        const float acc = mma_dot(ds.data(), &k[static_cast<size_t>(kv * d.keys * d.head_dim + e)], d.keys, d.head_dim);
        res[0].store(r * d.head_dim + e, round_to(dtype, bug == Bug::kUnscaledDq ? acc : acc * scale));
      }
    }
  });
  // dK, dV: per key, the group's heads in order, 16 queries a step (the query tiles start at multiples of 16).
  base::parallel_for(d.batch * d.kv_heads * d.keys, [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n) {
      const int64_t j = n % d.keys, kv = n / d.keys, b = kv / d.kv_heads, hk = kv % d.kv_heads;
      std::vector<float> dk(static_cast<size_t>(d.head_dim), 0.f), dv(static_cast<size_t>(d.value_dim), 0.f);
      const int64_t heads_end = bug == Bug::kFirstHeadOnly ? hk * d.group() + 1 : (hk + 1) * d.group();
      for (int64_t h = hk * d.group(); h < heads_end; ++h) {
        const int64_t row0 = (b * d.heads + h) * d.queries;
        for (int64_t i0 = 0; i0 < d.queries; i0 += 16) {
          const int64_t i1 = std::min(i0 + 16, d.queries);
          for (int64_t e = 0; e < d.head_dim; ++e) {
            double step = 0;
            for (int64_t i = i0; i < i1; ++i)
              step += static_cast<double>(ds_r[static_cast<size_t>((row0 + i) * d.keys + j)]) *
                      q[static_cast<size_t>((row0 + i) * d.head_dim + e)];
            dk[static_cast<size_t>(e)] = static_cast<float>(dk[static_cast<size_t>(e)] + step);
          }
          for (int64_t e = 0; e < d.value_dim; ++e) {
            double step = 0;
            for (int64_t i = i0; i < i1; ++i)
              step += static_cast<double>(p_r[static_cast<size_t>((row0 + i) * d.keys + j)]) *
                      dout[static_cast<size_t>((row0 + i) * d.value_dim + e)];
            dv[static_cast<size_t>(e)] = static_cast<float>(dv[static_cast<size_t>(e)] + step);
          }
        }
      }
      for (int64_t e = 0; e < d.head_dim; ++e) res[1].store(n * d.head_dim + e, round_to(dtype, dk[static_cast<size_t>(e)] * scale));
      for (int64_t e = 0; e < d.value_dim; ++e) res[2].store(n * d.value_dim + e, round_to(dtype, dv[static_cast<size_t>(e)]));
    }
  });
  return res;
}

// The backward lines of tests/gpu/aten_matrix.txt: each backend's form, bf16/fp16, head dims
// 64 and 128, causal or not, a user scale, grouped heads, strided [B, L, H, E] memory.
const char* kLines[] = {
    R"(aten::_scaled_dot_product_flash_attention_backward "[[2, 4, 300, 128], [2, 4, 300, 128], [2, 4, 300, 128], [2, 4, 300, 128], [2, 4, 300, 128], [2, 4, 300], [], [], [], [], [], [], [], [], []]" "['c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', 'float', '', '', 'Scalar', 'Scalar', 'Scalar', 'Scalar', 'long int', 'long int', 'Scalar']" "[[153600, 38400, 128, 1], [153600, 38400, 128, 1], [153600, 38400, 128, 1], [153600, 38400, 128, 1], [153600, 38400, 128, 1], [1200, 300, 1], [], [], [], [], [], [], [], [], []]" "['', '', '', '', '', '', '', '', '300', '300', '0.0', 'True', '', '', 'None']")",
    R"(aten::_scaled_dot_product_flash_attention_backward "[[2, 4, 300, 128], [2, 4, 300, 128], [2, 4, 300, 128], [2, 4, 300, 128], [2, 4, 300, 128], [2, 4, 300], [], [], [], [], [], [], [], [], []]" "['c10::Half', 'c10::Half', 'c10::Half', 'c10::Half', 'c10::Half', 'float', '', '', 'Scalar', 'Scalar', 'Scalar', 'Scalar', 'long int', 'long int', 'Scalar']" "[[153600, 38400, 128, 1], [153600, 38400, 128, 1], [153600, 38400, 128, 1], [153600, 38400, 128, 1], [153600, 38400, 128, 1], [1200, 300, 1], [], [], [], [], [], [], [], [], []]" "['', '', '', '', '', '', '', '', '300', '300', '0.0', 'False', '', '', '0.05']")",
    R"(aten::_scaled_dot_product_flash_attention_backward "[[2, 8, 100, 64], [2, 8, 100, 64], [2, 2, 333, 64], [2, 2, 333, 64], [2, 8, 100, 64], [2, 8, 100], [], [], [], [], [], [], [], [], []]" "['c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', 'float', '', '', 'Scalar', 'Scalar', 'Scalar', 'Scalar', 'long int', 'long int', 'Scalar']" "[[51200, 6400, 64, 1], [51200, 6400, 64, 1], [42624, 21312, 64, 1], [42624, 21312, 64, 1], [51200, 6400, 64, 1], [800, 100, 1], [], [], [], [], [], [], [], [], []]" "['', '', '', '', '', '', '', '', '100', '333', '0.0', 'True', '', '', 'None']")",
    R"(aten::_scaled_dot_product_efficient_attention_backward "[[2, 4, 77, 64], [2, 4, 77, 64], [2, 4, 77, 64], [2, 4, 77, 64], [], [2, 4, 77, 64], [2, 4, 96], [], [], [], [], [], []]" "['c10::Half', 'c10::Half', 'c10::Half', 'c10::Half', '', 'c10::Half', 'float', 'long int', 'long int', 'Scalar', 'ScalarList', 'Scalar', 'Scalar']" "[[19712, 4928, 64, 1], [19712, 4928, 64, 1], [19712, 4928, 64, 1], [19712, 4928, 64, 1], [], [19712, 4928, 64, 1], [384, 96, 1], [], [], [], [], [], []]" "['', '', '', '', 'None', '', '', '', '', '0.0', '[True, True, True, False]', 'True', '0.25']")",
    R"(aten::_scaled_dot_product_cudnn_attention_backward "[[2, 8, 200, 64], [2, 8, 200, 64], [2, 8, 200, 64], [2, 8, 200, 64], [2, 8, 200, 64], [2, 8, 200, 1], [], [], [], [], [], [], [], [], [], []]" "['c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', 'float', 'long int', 'long int', '', '', '', 'Scalar', 'Scalar', 'Scalar', 'Scalar', 'Scalar']" "[[102400, 64, 512, 1], [102400, 64, 512, 1], [102400, 64, 512, 1], [102400, 64, 512, 1], [102400, 64, 512, 1], [1600, 200, 1, 1], [], [], [], [], [], [], [], [], [], []]" "['', '', '', '', '', '', '', '', 'None', '', '', '200', '200', '0.0', 'False', 'None']")",
    R"(aten::_scaled_dot_product_flash_attention_backward "[[4, 8, 256, 64], [4, 8, 256, 64], [4, 8, 256, 64], [4, 8, 256, 64], [4, 8, 256, 64], [4, 8, 256], [], [], [], [], [], [], [], [], []]" "['c10::Half', 'c10::Half', 'c10::Half', 'c10::Half', 'c10::Half', 'float', '', '', 'Scalar', 'Scalar', 'Scalar', 'Scalar', 'long int', 'long int', 'Scalar']" "[[131072, 16384, 64, 1], [131072, 16384, 64, 1], [131072, 16384, 64, 1], [131072, 16384, 64, 1], [131072, 16384, 64, 1], [2048, 256, 1], [], [], [], [], [], [], [], [], []]" "['', '', '', '', '', '', '', '', '256', '256', '0.0', 'True', '', '', 'None']")",
};

struct Line {
  testing::ReferenceRun run;
  const SdpaBackwardSignature& sig() const { return dynamic_cast<const SdpaBackwardSignature&>(*run.sig); }
};

// Per result, the allowance of each element (computed once per line: it costs what the reference does).
std::vector<std::vector<double>> allowances_of(const Line& line) {
  std::vector<std::vector<double>> out;
  for (size_t r = 0; r < 3; ++r) {
    Result<std::vector<double>> a = ops::find_op("aten_sdpa_backward")
                                        ->element_allowances(line.sig(), line.run.args, r,
                                                             bench::result_tolerance(line.sig(), r), nullptr);
    EXPECT_TRUE(a.ok());
    out.push_back(a.ok() ? *a : std::vector<double>{});
  }
  return out;
}

// The largest error of result r relative to its bound (rtol * |ref| + allowance), over the whole result.
double worst_ratio(const Line& line, const std::vector<base::HostTensor>& out, size_t r, const std::vector<double>& allowance) {
  const double rtol = bench::result_tolerance(line.sig(), r);
  double worst = 0;
  for (int64_t n = 0; n < out[r].spec().numel(); ++n) {
    const double ref = line.run.results[r].load(n);
    worst = std::max(worst, std::abs(out[r].load(n) - ref) / (rtol * std::abs(ref) + allowance[static_cast<size_t>(n)]));
  }
  return worst;
}

TEST(SdpaBackwardNumericsTest, TheKernelsArithmeticPassesTheBoundsOnEveryMatrixLine) {
  for (const char* text : kLines) {
    SCOPED_TRACE(text);
    const Line line{testing::run_reference(text)};
    const std::vector<base::HostTensor> out = emulate_backward(line.sig(), line.run.args, Bug::kNone);
    Result<std::vector<bench::Comparison>> c = bench::compare_results(line.sig(), line.run.args, out, line.run.results);
    ASSERT_TRUE(c.ok()) << c.status().to_string();
    const std::vector<std::vector<double>> allowances = allowances_of(line);
    for (size_t r = 0; r < 3; ++r) {
      SCOPED_TRACE(line.sig().results()[r].name);
      EXPECT_TRUE((*c)[r].pass()) << (*c)[r].summary();
      const double ratio = worst_ratio(line, out, r, allowances[r]);
      EXPECT_LT(ratio, 1.0);
      EXPECT_GT(ratio, 0.05) << "a bound 20x above the error would hide small bugs";
    }
  }
}

// Each bug puts elements of some gradient past their bound (the verdict's per-element check).
TEST(SdpaBackwardNumericsTest, InjectedBugsFail) {
  for (const char* text : kLines) {
    SCOPED_TRACE(text);
    const Line line{testing::run_reference(text)};
    const SdpaDesc& d = line.sig().desc();
    const std::vector<std::vector<double>> allowances = allowances_of(line);
    for (Bug bug : {Bug::kNoDelta, Bug::kNaturalLse, Bug::kCausalOffByOne, Bug::kUnscaledDq, Bug::kDropLastKeyTile,
                    Bug::kWrongKvHead, Bug::kFirstHeadOnly}) {
      if (bug == Bug::kCausalOffByOne && !d.causal) continue;
      if ((bug == Bug::kWrongKvHead || bug == Bug::kFirstHeadOnly) && d.group() == 1) continue;
      // The dropped tile must hold keys some query sees (causal rows see keys up to their own).
      const int64_t last_tile = (d.keys - 1) / 64 * 64;
      if (bug == Bug::kDropLastKeyTile && (d.keys <= 64 || (d.causal && d.queries - 1 < last_tile))) continue;
      SCOPED_TRACE(bug_name(bug));
      const std::vector<base::HostTensor> out = emulate_backward(line.sig(), line.run.args, bug);
      double worst = 0;
      for (size_t r = 0; r < 3; ++r) worst = std::max(worst, worst_ratio(line, out, r, allowances[r]));
      EXPECT_GT(worst, 1.0);
    }
  }
}

}  // namespace
}  // namespace boo
