// boo: aten_sdpa — the signature of scaled dot-product attention calls, their
// float64 reference (forward and gradients) and the registered op.
#include "ops/aten/sdpa.hpp"

#include <cmath>
#include <limits>

#include "base/parallel.hpp"

namespace boo::ops::aten {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

}  // namespace

namespace sdpa_detail {

// A 4-D tensor gathered into a contiguous float64 array (row-major over its shape).
std::vector<double> gather(const base::HostTensor& t) {
  const TensorSpec& s = t.spec();
  std::vector<double> out(static_cast<size_t>(s.numel()));
  size_t n = 0;
  for (int64_t a = 0; a < s.shape[0]; ++a)
    for (int64_t b = 0; b < s.shape[1]; ++b)
      for (int64_t c = 0; c < s.shape[2]; ++c)
        for (int64_t d = 0; d < s.shape[3]; ++d)
          out[n++] = t.load(a * s.strides[0] + b * s.strides[1] + c * s.strides[2] + d * s.strides[3]);
  return out;
}

base::HostTensor f64_tensor(std::string name, std::vector<int64_t> shape) {
  std::vector<int64_t> strides = contiguous_strides(shape);
  return base::HostTensor(TensorSpec{std::move(name), std::move(shape), std::move(strides), DType::kF64, ""});
}

// The softmax row of query i of one (batch, head): p[j] for the keys, 0 where masked.
void probabilities(const SdpaDesc& d, const double* q_row, const double* k_head, int64_t i, std::vector<double>& p) {
  double max = kNegInf;
  for (int64_t j = 0; j < d.keys; ++j) {
    if (d.causal && j > i) {
      p[static_cast<size_t>(j)] = kNegInf;
      continue;
    }
    double s = 0;
    for (int64_t e = 0; e < d.head_dim; ++e) s += q_row[e] * k_head[j * d.head_dim + e];
    s *= d.scale;
    p[static_cast<size_t>(j)] = s;
    max = std::max(max, s);
  }
  double sum = 0;
  for (int64_t j = 0; j < d.keys; ++j) {
    double& x = p[static_cast<size_t>(j)];
    x = x == kNegInf ? 0.0 : std::exp(x - max);
    sum += x;
  }
  // Causal rows always keep key 0 (j <= i), so the sum is positive.
  for (int64_t j = 0; j < d.keys; ++j) p[static_cast<size_t>(j)] /= sum;
}

// Traces record a None float (scale) with dtype 'Scalar' and value 'None', a None tensor with ''.
bool absent(const AtenCall& call, int i) {
  return i < 0 || static_cast<size_t>(i) >= call.args.size() || call.is_none(static_cast<size_t>(i)) ||
         call.args[static_cast<size_t>(i)].value == "None";
}

Result<SdpaDesc> read_attention(const AtenCall& call, const TensorSpec& q, const TensorSpec& k, const TensorSpec& v,
                                const AttentionArgs& at) {
  for (const TensorSpec* t : {&q, &k, &v}) {
    if (t->rank() != 4)
      return unimplemented(call.op + ": " + t->name + " has shape " + format_dims(t->shape) +
                           "; boo's attention takes 4-D [batch, heads, sequence, head dim] tensors");
  }
  if (!absent(call, at.mask))
    return unimplemented(call.where(static_cast<size_t>(at.mask)) +
                         " (attn_mask) is a tensor; boo's attention takes attn_mask None only (is_causal for a causal mask)");
  if (!absent(call, at.dropout)) {
    BOO_ASSIGN_OR_RETURN(double p, call.number(static_cast<size_t>(at.dropout)));
    if (p != 0.0)
      return unimplemented(call.where(static_cast<size_t>(at.dropout)) + " (dropout_p) is " +
                           call.args[static_cast<size_t>(at.dropout)].value +
                           "; boo's attention runs without dropout (dropout_p 0): a random mask cannot be replayed");
  }
  SdpaDesc d;
  if (!absent(call, at.causal)) {
    BOO_ASSIGN_OR_RETURN(d.causal, call.boolean(static_cast<size_t>(at.causal)));
  }
  bool gqa = at.grouped_by_shape;
  if (!absent(call, at.gqa)) {
    BOO_ASSIGN_OR_RETURN(gqa, call.boolean(static_cast<size_t>(at.gqa)));
  }
  d.batch = q.shape[0];
  d.heads = q.shape[1];
  d.kv_heads = k.shape[1];
  d.queries = q.shape[2];
  d.keys = k.shape[2];
  d.head_dim = q.shape[3];
  d.value_dim = v.shape[3];
  if (k.shape[0] != d.batch || v.shape[0] != d.batch || k.shape[3] != d.head_dim || v.shape[2] != d.keys ||
      v.shape[1] != d.kv_heads)
    return invalid_argument(call.op + ": query " + format_dims(q.shape) + ", key " + format_dims(k.shape) + " and value " +
                            format_dims(v.shape) + " do not fit [B, H, L, E], [B, Hkv, S, E], [B, Hkv, S, Ev]");
  if (d.kv_heads != d.heads) {
    if (!gqa)
      return invalid_argument(call.op + ": query has " + std::to_string(d.heads) + " heads but key and value " +
                              std::to_string(d.kv_heads) +
                              (at.gqa >= 0 ? " (different head counts need enable_gqa=True)"
                                           : " (this form takes equal head counts)"));
    if (d.kv_heads < 1 || d.heads % d.kv_heads != 0)
      return invalid_argument(call.op + ": query's " + std::to_string(d.heads) + " heads are not a multiple of key's " +
                              std::to_string(d.kv_heads) + " (grouped-query attention)");
  }
  d.scale = d.head_dim > 0 ? 1.0 / std::sqrt(static_cast<double>(d.head_dim)) : 1.0;
  if (!absent(call, at.scale)) {
    BOO_ASSIGN_OR_RETURN(d.scale, call.number(static_cast<size_t>(at.scale)));  // finite (parse_double)
  }
  return d;
}

}  // namespace sdpa_detail

