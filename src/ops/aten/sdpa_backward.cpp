// boo: aten_sdpa_backward — the backward of scaled dot-product attention as
// the backends' backward ops record it (ops/aten/sdpa.hpp): the signature,
// consistent inputs (out and logsumexp are the forward's of q, k, v), the
// float64 reference (sdpa_backward_reference) and the per-element error
// allowances of the three gradients (docs/tolerances.md, "Attention backward").
#include <cmath>
#include <limits>

#include "base/parallel.hpp"
#include "ops/aten/sdpa.hpp"

namespace boo::ops::aten {

using namespace sdpa_detail;

namespace {

std::vector<TensorSpec> gradient_specs(const SdpaDesc& d, DType dtype) {
  const std::vector<int64_t> dq{d.batch, d.heads, d.queries, d.head_dim}, dk{d.batch, d.kv_heads, d.keys, d.head_dim},
      dv{d.batch, d.kv_heads, d.keys, d.value_dim};
  return {TensorSpec{"grad_query", dq, contiguous_strides(dq), dtype, ""},
          TensorSpec{"grad_key", dk, contiguous_strides(dk), dtype, ""},
          TensorSpec{"grad_value", dv, contiguous_strides(dv), dtype, ""}};
}

// Element (b, h, i) of a logsumexp tensor: [B, H, L'] or [B, H, L, 1].
int64_t lse_offset(const TensorSpec& lse, int64_t b, int64_t h, int64_t i) {
  return b * lse.strides[0] + h * lse.strides[1] + i * lse.strides[2];
}

}  // namespace

SdpaBackwardSignature::SdpaBackwardSignature(AtenCall call, SdpaDesc desc, std::vector<TensorSpec> args)
    : AtenSignature(std::move(call)), desc_(desc), args_(std::move(args)) {
  results_ = gradient_specs(desc_, args_[kQuery].dtype);
}

Status SdpaBackwardSignature::validate() const {
  const SdpaDesc& d = desc_;
  const TensorSpec& q = args_[kQuery];
  for (size_t i : {kGradOut, kKey, kValue, kOut}) {
    if (args_[i].dtype != q.dtype)
      return invalid_argument(call().op + ": " + args_[i].name + " is " + std::string(dtype_name(args_[i].dtype)) +
                              " but query is " + std::string(dtype_name(q.dtype)) +
                              " (one dtype for grad_out, query, key, value and out)");
  }
  if (d.batch < 1 || d.heads < 1 || d.kv_heads < 1 || d.queries < 1 || d.keys < 1 || d.head_dim < 1 || d.value_dim < 1)
    return unimplemented(call().op + ": empty attention (query " + format_dims(q.shape) + ", key " +
                         format_dims(args_[kKey].shape) + ", value " + format_dims(args_[kValue].shape) +
                         "); boo takes positive sizes");
  const std::vector<int64_t> out_shape{d.batch, d.heads, d.queries, d.value_dim};
  for (size_t i : {kGradOut, kOut}) {
    if (args_[i].shape != out_shape)
      return invalid_argument(call().op + ": " + args_[i].name + " has shape " + format_dims(args_[i].shape) +
                              "; the attention's output is " + format_dims(out_shape) + " [B, H, L, Ev]");
  }
  const TensorSpec& lse = args_[kLogsumexp];
  if (lse.dtype != DType::kF32)
    return invalid_argument(call().op + ": logsumexp is " + std::string(dtype_name(lse.dtype)) +
                            "; the backends save it as float");
  const bool fits = (lse.rank() == 3 || (lse.rank() == 4 && lse.shape[3] == 1)) && lse.shape[0] == d.batch &&
                    lse.shape[1] == d.heads && lse.shape[2] >= d.queries;
  if (!fits)
    return invalid_argument(call().op + ": logsumexp has shape " + format_dims(lse.shape) + "; expected [" +
                            std::to_string(d.batch) + ", " + std::to_string(d.heads) + ", L' >= " +
                            std::to_string(d.queries) + "] or [" + std::to_string(d.batch) + ", " +
                            std::to_string(d.heads) + ", " + std::to_string(d.queries) + ", 1]");
  return ok_status();
}

double SdpaBackwardSignature::flop_count() const {
  const SdpaDesc& d = desc_;
  const double rows = static_cast<double>(d.batch) * static_cast<double>(d.heads) * static_cast<double>(d.queries);
  return 2.0 * rows * static_cast<double>(d.keys) * static_cast<double>(3 * d.head_dim + 2 * d.value_dim);
}

Result<std::unique_ptr<OpSignature>> make_sdpa_backward(const AtenCall& call, const SdpaBackwardForm& form) {
  BOO_RETURN_IF_ERROR(call.expect_arity(form.min_args, form.max_args, form.schema));
  std::vector<TensorSpec> args;
  const std::pair<int, const char*> tensors[] = {{0, "grad_out"},  {1, "query"}, {2, "key"},
                                                 {3, "value"},     {form.out, "out"}, {form.lse, "logsumexp"}};
  for (const auto& [at, name] : tensors) {
    BOO_ASSIGN_OR_RETURN(TensorSpec t, call.tensor(static_cast<size_t>(at), name));
    args.push_back(std::move(t));
  }
  BOO_ASSIGN_OR_RETURN(SdpaDesc d, read_attention(call, args[1], args[2], args[3],
                                                  {.mask = form.mask, .dropout = form.dropout, .causal = form.causal,
                                                   .scale = form.scale, .grouped_by_shape = true}));
  auto sig = std::make_unique<SdpaBackwardSignature>(call, d, std::move(args));
  BOO_RETURN_IF_ERROR(sig->validate());
  return std::unique_ptr<OpSignature>(std::move(sig));
}

base::HostTensor sdpa_logsumexp_reference(const SdpaDesc& d, const base::HostTensor& q_in, const base::HostTensor& k_in) {
  const std::vector<double> q = gather(q_in), k = gather(k_in);
  base::HostTensor lse = f64_tensor("logsumexp", {d.batch, d.heads, d.queries});
  base::parallel_for(d.batch * d.heads * d.queries, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t i = r % d.queries, bh = r / d.queries, b = bh / d.heads, h = bh % d.heads;
      const double* q_row = &q[static_cast<size_t>(r * d.head_dim)];
      const double* k_head = &k[static_cast<size_t>((b * d.kv_heads + h / d.group()) * d.keys * d.head_dim)];
      const int64_t seen = d.causal ? std::min(d.keys, i + 1) : d.keys;
      std::vector<double> s(static_cast<size_t>(seen));
      double max = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < seen; ++j) {
        double dot = 0;
        for (int64_t e = 0; e < d.head_dim; ++e) dot += q_row[e] * k_head[j * d.head_dim + e];
        s[static_cast<size_t>(j)] = dot * d.scale;
        max = std::max(max, s[static_cast<size_t>(j)]);
      }
      double sum = 0;
      for (double x : s) sum += std::exp(x - max);
      lse.store(r, max + std::log(sum));
    }
  });
  return lse;
}

