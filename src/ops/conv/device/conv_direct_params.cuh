// boo: the parameter block of the direct convolution kernels, shared by host
// and device code (plain integers only, identical layout on both sides).
#pragma once

namespace boo {

/// One face of the regular convolution relation
///   B[n, kb, o] = sum_{c in group(kb), r} A[n, c, o*stride - pad + r*dil] * W[kb, c, r]
/// (see src/ops/conv/conv_ref.cpp). Which of a, b, w is written depends on the kernel.
/// Spatial arrays hold D, H, W; dims a signature lacks have size 1 and stride 0.
struct ConvFaceParams {
  unsigned long long a, b, w;  ///< device addresses of A (N, Ca, ...), B (N, Cb, ...), W (Cb, Ca/g, ...)
  unsigned long long bias;     ///< per-channel bias of the output (or 0), or db for the bias kernel
  unsigned long long residual; ///< the forward's residual z, y's shape and strides (or 0)
  long long n, ca, cb, groups;
  long long a_size[3], b_size[3], f_size[3];
  long long stride[3], pad[3], dil[3];
  long long a_strides[5], b_strides[5], w_strides[5];  ///< (N|F0, C|F1, D, H, W), in elements
  float act_alpha, act_lo, act_hi;
  int unused_padding;
};

}  // namespace boo