using namespace sdpa_detail;

SdpaSignature::SdpaSignature(AtenCall call, SdpaDesc desc, TensorSpec q, TensorSpec k, TensorSpec v)
    : AtenSignature(std::move(call)), desc_(desc), q_(std::move(q)), k_(std::move(k)), v_(std::move(v)) {
  const std::vector<int64_t> shape{desc_.batch, desc_.heads, desc_.queries, desc_.value_dim};
  out_ = TensorSpec{"out", shape, contiguous_strides(shape), q_.dtype, ""};
}

Status SdpaSignature::validate() const {
  for (const TensorSpec* t : {&k_, &v_}) {
    if (t->dtype != q_.dtype)
      return invalid_argument(call().op + ": " + t->name + " is " + std::string(dtype_name(t->dtype)) + " but query is " +
                              std::string(dtype_name(q_.dtype)) + " (one dtype for query, key and value)");
  }
  const SdpaDesc& d = desc_;
  if (d.batch < 1 || d.heads < 1 || d.kv_heads < 1 || d.queries < 1 || d.keys < 1 || d.head_dim < 1 || d.value_dim < 1)
    return unimplemented(call().op + ": empty attention (query " + format_dims(q_.shape) + ", key " +
                         format_dims(k_.shape) + ", value " + format_dims(v_.shape) + "); boo takes positive sizes");
  return ok_status();
}

double SdpaSignature::flop_count() const {
  const SdpaDesc& d = desc_;
  const double rows = static_cast<double>(d.batch) * static_cast<double>(d.heads) * static_cast<double>(d.queries);
  return 2.0 * rows * static_cast<double>(d.keys) * static_cast<double>(d.head_dim + d.value_dim);
}

