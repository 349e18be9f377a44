// boo: NormSignature — validation, shapes, canonical command and function name
// of layer norm and RMS norm.
#include <algorithm>
#include <numeric>

#include "base/checked_int.hpp"
#include "base/strings.hpp"
#include "boo/norm.hpp"
#include "ops/norm/norm_layout.hpp"

namespace boo {
namespace {

// What the two kinds name differently in commands and messages.
struct KindText {
  std::string_view op_name;     ///< the registry name
  std::string_view token;       ///< MIOpenDriver's command (float32; fp16 and bfp16 add a suffix)
  std::string_view axis_owner;  ///< prefix of the --normalized_dim/-o message
  std::string_view axis_hint;   ///< what -o means, in that message
};

const KindText& text_of(NormKind kind) {
  static const KindText kLayer{"layernorm", "layernorm", "", "the first normalized axis"};
  static const KindText kRms{"rmsnorm", "t5layernorm", "t5layernorm ", "the first normalized axis; default the last"};
  return kind == NormKind::kLayer ? kLayer : kRms;
}

std::string op_token(NormKind kind, DType dtype, bool fused_add = false) {
  const std::string token = (fused_add ? "add" : "") + std::string(text_of(kind).token);
  switch (dtype) {
    case DType::kF16: return token + "fp16";
    case DType::kBF16: return token + "bfp16";
    default: return token;
  }
}

// Floating-point operations per element of x, by result.
struct FlopsPerElement {
  double forward, dx, dweight, dbias;
};
// Layer norm: mean, variance, normalize, affine forward; about 6 per backward
// result. RMS norm: square, sum, scale, weight forward.
constexpr FlopsPerElement kLayerFlops{8, 6, 6, 6};
constexpr FlopsPerElement kRmsFlops{4, 5, 3, 0};

// Forward, a backward (any of dx, dweight, dbias), or the forward and the
// backward of every input (MIOpen's -F 0 of the -N -C -H -W syntax).
Status validate_layer_directions(uint8_t directions, bool weight, bool bias) {
  constexpr uint8_t kBackward = kNormBackwardData | kNormBackwardWeight | kNormBackwardBias;
  const uint8_t full = kNormForward | kNormBackwardData | (weight ? kNormBackwardWeight : 0) |
                       (bias ? kNormBackwardBias : 0);
  const bool forward_only = directions == kNormForward;
  const bool backward_only = directions != 0 && (directions & ~kBackward) == 0;
  if (!forward_only && !backward_only && directions != full)
    return invalid_argument("layernorm --forw/-F " + std::to_string(directions) +
                            " is not a mode: use 1 (forward), 2 (input backward), 4 (weight backward), "
                            "8 (bias backward), 14 (full backward) or another sum of 2, 4 and 8");
  return ok_status();
}

// MIOpen's t5layernorm modes: forward, backward (dx, and dweight with a
// weight), or both (the parser makes no other).
Status validate_rms_directions(uint8_t directions, bool weight) {
  const uint8_t backward = weight ? (kNormBackwardData | kNormBackwardWeight) : kNormBackwardData;
  if (directions != kNormForward && directions != backward && directions != (kNormForward | backward))
    return internal_error("rmsnorm directions " + std::to_string(directions) + " are not a MIOpen -F mode");
  return ok_status();
}

Status validate_permutation(const std::vector<int>& permutation, int rank) {
  if (permutation.empty()) return ok_status();
  std::vector<int> sorted = permutation;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> identity(static_cast<size_t>(rank));
  std::iota(identity.begin(), identity.end(), 0);
  if (sorted == identity) return ok_status();
  std::string perm;
  for (int p : permutation) perm += std::to_string(p) + " ";
  return invalid_argument("--input-permutation " + perm + "is not a permutation of 0.." + std::to_string(rank - 1) +
                          " for a rank-" + std::to_string(rank) + " input");
}

std::string layer_mode_name(uint8_t directions) {
  if ((directions & kNormForward) && directions != kNormForward)
    return "forward_" + layer_mode_name(static_cast<uint8_t>(directions & ~kNormForward));
  switch (directions) {
    case kNormForward: return "forward";
    case kNormBackwardData: return "input_backward";
    case kNormBackwardWeight: return "weight_backward";
    case kNormBackwardBias: return "bias_backward";
    case kNormBackwardData | kNormBackwardWeight | kNormBackwardBias: return "full_backward";
    // Partial combinations are a boo extension; BOO's Mode has no name for them.
    case kNormBackwardData | kNormBackwardWeight: return "input_weight_backward";
    case kNormBackwardData | kNormBackwardBias: return "input_bias_backward";
    case kNormBackwardWeight | kNormBackwardBias: return "weight_bias_backward";
  }
  return "invalid";
}

}  // namespace

std::vector<int64_t> NormSignature::normalized_shape() const {
  if (normalized_dim < 0 || normalized_dim >= static_cast<int>(input_shape.size())) return {};
  return std::vector<int64_t>(input_shape.begin() + normalized_dim, input_shape.end());
}

int64_t NormSignature::rows() const {
  int64_t r = 1;
  for (int i = 0; i < normalized_dim && i < static_cast<int>(input_shape.size()); ++i) r *= input_shape[i];
  return r;
}

int64_t NormSignature::row_length() const {
  int64_t n = 1;
  for (int64_t d : normalized_shape()) n *= d;
  return n;
}

bool NormSignature::permuted() const {
  for (size_t i = 0; i < input_permutation.size(); ++i)
    if (input_permutation[i] != static_cast<int>(i)) return true;
  return false;
}

TensorSpec NormSignature::x_spec(std::string name) const {
  if (!layout.empty()) return x_shaped_spec(std::move(name));
  std::vector<int64_t> strides =
      permuted() ? permuted_strides(input_shape, input_permutation) : contiguous_strides(input_shape);
  return TensorSpec{std::move(name), input_shape, std::move(strides), dtype, ""};
}

TensorSpec NormSignature::x_shaped_spec(std::string name) const {
  if (layout.empty()) return TensorSpec{std::move(name), input_shape, contiguous_strides(input_shape), dtype, ""};
  return TensorSpec{std::move(name), input_shape, ops::norm::layout_strides(input_shape, layout), dtype, layout};
}

TensorSpec NormSignature::param_spec(std::string name) const {
  std::vector<int64_t> shape = normalized_shape();
  return TensorSpec{std::move(name), shape, contiguous_strides(shape), dtype, ""};
}

TensorSpec NormSignature::stat_spec(std::string name) const {
  const size_t leading = static_cast<size_t>(std::max(normalized_dim, 0));
  std::vector<int64_t> shape = input_shape;
  if (kind_ == NormKind::kLayer) {
    for (size_t i = leading; i < shape.size(); ++i) shape[i] = 1;  // BOO's aggregate shape
  } else {
    shape.resize(std::min(leading, shape.size()));
    if (shape.empty()) shape.push_back(1);  // MIOpen's rstd of a scalar's shape [] is [1]
  }
  return TensorSpec{std::move(name), shape, contiguous_strides(shape), DType::kF32, ""};
}

std::string_view NormSignature::op_name() const { return fused_add ? "addlayernorm" : text_of(kind_).op_name; }

std::vector<TensorSpec> NormSignature::arguments() const {
  std::vector<TensorSpec> args;
  const bool forward = directions & kNormForward;
  const bool needs_x = directions & (kNormBackwardData | kNormBackwardWeight);
  if (kind_ == NormKind::kLayer) {
    // BOO's order: the forward's inputs (and dy, when the backward follows,
    // reading the statistics the forward saves), or dy then what the backward reads.
    if (forward) {
      args.push_back(x_spec("x"));
      if (fused_add) args.push_back(x_spec("x2"));
      if (weight) args.push_back(param_spec("weight"));
      if (bias) args.push_back(param_spec("bias"));
      if (directions != kNormForward) args.push_back(x_shaped_spec("dy"));
      return args;
    }
    args.push_back(x_shaped_spec("dy"));
    if (needs_x) {
      args.push_back(x_spec("x"));
      if (fused_add) args.push_back(x_spec("x2"));
      if ((directions & kNormBackwardData) && weight) args.push_back(param_spec("weight"));
      args.push_back(stat_spec("mean"));
      args.push_back(stat_spec("rstd"));
    }
    return args;
  }
  // MIOpen's order: x and weight, then dy, and the saved rstd without the
  // forward (with it, the backward reads the rstd the forward computes).
  args.push_back(x_shaped_spec("x"));
  if (weight) args.push_back(param_spec("weight"));
  if (needs_x) {
    args.push_back(x_shaped_spec("dy"));
    if (!forward) args.push_back(stat_spec("rstd"));
  }
  return args;
}

std::vector<TensorSpec> NormSignature::results() const {
  std::vector<TensorSpec> out;
  if (directions & kNormForward) {
    out.push_back(x_shaped_spec("y"));
    if (kind_ == NormKind::kLayer) out.push_back(stat_spec("mean"));
    out.push_back(stat_spec("rstd"));
  }
  if (directions & kNormBackwardData) out.push_back(x_shaped_spec("dx"));
  if (directions & kNormBackwardWeight) out.push_back(param_spec("dweight"));
  if (directions & kNormBackwardBias) out.push_back(param_spec("dbias"));
  return out;
}

double NormSignature::flop_count() const {
  const FlopsPerElement& per = kind_ == NormKind::kLayer ? kLayerFlops : kRmsFlops;
  const double elems = static_cast<double>(rows()) * static_cast<double>(row_length());
  double flops = 0;
  if (directions & kNormForward) flops += per.forward * elems;
  if (directions & kNormBackwardData) flops += per.dx * elems;
  if (directions & kNormBackwardWeight) flops += per.dweight * elems;
  if (directions & kNormBackwardBias) flops += per.dbias * elems;
  return flops;
}

Status NormSignature::validate() const {
  const KindText& text = text_of(kind_);
  const std::string token(text.token);
  const int rank = static_cast<int>(input_shape.size());
  if (rank < 1) return invalid_argument(token + " --input/-X needs at least one dimension");
  for (int i = 0; i < rank; ++i) {
    if (input_shape[i] < 1)
      return invalid_argument(token + " --input/-X dimension " + std::to_string(i) + " must be positive, got " +
                              std::to_string(input_shape[i]));
  }
  if (const base::CheckedInt elements = base::checked_product(input_shape);
      !elements.ok() || elements.value() > base::kMaxTensorElements)
    return invalid_argument(token + " --input/-X " + base::join_ints(input_shape, "x") + " would hold more than " +
                            base::max_tensor_elements_text() + " elements, boo's limit per tensor");
  if (normalized_dim < 0 || normalized_dim >= rank)
    return invalid_argument(std::string(text.axis_owner) + "--normalized_dim/-o " + std::to_string(normalized_dim) +
                            " is out of range for a rank-" + std::to_string(rank) + " input " +
                            base::join_ints(input_shape, "x") + ": it must be in [0, " + std::to_string(rank - 1) +
                            "] (" + std::string(text.axis_hint) + ")");
  if (!(eps > 0)) return invalid_argument("--eps/-e must be positive, got " + base::format_double(eps));
  if (kind_ == NormKind::kRms) {
    if (bias) return invalid_argument("t5layernorm has no bias (RMS norm: y = x * rstd * weight)");
    if (!layout.empty()) return invalid_argument("t5layernorm takes -X and no --layout (contiguous tensors)");
    if (permuted()) return invalid_argument("t5layernorm takes a contiguous input (--input-permutation is layernorm's)");
    return validate_rms_directions(directions, weight);
  }
  if (bias && !weight) return invalid_argument("layernorm bias needs the weight (elementwise affine) as well");
  if (fused_add && (!layout.empty() || permuted() || weight != bias))
    return invalid_argument("addlayernorm takes -X (contiguous tensors), -m 2 (no weight and bias) or 3 (both)");
  BOO_RETURN_IF_ERROR(validate_layer_directions(directions, weight, bias));
  if (!layout.empty()) {
    // The syntax's -F names the forward, the whole backward of the mode, or both.
    const uint8_t backward = kNormBackwardData | (weight ? kNormBackwardWeight : 0) | (bias ? kNormBackwardBias : 0);
    if (directions != kNormForward && directions != backward && directions != (kNormForward | backward))
      return invalid_argument("layernorm -N -C -H -W syntax: -F 0 (forward and backward), 1 (forward) or 2 "
                              "(backward) computes the whole backward of the mode; a partial one needs -X");
    if (permuted())
      return invalid_argument("layernorm --layout and --input-permutation both set the input's memory order: give one");
    return ops::norm::layout_order(layout, rank, "layernorm --layout").status();
  }
  return validate_permutation(input_permutation, rank);
}

namespace {

// MIOpen's current layernorm syntax: -N -C -D -H -W from the shape (rank 2:
// [N, W], C and H 0), --layout, and -F 0 forward and backward, 1 forward, 2
// backward.
std::vector<std::string> dims_syntax_command(const NormSignature& sig, std::string token) {
  const std::vector<int64_t>& s = sig.input_shape;
  const bool rank2 = s.size() == 2, rank5 = s.size() == 5;
  const int64_t c = rank2 ? 0 : s[1], d = rank5 ? s[2] : 0, h = rank2 ? 0 : s[s.size() - 2];
  const uint8_t dir = sig.directions;
  const std::string forw = dir == kNormForward ? "1" : (dir & kNormForward) ? "0" : "2";
  std::vector<std::string> w{std::move(token), "-N", std::to_string(s[0]), "-C", std::to_string(c), "-D",
                             std::to_string(d), "-H", std::to_string(h), "-W", std::to_string(s.back()),
                             "--layout", sig.layout, "-o", std::to_string(sig.normalized_dim), "-e",
                             base::format_double(sig.eps), "-m", sig.weight ? "1" : "0", "-F", forw};
  if (sig.weight && !sig.bias) w.insert(w.end(), {"--bias", "0"});
  if (!sig.use_aten) w.insert(w.end(), {"--use-aten", "0"});
  return w;
}

}  // namespace

std::string NormSignature::command() const {
  if (!layout.empty()) return base::shell_join(dims_syntax_command(*this, op_token(kind_, dtype)));
  std::vector<std::string> w{op_token(kind_, dtype), "-X", base::join_ints(input_shape, "x")};
  if (kind_ == NormKind::kRms) {
    const int forw = directions == kNormForward ? 1 : (directions & kNormForward) ? 0 : 2;
    w.insert(w.end(), {"-e", base::format_double(eps), "-m", weight ? "5" : "4", "-F", std::to_string(forw)});
    if (normalized_dim != static_cast<int>(input_shape.size()) - 1)
      w.insert(w.end(), {"-o", std::to_string(normalized_dim)});
    return base::shell_join(w);
  }
  if (fused_add) {
    // MIOpen's modes 2 and 3; -F 0: the forward and the whole backward.
    const bool both = (directions & kNormForward) && directions != kNormForward;
    w[0] = op_token(kind_, dtype, true);
    w.insert(w.end(), {"-o", std::to_string(normalized_dim), "-e", base::format_double(eps), "-m", weight ? "3" : "2",
                       "-F", both ? "0" : std::to_string(directions)});
    return base::shell_join(w);
  }
  w.insert(w.end(), {"-o", std::to_string(normalized_dim), "-e", base::format_double(eps), "-m", weight ? "1" : "0",
                     "-F", std::to_string(directions)});
  if (weight && !bias) w.insert(w.end(), {"--bias", "0"});
  if (permuted()) {
    w.push_back("--input-permutation");
    for (int p : input_permutation) w.push_back(std::to_string(p));
  }
  if (!use_aten) w.insert(w.end(), {"--use-aten", "0"});
  return base::shell_join(w);
}

std::string NormSignature::func_name() const {
  const std::string dims = std::to_string(normalized_shape().size()) + "d";
  if (kind_ == NormKind::kRms) {
    // boo's name, in the form of BOO's layer_norm names (BOO has no RMS norm):
    // rms_norm_{#normalized dims}d_{dtype}_float32_{mode}_{shape}_{w}
    const std::string mode = directions == kNormForward ? "forward"
                             : (directions & kNormForward) ? "forward_backward"
                                                           : "backward";
    return "rms_norm_" + dims + "_" + std::string(dtype_name(dtype)) + "_float32_" + mode + "_" +
           base::join_ints(input_shape, "x") + (weight ? "_w" : "");
  }
  // iree-turbine's LayerNormSignature.func_name:
  // layer_norm_{#normalized dims}d_{dtype}_{saved-stat dtype}_{mode}_{shape}_{w}_{b}_{perm_...}_{aten}
  // BOO always writes "w" and "b" (it tests bools against None); boo writes
  // them only when the weight and bias exist.
  std::vector<std::string> items = {
      fused_add ? "add_layer_norm" : "layer_norm", dims, std::string(dtype_name(dtype)), "float32", layer_mode_name(directions),
      base::join_ints(input_shape, "x"), weight ? "w" : "", bias ? "b" : "",
  };
  std::string perm;
  if (permuted()) {
    perm = "perm_";
    for (int p : input_permutation) perm += std::to_string(p);
  }
  if (!layout.empty() && layout != ops::norm::logical_layout(static_cast<int>(input_shape.size())))
    perm = base::to_lower(layout);
  items.push_back(perm);
  items.push_back(use_aten ? "aten" : "");
  std::string name;
  for (size_t i = 0; i < items.size(); ++i) name += (i ? "_" : "") + items[i];
  return name;
}

bool NormSignature::operator==(const NormSignature& o) const {
  return kind_ == o.kind_ && dtype == o.dtype && input_shape == o.input_shape && normalized_dim == o.normalized_dim &&
         eps == o.eps && weight == o.weight && bias == o.bias && directions == o.directions &&
         input_permutation == o.input_permutation && use_aten == o.use_aten && layout == o.layout &&
         fused_add == o.fused_add;
}

bool NormSignature::equals(const OpSignature& other) const {
  const auto* o = dynamic_cast<const NormSignature*>(&other);
  return o && *o == *this;
}

std::unique_ptr<OpSignature> LayerNormSignature::clone() const { return std::make_unique<LayerNormSignature>(*this); }
std::unique_ptr<OpSignature> AddLayerNormSignature::clone() const {
  return std::make_unique<AddLayerNormSignature>(*this);
}
std::unique_ptr<OpSignature> RmsNormSignature::clone() const { return std::make_unique<RmsNormSignature>(*this); }

}  // namespace boo