std::vector<double> sdpa_backward_allowances(const SdpaDesc& d, const base::HostTensor& q_in,
                                             const base::HostTensor& k_in, const base::HostTensor& v_in,
                                             const base::HostTensor& dout_in, int which, double unit, double tiny,
                                             double rtol, const std::vector<int64_t>* linear) {
  const std::vector<double> q = gather(q_in), k = gather(k_in), v = gather(v_in), dout = gather(dout_in);
  const double ulp = std::ldexp(1.0, -24);
  const double score_ulps = 8.0 * std::sqrt(static_cast<double>(d.head_dim)) + 4.0;  // as the forward's
  const double g_v = 8.0 * std::sqrt(static_cast<double>(d.value_dim)) * ulp;  // dP's and D's float32 sums
  const double ds_ulps = std::ldexp(1.0, -22);  // dS = P (dP - D) in float32: a subtraction and a product
  const double abs_scale = std::abs(d.scale);
  const int64_t width = which == 2 ? d.value_dim : d.head_dim;
  const int64_t rows_of_result = which == 0 ? d.batch * d.heads * d.queries : d.batch * d.kv_heads * d.keys;
  std::vector<double> whole(static_cast<size_t>(rows_of_result * width));
  // One task per (batch, kv head): its group's rows, in order, add into its keys' dK and dV.
  base::parallel_for(d.batch * d.kv_heads, [&](int64_t begin, int64_t end) {
    std::vector<double> p(static_cast<size_t>(d.keys)), score(static_cast<size_t>(d.keys)), w(static_cast<size_t>(d.keys)), c(static_cast<size_t>(d.keys)),
        o(static_cast<size_t>(d.value_dim));
    for (int64_t kv = begin; kv < end; ++kv) {
      const int64_t b = kv / d.kv_heads, hk = kv % d.kv_heads;
      const double* k_head = &k[static_cast<size_t>(kv * d.keys * d.head_dim)];
      const double* v_head = &v[static_cast<size_t>(kv * d.keys * d.value_dim)];
      double* key_rows = which == 0 ? nullptr : &whole[static_cast<size_t>(kv * d.keys * width)];
      for (int64_t h = hk * d.group(); h < (hk + 1) * d.group(); ++h) {
        for (int64_t i = 0; i < d.queries; ++i) {
          const int64_t r = (b * d.heads + h) * d.queries + i;
          const double* q_row = &q[static_cast<size_t>(r * d.head_dim)];
          const double* do_row = &dout[static_cast<size_t>(r * d.value_dim)];
          probabilities(d, q_row, k_head, i, p);
          // The row's scores: their largest terms (A) and the logsumexp the kernel subtracts.
          const int64_t seen = d.causal ? std::min(d.keys, i + 1) : d.keys;
          double terms = 0, max = -std::numeric_limits<double>::infinity();
          for (int64_t j = 0; j < seen; ++j) {
            double a = 0, dot = 0;
            for (int64_t e = 0; e < d.head_dim; ++e) {
              a += std::abs(q_row[e] * k_head[j * d.head_dim + e]);
              dot += q_row[e] * k_head[j * d.head_dim + e];
            }
            terms = std::max(terms, abs_scale * a);
            score[static_cast<size_t>(j)] = dot * d.scale;
            max = std::max(max, score[static_cast<size_t>(j)]);
          }
          double denominator = 0;
          for (int64_t j = 0; j < seen; ++j) denominator += std::exp(score[static_cast<size_t>(j)] - max);
          const double lse = max + std::log(denominator);
          const double sigma = ulp * (score_ulps * terms + 4.0 * std::abs(lse) + 4.0);
          // O, D = dO . O and the magnitude of D's terms.
          std::fill(o.begin(), o.end(), 0.0);
          for (int64_t j = 0; j < seen; ++j)
            for (int64_t e = 0; e < d.value_dim; ++e) o[static_cast<size_t>(e)] += p[static_cast<size_t>(j)] * v_head[j * d.value_dim + e];
          double delta = 0, delta_terms = 0;
          for (int64_t e = 0; e < d.value_dim; ++e) {
            delta += do_row[e] * o[static_cast<size_t>(e)];
            delta_terms += std::abs(do_row[e] * o[static_cast<size_t>(e)]);
          }
          const double delta_error = (unit + g_v) * delta_terms;
          for (int64_t j = 0; j < d.keys; ++j) {
            const double pj = p[static_cast<size_t>(j)];
            double dp = 0, t = 0;
            for (int64_t e = 0; e < d.value_dim; ++e) {
              dp += do_row[e] * v_head[j * d.value_dim + e];
              t += std::abs(do_row[e] * v_head[j * d.value_dim + e]);
            }
            w[static_cast<size_t>(j)] = pj * std::abs(dp - delta);
            c[static_cast<size_t>(j)] = (sigma + ds_ulps) * w[static_cast<size_t>(j)] + pj * (g_v * t + delta_error);
          }
          if (which == 0) {
            double* row = &whole[static_cast<size_t>(r * width)];
            for (int64_t e = 0; e < d.head_dim; ++e) {
              double a = 0, k_sum = 0;
              for (int64_t j = 0; j < seen; ++j) {
                a += std::abs(k_head[j * d.head_dim + e]) *
                     (rtol * w[static_cast<size_t>(j)] + c[static_cast<size_t>(j)]);
                k_sum += std::abs(k_head[j * d.head_dim + e]);
              }
              row[e] = abs_scale * (a + tiny * k_sum) + tiny;
            }
          } else if (which == 1) {
            for (int64_t j = 0; j < seen; ++j)
              for (int64_t e = 0; e < d.head_dim; ++e)
                key_rows[j * width + e] += abs_scale * std::abs(q_row[e]) *
                                           (rtol * w[static_cast<size_t>(j)] + c[static_cast<size_t>(j)] + tiny);
          } else {
            for (int64_t j = 0; j < seen; ++j)
              for (int64_t e = 0; e < d.value_dim; ++e)
                key_rows[j * width + e] += ((rtol + sigma) * p[static_cast<size_t>(j)] + tiny) * std::abs(do_row[e]);
          }
        }
      }
    }
  });
  // The results' own rounding where they are subnormal.
  if (which != 0)
    for (double& x : whole) x += tiny;
  if (!linear) return whole;
  std::vector<double> picked;
  picked.reserve(linear->size());
  for (int64_t pos : *linear) picked.push_back(whole[static_cast<size_t>(pos)]);
  return picked;
}

