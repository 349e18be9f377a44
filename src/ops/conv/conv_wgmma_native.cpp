// boo: gpu:conv:wgmma_sm90's native path for planar pointwise convs (see the header).
#include "ops/conv/conv_wgmma_native.hpp"

#include <cstdlib>
#include <string_view>
#include <tuple>
#include <utility>

#include "ops/conv/conv_staging.hpp"

namespace boo::ops::conv {
namespace {


Status decline(const std::string& why) { return unimplemented("the native NCHW 1x1 path takes " + why); }

}  // namespace

bool channels_last_pixels(const Strides5& s, long long batch, const Dims3& size, long long channels) {
  const long long step = uniform_stride(s, batch, size);
  return (s[1] == 1 || channels == 1) && step != 0 && step % 8 == 0 && step >= channels;
}

bool native_in_channels_last(const Relation& native) {
  return !planar_pixels(native.a_strides, native.a_size) &&
         channels_last_pixels(native.a_strides, native.batch, native.a_size, native.ca);
}

bool planar_pointwise(const Relation& r) {
  return r.pointwise() && (!channels_contiguous(r.a_strides, r.ca) || !channels_contiguous(r.b_strides, r.cb));
}

Status native_nchw_pointwise(const ConvProblem& problem) {
  const Relation& r = problem.relation;
  if (!planar_pointwise(r)) return decline("pointwise convs (1x1, stride 1, no padding) of NCHW-like tensors only");
  if (problem.fp32_result) return decline("no GEMM epilogue's fp32 sums");
  // Vectors of 8 (or 4) pixels never straddle two channels. (BOO_WGMMA_NATIVE_VECTOR4=0 declines the 4-pixel
  // vectors, for A/B runs against the staged copies.)
  if (r.pix_a() % 4 != 0)
    return decline("pixels per image that are a multiple of 4 (8-byte vectors) only, not " + std::to_string(r.pix_a()));
  const char* vector4 = std::getenv("BOO_WGMMA_NATIVE_VECTOR4");
  if (r.pix_a() % 8 != 0 && vector4 != nullptr && std::string_view(vector4) == "0")
    return decline("pixels per image that are a multiple of 8 (16-byte vectors) only, not " + std::to_string(r.pix_a()) +
                   " (BOO_WGMMA_NATIVE_VECTOR4=0)");
  if (problem.tasks.size() != 1) return decline("one face at a time (forward, data or weight)");
  // The signature tensors playing A and B (named in the reasons); the one the forward and data faces
  // read (x, dy) may lie channels-last instead, read K-major by TMA (a GEMM's B stored n x k).
  const FaceTask& t = problem.tasks[0];
  const bool reads_b = t.face == kDataFace;  // the GEMM's `in`: x forward, dy for the data face
  for (const auto& [name, s, in, channels] :
       {std::tuple<std::string, Strides5, bool, long long>{t.a, r.a_strides, t.face == kForwardFace, r.ca},
        {t.b, r.b_strides, reads_b, r.cb}}) {
    if (in && !planar_pixels(s, r.a_size) && channels_last_pixels(s, r.batch, r.a_size, channels)) continue;
    if (!planar_pixels(s, r.a_size))
      return decline("activations whose pixels are contiguous (NCHW, NCDHW) only, not " + name + "'s (or an "
                     "input of the forward or data face channels-last, its pixels evenly spaced 16-byte aligned "
                     "rows)");
    if (s[1] % 4 != 0 || (r.batch > 1 && s[0] % 4 != 0))
      return decline("activations whose channel and image strides are multiples of 4 elements (8-byte aligned "
                     "vectors) only, not " + name + "'s " + std::to_string(s[1]) + " and " + std::to_string(s[0]));
  }
  // The filter as w(kb, c): rows of input channels c, read as 16-byte vectors along c.
  if (r.w_strides[1] != 1 || (r.cb > 1 && r.w_strides[0] % 8 != 0))
    return decline("filters whose input channels are contiguous with 16-byte aligned rows (KCRS) only");
  if (r.ca % 8 != 0)
    return decline("input channels that are a multiple of 8 (16-byte vectors along them) only, not " +
                   std::to_string(r.ca));
  return ok_status();
}

Relation native_relation(const ConvProblem& problem) {
  Relation f = problem.relation;
  if (problem.tasks[0].face != kDataFace) return f;
  const Relation& r = problem.relation;
  // A from B: A[n][c][hw] = sum_kb W[kb][c] B[n][kb][hw], the GEMM's rows the c channels.
  f.ca = r.cb;
  f.cb = r.ca;
  f.a_size = r.b_size;
  f.b_size = r.a_size;
  f.a_strides = r.b_strides;
  f.b_strides = r.a_strides;
  f.w_strides = {r.w_strides[1], r.w_strides[0], r.w_strides[2], r.w_strides[3], r.w_strides[4]};
  return f;
}

int native_pixel_vector(const Relation& r) {
  bool eight = r.pix_a() % 8 == 0;
  for (const Strides5& s : {r.a_strides, r.b_strides})
    if (planar_pixels(s, r.a_size)) eight = eight && s[1] % 8 == 0 && (r.batch == 1 || s[0] % 8 == 0);
  return eight ? 8 : 4;
}

std::string native_constants(const Relation& r) {
  auto constant = [](const char* name, long long v) {
    return "  static constexpr int " + std::string(name) + " = " + std::to_string(v) + ";\n";
  };
  std::string out = constant("kImages", r.batch) + constant("kHW", r.pix_b()) + constant("kK", r.ca);
  // Channel strides of the relation's A (p.a), B and W (w(m, k) at m * WK + k * WC).
  out += constant("XC", r.a_strides[1]) + constant("YC", r.b_strides[1]) + constant("WC", r.w_strides[1]);
  out += "  static constexpr bool kAMnMajor = " + std::string(r.w_strides[1] != 1 ? "true" : "false") + ";\n";
  // (Only where set: conv_wgmma_nchw.cuh's BKMajor reads its absence as false.)
  if (native_in_channels_last(r)) out += "  static constexpr bool kBKMajor = true;\n";
  if (native_pixel_vector(r) != 8) out += "  static constexpr int kPixelVector = " + std::to_string(native_pixel_vector(r)) + ";\n";
  return out;
}

}  // namespace boo::ops::conv