Result<std::unique_ptr<OpSignature>> make_sdpa(const AtenCall& call, const SdpaForm& form) {
  BOO_RETURN_IF_ERROR(call.expect_arity(form.min_args, form.max_args, form.schema));
  BOO_ASSIGN_OR_RETURN(TensorSpec q, call.tensor(0, "query"));
  BOO_ASSIGN_OR_RETURN(TensorSpec k, call.tensor(1, "key"));
  BOO_ASSIGN_OR_RETURN(TensorSpec v, call.tensor(2, "value"));
  BOO_ASSIGN_OR_RETURN(SdpaDesc d, read_attention(call, q, k, v,
                                                  {.mask = form.mask, .dropout = form.dropout, .causal = form.causal,
                                                   .scale = form.scale, .gqa = form.gqa}));
  auto sig = std::make_unique<SdpaSignature>(call, d, std::move(q), std::move(k), std::move(v));
  BOO_RETURN_IF_ERROR(sig->validate());
  return std::unique_ptr<OpSignature>(std::move(sig));
}

base::HostTensor sdpa_forward_reference(const SdpaDesc& d, const base::HostTensor& q_in, const base::HostTensor& k_in,
                                        const base::HostTensor& v_in) {
  const std::vector<double> q = gather(q_in), k = gather(k_in), v = gather(v_in);
  base::HostTensor out = f64_tensor("out", {d.batch, d.heads, d.queries, d.value_dim});
  const int64_t rows = d.batch * d.heads * d.queries;
  base::parallel_for(rows, [&](int64_t begin, int64_t end) {
    std::vector<double> p(static_cast<size_t>(d.keys));
    for (int64_t r = begin; r < end; ++r) {
      const int64_t i = r % d.queries, bh = r / d.queries, b = bh / d.heads, h = bh % d.heads;
      const int64_t kv = b * d.kv_heads + h / d.group();
      probabilities(d, &q[static_cast<size_t>(r * d.head_dim)], &k[static_cast<size_t>(kv * d.keys * d.head_dim)], i, p);
      const double* v_head = &v[static_cast<size_t>(kv * d.keys * d.value_dim)];
      for (int64_t e = 0; e < d.value_dim; ++e) {
        double o = 0;
        for (int64_t j = 0; j < d.keys; ++j) o += p[static_cast<size_t>(j)] * v_head[j * d.value_dim + e];
        out.store(r * d.value_dim + e, o);
      }
    }
  });
  return out;
}

std::vector<double> sdpa_error_allowances(const SdpaDesc& d, const base::HostTensor& q_in, const base::HostTensor& k_in,
                                          const base::HostTensor& v_in, double rtol,
                                          const std::vector<int64_t>* linear) {
  const std::vector<double> q = gather(q_in), k = gather(k_in), v = gather(v_in);
  const int64_t count = linear ? static_cast<int64_t>(linear->size()) : d.batch * d.heads * d.queries * d.value_dim;
  std::vector<double> out(static_cast<size_t>(count));
  // float32 ulps of a score's exponent per unit of its terms' magnitude: the E-term dot product
  // (random walk, 8x margin), its scaling, and the max subtraction (docs/tolerances.md).
  const double score_ulps = 8.0 * std::sqrt(static_cast<double>(d.head_dim)) + 4.0;
  constexpr double kExpUlps = 4;  // ex2.approx: within 2^-22 relative
  const double ulp = std::ldexp(1.0, -24);
  // Positions in order: those of one query row are adjacent, and the row's softmax is computed once.
  base::parallel_for(count, [&](int64_t begin, int64_t end) {
    std::vector<double> p(static_cast<size_t>(d.keys));
    int64_t row = -1;
    double sigma = 0;  // the relative error of the row's unnormalized weights
    const double* v_head = nullptr;
    for (int64_t at = begin; at < end; ++at) {
      const int64_t pos = linear ? (*linear)[static_cast<size_t>(at)] : at;
      const int64_t r = pos / d.value_dim, e = pos % d.value_dim;
      if (r != row) {
        row = r;
        const int64_t i = r % d.queries, bh = r / d.queries, b = bh / d.heads, h = bh % d.heads;
        const int64_t kv = b * d.kv_heads + h / d.group();
        const double* q_row = &q[static_cast<size_t>(r * d.head_dim)];
        const double* k_head = &k[static_cast<size_t>(kv * d.keys * d.head_dim)];
        probabilities(d, q_row, k_head, i, p);
        double terms = 0;  // max over the keys the row sees of |scale| * sum_e |q_e k_je|
        for (int64_t j = 0; j < d.keys && !(d.causal && j > i); ++j) {
          double a = 0;
          for (int64_t c = 0; c < d.head_dim; ++c) a += std::abs(q_row[c] * k_head[j * d.head_dim + c]);
          terms = std::max(terms, a);
        }
        sigma = ulp * (score_ulps * std::abs(d.scale) * terms + kExpUlps);
        v_head = &v[static_cast<size_t>(kv * d.keys * d.value_dim)];
      }
      double magnitude = 0, o = 0;
      for (int64_t j = 0; j < d.keys; ++j) {
        const double pv = p[static_cast<size_t>(j)] * v_head[j * d.value_dim + e];
        magnitude += std::abs(pv);
        o += pv;
      }
      out[static_cast<size_t>(at)] = rtol * magnitude + sigma * (magnitude + std::abs(o));
    }
  });
  return out;
}