namespace {

class SdpaBackwardOp final : public OpDefinition {
 public:
  std::string_view name() const override { return "aten_sdpa_backward"; }
  // ATen lines are read by parse_aten_command, not by tokens and flags.
  std::span<const OpToken> tokens() const override { return {}; }
  std::span<const FlagSpec> flags() const override { return {}; }
  Result<std::unique_ptr<OpSignature>> make_signature(DType, const ParsedFlags&) const override {
    return internal_error(
        "aten_sdpa_backward signatures come from ATen lines (aten::_scaled_dot_product_flash_attention_backward, "
        "...), not flags");
  }

  // grad_out, q, k, v drawn as any op's; out the forward's output rounded to the dtype and
  // logsumexp the float64 one rounded to float, as the forward would have saved them
  // (positions past L of a padded logsumexp keep their drawn values: nothing reads them).
  Status derive_arguments(const OpSignature& sig, std::vector<base::HostTensor>& args) const override {
    const auto& s = dynamic_cast<const SdpaBackwardSignature&>(sig);
    if (args.size() != 6) return internal_error("aten_sdpa_backward arguments: expected six");
    const SdpaDesc& d = s.desc();
    using S = SdpaBackwardSignature;
    const base::HostTensor out = sdpa_forward_reference(d, args[S::kQuery], args[S::kKey], args[S::kValue]);
    args[S::kOut] = base::convert_tensor(out, s.arg(S::kOut));
    const base::HostTensor lse = sdpa_logsumexp_reference(d, args[S::kQuery], args[S::kKey]);
    base::HostTensor& saved = args[S::kLogsumexp];
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t h = 0; h < d.heads; ++h)
        for (int64_t i = 0; i < d.queries; ++i)
          saved.store(lse_offset(saved.spec(), b, h, i), lse.load((b * d.heads + h) * d.queries + i));
    return ok_status();
  }

