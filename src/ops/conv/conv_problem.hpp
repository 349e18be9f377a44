// boo: the conv problem — one signature read once as the regular relation
//
//   B[n, kb, o] = sum_{c in group(kb), r} A[n, c, o*stride - pad + r*dil] * W[kb, c, r]
//
//   regular conv:    A = x (C channels),  B = y (K channels),  W = w [K, C/g, taps]
//   transposed conv: A = y (K channels),  B = x (C channels),  W = w [C, K/g, taps]
//
// whose three adjoint faces are every direction of every convolution:
//   forward face (B from A, W): regular forward, transposed backward-data
//   data face    (A from B, W): regular backward-data, transposed forward
//   weight face  (W from A, B): backward-weight of both
// Spatial dims are padded to three (D, H, W) with size-1 leading dims, so one
// code path serves 1-, 2- and 3-D. The CPU reference and every GPU tier use it.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "boo/conv.hpp"
#include "ops/plan.hpp"
#include "ops/problem.hpp"

namespace boo::ops::conv {

using Dims3 = std::array<long long, 3>;
/// Strides of a conv tensor as (outer, channel, z, y, x), in elements; 0 for padded dims.
using Strides5 = std::array<long long, 5>;

/// An S-entry spatial vector (D, H, W order) padded at the front to three entries.
Dims3 pad3(const std::vector<int64_t>& v, long long fill);
Strides5 strides5(const TensorSpec& spec);
/// Dense channels-last strides of `size` pixels with `channels`.
Strides5 channels_last(const Dims3& size, long long channels);
constexpr long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

struct Relation {
  long long batch = 0, ca = 0, cb = 0, groups = 1;  ///< channels of A and B
  Dims3 a_size{}, b_size{}, f_size{}, stride{}, pad{}, dil{};
  Strides5 a_strides{}, b_strides{}, w_strides{};
  long long ag() const { return ca / groups; }  ///< A channels per group
  long long bg() const { return cb / groups; }  ///< B channels per group
  long long taps() const { return f_size[0] * f_size[1] * f_size[2]; }
  long long pix_a() const { return a_size[0] * a_size[1] * a_size[2]; }
  long long pix_b() const { return b_size[0] * b_size[1] * b_size[2]; }
  /// 1x1 filter, stride 1, no padding: pixel k of B reads pixel k of A.
  bool pointwise() const;
};

/// Whether each channel's pixels (or a filter's taps) of a tensor of spatial
/// `size` form one run of stride 1, as in NCHW, NCDHW and KCRS (a dim of
/// extent 1 is never stepped, so its stride does not matter): what a staged
/// copy reads as a tiled transpose.
bool pixels_contiguous(const Strides5& strides, const Dims3& size);

/// pixels_contiguous with the x stride 1 as well: a planar (NCHW-like) tensor
/// for the tiers that read pixel runs in place. A channels-last tensor of
/// 1x1 images (x stride C) is not one: the channels-last tiers run it faster.
bool planar_pixels(const Strides5& strides, const Dims3& size);

/// The elements between consecutive pixels of a tensor with strides `s` (n,
/// c, d, h, w) where its batch x H x W pixels (`size`: d, h, w) are evenly
/// spaced in memory (a dim of extent 1 is never stepped), else 0: a plain
/// matrix of pixel rows for a TMA map.
long long uniform_stride(const Strides5& s, long long batch, const Dims3& size);

/// The A pixels and filter taps one data-face GEMM covers: all of them, or one
/// stride phase (pixels i = i0 + stride*t whose contributing taps are exactly
/// r = t0 + stride*j), which strided backward-data is split into so that no
/// step multiplies a tap that cannot reach its pixel.
struct Phase {
  bool on = false;
  Dims3 is{1, 1, 1}, i0{0, 0, 0}, t0{0, 0, 0}, tn{1, 1, 1};
  long long pixels() const { return is[0] * is[1] * is[2]; }
  long long taps() const { return tn[0] * tn[1] * tn[2]; }
};

/// Every A pixel and tap.
Phase whole(const Relation& r);
/// Every stride phase of the data face (dilation 1); phases without pixels are dropped.
std::vector<Phase> phases(const Relation& r);

/// The faces, numbered as the device code numbers them.
enum Face : int { kForwardFace = 0, kDataFace = 1, kWeightFace = 2 };

/// One direction of the signature as a face of the relation: the result it
/// writes and the signature tensors that play A, B and W.
struct FaceTask {
  Face face = kForwardFace;
  std::string result;   ///< "y", "dx" or "dw"
  std::string a, b, w;  ///< signature tensor names ("x", "y", "dy", "dx", "w", "dw")
  bool epilogue = false;  ///< bias, residual and activation apply to this result
};

/// Binds a face task's three tensors, where they live in the signature, to the `a`, `b` and `w` members of a
/// kernel's parameter block (the direct-style tiers' blocks, which name them as the task does).
template <class Params>
Status bind_task_tensors(StepBuilder<Params>& step, const TensorRoles& roles, const FaceTask& task) {
  BOO_ASSIGN_OR_RETURN(TensorBinding a, roles.tensor(task.a));
  BOO_ASSIGN_OR_RETURN(TensorBinding b, roles.tensor(task.b));
  BOO_ASSIGN_OR_RETURN(TensorBinding w, roles.tensor(task.w));
  step.bind(step.params.a, a);
  step.bind(step.params.b, b);
  step.bind(step.params.w, w);
  return ok_status();
}

/// The same convolution with fewer spatial dims, where a 3-D one's extra dim changes nothing a 2-D tier
/// computes (the memory of every tensor is the same; only its description changes), else nullopt:
/// - depth 1-tap (filter 1, stride 1, no padding) and each activation's depth right after its batch (NDHWC):
///   the depths are more images, N x D of H x W ("NHWC");
/// - height and width 1-tap (1x1, stride 1, no padding) and each activation's H right before its W: the
///   pixels of a depth are one row of H x W, a 2-D conv of D x (H x W) with the filter's depth as its height
///   (a patchify conv along depth, --fil_d 2 --conv_stride_d 2, runs on the 2-D tiers).
std::optional<ConvSignature> fewer_spatial_dims(const ConvSignature& sig);

class ConvProblem final : public OpProblem {
 public:
  /// `fp32_result`, `promote_sums`: see the members.
  explicit ConvProblem(const ConvSignature& sig, bool fp32_result = false, bool promote_sums = false);
  const ConvSignature& conv() const { return static_cast<const ConvSignature&>(signature()); }

