// boo device code: the float64 reference convolution (gpu:conv:reference).
//
// The CPU reference (src/ops/conv/conv_ref.cpp) on the GPU, one thread per
// result element: the same direct sum over the same terms in the same loop
// order, each product rounded and then added (__dmul_rn, __dadd_rn are never
// fused into an fma; the CPU reference is compiled with -ffp-contract=off),
// so the two agree bit for bit. Only the transcendental activations (exp,
// tanh, erf of CUDA's libdevice against the host's libm) may differ, by an
// ulp or so. Inputs are read in their dtype and widened exactly.
#pragma once

#include "boo/kernels/types.cuh"
#include "boo/conv/conv_ref_params.cuh"

namespace boo {
namespace conv_ref {

/// Faces as ConvProblem numbers them, and the bias gradient.
enum RefFace : int { kForward = 0, kData = 1, kWeight = 2, kBiasGradient = 3 };

template <typename T>
__device__ __forceinline__ double load(unsigned long long base, long long offset) {
  return static_cast<double>(load_as_float<T>(base, offset));
}

/// acc + a * b with the product rounded first, as the CPU reference computes it.
__device__ __forceinline__ double add_product(double acc, double a, double b) { return __dadd_rn(acc, __dmul_rn(a, b)); }

/// Element offset of (i0, i1, z, y, x) under strides (s0, s1, sz, sy, sx).
__device__ __forceinline__ long long offset5(const long long* s, long long i0, long long i1, long long z, long long y,
                                             long long x) {
  return i0 * s[0] + i1 * s[1] + z * s[2] + y * s[3] + x * s[4];
}

/// f(v) in double, as Activation::apply (src/ops/conv/conv_signature.cpp) writes it.
template <int kAct>
__device__ __forceinline__ double activate(double v, double alpha, double lo, double hi) {
  if (kAct == kActRelu) return v > 0 ? v : 0.0;
  if (kAct == kActSigmoid) return 1.0 / (1.0 + exp(-v));
  if (kAct == kActTanh) return tanh(v);
  if (kAct == kActSilu) return v / (1.0 + exp(-v));
  if (kAct == kActGelu) return 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
  if (kAct == kActGeluTanh) {
    const double k = sqrt(2.0 / 3.14159265358979323846);  // the host's M_PI
    const double cubic = __dmul_rn(__dmul_rn(__dmul_rn(0.044715, v), v), v);
    return 0.5 * v * (1.0 + tanh(k * __dadd_rn(v, cubic)));
  }
  if (kAct == kActLeakyRelu) return v >= 0 ? v : alpha * v;
  if (kAct == kActClamp) return fmin(fmax(v, lo), hi);
  return v;
}

/// B[n, kb, o] = sum over (rz, ry, rx, c in group(kb)) of A[n, c, o*stride - pad + r*dil] * W[kb, c, r].
template <typename T>
__device__ double forward_element(const ConvRefParams& p, long long n, long long kb, long long oz, long long oy,
                                  long long ox) {
  const long long ag = p.ca / p.groups, c0 = (kb / (p.cb / p.groups)) * ag;
  double acc = 0;
  for (long long rz = 0; rz < p.f_size[0]; ++rz) {
    const long long iz = oz * p.stride[0] - p.pad[0] + rz * p.dil[0];
    if (iz < 0 || iz >= p.a_size[0]) continue;
    for (long long ry = 0; ry < p.f_size[1]; ++ry) {
      const long long iy = oy * p.stride[1] - p.pad[1] + ry * p.dil[1];
      if (iy < 0 || iy >= p.a_size[1]) continue;
      for (long long rx = 0; rx < p.f_size[2]; ++rx) {
        const long long ix = ox * p.stride[2] - p.pad[2] + rx * p.dil[2];
        if (ix < 0 || ix >= p.a_size[2]) continue;
        for (long long c = 0; c < ag; ++c)
          acc = add_product(acc, load<T>(p.a, offset5(p.a_strides, n, c0 + c, iz, iy, ix)),
                            load<T>(p.w, offset5(p.w_strides, kb, c, rz, ry, rx)));
      }
    }
  }
  return acc;
}

/// The B coordinate that reads A coordinate i through tap r along dim d, or -1.
__device__ __forceinline__ long long source(const ConvRefParams& p, int d, long long i, long long r) {
  const long long t = i + p.pad[d] - r * p.dil[d];
  if (t < 0 || t % p.stride[d] != 0) return -1;
  const long long o = t / p.stride[d];
  return o < p.b_size[d] ? o : -1;
}

/// A[n, ch, i] = sum over (rz, ry, rx, kb in group(ch)) with o*stride = i + pad - r*dil of B[n, kb, o] * W[kb, c, r].
template <typename T>
__device__ double data_element(const ConvRefParams& p, long long n, long long ch, long long iz, long long iy,
                               long long ix) {
  const long long ag = p.ca / p.groups, bg = p.cb / p.groups;
  const long long g = ch / ag, c = ch % ag;
  double acc = 0;
  for (long long rz = 0; rz < p.f_size[0]; ++rz) {
    const long long oz = source(p, 0, iz, rz);
    if (oz < 0) continue;
    for (long long ry = 0; ry < p.f_size[1]; ++ry) {
      const long long oy = source(p, 1, iy, ry);
      if (oy < 0) continue;
      for (long long rx = 0; rx < p.f_size[2]; ++rx) {
        const long long ox = source(p, 2, ix, rx);
        if (ox < 0) continue;
        for (long long kb = g * bg; kb < (g + 1) * bg; ++kb)
          acc = add_product(acc, load<T>(p.b, offset5(p.b_strides, n, kb, oz, oy, ox)),
                            load<T>(p.w, offset5(p.w_strides, kb, c, rz, ry, rx)));
      }
    }
  }
  return acc;
}

/// W[kb, c, r] = sum over (n, oz, oy, ox) of A[n, g*ag + c, o*stride - pad + r*dil] * B[n, kb, o].
template <typename T>
__device__ double weight_element(const ConvRefParams& p, long long kb, long long c, long long rz, long long ry,
                                 long long rx) {
  const long long ch = (kb / (p.cb / p.groups)) * (p.ca / p.groups) + c;
  double acc = 0;
  for (long long n = 0; n < p.n; ++n) {
    for (long long oz = 0; oz < p.b_size[0]; ++oz) {
      const long long iz = oz * p.stride[0] - p.pad[0] + rz * p.dil[0];
      if (iz < 0 || iz >= p.a_size[0]) continue;
      for (long long oy = 0; oy < p.b_size[1]; ++oy) {
        const long long iy = oy * p.stride[1] - p.pad[1] + ry * p.dil[1];
        if (iy < 0 || iy >= p.a_size[1]) continue;
        for (long long ox = 0; ox < p.b_size[2]; ++ox) {
          const long long ix = ox * p.stride[2] - p.pad[2] + rx * p.dil[2];
          if (ix < 0 || ix >= p.a_size[2]) continue;
          acc = add_product(acc, load<T>(p.a, offset5(p.a_strides, n, ch, iz, iy, ix)),
                            load<T>(p.b, offset5(p.b_strides, n, kb, oz, oy, ox)));
        }
      }
    }
  }
  return acc;
}

/// db[k] = sum over (n, z, y, x) of dy[n, k, z, y, x] (dy bound as B).
template <typename T>
__device__ double bias_gradient_element(const ConvRefParams& p, long long k) {
  double acc = 0;
  for (long long n = 0; n < p.n; ++n)
    for (long long z = 0; z < p.b_size[0]; ++z)
      for (long long y = 0; y < p.b_size[1]; ++y)
        for (long long x = 0; x < p.b_size[2]; ++x) acc = __dadd_rn(acc, load<T>(p.b, offset5(p.b_strides, n, k, z, y, x)));
  return acc;
}

}  // namespace conv_ref

/// One result of face kFace (conv_ref::RefFace), every element or a sample,
/// one thread per element (grid-stride). kAct, kBias and kResidual: the
/// forward epilogue, on the result y only: act(sum + bias + z).
template <typename T, int kFace, int kAct, bool kBias, bool kResidual>
__device__ void conv_reference(const ConvRefParams& p) {
  const double* positions = reinterpret_cast<const double*>(p.positions);
  double* out = reinterpret_cast<double*>(p.out);
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < p.count;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    long long linear = positions ? static_cast<long long>(positions[i]) : i;
    long long e[5];  // the element's logical index, (F0, F1, D, H, W)
    for (int d = 4; d >= 0; --d) {
      e[d] = linear % p.out_extent[d];
      linear /= p.out_extent[d];
    }
    double v;
    if (kFace == conv_ref::kForward) v = conv_ref::forward_element<T>(p, e[0], e[1], e[2], e[3], e[4]);
    else if (kFace == conv_ref::kData) v = conv_ref::data_element<T>(p, e[0], e[1], e[2], e[3], e[4]);
    else if (kFace == conv_ref::kWeight) v = conv_ref::weight_element<T>(p, e[0], e[1], e[2], e[3], e[4]);
    else v = conv_ref::bias_gradient_element<T>(p, e[1]);
    if (kBias) v = __dadd_rn(v, conv_ref::load<T>(p.bias, e[1]));
    if (kResidual)
      v = __dadd_rn(v, conv_ref::load<T>(p.residual, conv_ref::offset5(p.residual_strides, e[0], e[1], e[2], e[3], e[4])));
    v = conv_ref::activate<kAct>(v, p.act_alpha, p.act_lo, p.act_hi);
    out[positions ? i : conv_ref::offset5(p.out_strides, e[0], e[1], e[2], e[3], e[4])] = v;
  }
}

}  // namespace boo
