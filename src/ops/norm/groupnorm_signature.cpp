// boo: GroupNormSignature — validation, shapes, canonical command and name.
#include "base/strings.hpp"
#include "boo/groupnorm.hpp"
#include "ops/norm/norm_layout.hpp"

namespace boo {
namespace {

std::string token_of(DType dtype) {
  return std::string("groupnorm") + (dtype == DType::kF16 ? "fp16" : dtype == DType::kBF16 ? "bfp16" : "");
}

std::string mode_name(uint8_t directions) {
  if (directions == kNormForward) return "forward";
  return directions & kNormForward ? "forward_backward" : "backward";
}

}  // namespace

int64_t GroupNormSignature::channels_per_group() const {
  return input_shape.size() >= 2 && groups > 0 ? input_shape[1] / groups : 0;
}

int64_t GroupNormSignature::spatial_size() const {
  int64_t s = 1;
  for (size_t d = 2; d < input_shape.size(); ++d) s *= input_shape[d];
  return s;
}

int64_t GroupNormSignature::group_size() const { return channels_per_group() * spatial_size(); }

uint8_t GroupNormSignature::backward_directions() const {
  return kNormBackwardData | (affine ? kNormBackwardWeight | kNormBackwardBias : 0);
}

TensorSpec GroupNormSignature::x_spec(std::string name) const {
  return TensorSpec{std::move(name), input_shape, ops::norm::layout_strides(input_shape, layout), dtype, layout};
}

TensorSpec GroupNormSignature::param_spec(std::string name) const {
  const std::vector<int64_t> shape{input_shape.size() >= 2 ? input_shape[1] : 0};
  return TensorSpec{std::move(name), shape, contiguous_strides(shape), dtype, ""};
}

TensorSpec GroupNormSignature::stat_spec(std::string name) const {
  const std::vector<int64_t> shape{input_shape.empty() ? 0 : input_shape[0], groups};
  return TensorSpec{std::move(name), shape, contiguous_strides(shape), DType::kF32, ""};
}

std::string_view GroupNormSignature::op_name() const { return "groupnorm"; }

// MIOpen's forward order (x, weight, bias), then dy when the backward follows
// (it reads the statistics the forward computes); a backward alone reads dy,
// x, the weight and the saved statistics.
std::vector<TensorSpec> GroupNormSignature::arguments() const {
  std::vector<TensorSpec> args;
  if (directions & kNormForward) {
    args.push_back(x_spec("x"));
    if (affine) {
      args.push_back(param_spec("weight"));
      args.push_back(param_spec("bias"));
    }
    if (directions != kNormForward) args.push_back(x_spec("dy"));
    return args;
  }
  args.push_back(x_spec("dy"));
  args.push_back(x_spec("x"));
  if (affine) args.push_back(param_spec("weight"));
  args.push_back(stat_spec("mean"));
  args.push_back(stat_spec("rstd"));
  return args;
}

std::vector<TensorSpec> GroupNormSignature::results() const {
  std::vector<TensorSpec> out;
  if (directions & kNormForward) {
    out.push_back(x_spec("y"));
    out.push_back(stat_spec("mean"));
    out.push_back(stat_spec("rstd"));
  }
  if (directions & kNormBackwardData) out.push_back(x_spec("dx"));
  if (directions & kNormBackwardWeight) out.push_back(param_spec("dweight"));
  if (directions & kNormBackwardBias) out.push_back(param_spec("dbias"));
  return out;
}

// Per element: mean, variance, normalize, affine (~8); the backward's sums and dx (~10).
double GroupNormSignature::flop_count() const {
  double elems = 1;
  for (int64_t d : input_shape) elems *= static_cast<double>(d);
  return ((directions & kNormForward) ? 8 * elems : 0) + ((directions & kNormBackwardData) ? 10 * elems : 0);
}

Status GroupNormSignature::validate() const {
  const std::string token = token_of(dtype);
  const size_t rank = input_shape.size();
  if (rank < 3 || rank > 5)
    return invalid_argument(token + ": the input is [N, C, W], [N, C, H, W] or [N, C, D, H, W], got rank " +
                            std::to_string(rank));
  const char* names[] = {"--batchsize/-n", "--in_channels/-c", "--in_d/-D", "--in_h/-H", "--in_w/-W"};
  for (size_t d = 0; d < rank; ++d) {
    const char* name = names[d < 2 ? d : d + 5 - rank];
    if (input_shape[d] < 1)
      return invalid_argument(token + " " + name + " must be positive, got " + std::to_string(input_shape[d]));
  }
  if (groups < 1 || input_shape[1] % groups != 0)
    return invalid_argument(token + " --num_groups/-g " + std::to_string(groups) + " must be positive and divide " +
                            "the " + std::to_string(input_shape[1]) + " channels (--in_channels/-c)");
  if (!(eps > 0)) return invalid_argument(token + " --eps/-e must be positive, got " + base::format_double(eps));
  if (dtype != DType::kF32 && dtype != DType::kF16 && dtype != DType::kBF16)
    return invalid_argument(token + ": element type " + std::string(dtype_name(dtype)) +
                            " is not one of groupnorm's (float32, float16, bfloat16)");
  const uint8_t backward = backward_directions();
  if (directions != kNormForward && directions != backward && directions != (kNormForward | backward))
    return invalid_argument(token + " directions " + std::to_string(directions) +
                            " are not a mode: the forward (-F 1), the whole backward of the mode (-F 2: dx, with "
                            "-m 1 dweight and dbias) or both (-F 0)");
  return ops::norm::layout_order(layout, static_cast<int>(rank), token + " --layout").status();
}

// MIOpenDriver's dims: -D and -H 0 leave them out (its default -D is 14).
std::string GroupNormSignature::command() const {
  const size_t rank = input_shape.size();
  const int64_t d = rank == 5 ? input_shape[2] : 0, h = rank >= 4 ? input_shape[rank - 2] : 0;
  const char* forw = directions == kNormForward ? "1" : (directions & kNormForward) ? "0" : "2";
  std::vector<std::string> w{token_of(dtype), "-n", std::to_string(input_shape[0]), "-c",
                             std::to_string(input_shape[1]), "-D", std::to_string(d), "-H", std::to_string(h), "-W",
                             std::to_string(input_shape.back()), "-g", std::to_string(groups), "-e",
                             base::format_double(eps), "-m", affine ? "1" : "0", "-F", forw};
  if (layout != ops::norm::logical_layout(static_cast<int>(rank))) w.insert(w.end(), {"--layout", layout});
  return base::shell_join(w);
}

// boo's name, in the form of BOO's norm names:
// group_norm_{1d|2d|3d}_{dtype}_float32_{mode}_{shape}_g{groups}[_wb]_{layout}.
std::string GroupNormSignature::func_name() const {
  return "group_norm_" + std::to_string(input_shape.size() - 2) + "d_" + std::string(dtype_name(dtype)) +
         "_float32_" + mode_name(directions) + "_" + base::join_ints(input_shape, "x") + "_g" +
         std::to_string(groups) + (affine ? "_wb" : "") + "_" + base::to_lower(layout);
}

std::unique_ptr<OpSignature> GroupNormSignature::clone() const { return std::make_unique<GroupNormSignature>(*this); }

bool GroupNormSignature::operator==(const GroupNormSignature& o) const {
  return dtype == o.dtype && input_shape == o.input_shape && groups == o.groups && eps == o.eps &&
         affine == o.affine && directions == o.directions && layout == o.layout;
}

bool GroupNormSignature::equals(const OpSignature& other) const {
  const auto* o = dynamic_cast<const GroupNormSignature*>(&other);
  return o && *o == *this;
}

}  // namespace boo
