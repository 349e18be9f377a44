// boo: scaled dot-product attention's ATen forms (ops/aten/sdpa.hpp): the
// public op and the backends' ops a profiler trace records under it. Each
// reads its own schema's positions; all make an SdpaSignature.
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

Result<std::unique_ptr<OpSignature>> make_public(const AtenCall& call) { return make_sdpa(call, kPublic); }
Result<std::unique_ptr<OpSignature>> make_flash(const AtenCall& call) { return make_sdpa(call, kFlash); }
Result<std::unique_ptr<OpSignature>> make_efficient(const AtenCall& call) { return make_sdpa(call, kEfficient); }
Result<std::unique_ptr<OpSignature>> make_cudnn(const AtenCall& call) { return make_sdpa(call, kCudnn); }

}  // namespace

const AtenOp kScaledDotProductAttention{"aten::scaled_dot_product_attention", kPublic.schema, &make_public};
const AtenOp kSdpaFlash{"aten::_scaled_dot_product_flash_attention", kFlash.schema, &make_flash};
const AtenOp kSdpaEfficient{"aten::_scaled_dot_product_efficient_attention", kEfficient.schema, &make_efficient};
const AtenOp kSdpaCudnn{"aten::_scaled_dot_product_cudnn_attention", kCudnn.schema, &make_cudnn};

}  // namespace boo::ops::aten
