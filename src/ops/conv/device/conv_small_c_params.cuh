// boo: the runtime parameter block of gpu:conv:small_c_data's and
// gpu:conv:small_c_forward's kernels, shared by host and device code. Every
// size, stride and tile is a compile-time constant of the kernel's Cfg; only
// addresses and activation constants travel.
#pragma once

namespace boo {

struct ConvSmallCParams {
  /// The relation's A (N, C, H, W), B (N, K, P, Q) and W (K, C, R, S); the data face writes A, the forward face B.
  unsigned long long a, b, w;
  unsigned long long bias;  ///< per-channel bias of the result (a conv's forward, a transposed conv's), or 0
  float act_alpha, act_lo, act_hi;
  int unused_padding;
};

}  // namespace boo
