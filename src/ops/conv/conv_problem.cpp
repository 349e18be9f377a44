// boo: the conv relation.
#include "ops/conv/conv_problem.hpp"

namespace boo::ops::conv {

Dims3 pad3(const std::vector<int64_t>& v, long long fill) {
  Dims3 out{fill, fill, fill};
  for (size_t i = 0; i < v.size(); ++i) out[3 - v.size() + i] = v[i];
  return out;
}

Strides5 strides5(const TensorSpec& spec) {
  Strides5 out{spec.strides[0], spec.strides[1], 0, 0, 0};
  const size_t spatial = spec.strides.size() - 2;
  for (size_t i = 0; i < spatial; ++i) out[2 + 3 - spatial + i] = spec.strides[2 + i];
  return out;
}

Strides5 channels_last(const Dims3& size, long long channels) {
  return {size[0] * size[1] * size[2] * channels, 1, size[1] * size[2] * channels, size[2] * channels, channels};
}

bool pixels_contiguous(const Strides5& strides, const Dims3& size) {
  long long expected = 1;
  for (int d = 2; d >= 0; --d) {
    if (size[d] == 1) continue;
    if (strides[2 + d] != expected) return false;
    expected *= size[d];
  }
  return true;
}

bool planar_pixels(const Strides5& strides, const Dims3& size) {
  return strides[4] == 1 && pixels_contiguous(strides, size);
}

long long uniform_stride(const Strides5& s, long long batch, const Dims3& size) {
  const long long step = size[2] > 1 ? s[4] : size[1] > 1 ? s[3] : s[0];
  const bool uniform = (size[2] == 1 || s[4] == step) && (size[1] == 1 || s[3] == size[2] * step) &&
                       (batch == 1 || s[0] == size[1] * size[2] * step);
  return uniform ? step : 0;
}

bool Relation::pointwise() const {
  bool pointwise = a_size == b_size;
  for (int i = 0; i < 3; ++i) pointwise &= f_size[i] == 1 && stride[i] == 1 && pad[i] == 0;
  return pointwise;
}

Phase whole(const Relation& r) {
  Phase p;
  p.is = r.a_size;
  p.tn = r.f_size;
  return p;
}

std::vector<Phase> phases(const Relation& r) {
  std::vector<Phase> out;
  for (long long pz = 0; pz < r.stride[0]; ++pz)
    for (long long py = 0; py < r.stride[1]; ++py)
      for (long long px = 0; px < r.stride[2]; ++px) {
        Phase p;
        p.on = true;
        const long long phase[3] = {pz, py, px};
        for (int d = 0; d < 3; ++d) {
          const long long s = r.stride[d];
          // Pixels with (i + pad) % s == phase, and the taps r % s == phase that reach them.
          p.i0[d] = ((phase[d] - r.pad[d]) % s + s) % s;
          p.is[d] = p.i0[d] < r.a_size[d] ? ceil_div(r.a_size[d] - p.i0[d], s) : 0;
          p.t0[d] = phase[d];
          p.tn[d] = phase[d] < r.f_size[d] ? ceil_div(r.f_size[d] - phase[d], s) : 0;
        }
        if (p.pixels() > 0) out.push_back(p);
      }
  return out;
}

namespace {

// Entry i of a spatial vector, 0 where it has none (output_padding of a regular conv).
int64_t entry(const std::vector<int64_t>& v, size_t i) { return i < v.size() ? v[i] : 0; }

// Dim i is one tap that maps pixel p of x to pixel p of y: filter 1, stride 1, no padding (nor output padding).
bool identity_dim(const ConvSignature& sig, size_t i) {
  return sig.filter_size[i] == 1 && sig.stride[i] == 1 && sig.padding[i] == 0 && entry(sig.output_padding, i) == 0;
}

std::string without(std::string layout, char letter) {
  layout.erase(layout.find(letter), 1);
  return layout;
}

std::string renamed(std::string layout, char from, char to) {
  layout[layout.find(from)] = to;
  return layout;
}

}  // namespace

std::optional<ConvSignature> fewer_spatial_dims(const ConvSignature& sig) {
  if (sig.spatial_dims != 3) return std::nullopt;
  const bool activations_nd = sig.input_layout.find("ND") != std::string::npos &&
                              sig.output_layout.find("ND") != std::string::npos;
  const bool activations_hw = sig.input_layout.find("HW") != std::string::npos &&
                              sig.output_layout.find("HW") != std::string::npos;
  ConvSignature out = sig;
  out.spatial_dims = 2;
  if (identity_dim(sig, 0) && activations_nd) {
    // Images of depth D are D images: the depth letter leaves every layout, the batch grows.
    out.n = sig.n * sig.input_size[0];
    auto tail = [](const std::vector<int64_t>& v) { return std::vector<int64_t>{v[1], v[2]}; };
    out.input_size = tail(sig.input_size);
    out.filter_size = tail(sig.filter_size);
    out.stride = tail(sig.stride);
    out.padding = tail(sig.padding);
    out.dilation = tail(sig.dilation);
    out.output_padding = {entry(sig.output_padding, 1), entry(sig.output_padding, 2)};
    out.input_layout = without(sig.input_layout, 'D');
    out.filter_layout = without(sig.filter_layout, 'D');
    out.output_layout = without(sig.output_layout, 'D');
  } else if (identity_dim(sig, 1) && identity_dim(sig, 2) && activations_hw) {
    // A depth's H x W pixels are one row: D rows of H x W, the filter's depth its height (its 1x1 the width).
    out.input_size = {sig.input_size[0], sig.input_size[1] * sig.input_size[2]};
    out.filter_size = {sig.filter_size[0], 1};
    out.stride = {sig.stride[0], 1};
    out.padding = {sig.padding[0], 0};
    out.dilation = {sig.dilation[0], 1};
    out.output_padding = {entry(sig.output_padding, 0), 0};
    auto merged = [](const std::string& layout) {
      std::string l = layout;
      l.erase(l.find("HW"), 1);  // "HW" -> "W"
      return renamed(l, 'D', 'H');
    };
    out.input_layout = merged(sig.input_layout);
    out.output_layout = merged(sig.output_layout);
    out.filter_layout = renamed(without(sig.filter_layout, 'H'), 'D', 'H');
  } else {
    return std::nullopt;
  }
  if (!out.validate().ok()) return std::nullopt;
  return out;
}

ConvProblem::ConvProblem(const ConvSignature& sig, bool fp32_result, bool promote_sums)
    : OpProblem(sig), fp32_result(fp32_result), promote_sums(promote_sums) {
  const bool tr = sig.transposed;
  Relation& r = relation;
  r.batch = sig.n;
  r.groups = sig.groups;
  r.ca = tr ? sig.k : sig.c;
  r.cb = tr ? sig.c : sig.k;
  r.a_size = pad3(tr ? sig.output_size() : sig.input_size, 1);
  r.b_size = pad3(tr ? sig.input_size : sig.output_size(), 1);
  r.f_size = pad3(sig.filter_size, 1);
  r.stride = pad3(sig.stride, 1);
  r.pad = pad3(sig.padding, 0);
  r.dil = pad3(sig.dilation, 1);
  const TensorSpec x = sig.x_spec(), y = sig.y_spec();
  r.a_strides = strides5(tr ? y : x);
  r.b_strides = strides5(tr ? x : y);
  r.w_strides = strides5(sig.w_spec());
  dtype = sig.dtype;
  elem_bytes = static_cast<long long>(dtype_size_bytes(sig.dtype));
  // A transposed conv swaps the roles of x and y in the relation, so its
  // forward is the data face and its backward-data the forward face.
  if (sig.directions & kConvForward)
    tasks.push_back(tr ? FaceTask{kDataFace, "y", "y", "x", "w", true} : FaceTask{kForwardFace, "y", "x", "y", "w", true});
  if (sig.directions & kConvBackwardData)
    tasks.push_back(tr ? FaceTask{kForwardFace, "dx", "dy", "dx", "w", false}
                       : FaceTask{kDataFace, "dx", "dx", "dy", "w", false});
  if (sig.directions & kConvBackwardWeight)
    tasks.push_back(tr ? FaceTask{kWeightFace, "dw", "dy", "x", "dw", false}
                       : FaceTask{kWeightFace, "dw", "x", "dy", "dw", false});
  bias_gradient = sig.directions & kConvBackwardBias;
}

Status ConvProblem::fp32_result_supported(std::string_view tier, bool every_face) const {
  if (!fp32_result) return ok_status();
  const ConvSignature& sig = conv();
  if (tasks.size() != 1 || (!every_face && tasks[0].face != kForwardFace) || bias_gradient || sig.bias ||
      sig.residual || sig.activation.kind != Activation::Kind::kNone)
    return unimplemented(std::string(tier) + " leaves fp32 sums for a caller's epilogue of one " +
                         (every_face ? "direction" : "forward face") + " without bias, residual or activation only, not " +
                         sig.command());
  return ok_status();
}

}  // namespace boo::ops::conv
