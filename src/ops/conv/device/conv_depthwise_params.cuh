// boo: the runtime parameter block of the depthwise conv kernels, shared by
// host and device code. Every size, stride and tile is a compile-time constant
// of the kernel's Cfg; only addresses and activation constants travel at launch.
#pragma once

namespace boo {

struct ConvDepthwiseParams {
  unsigned long long a, b, w;  ///< the relation's A (N, C, ...), B (N, C*multiplier, ...) and W (C*multiplier, 1, ...)
  unsigned long long bias;     ///< per-channel bias of the forward or data face's output, or 0
  unsigned long long partials; ///< the weight face's fp32 partial sums in the workspace [slices][Cb][taps], or 0
  float act_alpha, act_lo, act_hi;
  int unused_padding;
};

}  // namespace boo
