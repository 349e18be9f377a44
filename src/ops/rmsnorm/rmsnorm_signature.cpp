// boo: RmsNormSignature — validation, shapes, canonical command and function name.
#include <algorithm>

#include "base/strings.hpp"
#include "boo/rmsnorm.hpp"

namespace boo {

std::vector<int64_t> RmsNormSignature::normalized_shape() const {
  if (normalized_dim < 0 || normalized_dim >= static_cast<int>(input_shape.size())) return {};
  return std::vector<int64_t>(input_shape.begin() + normalized_dim, input_shape.end());
}

int64_t RmsNormSignature::rows() const {
  int64_t r = 1;
  for (int i = 0; i < normalized_dim && i < static_cast<int>(input_shape.size()); ++i) r *= input_shape[i];
  return r;
}

int64_t RmsNormSignature::row_length() const {
  int64_t n = 1;
  for (int64_t d : normalized_shape()) n *= d;
  return n;
}

TensorSpec RmsNormSignature::dense_spec(std::string name) const {
  return TensorSpec{std::move(name), input_shape, contiguous_strides(input_shape), dtype, ""};
}

TensorSpec RmsNormSignature::param_spec(std::string name) const {
  std::vector<int64_t> shape = normalized_shape();
  return TensorSpec{std::move(name), shape, contiguous_strides(shape), dtype, ""};
}

TensorSpec RmsNormSignature::stat_spec(std::string name) const {
  // MIOpen's rstd: the leading dims (a scalar's shape [] becomes [1]).
  std::vector<int64_t> shape(input_shape.begin(), input_shape.begin() + std::max(normalized_dim, 0));
  if (shape.empty()) shape.push_back(1);
  return TensorSpec{std::move(name), shape, contiguous_strides(shape), DType::kF32, ""};
}

std::vector<TensorSpec> RmsNormSignature::arguments() const {
  std::vector<TensorSpec> args;
  const bool forward = directions & kRmsNormForward;
  args.push_back(dense_spec("x"));
  if (weight) args.push_back(param_spec("weight"));
  if (directions & (kRmsNormBackwardData | kRmsNormBackwardWeight)) {
    args.push_back(dense_spec("dy"));
    if (!forward) args.push_back(stat_spec("rstd"));  // with the forward, the rstd it computes
  }
  return args;
}

std::vector<TensorSpec> RmsNormSignature::results() const {
  std::vector<TensorSpec> out;
  if (directions & kRmsNormForward) {
    out.push_back(dense_spec("y"));
    out.push_back(stat_spec("rstd"));
  }
  if (directions & kRmsNormBackwardData) out.push_back(dense_spec("dx"));
  if (directions & kRmsNormBackwardWeight) out.push_back(param_spec("dweight"));
  return out;
}

double RmsNormSignature::flop_count() const {
  // About 4 operations per element forward (square, sum, scale, weight) and
  // 5 per element for each backward result.
  const double elems = static_cast<double>(rows()) * static_cast<double>(row_length());
  double flops = 0;
  if (directions & kRmsNormForward) flops += 4 * elems;
  if (directions & kRmsNormBackwardData) flops += 5 * elems;
  if (directions & kRmsNormBackwardWeight) flops += 3 * elems;
  return flops;
}

Status RmsNormSignature::validate() const {
  const int rank = static_cast<int>(input_shape.size());
  if (rank < 1) return invalid_argument("t5layernorm --input/-X needs at least one dimension");
  for (int i = 0; i < rank; ++i) {
    if (input_shape[i] < 1)
      return invalid_argument("t5layernorm --input/-X dimension " + std::to_string(i) + " must be positive, got " +
                              std::to_string(input_shape[i]));
  }
  if (normalized_dim < 0 || normalized_dim >= rank)
    return invalid_argument("t5layernorm --normalized_dim/-o " + std::to_string(normalized_dim) +
                            " is out of range for a rank-" + std::to_string(rank) + " input " +
                            base::join_ints(input_shape, "x") + ": it must be in [0, " + std::to_string(rank - 1) +
                            "] (the first normalized axis; default the last)");
  if (!(eps > 0)) return invalid_argument("--eps/-e must be positive, got " + base::format_double(eps));
  const uint8_t backward = weight ? (kRmsNormBackwardData | kRmsNormBackwardWeight) : kRmsNormBackwardData;
  if (directions != kRmsNormForward && directions != backward && directions != (kRmsNormForward | backward))
    return internal_error("rmsnorm directions " + std::to_string(directions) + " are not a MIOpen -F mode");
  return ok_status();
}

namespace {

std::string op_token(DType dtype) {
  switch (dtype) {
    case DType::kF16: return "t5layernormfp16";
    case DType::kBF16: return "t5layernormbfp16";
    default: return "t5layernorm";
  }
}

}  // namespace

std::string RmsNormSignature::command() const {
  const int forw = directions == kRmsNormForward ? 1 : (directions & kRmsNormForward) ? 0 : 2;
  std::vector<std::string> w{op_token(dtype), "-X", base::join_ints(input_shape, "x"),
                             "-e", base::format_double(eps),
                             "-m", weight ? "5" : "4",
                             "-F", std::to_string(forw)};
  if (normalized_dim != static_cast<int>(input_shape.size()) - 1) w.insert(w.end(), {"-o", std::to_string(normalized_dim)});
  return base::shell_join(w);
}

std::string RmsNormSignature::func_name() const {
  // boo's name, in the form of BOO's layer_norm names (BOO has no RMS norm):
  // rms_norm_{#normalized dims}d_{dtype}_float32_{mode}_{shape}_{w}
  const std::string mode = directions == kRmsNormForward ? "forward"
                           : (directions & kRmsNormForward) ? "forward_backward"
                                                            : "backward";
  return "rms_norm_" + std::to_string(normalized_shape().size()) + "d_" + std::string(dtype_name(dtype)) +
         "_float32_" + mode + "_" + base::join_ints(input_shape, "x") + (weight ? "_w" : "");
}

std::unique_ptr<OpSignature> RmsNormSignature::clone() const { return std::make_unique<RmsNormSignature>(*this); }

bool RmsNormSignature::operator==(const RmsNormSignature& o) const {
  return dtype == o.dtype && input_shape == o.input_shape && normalized_dim == o.normalized_dim && eps == o.eps &&
         weight == o.weight && directions == o.directions;
}

bool RmsNormSignature::equals(const OpSignature& other) const {
  const auto* o = dynamic_cast<const RmsNormSignature*>(&other);
  return o && *o == *this;
}

}  // namespace boo