SdpaGradients sdpa_backward_reference(const SdpaDesc& d, const base::HostTensor& q_in, const base::HostTensor& k_in,
                                      const base::HostTensor& v_in, const base::HostTensor& dout_in, const SdpaSaved* saved) {
  const std::vector<double> q = gather(q_in), k = gather(k_in), v = gather(v_in), dout = gather(dout_in);
  SdpaGradients g{f64_tensor("grad_query", {d.batch, d.heads, d.queries, d.head_dim}),
                  f64_tensor("grad_key", {d.batch, d.kv_heads, d.keys, d.head_dim}),
                  f64_tensor("grad_value", {d.batch, d.kv_heads, d.keys, d.value_dim})};
  // One task per (batch, kv head): the heads of its group add into its dK and dV in order.
  base::parallel_for(d.batch * d.kv_heads, [&](int64_t begin, int64_t end) {
    std::vector<double> p(static_cast<size_t>(d.keys)), dp(static_cast<size_t>(d.keys));
    std::vector<double> dk(static_cast<size_t>(d.keys * d.head_dim)), dv(static_cast<size_t>(d.keys * d.value_dim));
    for (int64_t kv = begin; kv < end; ++kv) {
      std::fill(dk.begin(), dk.end(), 0.0);
      std::fill(dv.begin(), dv.end(), 0.0);
      const int64_t b = kv / d.kv_heads, hk = kv % d.kv_heads;
      const double* k_head = &k[static_cast<size_t>(kv * d.keys * d.head_dim)];
      const double* v_head = &v[static_cast<size_t>(kv * d.keys * d.value_dim)];
      for (int64_t h = hk * d.group(); h < (hk + 1) * d.group(); ++h) {
        for (int64_t i = 0; i < d.queries; ++i) {
          const int64_t r = (b * d.heads + h) * d.queries + i;
          const double* q_row = &q[static_cast<size_t>(r * d.head_dim)];
          const double* do_row = &dout[static_cast<size_t>(r * d.value_dim)];
          if (saved) {
            const double lse = saved->logsumexp[static_cast<size_t>(r)];
            for (int64_t j = 0; j < d.keys; ++j) {
              double s = 0;
              for (int64_t e = 0; e < d.head_dim; ++e) s += q_row[e] * k_head[j * d.head_dim + e];
              p[static_cast<size_t>(j)] = d.causal && j > i ? 0.0 : std::exp(s * d.scale - lse);
            }
          } else {
            probabilities(d, q_row, k_head, i, p);
          }
          // rowsum(dO * O), which with the forward's O is sum_j p_j (dO . v_j) = sum_j p_j dP_j.
          double delta = 0;
          for (int64_t j = 0; j < d.keys; ++j) {
            double s = 0;
            for (int64_t e = 0; e < d.value_dim; ++e) s += do_row[e] * v_head[j * d.value_dim + e];
            dp[static_cast<size_t>(j)] = s;
            if (!saved) delta += p[static_cast<size_t>(j)] * s;
          }
          if (saved)
            for (int64_t e = 0; e < d.value_dim; ++e) delta += do_row[e] * saved->out[static_cast<size_t>(r * d.value_dim + e)];
          for (int64_t e = 0; e < d.head_dim; ++e) g.dq.store(r * d.head_dim + e, 0.0);
          for (int64_t j = 0; j < d.keys; ++j) {
            const double pj = p[static_cast<size_t>(j)];
            if (pj == 0.0) continue;  // masked (or underflowed): contributes nothing
            const double ds = pj * (dp[static_cast<size_t>(j)] - delta) * d.scale;
            for (int64_t e = 0; e < d.value_dim; ++e) dv[static_cast<size_t>(j * d.value_dim + e)] += pj * do_row[e];
            for (int64_t e = 0; e < d.head_dim; ++e) {
              dk[static_cast<size_t>(j * d.head_dim + e)] += ds * q_row[e];
              const int64_t at = r * d.head_dim + e;
              g.dq.store(at, g.dq.load(at) + ds * k_head[j * d.head_dim + e]);
            }
          }
        }
      }
      for (size_t n = 0; n < dk.size(); ++n) g.dk.store(kv * d.keys * d.head_dim + static_cast<int64_t>(n), dk[n]);
      for (size_t n = 0; n < dv.size(); ++n) g.dv.store(kv * d.keys * d.value_dim + static_cast<int64_t>(n), dv[n]);
    }
  });
  return g;
}

