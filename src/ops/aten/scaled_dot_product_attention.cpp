// boo: scaled dot-product attention's ATen forms (ops/aten/sdpa.hpp): the
// public op and the backends' ops a profiler trace records under it, forward
// and backward. Each reads its own schema's positions; the forwards make an
// SdpaSignature, the backwards an SdpaBackwardSignature.
#include "ops/aten/aten_op.hpp"
#include "ops/aten/sdpa.hpp"

namespace boo::ops::aten {
namespace {

constexpr SdpaForm kPublic{.mask = 3, .dropout = 4, .causal = 5, .scale = 6, .gqa = 7, .min_args = 3, .max_args = 8,
                           .schema = "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? "
                                     "attn_mask=None, float dropout_p=0.0, bool is_causal=False, *, float? scale=None, "
                                     "bool enable_gqa=False)"};
// return_debug_mask asks for an extra result boo does not produce; it changes nothing of out.
constexpr SdpaForm kFlash{.dropout = 3, .causal = 4, .scale = 6, .min_args = 3, .max_args = 7,
                          .schema = "_scaled_dot_product_flash_attention(Tensor query, Tensor key, Tensor value, float "
                                    "dropout_p=0.0, bool is_causal=False, bool return_debug_mask=False, *, float? "
                                    "scale=None)"};
// compute_log_sumexp likewise asks for a result boo does not produce (out is the same).
constexpr SdpaForm kEfficient{.mask = 3, .dropout = 5, .causal = 6, .scale = 7, .min_args = 5, .max_args = 8,
                              .schema = "_scaled_dot_product_efficient_attention(Tensor query, Tensor key, Tensor value, "
                                        "Tensor? attn_bias, bool compute_log_sumexp, float dropout_p=0.0, bool "
                                        "is_causal=False, *, float? scale=None)"};
constexpr SdpaForm kCudnn{.mask = 3, .dropout = 5, .causal = 6, .scale = 8, .min_args = 5, .max_args = 9,
                          .schema = "_scaled_dot_product_cudnn_attention(Tensor query, Tensor key, Tensor value, Tensor? "
                                    "attn_bias, bool compute_log_sumexp, float dropout_p=0.0, bool is_causal=False, bool "
                                    "return_debug_mask=False, *, float? scale=None)"};

// The backends' backward ops, which autograd records under the forward's
// Backward0 node. cum_seq_q/k, max_q/k, philox_seed/offset and grad_input_mask
// describe nested tensors, dropout's random stream and which gradients to
// form: boo ignores them (no nesting, dropout 0, every gradient formed).
constexpr SdpaBackwardForm kFlashBackward{
    .out = 4, .lse = 5, .dropout = 10, .causal = 11, .scale = 14, .min_args = 14, .max_args = 15,
    .schema = "_scaled_dot_product_flash_attention_backward(Tensor grad_out, Tensor query, Tensor key, Tensor value, "
              "Tensor out, Tensor logsumexp, Tensor cum_seq_q, Tensor cum_seq_k, SymInt max_q, SymInt max_k, float "
              "dropout_p, bool is_causal, Tensor philox_seed, Tensor philox_offset, *, float? scale=None)"};
constexpr SdpaBackwardForm kEfficientBackward{
    .out = 5, .lse = 6, .mask = 4, .dropout = 9, .causal = 11, .scale = 12, .min_args = 11, .max_args = 13,
    .schema = "_scaled_dot_product_efficient_attention_backward(Tensor grad_out_, Tensor query, Tensor key, Tensor "
              "value, Tensor attn_bias, Tensor out, Tensor logsumexp, Tensor philox_seed, Tensor philox_offset, float "
              "dropout_p, bool[4] grad_input_mask, bool is_causal=False, *, float? scale=None)"};
constexpr SdpaBackwardForm kCudnnBackward{
    .out = 4, .lse = 5, .mask = 8, .dropout = 13, .causal = 14, .scale = 15, .min_args = 15, .max_args = 16,
    .schema = "_scaled_dot_product_cudnn_attention_backward(Tensor grad_out, Tensor query, Tensor key, Tensor value, "
              "Tensor out, Tensor logsumexp, Tensor philox_seed, Tensor philox_offset, Tensor attn_bias, Tensor "
              "cum_seq_q, Tensor cum_seq_k, SymInt max_q, SymInt max_k, float dropout_p, bool is_causal, *, float? "
              "scale=None)"};

Result<std::unique_ptr<OpSignature>> make_public(const AtenCall& call) { return make_sdpa(call, kPublic); }
Result<std::unique_ptr<OpSignature>> make_flash(const AtenCall& call) { return make_sdpa(call, kFlash); }
Result<std::unique_ptr<OpSignature>> make_efficient(const AtenCall& call) { return make_sdpa(call, kEfficient); }
Result<std::unique_ptr<OpSignature>> make_cudnn(const AtenCall& call) { return make_sdpa(call, kCudnn); }
Result<std::unique_ptr<OpSignature>> make_flash_backward(const AtenCall& call) {
  return make_sdpa_backward(call, kFlashBackward);
}
Result<std::unique_ptr<OpSignature>> make_efficient_backward(const AtenCall& call) {
  return make_sdpa_backward(call, kEfficientBackward);
}
Result<std::unique_ptr<OpSignature>> make_cudnn_backward(const AtenCall& call) {
  return make_sdpa_backward(call, kCudnnBackward);
}

}  // namespace

const AtenOp kScaledDotProductAttention{"aten::scaled_dot_product_attention", kPublic.schema, &make_public};
const AtenOp kSdpaFlash{"aten::_scaled_dot_product_flash_attention", kFlash.schema, &make_flash};
const AtenOp kSdpaEfficient{"aten::_scaled_dot_product_efficient_attention", kEfficient.schema, &make_efficient};
const AtenOp kSdpaCudnn{"aten::_scaled_dot_product_cudnn_attention", kCudnn.schema, &make_cudnn};
const AtenOp kSdpaFlashBackward{"aten::_scaled_dot_product_flash_attention_backward", kFlashBackward.schema,
                                &make_flash_backward};
const AtenOp kSdpaEfficientBackward{"aten::_scaled_dot_product_efficient_attention_backward",
                                    kEfficientBackward.schema, &make_efficient_backward};
const AtenOp kSdpaCudnnBackward{"aten::_scaled_dot_product_cudnn_attention_backward", kCudnnBackward.schema,
                                &make_cudnn_backward};

}  // namespace boo::ops::aten
