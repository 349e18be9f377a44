// boo: the parameter block of the float64 reference convolution kernels
// (gpu:conv:reference), shared by host and device code (plain integers and
// doubles only, identical layout on both sides).
#pragma once

namespace boo {

/// One result of a conv signature as a face of the regular relation
///   B[n, kb, o] = sum_{c in group(kb), r} A[n, c, o*stride - pad + r*dil] * W[kb, c, r]
/// (src/ops/conv/conv_problem.hpp), or the bias gradient of dy. Spatial arrays
/// hold D, H, W; dims a signature lacks have size 1 and stride 0.
struct ConvRefParams {
  unsigned long long a, b, w;    ///< device addresses of the operands the face reads (0: the one it writes)
  unsigned long long bias;       ///< the forward bias (signature dtype), or 0
  unsigned long long residual;   ///< the forward's residual z (signature dtype, y's shape, residual_strides), or 0
  unsigned long long out;        ///< float64: the result (out_strides), or the sample's values (dense)
  unsigned long long positions;  ///< float64 [count] logical row-major indices of a sample, or 0: every element
  long long count;               ///< elements computed: the result's size, or the sample's
  long long n, ca, cb, groups;   ///< batch, channels of A and B, groups
  long long a_size[3], b_size[3], f_size[3];
  long long stride[3], pad[3], dil[3];
  long long a_strides[5], b_strides[5], w_strides[5];  ///< (N|F0, C|F1, D, H, W), in elements
  long long out_extent[5];   ///< the result's logical shape padded to (F0, F1, D, H, W) (db: 1, K, 1, 1, 1)
  long long out_strides[5];  ///< its float64 strides, same order
  long long residual_strides[5];  ///< z's strides in elements, same order
  double act_alpha, act_lo, act_hi;  ///< leaky_relu's slope, clamp's range
};

}  // namespace boo