namespace {

const SdpaSignature& typed(const OpSignature& sig) { return dynamic_cast<const SdpaSignature&>(sig); }

class SdpaOp final : public OpDefinition {
 public:
  std::string_view name() const override { return "aten_sdpa"; }
  // ATen lines are read by parse_aten_command, not by tokens and flags.
  std::span<const OpToken> tokens() const override { return {}; }
  std::span<const FlagSpec> flags() const override { return {}; }
  Result<std::unique_ptr<OpSignature>> make_signature(DType, const ParsedFlags&) const override {
    return internal_error("aten_sdpa signatures come from ATen lines (aten::scaled_dot_product_attention, ...), not flags");
  }

  // Each output element sums S products p_j v_j (and divides by a sum of S weights); the
  // scores' E-term dot products enter through element_allowances.
  int64_t reduction_length(const OpSignature& sig, size_t) const override { return typed(sig).desc().keys; }

  Result<std::vector<double>> element_allowances(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                                                 size_t, double rtol, const std::vector<int64_t>* linear) const override {
    const auto* s = dynamic_cast<const SdpaSignature*>(&sig);
    if (!s || args.size() != 3) return internal_error("aten_sdpa allowances: expected its signature and q, k, v");
    return sdpa_error_allowances(s->desc(), args[0], args[1], args[2], rtol, linear);
  }

  Result<std::unique_ptr<OpProblem>> make_problem(const OpSignature& sig) const override {
    const auto* s = dynamic_cast<const SdpaSignature*>(&sig);
    if (!s) return internal_error("aten_sdpa was given another op's signature");
    return std::unique_ptr<OpProblem>(std::make_unique<SdpaProblem>(*s));
  }

  std::span<const GpuImplementation* const> gpu_implementations() const override { return sdpa_implementations(); }

  Result<std::vector<base::HostTensor>> reference(const OpSignature& sig,
                                                  const std::vector<base::HostTensor>& args) const override {
    const auto* s = dynamic_cast<const SdpaSignature*>(&sig);
    if (!s || args.size() != 3) return internal_error("aten_sdpa reference: expected its signature and q, k, v");
    std::vector<base::HostTensor> out;
    out.push_back(sdpa_forward_reference(s->desc(), args[0], args[1], args[2]));
    return out;
  }
};

}  // namespace

const OpDefinition& sdpa_definition() {
  static const SdpaOp op;
  return op;
}

}  // namespace boo::ops::aten
