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
SdpaGradients sdpa_backward_reference(const SdpaDesc& d, const base::HostTensor& q, const base::HostTensor& k,
                                      const base::HostTensor& v, const base::HostTensor& dout);

const OpDefinition& sdpa_definition();

/// The GPU tiers of aten_sdpa, best first (sdpa_flash_impl.cpp).
std::span<const GpuImplementation* const> sdpa_implementations();

}  // namespace boo::ops::aten
