// boo: LayerNormSignature — validation, shapes, canonical command and function name.
#include <algorithm>
#include <numeric>

#include "base/strings.hpp"
#include "boo/layernorm.hpp"

namespace boo {

std::vector<int64_t> LayerNormSignature::normalized_shape() const {
  if (normalized_dim < 0 || normalized_dim >= static_cast<int>(input_shape.size())) return {};
  return std::vector<int64_t>(input_shape.begin() + normalized_dim, input_shape.end());
}

int64_t LayerNormSignature::rows() const {
  int64_t r = 1;
  for (int i = 0; i < normalized_dim && i < static_cast<int>(input_shape.size()); ++i) r *= input_shape[i];
  return r;
}

int64_t LayerNormSignature::row_length() const {
  int64_t n = 1;
  for (int64_t d : normalized_shape()) n *= d;
  return n;
}

bool LayerNormSignature::permuted() const {
  for (size_t i = 0; i < input_permutation.size(); ++i)
    if (input_permutation[i] != static_cast<int>(i)) return true;
  return false;
}

TensorSpec LayerNormSignature::x_spec(std::string name) const {
  std::vector<int64_t> strides =
      permuted() ? permuted_strides(input_shape, input_permutation) : contiguous_strides(input_shape);
  return TensorSpec{std::move(name), input_shape, std::move(strides), dtype, ""};
}

TensorSpec LayerNormSignature::dense_spec(std::string name) const {
  return TensorSpec{std::move(name), input_shape, contiguous_strides(input_shape), dtype, ""};
}

TensorSpec LayerNormSignature::param_spec(std::string name) const {
  std::vector<int64_t> shape = normalized_shape();
  return TensorSpec{std::move(name), shape, contiguous_strides(shape), dtype, ""};
}

TensorSpec LayerNormSignature::stat_spec(std::string name) const {
  // BOO's aggregate shape: the leading dims, then a 1 per normalized dim.
  std::vector<int64_t> shape = input_shape;
  for (size_t i = static_cast<size_t>(std::max(normalized_dim, 0)); i < shape.size(); ++i) shape[i] = 1;
  return TensorSpec{std::move(name), shape, contiguous_strides(shape), DType::kF32, ""};
}

std::vector<TensorSpec> LayerNormSignature::arguments() const {
  std::vector<TensorSpec> args;
  if (directions & kLayerNormForward) {
    args.push_back(x_spec("x"));
    if (weight) args.push_back(param_spec("weight"));
    if (bias) args.push_back(param_spec("bias"));
    return args;
  }
  args.push_back(dense_spec("dy"));
  if (directions & (kLayerNormBackwardData | kLayerNormBackwardWeight)) {
    args.push_back(x_spec("x"));
    if ((directions & kLayerNormBackwardData) && weight) args.push_back(param_spec("weight"));
    args.push_back(stat_spec("mean"));
    args.push_back(stat_spec("rstd"));
  }
  return args;
}

std::vector<TensorSpec> LayerNormSignature::results() const {
  std::vector<TensorSpec> out;
  if (directions & kLayerNormForward) {
    out.push_back(dense_spec("y"));
    out.push_back(stat_spec("mean"));
    out.push_back(stat_spec("rstd"));
  }
  if (directions & kLayerNormBackwardData) out.push_back(dense_spec("dx"));
  if (directions & kLayerNormBackwardWeight) out.push_back(param_spec("dweight"));
  if (directions & kLayerNormBackwardBias) out.push_back(param_spec("dbias"));
  return out;
}

double LayerNormSignature::flop_count() const {
  // About 8 operations per element forward (mean, variance, normalize, affine)
  // and 6 per element for each backward result.
  const double elems = static_cast<double>(rows()) * static_cast<double>(row_length());
  double flops = 0;
  if (directions & kLayerNormForward) flops += 8 * elems;
  for (uint8_t bit : {kLayerNormBackwardData, kLayerNormBackwardWeight, kLayerNormBackwardBias})
    if (directions & bit) flops += 6 * elems;
  return flops;
}

Status LayerNormSignature::validate() const {
  const int rank = static_cast<int>(input_shape.size());
  if (rank < 1) return invalid_argument("layernorm --input/-X needs at least one dimension");
  for (int i = 0; i < rank; ++i) {
    if (input_shape[i] < 1)
      return invalid_argument("layernorm --input/-X dimension " + std::to_string(i) + " must be positive, got " +
                              std::to_string(input_shape[i]));
  }
  if (normalized_dim < 0 || normalized_dim >= rank)
    return invalid_argument("--normalized_dim/-o " + std::to_string(normalized_dim) + " is out of range for a rank-" +
                            std::to_string(rank) + " input " + base::join_ints(input_shape, "x") +
                            ": it must be in [0, " + std::to_string(rank - 1) + "] (the first normalized axis)");
  if (!(eps > 0)) return invalid_argument("--eps/-e must be positive, got " + base::format_double(eps));
  if (bias && !weight) return invalid_argument("layernorm bias needs the weight (elementwise affine) as well");
  constexpr uint8_t kBackward = kLayerNormBackwardData | kLayerNormBackwardWeight | kLayerNormBackwardBias;
  const bool forward_only = directions == kLayerNormForward;
  const bool backward_only = directions != 0 && (directions & ~kBackward) == 0;
  if (!forward_only && !backward_only)
    return invalid_argument("layernorm --forw/-F " + std::to_string(directions) +
                            " is not a mode: use 1 (forward), 2 (input backward), 4 (weight backward), "
                            "8 (bias backward), 14 (full backward) or another sum of 2, 4 and 8");
  if (!input_permutation.empty()) {
    std::vector<int> sorted = input_permutation;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int> identity(static_cast<size_t>(rank));
    std::iota(identity.begin(), identity.end(), 0);
    if (sorted != identity) {
      std::string perm;
      for (int p : input_permutation) perm += std::to_string(p) + " ";
      return invalid_argument("--input-permutation " + perm + "is not a permutation of 0.." +
                              std::to_string(rank - 1) + " for a rank-" + std::to_string(rank) + " input");
    }
  }
  return ok_status();
}

namespace {

std::string op_token(DType dtype) {
  switch (dtype) {
    case DType::kF16: return "layernormfp16";
    case DType::kBF16: return "layernormbfp16";
    default: return "layernorm";
  }
}

std::string boo_mode_name(uint8_t directions) {
  switch (directions) {
    case kLayerNormForward: return "forward";
    case kLayerNormBackwardData: return "input_backward";
    case kLayerNormBackwardWeight: return "weight_backward";
    case kLayerNormBackwardBias: return "bias_backward";
    case kLayerNormBackwardData | kLayerNormBackwardWeight | kLayerNormBackwardBias: return "full_backward";
    // Partial combinations are a boo extension; BOO's Mode has no name for them.
    case kLayerNormBackwardData | kLayerNormBackwardWeight: return "input_weight_backward";
    case kLayerNormBackwardData | kLayerNormBackwardBias: return "input_bias_backward";
    case kLayerNormBackwardWeight | kLayerNormBackwardBias: return "weight_bias_backward";
  }
  return "invalid";
}

}  // namespace

std::string LayerNormSignature::command() const {
  std::vector<std::string> w{op_token(dtype), "-X", base::join_ints(input_shape, "x"),
                             "-o", std::to_string(normalized_dim),
                             "-e", base::format_double(eps),
                             "-m", weight ? "1" : "0",
                             "-F", std::to_string(directions)};
  if (weight && !bias) w.insert(w.end(), {"--bias", "0"});
  if (permuted()) {
    w.push_back("--input-permutation");
    for (int p : input_permutation) w.push_back(std::to_string(p));
  }
  if (!use_aten) w.insert(w.end(), {"--use-aten", "0"});
  return base::shell_join(w);
}

std::string LayerNormSignature::func_name() const {
  // iree-turbine's LayerNormSignature.func_name:
  // layer_norm_{#normalized dims}d_{dtype}_{saved-stat dtype}_{mode}_{shape}_{w}_{b}_{perm_...}_{aten}
  // BOO always writes "w" and "b" (it tests bools against None); boo writes
  // them only when the weight and bias exist.
  std::vector<std::string> items = {
      "layer_norm",
      std::to_string(normalized_shape().size()) + "d",
      std::string(dtype_name(dtype)),
      "float32",
      boo_mode_name(directions),
      base::join_ints(input_shape, "x"),
      weight ? "w" : "",
      bias ? "b" : "",
  };
  std::string perm;
  if (permuted()) {
    perm = "perm_";
    for (int p : input_permutation) perm += std::to_string(p);
  }
  items.push_back(perm);
  items.push_back(use_aten ? "aten" : "");
  std::string name;
  for (size_t i = 0; i < items.size(); ++i) name += (i ? "_" : "") + items[i];
  return name;
}

std::unique_ptr<OpSignature> LayerNormSignature::clone() const { return std::make_unique<LayerNormSignature>(*this); }

bool LayerNormSignature::operator==(const LayerNormSignature& o) const {
  return dtype == o.dtype && input_shape == o.input_shape && normalized_dim == o.normalized_dim && eps == o.eps &&
         weight == o.weight && bias == o.bias && directions == o.directions &&
         input_permutation == o.input_permutation && use_aten == o.use_aten;
}

bool LayerNormSignature::equals(const OpSignature& other) const {
  const auto* o = dynamic_cast<const LayerNormSignature*>(&other);
  return o && *o == *this;
}

}  // namespace boo
