// boo: scaled dot-product attention (aten::scaled_dot_product_attention and
// the forms profiler traces show, _scaled_dot_product_{flash,efficient,cudnn}_attention)
// as one registered op, aten_sdpa:
//
//   out[b, h, i, :] = sum_j softmax_j(scale * q[b, h, i, :] . k[b, g(h), j, :]) v[b, g(h), j, :]
//
// q [B, H, L, E], k [B, Hkv, S, E], v [B, Hkv, S, Ev] with any (non-negative)
// strides; g(h) = h / (H / Hkv) (grouped-query attention, enable_gqa; Hkv == H
// otherwise); causal masks key j > query i (PyTorch's top-left aligned
// lower triangle); scale defaults to 1 / sqrt(E). dropout must be 0 and the
// attention mask None: anything else is UNIMPLEMENTED, naming it.
#pragma once

#include <vector>

#include "base/host_tensor.hpp"
#include "ops/aten/aten_signature.hpp"
#include "ops/op_definition.hpp"
#include "ops/problem.hpp"

namespace boo::ops::aten {

/// What an SDPA call computes, read from whichever ATen form recorded it.
struct SdpaDesc {
  int64_t batch = 0, heads = 0, kv_heads = 0;
  int64_t queries = 0;     ///< L
  int64_t keys = 0;        ///< S
  int64_t head_dim = 0;    ///< E (q and k)
  int64_t value_dim = 0;   ///< Ev (v and out)
  bool causal = false;
  double scale = 0;        ///< resolved: the call's, else 1 / sqrt(E)
  /// Heads of q sharing one head of k and v (H / Hkv).
  int64_t group() const { return heads / kv_heads; }
};

class SdpaSignature final : public AtenSignature {
 public:
  /// `q`, `k`, `v`: the call's tensors named query, key, value; the result
  /// "out" is contiguous [B, H, L, Ev] in q's dtype.
  SdpaSignature(AtenCall call, SdpaDesc desc, TensorSpec q, TensorSpec k, TensorSpec v);
  const SdpaDesc& desc() const { return desc_; }
  const TensorSpec& query() const { return q_; }
  const TensorSpec& key() const { return k_; }
  const TensorSpec& value() const { return v_; }

  std::string_view op_name() const override { return "aten_sdpa"; }
  /// One dtype for q, k, v; 4-D tensors whose sizes agree; heads a multiple of kv heads.
  Status validate() const override;
  std::vector<TensorSpec> arguments() const override { return {q_, k_, v_}; }
  std::vector<TensorSpec> results() const override { return {out_}; }
  /// The two products (q k^T and p v), causal or not (every score is computed).
  double flop_count() const override;
  std::unique_ptr<OpSignature> clone() const override { return std::make_unique<SdpaSignature>(*this); }

 private:
  SdpaDesc desc_;
  TensorSpec q_, k_, v_, out_;
};

using SdpaProblem = SignatureProblem<SdpaSignature>;

/// The signature of an SDPA call whose tensors q, k, v are arguments 0..2:
/// `mask` the index of its attn_mask/attn_bias argument (or -1 where the form
/// has none), `dropout`, `causal`, `scale`, `gqa` the indices of those
/// arguments (-1: absent from the form; then 0, False, None, False).
struct SdpaForm {
  int mask = -1, dropout = -1, causal = -1, scale = -1, gqa = -1;
  size_t min_args = 3, max_args = 3;
  std::string_view schema;
};
Result<std::unique_ptr<OpSignature>> make_sdpa(const AtenCall& call, const SdpaForm& form);

/// The backward of an SDPA call as the backends' backward ops record it
/// (aten::_scaled_dot_product_{flash,efficient,cudnn}_attention_backward):
/// grad_out, query, key, value, the forward's out and its logsumexp (float32,
/// natural log of each row's softmax denominator of the scaled scores:
/// [B, H, L'] with L' >= L, efficient attention pads L, or cuDNN's [B, H, L, 1]).
/// The results grad_query, grad_key, grad_value are contiguous in q's dtype.
/// The inputs boo generates are consistent: out and logsumexp are the
/// forward's of q, k, v (make_arguments).
class SdpaBackwardSignature final : public AtenSignature {
 public:
  SdpaBackwardSignature(AtenCall call, SdpaDesc desc, std::vector<TensorSpec> args);
  const SdpaDesc& desc() const { return desc_; }
  /// The arguments in order: grad_out, query, key, value, out, logsumexp.
  const TensorSpec& arg(size_t i) const { return args_[i]; }
  enum : size_t { kGradOut = 0, kQuery, kKey, kValue, kOut, kLogsumexp };

