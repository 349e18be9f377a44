// boo: the parameter block of the attention forward kernel (gpu:aten:sdpa_flash),
// shared by host and device code (plain integers and floats, identical layout on both sides).
#pragma once

namespace boo {

/// q [batch, heads, queries, head_dim], k [batch, kv_heads, keys, head_dim],
/// v [batch, kv_heads, keys, head_dim], each at its element strides (the last
/// one 1); out [batch, heads, queries, head_dim] contiguous. Head h reads kv
/// head h / group. Scores are scaled by scale_log2 = scale * log2(e), so the
/// softmax runs on exp2.
struct SdpaParams {
  unsigned long long q, k, v, out;
  long long q_strides[3], k_strides[3], v_strides[3];  // batch, head, row (the last dim is dense)
  int heads, group, queries, keys;
  float scale_log2;
};

}  // namespace boo
