// boo: ConvSignature — validation, shapes, canonical command and function name.
#include <cmath>

#include "base/checked_int.hpp"
#include "base/strings.hpp"
#include "boo/conv.hpp"
#include "ops/conv/conv_layout.hpp"

namespace boo {

using ops::conv::check_layout;
using ops::conv::layout_order;

//===--- Activation ---===//

Result<Activation> Activation::parse(std::string_view text_in) {
  std::string text = base::to_lower(base::trim(text_in));
  std::vector<std::string> parts = base::split(text, ':');
  const std::string accepted =
      "accepted: none, relu, sigmoid, tanh, silu, gelu, gelu_tanh, leaky_relu[:alpha], clamp:lo:hi";
  Activation a;
  if (parts.empty()) return invalid_argument("--activation: empty value; " + accepted);
  const std::string& name = parts[0];
  auto no_args = [&](Kind kind) -> Result<Activation> {
    if (parts.size() != 1) return invalid_argument("--activation " + base::echo_word(text) + ": " + name + " takes no parameters");
    a.kind = kind;
    return a;
  };
  if (name == "none") return no_args(Kind::kNone);
  if (name == "relu") return no_args(Kind::kRelu);
  if (name == "sigmoid") return no_args(Kind::kSigmoid);
  if (name == "tanh") return no_args(Kind::kTanh);
  if (name == "silu" || name == "swish") return no_args(Kind::kSilu);
  if (name == "gelu") return no_args(Kind::kGelu);
  if (name == "gelu_tanh") return no_args(Kind::kGeluTanh);
  if (name == "leaky_relu") {
    if (parts.size() > 2) return invalid_argument("--activation " + base::echo_word(text) + ": expected leaky_relu[:alpha]");
    a.kind = Kind::kLeakyRelu;
    if (parts.size() == 2) {
      Result<double> alpha = base::parse_double(parts[1]);
      if (!alpha.ok()) return invalid_argument("--activation " + base::echo_word(text) + ": alpha " + alpha.status().message());
      a.alpha = *alpha;
    }
    return a;
  }
  if (name == "clamp") {
    if (parts.size() != 3) return invalid_argument("--activation " + base::echo_word(text) + ": expected clamp:lo:hi (e.g. clamp:0:6)");
    Result<double> lo = base::parse_double(parts[1]);
    Result<double> hi = base::parse_double(parts[2]);
    if (!lo.ok() || !hi.ok()) return invalid_argument("--activation " + base::echo_word(text) + ": clamp bounds must be numbers");
    if (*lo > *hi) return invalid_argument("--activation " + base::echo_word(text) + ": clamp needs lo <= hi");
    a.kind = Kind::kClamp;
    a.lo = *lo;
    a.hi = *hi;
    return a;
  }
  return invalid_argument("--activation: unknown activation '" + base::echo_word(name) + "'; " + accepted);
}

std::string Activation::to_string() const {
  switch (kind) {
    case Kind::kNone: return "none";
    case Kind::kRelu: return "relu";
    case Kind::kSigmoid: return "sigmoid";
    case Kind::kTanh: return "tanh";
    case Kind::kSilu: return "silu";
    case Kind::kGelu: return "gelu";
    case Kind::kGeluTanh: return "gelu_tanh";
    case Kind::kLeakyRelu: return "leaky_relu:" + base::format_double(alpha);
    case Kind::kClamp: return "clamp:" + base::format_double(lo) + ":" + base::format_double(hi);
  }
  return "none";
}

double Activation::apply(double v) const {
  switch (kind) {
    case Kind::kNone: return v;
    case Kind::kRelu: return v > 0 ? v : 0.0;
    case Kind::kSigmoid: return 1.0 / (1.0 + std::exp(-v));
    case Kind::kTanh: return std::tanh(v);
    case Kind::kSilu: return v / (1.0 + std::exp(-v));
    case Kind::kGelu: return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    case Kind::kGeluTanh: {
      const double k = std::sqrt(2.0 / M_PI);
      return 0.5 * v * (1.0 + std::tanh(k * (v + 0.044715 * v * v * v)));
    }
    case Kind::kLeakyRelu: return v >= 0 ? v : alpha * v;
    case Kind::kClamp: return std::fmin(std::fmax(v, lo), hi);
  }
  return v;
}

//===--- Shapes ---===//

std::string default_conv_layout(int spatial_dims) {
  return "NC" + ops::conv::spatial_letters(spatial_dims);
}

namespace {

using base::CheckedInt;

// The flags of the spatial values, for messages: "dilation_w (-j)".
struct SpatialFlag {
  const char* name;         // MIOpen's long name without its dimension letter ("dilation_")
  const char* short_hw[2];  // the H and W short flags (D has none)
  std::vector<int64_t> ConvSignature::*values;
};
constexpr SpatialFlag kInputFlag{"in_", {"-H", "-W"}, &ConvSignature::input_size};
constexpr SpatialFlag kFilterFlag{"fil_", {"-y", "-x"}, &ConvSignature::filter_size};
constexpr SpatialFlag kStrideFlag{"conv_stride_", {"-u", "-v"}, &ConvSignature::stride};
constexpr SpatialFlag kPadFlag{"pad_", {"-p", "-q"}, &ConvSignature::padding};
constexpr SpatialFlag kDilationFlag{"dilation_", {"-l", "-j"}, &ConvSignature::dilation};
constexpr SpatialFlag kOutputPadFlag{"trans_output_pad_", {"-Y", "-X"}, &ConvSignature::output_padding};

// 'd', 'h' or 'w' for spatial value i of a spatial_dims-D convolution.
char dim_letter(int spatial_dims, int i) { return "dhw"[i + 3 - spatial_dims]; }

std::string spatial_flag(const SpatialFlag& flag, int spatial_dims, int i) {
  const char letter = dim_letter(spatial_dims, i);
  const std::string name = flag.name + std::string(1, letter);
  return letter == 'd' ? "--" + name : name + " (" + flag.short_hw[letter == 'w'] + ")";
}

// "pad_h (-p) = 1, dilation_h (-l) = 2" for value i of the given flags.
std::string spatial_values_text(const ConvSignature& sig, int i, std::initializer_list<const SpatialFlag*> flags) {
  std::string out;
  for (const SpatialFlag* f : flags)
    out += (out.empty() ? "" : ", ") + spatial_flag(*f, sig.spatial_dims, i) + " = " +
           std::to_string((sig.*(f->values))[static_cast<size_t>(i)]);
  return out;
}

// Spatial sizes of y, checked: an error names the flags whose values overflow int64.
Result<std::vector<int64_t>> checked_output_size(const ConvSignature& sig) {
  std::vector<int64_t> out(static_cast<size_t>(sig.spatial_dims));
  for (int i = 0; i < sig.spatial_dims; ++i) {
    const size_t d = static_cast<size_t>(i);
    const CheckedInt extent = CheckedInt(sig.dilation[d]) * (CheckedInt(sig.filter_size[d]) - 1) + 1;
    CheckedInt size = 0;
    if (sig.transposed) {
      size = CheckedInt(sig.stride[d]) * (CheckedInt(sig.input_size[d]) - 1) + extent - CheckedInt(2) * sig.padding[d] +
             sig.output_padding[d];
    } else {
      const CheckedInt span = CheckedInt(sig.input_size[d]) + CheckedInt(2) * sig.padding[d] - extent;
      size = span.ok() && span.value() < 0 ? CheckedInt(0) : span / sig.stride[d] + 1;
    }
    if (!size.ok())
      return invalid_argument(
          std::string("the output size in ") + dim_letter(sig.spatial_dims, i) + " does not fit int64 with " +
          spatial_values_text(sig, i, {&kInputFlag, &kFilterFlag, &kStrideFlag, &kPadFlag, &kDilationFlag}));
    out[d] = size.value();
  }
  return out;
}

// An error when a tensor with these dimensions ("name = value" each) would hold
// more than kMaxTensorElements elements.
Status check_elements(const char* tensor, const std::vector<std::pair<std::string, int64_t>>& dims) {
  CheckedInt elements = 1;
  std::string text;
  for (const auto& [name, value] : dims) {
    elements *= value;
    text += (text.empty() ? "" : ", ") + name + " = " + std::to_string(value);
  }
  if (elements.ok() && elements.value() <= base::kMaxTensorElements) return ok_status();
  return invalid_argument(std::string(tensor) + " would hold more than " + base::max_tensor_elements_text() +
                          " elements, boo's limit per tensor: " + text);
}

// The dimensions of x (or of the filter, or of y) with the flags that set them.
std::vector<std::pair<std::string, int64_t>> tensor_dims(const ConvSignature& sig, char tensor,
                                                         const std::vector<int64_t>& out) {
  std::vector<std::pair<std::string, int64_t>> dims;
  if (tensor == 'w') {
    dims = sig.transposed ? decltype(dims){{"-c", sig.c}, {"-k/-g", sig.k / sig.groups}}
                          : decltype(dims){{"-k", sig.k}, {"-c/-g", sig.c / sig.groups}};
  } else {
    dims = {{"-n", sig.n}, {tensor == 'x' ? "-c" : "-k", tensor == 'x' ? sig.c : sig.k}};
  }
  for (int i = 0; i < sig.spatial_dims; ++i) {
    const size_t d = static_cast<size_t>(i);
    if (tensor == 'x') dims.emplace_back(spatial_flag(kInputFlag, sig.spatial_dims, i), sig.input_size[d]);
    if (tensor == 'w') dims.emplace_back(spatial_flag(kFilterFlag, sig.spatial_dims, i), sig.filter_size[d]);
    if (tensor == 'y') dims.emplace_back(std::string("output ") + dim_letter(sig.spatial_dims, i), out[d]);
  }
  return dims;
}

}  // namespace

std::vector<int64_t> ConvSignature::output_size() const {
  Result<std::vector<int64_t>> out = checked_output_size(*this);
  // validate() rejects the signatures whose sizes overflow; for them every size reads 0 (< 1, invalid).
  return out.ok() ? *out : std::vector<int64_t>(static_cast<size_t>(std::max(spatial_dims, 0)), 0);
}

namespace {

TensorSpec make_spec(std::string name, std::vector<int64_t> shape, const std::string& layout, DType dtype) {
  std::vector<int64_t> strides = permuted_strides(shape, layout_order(layout));
  return TensorSpec{std::move(name), std::move(shape), std::move(strides), dtype, layout};
}

std::vector<int64_t> concat(std::vector<int64_t> head, const std::vector<int64_t>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

// Sizes in the order of the layout's letters (BOO prints shapes that way).
std::string shape_in_layout(const TensorSpec& spec) {
  std::vector<int64_t> dims;
  for (int d : layout_order(spec.layout)) dims.push_back(spec.shape[d]);
  return base::join_ints(dims, "x");
}

}  // namespace

TensorSpec ConvSignature::x_spec(std::string name) const {
  return make_spec(std::move(name), concat({n, c}, input_size), input_layout, dtype);
}

TensorSpec ConvSignature::w_spec(std::string name) const {
  // Regular: [K, C/g, filter...]. Transposed (MIOpen -m trans): [C, K/g, filter...].
  std::vector<int64_t> head = transposed ? std::vector<int64_t>{c, k / groups} : std::vector<int64_t>{k, c / groups};
  return make_spec(std::move(name), concat(head, filter_size), filter_layout, dtype);
}

TensorSpec ConvSignature::y_spec(std::string name) const {
  return make_spec(std::move(name), concat({n, k}, output_size()), output_layout, dtype);
}

TensorSpec ConvSignature::bias_spec(std::string name) const {
  return TensorSpec{std::move(name), {k}, {1}, dtype, ""};
}

std::vector<TensorSpec> ConvSignature::arguments() const {
  std::vector<TensorSpec> args;
  if (directions & kConvForward) {
    args.push_back(x_spec("x"));
    args.push_back(w_spec("w"));
    if (bias) args.push_back(bias_spec("b"));
    if (residual) args.push_back(y_spec("z"));
  }
  if (directions & (kConvBackwardData | kConvBackwardWeight | kConvBackwardBias)) {
    args.push_back(y_spec("dy"));
    // The gradients need only some of the forward operands.
    if ((directions & kConvBackwardWeight) && !(directions & kConvForward)) args.push_back(x_spec("x"));
    if ((directions & kConvBackwardData) && !(directions & kConvForward)) args.push_back(w_spec("w"));
  }
  return args;
}

std::vector<TensorSpec> ConvSignature::results() const {
  std::vector<TensorSpec> out;
  if (directions & kConvForward) out.push_back(y_spec("y"));
  if (directions & kConvBackwardData) out.push_back(x_spec("dx"));
  if (directions & kConvBackwardWeight) out.push_back(w_spec("dw"));
  if (directions & kConvBackwardBias) out.push_back(bias_spec("db"));
  return out;
}

double ConvSignature::flop_count() const {
  // One multiply-add per (batch, output-channel, input-channel-in-group,
  // output position, filter tap) of the underlying regular convolution.
  const std::vector<int64_t> out = output_size();
  double positions = 1, taps = 1, y_positions = 1;
  for (int i = 0; i < spatial_dims; ++i) {
    positions *= static_cast<double>(transposed ? input_size[i] : out[i]);
    y_positions *= static_cast<double>(out[i]);
    taps *= static_cast<double>(filter_size[i]);
  }
  const double macs = static_cast<double>(n) * static_cast<double>(c) * static_cast<double>(k) /
                      static_cast<double>(groups) * positions * taps;
  double flops = 0;
  for (uint8_t bit : {kConvForward, kConvBackwardData, kConvBackwardWeight})
    if (directions & bit) flops += 2 * macs;
  if (directions & kConvBackwardBias) flops += static_cast<double>(n * k) * y_positions;
  return flops;
}

//===--- Validation ---===//

Status ConvSignature::validate() const {
  if (spatial_dims < 1 || spatial_dims > 3)
    return invalid_argument("--spatial_dim " + std::to_string(spatial_dims) + " is not supported: use 1, 2 or 3");
  const size_t s = static_cast<size_t>(spatial_dims);
  struct Vec {
    const std::vector<int64_t>& v;
    const char* name;
  };
  for (Vec vec : {Vec{input_size, "input size"}, Vec{filter_size, "filter size"}, Vec{stride, "stride"},
                  Vec{padding, "padding"}, Vec{dilation, "dilation"}, Vec{output_padding, "output padding"}}) {
    if (vec.v.size() != s)
      return invalid_argument(std::string(vec.name) + " has " + std::to_string(vec.v.size()) + " entries for a " +
                              std::to_string(spatial_dims) + "-D convolution (rank mismatch)");
  }
  const std::string dims = ops::conv::spatial_letters(spatial_dims);
  auto dim_name = [&](size_t i) { return std::string(1, static_cast<char>(std::tolower(dims[i]))); };
  if (n < 1) return invalid_argument("batch size -n must be positive, got " + std::to_string(n));
  if (c < 1) return invalid_argument("input channels -c must be positive, got " + std::to_string(c));
  if (k < 1) return invalid_argument("output channels -k must be positive, got " + std::to_string(k));
  for (size_t i = 0; i < s; ++i) {
    const std::string d = dim_name(i);
    if (input_size[i] < 1)
      return invalid_argument("input size in_" + d + " must be positive, got " + std::to_string(input_size[i]));
    if (filter_size[i] < 1)
      return invalid_argument("filter size fil_" + d + " must be positive, got " + std::to_string(filter_size[i]));
    if (stride[i] < 1)
      return invalid_argument("stride conv_stride_" + d + " must be positive, got " + std::to_string(stride[i]));
    if (dilation[i] < 1)
      return invalid_argument("dilation_" + d + " must be positive, got " + std::to_string(dilation[i]));
    if (padding[i] < 0)
      return invalid_argument("padding pad_" + d + " must not be negative, got " + std::to_string(padding[i]));
    if (output_padding[i] < 0)
      return invalid_argument("output padding trans_output_pad_" + d + " must not be negative, got " +
                              std::to_string(output_padding[i]));
    if (!transposed && output_padding[i] != 0)
      return invalid_argument("output padding trans_output_pad_" + d + "=" + std::to_string(output_padding[i]) +
                              " applies only to transposed convolutions (-m trans)");
    if (transposed && output_padding[i] >= stride[i])
      return invalid_argument("output padding trans_output_pad_" + d + "=" + std::to_string(output_padding[i]) +
                              " must be smaller than the stride (" + std::to_string(stride[i]) + ")");
  }
  // Strides, paddings and dilations beyond any tensor's size (checked_int.hpp).
  for (int i = 0; i < spatial_dims; ++i) {
    for (const SpatialFlag* f : {&kStrideFlag, &kPadFlag, &kDilationFlag, &kOutputPadFlag}) {
      const int64_t v = (this->*(f->values))[static_cast<size_t>(i)];
      if (v > base::kMaxTensorElements)
        return invalid_argument(spatial_flag(*f, spatial_dims, i) + " " + std::to_string(v) + " is over boo's limit of " +
                                base::max_tensor_elements_text());
    }
  }
  if (groups < 1) return invalid_argument("group count -g must be positive, got " + std::to_string(groups));
  if (c % groups != 0)
    return invalid_argument("input channels -c " + std::to_string(c) + " are not divisible by the group count -g " +
                            std::to_string(groups));
  if (k % groups != 0)
    return invalid_argument("output channels -k " + std::to_string(k) + " are not divisible by the group count -g " +
                            std::to_string(groups));
  BOO_RETURN_IF_ERROR(check_layout(input_layout, spatial_dims, "--in_layout"));
  BOO_RETURN_IF_ERROR(check_layout(filter_layout, spatial_dims, "--fil_layout"));
  BOO_RETURN_IF_ERROR(check_layout(output_layout, spatial_dims, "--out_layout"));
  BOO_RETURN_IF_ERROR(check_elements("x", tensor_dims(*this, 'x', {})));
  BOO_RETURN_IF_ERROR(check_elements("the filter w", tensor_dims(*this, 'w', {})));
  BOO_ASSIGN_OR_RETURN(const std::vector<int64_t> out, checked_output_size(*this));
  for (size_t i = 0; i < s; ++i) {
    if (out[i] < 1) {
      const std::string d = dim_name(i);
      if (transposed)
        return invalid_argument("output size " + d + " would be " + std::to_string(out[i]) +
                                " (< 1): stride*(in-1) + dilation*(fil-1) + 1 - 2*pad + out_pad with in_" + d + "=" +
                                std::to_string(input_size[i]) + ", pad_" + d + "=" + std::to_string(padding[i]));
      return invalid_argument("output size " + d + " would be < 1: the filter's extent dilation*(fil-1)+1 = " +
                              std::to_string(dilation[i] * (filter_size[i] - 1) + 1) +
                              " exceeds the padded input in_" + d + " + 2*pad_" + d + " = " +
                              std::to_string(input_size[i] + 2 * padding[i]));
    }
  }
  BOO_RETURN_IF_ERROR(check_elements("y", tensor_dims(*this, 'y', out)));
  constexpr uint8_t kBackward = kConvBackwardData | kConvBackwardWeight | kConvBackwardBias;
  if (directions == 0 || (directions & ~(kConvForward | kBackward)) != 0)
    return invalid_argument("no valid direction selected (-F): use 1 forward, 2 backward data, 4 backward weight, "
                            "0 all three, 3/5/6 combinations, or 7..10 for BOO's bias-gradient modes");
  if (!(directions & kConvForward) && bias)
    return invalid_argument("a forward bias (-b 1) needs a forward direction");
  if ((directions & kConvForward) && (directions & (kConvBackwardData | kConvBackwardWeight)) &&
      bool(directions & kConvBackwardBias) != bias)
    return invalid_argument("with forward and backward directions, -b 1 adds both the forward bias and its gradient");
  if ((directions & kConvForward) && (directions & kBackward) == kConvBackwardBias)
    return invalid_argument("a bias gradient (-F 7) cannot be combined with only a forward pass; use -F 0 -b 1");
  if (residual && directions != kConvForward)
    return invalid_argument("--residual 1 adds z to the forward convolution's output only (-F 1); this command has "
                            "backward directions (the residual's gradient is dy itself)");
  if (activation.kind != Activation::Kind::kNone && (directions & kBackward))
    return invalid_argument("--activation " + activation.to_string() +
                            " is fused into the forward convolution only (-F 1); this command has backward directions");
  if (fp32_tf32 && dtype != DType::kF32)
    return invalid_argument("--fp32-math tf32 applies to fp32 convolutions (conv), not " +
                            std::string(dtype_name(dtype)));
  return ok_status();
}

//===--- Printing ---===//

namespace {

std::string op_token(DType dtype) {
  switch (dtype) {
    case DType::kF16: return "convfp16";
    case DType::kBF16: return "convbfp16";
    default: return "conv";
  }
}

std::string boo_mode_name(uint8_t directions) {
  std::string backward;
  switch (directions & (kConvBackwardData | kConvBackwardWeight | kConvBackwardBias)) {
    case kConvBackwardData: backward = "input_backward"; break;
    case kConvBackwardWeight: backward = "weight_backward"; break;
    case kConvBackwardData | kConvBackwardWeight: backward = "input_weight_backward"; break;
    case kConvBackwardBias: backward = "bias_backward"; break;
    case kConvBackwardData | kConvBackwardBias: backward = "input_bias_backward"; break;
    case kConvBackwardWeight | kConvBackwardBias: backward = "weight_bias_backward"; break;
    case kConvBackwardData | kConvBackwardWeight | kConvBackwardBias: backward = "all_backward"; break;
    default: break;
  }
  if (!(directions & kConvForward)) return backward;
  return backward.empty() ? "forward" : "forward_" + backward;  // mixed modes: a boo extension
}

}  // namespace

std::string ConvSignature::command() const {
  std::vector<std::string> w{op_token(dtype)};
  auto add = [&](const std::string& flag, int64_t value) {
    w.push_back(flag);
    w.push_back(std::to_string(value));
  };
  // Per-dimension flags: {3-D depth flag, H flag, W flag}.
  auto add_spatial = [&](const char* d_flag, const char* h_flag, const char* w_flag, const std::vector<int64_t>& v) {
    if (spatial_dims == 3) add(d_flag, v[0]);
    add(h_flag, v[spatial_dims == 3 ? 1 : 0]);
    if (spatial_dims >= 2) add(w_flag, v[spatial_dims - 1]);
  };
  add("-n", n);
  add("-c", c);
  add_spatial("--in_d", "-H", "-W", input_size);
  add("-k", k);
  add_spatial("--fil_d", "-y", "-x", filter_size);
  add_spatial("--pad_d", "-p", "-q", padding);
  add_spatial("--conv_stride_d", "-u", "-v", stride);
  add_spatial("--dilation_d", "-l", "-j", dilation);
  if (transposed) add_spatial("--trans_output_pad_d", "-Y", "-X", output_padding);
  w.insert(w.end(), {"-m", transposed ? "trans" : "conv"});
  add("-g", groups);
  add("-F", ops::conv::direction_code(directions));
  if (bias) add("-b", 1);
  if (spatial_dims != 2) add("--spatial_dim", spatial_dims);
  const std::string def = default_conv_layout(spatial_dims);
  if (input_layout != def) w.insert(w.end(), {"--in_layout", input_layout});
  if (filter_layout != def) w.insert(w.end(), {"--fil_layout", filter_layout});
  if (output_layout != def) w.insert(w.end(), {"--out_layout", output_layout});
  if (residual) add("--residual", 1);
  if (activation.kind != Activation::Kind::kNone) w.insert(w.end(), {"--activation", activation.to_string()});
  if (fp32_tf32) w.insert(w.end(), {"--fp32-math", "tf32"});
  return base::shell_join(w);
}

std::string ConvSignature::func_name() const {
  // iree-turbine's get_conv_func_name:
  // conv_{S}d_{dtype}_{mode}[_b]_{x shape}_{x layout}_{w shape}_{w layout, n->f}_{y layout, c->f}
  //   _{stride}s_{pad}p_{dil}d_{groups}g
  // boo appends what BOO's name leaves out: transposition, residual, activation, TF32.
  std::string name = "conv_" + std::to_string(spatial_dims) + "d_" + std::string(dtype_name(dtype)) + "_" +
                     boo_mode_name(directions);
  if (bias && directions == kConvForward) name += "_b";
  std::string w_layout = base::to_lower(filter_layout);
  for (char& ch : w_layout)
    if (ch == 'n') ch = 'f';
  std::string y_layout = base::to_lower(output_layout);
  for (char& ch : y_layout)
    if (ch == 'c') ch = 'f';
  name += "_" + shape_in_layout(x_spec()) + "_" + base::to_lower(input_layout) + "_" + shape_in_layout(w_spec()) +
          "_" + w_layout + "_" + y_layout + "_" + base::join_ints(stride, "x") + "s_" +
          base::join_ints(padding, "x") + "p_" + base::join_ints(dilation, "x") + "d_" + std::to_string(groups) + "g";
  if (transposed) name += "_trans_" + base::join_ints(output_padding, "x") + "op";
  if (residual) name += "_residual";
  if (activation.kind != Activation::Kind::kNone) {
    std::string act = activation.to_string();
    for (char& ch : act)
      if (ch == ':') ch = '_';
    name += "_" + act;
  }
  if (fp32_tf32) name += "_tf32";
  return name;
}

std::unique_ptr<OpSignature> ConvSignature::clone() const { return std::make_unique<ConvSignature>(*this); }

bool ConvSignature::operator==(const ConvSignature& o) const {
  return spatial_dims == o.spatial_dims && dtype == o.dtype && n == o.n && c == o.c && k == o.k &&
         input_size == o.input_size && filter_size == o.filter_size && stride == o.stride &&
         padding == o.padding && dilation == o.dilation && output_padding == o.output_padding &&
         groups == o.groups && transposed == o.transposed && input_layout == o.input_layout &&
         filter_layout == o.filter_layout && output_layout == o.output_layout && directions == o.directions &&
         bias == o.bias && residual == o.residual && activation == o.activation && fp32_tf32 == o.fp32_tf32;
}

bool ConvSignature::equals(const OpSignature& other) const {
  const auto* o = dynamic_cast<const ConvSignature*>(&other);
  return o && *o == *this;
}

}  // namespace boo