  std::string_view op_name() const override { return "aten_sdpa_backward"; }
  Status validate() const override;
  std::vector<TensorSpec> arguments() const override { return args_; }
  std::vector<TensorSpec> results() const override { return results_; }
  /// The five products of the backward (q k^T, dO v^T, P^T dO, dS k, dS^T q), causal or not.
  double flop_count() const override;
  std::unique_ptr<OpSignature> clone() const override { return std::make_unique<SdpaBackwardSignature>(*this); }

 private:
  SdpaDesc desc_;
  std::vector<TensorSpec> args_, results_;
};

using SdpaBackwardProblem = SignatureProblem<SdpaBackwardSignature>;

/// Where a backward form keeps its arguments: grad_out, query, key, value are
/// 0..3; `out`, `lse` the forward's saved tensors; mask, dropout, causal,
/// scale as in SdpaForm (-1: absent).
struct SdpaBackwardForm {
  int out = -1, lse = -1, mask = -1, dropout = -1, causal = -1, scale = -1;
  size_t min_args = 0, max_args = 0;
  std::string_view schema;
};
Result<std::unique_ptr<OpSignature>> make_sdpa_backward(const AtenCall& call, const SdpaBackwardForm& form);

// The float64 reference, shared by the op's reference() and the tests. Each
// takes the tensors as their signature describes them (any strides) and
// returns contiguous float64 results.

/// out [B, H, L, Ev].
base::HostTensor sdpa_forward_reference(const SdpaDesc& d, const base::HostTensor& q, const base::HostTensor& k,
                                        const base::HostTensor& v);

/// The error allowed at each element of out beyond rtol * |out| (docs/tolerances.md,
/// "Attention"), at the logical row-major positions `linear` (every element in
/// order where null): with p the row's softmax (float64),
///   rtol * m + sigma * (m + |out|),   m = sum_j p_j |v_j,e|,
///   sigma = 2^-24 * ((8 sqrt(E) + 4) * |scale| * max_j sum_e |q_e k_j,e| + 4):
/// rtol * m bounds the weights rounded to the input dtype before P V and the
/// float32 sums, sigma the relative error of the weights from float32 scores.
std::vector<double> sdpa_error_allowances(const SdpaDesc& d, const base::HostTensor& q, const base::HostTensor& k,
                                          const base::HostTensor& v, double rtol, const std::vector<int64_t>* linear);

/// The gradients of sum(out * dout) with respect to q, k and v (contiguous,
/// the shapes of q, k, v): P recomputed, dV = P^T dO, dP = dO V^T,
/// dS = P * (dP - rowsum(dO * O)), dQ = scale dS K, dK = scale dS^T Q; with
/// grouped heads, dK and dV sum over the heads of a group.
struct SdpaGradients {
  base::HostTensor dq, dk, dv;
};
/// The forward's saved state a backward reads: out [B, H, L, Ev] and each row's logsumexp, row
/// r = (b H + h) L + i, both contiguous. Given, the reference takes P = exp(scale q.k - logsumexp) and
/// rowsum(dO * O) from them, as a backward kernel does (they need not be the forward's of q, k, v: BOO's
/// structured test passes blocks of ones); absent, it recomputes both in float64.
struct SdpaSaved {
  std::vector<double> out, logsumexp;
};
SdpaGradients sdpa_backward_reference(const SdpaDesc& d, const base::HostTensor& q, const base::HostTensor& k,
                                      const base::HostTensor& v, const base::HostTensor& dout,
                                      const SdpaSaved* saved = nullptr);

/// The natural log of each query row's softmax denominator, logsumexp_j(scale q_i . k_j)
/// over the keys the row sees: [B, H, L] contiguous (what the backward's logsumexp holds).
base::HostTensor sdpa_logsumexp_reference(const SdpaDesc& d, const base::HostTensor& q, const base::HostTensor& k);

/// The error allowed at each element of gradient `which` (0 dq, 1 dk, 2 dv) beyond
/// rtol * |ref| (docs/tolerances.md, "Attention backward"), at the logical row-major
/// positions `linear` (every element where null). `unit` is the input dtype's
/// rounding unit 2^-p, `tiny` half its smallest subnormal (fp16's P and dS terms and
/// results below the normal range). With p, dP = dO v^T, D = rowsum(dO * O) in
/// float64, sums over the (query i, key j) pairs the mask keeps,
///   dv:  sum_i ((rtol + sigma_i) p_ij + tiny) |dO_ie| + tiny
///   dq:  |scale| sum_j |k_je| (rtol w_ij + c_ij + tiny) + tiny
///   dk:  |scale| sum_i |q_ie| (rtol w_ij + c_ij + tiny) + tiny
///   w_ij = p_ij |dP_ij - D_i|,  c_ij = (sigma_i + 2^-22) w_ij + p_ij (g_v T_ij + e_i),
///   T_ij = sum_e |dO_ie v_je|, g_v = 2^-24 8 sqrt(Ev), e_i = (unit + g_v) sum_e |dO_ie O_ie|,
///   sigma_i = 2^-24 ((8 sqrt(E) + 4) A_i + 4 |lse_i| + 4) (A_i as the forward's).
std::vector<double> sdpa_backward_allowances(const SdpaDesc& d, const base::HostTensor& q, const base::HostTensor& k,
                                             const base::HostTensor& v, const base::HostTensor& dout, int which,
                                             double unit, double tiny, double rtol, const std::vector<int64_t>* linear);

const OpDefinition& sdpa_definition();
const OpDefinition& sdpa_backward_definition();

/// The GPU tiers of aten_sdpa, best first (sdpa_flash_impl.cpp).
std::span<const GpuImplementation* const> sdpa_implementations();
/// The GPU tiers of aten_sdpa_backward (sdpa_backward_impl.cpp).
std::span<const GpuImplementation* const> sdpa_backward_implementations();

// Pieces shared by the forward and backward ops' files (sdpa.cpp, sdpa_backward.cpp).
namespace sdpa_detail {

/// A 4-D tensor gathered into a contiguous float64 array (row-major over its shape).
std::vector<double> gather(const base::HostTensor& t);
base::HostTensor f64_tensor(std::string name, std::vector<int64_t> shape);
/// The softmax row of query i of one (batch, head): p[j] for the keys, 0 where masked.
void probabilities(const SdpaDesc& d, const double* q_row, const double* k_head, int64_t i, std::vector<double>& p);
/// Whether optional argument `i` is absent (-1 or past the call's end) or None.
bool absent(const AtenCall& call, int i);
/// Positions of a form's optional arguments (-1: absent from the form).
struct AttentionArgs {
  int mask = -1, dropout = -1, causal = -1, scale = -1, gqa = -1;
  /// Whether k's and v's head count alone may group q's heads (the backward
  /// forms, which have no enable_gqa: the recorded shapes say it).
  bool grouped_by_shape = false;
};
/// The attention q, k, v (4-D, checked to fit) and a form's mask, dropout,
/// causal, scale and enable_gqa arguments describe; mask and dropout must be None/0.
Result<SdpaDesc> read_attention(const AtenCall& call, const TensorSpec& q, const TensorSpec& k, const TensorSpec& v,
                                const AttentionArgs& at);
/// UNIMPLEMENTED unless a 4-D 16-bit tensor's rows are dense and its (batch,
/// head, row) strides keep every row's 16-byte copies aligned (the tiers' cp.async).
Status check_rows(const TensorSpec& t);

}  // namespace sdpa_detail

}  // namespace boo::ops::aten
