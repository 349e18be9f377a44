// boo: the runtime parameter block of gpu:conv:small_c_data's kernel, shared
// by host and device code. Every size, stride and tile is a compile-time
// constant of the kernel's Cfg; only addresses and activation constants travel.
#pragma once

namespace boo {

struct ConvSmallCParams {
  unsigned long long a, b, w;  ///< the relation's A (written: N, C, H, W), B (N, K, P, Q) and W (K, C, R, S)
  unsigned long long bias;     ///< per-channel bias of A (a transposed conv's forward), or 0
  float act_alpha, act_lo, act_hi;
  int unused_padding;
};

}  // namespace boo
