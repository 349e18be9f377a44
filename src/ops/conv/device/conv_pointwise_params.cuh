// boo: the runtime parameter block of gpu:conv:pointwise's kernels, shared by
// host and device code. Every size, stride and tile is a compile-time constant
// of the kernel's Cfg; only addresses and activation constants travel.
#pragma once

namespace boo {

struct ConvPointwiseParams {
  /// Forward and data faces: `a` the activation read (the relation's A, or B
  /// for the data face), `out` the one written. Weight face: `a` and `b` the
  /// relation's A and B, `out` the filter gradient.
  unsigned long long a, b, w, out;
  unsigned long long bias;       ///< per-channel bias of `out`, or 0
  unsigned long long workspace;  ///< the weight face's fp32 partials [splits][M][N], or 0
  float act_alpha, act_lo, act_hi;
  int unused_padding;
};

}  // namespace boo