  Relation relation;
  std::vector<FaceTask> tasks;  ///< y, dx, dw as requested, in that order
  bool bias_gradient = false;   ///< db requested
  DType dtype = DType::kF32;
  long long elem_bytes = 4;
  /// Set by a caller that applies an epilogue of its own to the sums
  /// (gpu:gemm:*: alpha, beta * C, a bias along another dimension;
  /// gpu:conv:fp32_bf16x6: the six products' sums), so that they are rounded
  /// once, by that caller: the one task's sums are left in the workspace from
  /// byte 0 as dense fp32 (groups, M, N) and its result tensor is not written.
  /// Forward and data faces: M the batch x result pixels (batch outermost,
  /// pixels row-major), N a group's result channels; weight face: M the output
  /// channels, N the (tap, input channel) columns (dw as dense KRSC). A tier
  /// that takes it declines what fp32_result_supported() declines.
  bool fp32_result = false;
  /// OK unless fp32_result is set and the problem is not one task without
  /// bias (nor its gradient), residual and activation; a forward task unless
  /// `every_face` (a tier that leaves the sums of every face).
  Status fp32_result_supported(std::string_view tier, bool every_face = false) const;
  /// With fp32_result: the sums are long chains of terms of very different
  /// sizes (gpu:conv:fp32_bf16x6's six products), which a tensor core's
  /// accumulator, truncating each addition, would bias; a tier that takes it
  /// promotes each k-block's sums into fp32 registers (rounded adds), or
  /// declines.
  bool promote_sums = false;
};

}  // namespace boo::ops::conv