  // dq sums over the keys; dk and dv over the queries of every head of the group.
  int64_t reduction_length(const OpSignature& sig, size_t result) const override {
    const SdpaDesc& d = dynamic_cast<const SdpaBackwardSignature&>(sig).desc();
    return result == 0 ? d.keys : d.queries * d.group();
  }

  Result<std::vector<double>> element_allowances(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                                                 size_t result, double rtol,
                                                 const std::vector<int64_t>* linear) const override {
    const auto* s = dynamic_cast<const SdpaBackwardSignature*>(&sig);
    if (!s || args.size() != 6 || result > 2)
      return internal_error("aten_sdpa_backward allowances: expected its signature, its six arguments, result 0..2");
    using S = SdpaBackwardSignature;
    const DType dtype = s->arg(S::kQuery).dtype;
    const double unit = std::ldexp(1.0, dtype == DType::kBF16 ? -8 : dtype == DType::kF16 ? -11 : -24);
    // Half the smallest subnormal: the largest rounding error of a value below the normal range.
    const double tiny = std::ldexp(1.0, dtype == DType::kBF16 ? -134 : dtype == DType::kF16 ? -25 : -150);
    return sdpa_backward_allowances(s->desc(), args[S::kQuery], args[S::kKey], args[S::kValue], args[S::kGradOut],
                                    static_cast<int>(result), unit, tiny, rtol, linear);
  }

  Result<std::unique_ptr<OpProblem>> make_problem(const OpSignature& sig) const override {
    const auto* s = dynamic_cast<const SdpaBackwardSignature*>(&sig);
    if (!s) return internal_error("aten_sdpa_backward was given another op's signature");
    return std::unique_ptr<OpProblem>(std::make_unique<SdpaBackwardProblem>(*s));
  }

  std::span<const GpuImplementation* const> gpu_implementations() const override {
    return sdpa_backward_implementations();
  }

  // The exact gradients of q, k, v from the given saved state (out and logsumexp), in float64.
  Result<std::vector<base::HostTensor>> reference(const OpSignature& sig,
                                                  const std::vector<base::HostTensor>& args) const override {
    const auto* s = dynamic_cast<const SdpaBackwardSignature*>(&sig);
    if (!s || args.size() != 6) return internal_error("aten_sdpa_backward reference: expected its six arguments");
    using S = SdpaBackwardSignature;
    const SdpaDesc& d = s->desc();
    SdpaSaved saved;
    saved.out.reserve(static_cast<size_t>(args[S::kOut].spec().numel()));
    saved.logsumexp.reserve(static_cast<size_t>(d.batch * d.heads * d.queries));
    const TensorSpec& o = args[S::kOut].spec();
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t h = 0; h < d.heads; ++h)
        for (int64_t i = 0; i < d.queries; ++i) {
          saved.logsumexp.push_back(args[S::kLogsumexp].load(lse_offset(args[S::kLogsumexp].spec(), b, h, i)));
          for (int64_t e = 0; e < d.value_dim; ++e)
            saved.out.push_back(args[S::kOut].load(b * o.strides[0] + h * o.strides[1] + i * o.strides[2] +
                                                   e * o.strides[3]));
        }
    SdpaGradients g = sdpa_backward_reference(d, args[S::kQuery], args[S::kKey], args[S::kValue], args[S::kGradOut], &saved);
    std::vector<base::HostTensor> out;
    out.push_back(std::move(g.dq));
    out.push_back(std::move(g.dk));
    out.push_back(std::move(g.dv));
    return out;
  }
};

}  // namespace

const OpDefinition& sdpa_backward_definition() {
  static const SdpaBackwardOp op;
  return op;
}

}  // namespace boo::ops::aten
