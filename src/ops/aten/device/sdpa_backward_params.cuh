// boo: the parameter block of the attention backward kernels (gpu:aten:sdpa_flash_backward),
// shared by host and device code (plain integers and floats, identical layout on both sides).
#pragma once

namespace boo {

/// Arguments: dout and out [batch, heads, queries, head_dim], q [batch, heads,
/// queries, head_dim], k and v [batch, kv_heads, keys, head_dim], each at its
/// element strides (batch, head, row; the last dim dense), and lse, the
/// forward's float logsumexp (natural log) at (batch, head, row) strides.
/// Results dq, dk, dv contiguous in the shapes of q, k, v. Workspace: delta
/// and lse2, float [batch * heads * queries] each (rowsum(dO * O) and lse *
/// log2(e)). Head h reads kv head h / group. scale_log2 = scale * log2(e).
struct SdpaBackwardParams {
  unsigned long long dout, q, k, v, out, lse;
  unsigned long long dq, dk, dv;
  unsigned long long delta, lse2;
  long long dout_strides[3], q_strides[3], k_strides[3], v_strides[3], out_strides[3], lse_strides[3];
  int batch, heads, kv_heads, group, queries, keys;
  float scale_log2, scale;
};

}  // namespace boo
