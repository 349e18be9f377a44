// boo: the norm ops — MIOpenDriver's layernorm and t5layernorm flag tables,
// parsing, inputs and registration. The two ops differ in their flags (data
// below) and share the rest.
#include "ops/norm/norm_op.hpp"

#include "base/checked_int.hpp"
#include "base/strings.hpp"
#include "boo/norm.hpp"
#include "ops/common/shape_flag.hpp"
#include "ops/norm/norm_layout.hpp"
#include "ops/norm/norm_problem.hpp"
#include "ops/norm/norm_ref.hpp"
#include "ops/norm/norm_ref_gpu.hpp"
#include "ops/norm/norm_rows_impl.hpp"
#include "ops/norm/norm_simple_impl.hpp"

namespace boo::ops::norm {
namespace {

constexpr OpToken kLayerNormTokens[] = {
    {"layernorm", DType::kF32},
    {"layernormfp16", DType::kF16},
    {"layernormbfp16", DType::kBF16},
};

constexpr OpToken kAddLayerNormTokens[] = {
    {"addlayernorm", DType::kF32},
    {"addlayernormfp16", DType::kF16},
    {"addlayernormbfp16", DType::kBF16},
};

constexpr OpToken kRmsNormTokens[] = {
    {"t5layernorm", DType::kF32},
    {"t5layernormfp16", DType::kF16},
    {"t5layernormbfp16", DType::kBF16},
};

// MIOpenDriver's layernorm flags in both its syntaxes (2024: -X; current:
// -N -C -D -H -W and --layout, driver/layernorm_driver.hpp) with BOO's -F
// modes and --input-permutation.
constexpr FlagSpec kLayerNormFlags[] = {
    {"forw", 'F', "1",
     "-X: 1 forward, 2 input backward, 4 weight backward, 8 bias backward, 14 full backward; "
     "-N -C -H -W: 0 (default) forward and backward, 1 forward, 2 backward"},
    {"input", 'X', "100x3x32x32", "input shape NxC[xD]xHxW (any rank); a ',layout' suffix is ignored"},
    {"in_n", 'N', "100", "MIOpen's current syntax: N"},
    {"in_c", 'C', "3", "MIOpen's current syntax: C (C and H 0: a rank-2 [N, W] input)"},
    {"in_d", 'D', "0", "MIOpen's current syntax: D (non-zero: a 5-D input)"},
    {"in_h", 'H', "32", "MIOpen's current syntax: H"},
    {"in_w", 'W', "32", "MIOpen's current syntax: W"},
    {"layout", 'L', "", "MIOpen's current syntax: NCHW, NHWC, NCDHW, NDHWC or NW (default: the logical order)"},
    {"mt", 'u', "0", "MIOpen's multithreaded CPU reference (boo's is always multithreaded)", 1, true},
    {"eps", 'e', "0.00001", "epsilon"},
    {"normalized_dim", 'o', "3", "first normalized axis: statistics over dims [o, rank)"},
    {"mode", 'm', "0", "0 no weight and bias (MIOpen elementwise affine, w=1 b=0), 1 weight and bias"},
    {"bias", 0, "1", "boo: with -m 1, 0 keeps the weight but drops the bias"},
    {"input-permutation", 0, "", "BOO: memory order of the input, outermost first (e.g. 0 2 1)", 0},
    {"use-aten", 0, "1", "BOO: selects ATen's full-backward formula; only changes the function name"},
};

// MIOpenDriver's addlayernorm flags (driver/addlayernorm_driver.hpp) with
// BOO's -F modes of layernorm's -X syntax and -F 0 (forward and backward).
constexpr FlagSpec kAddLayerNormFlags[] = {
    {"forw", 'F', "1",
     "1 forward, 0 forward and the whole backward, 2 input backward (dx, also x2's gradient), 4 weight "
     "backward, 8 bias backward, 14 full backward"},
    {"input", 'X', "100x3x32x32", "input shape NxC[xD]xHxW (any rank) of x and x2; a ',layout' suffix is ignored"},
    {"eps", 'e', "0.00001", "epsilon"},
    {"normalized_dim", 'o', "3", "first normalized axis: statistics over dims [o, rank)"},
    {"mode", 'm', "2", "2 no weight and bias (MIOpen's elementwise affine fused add), 3 weight and bias"},
};

// MIOpenDriver's t5layernorm flags (driver/t5layernorm_driver.hpp) and boo's -o.
constexpr FlagSpec kRmsNormFlags[] = {
    {"forw", 'F', "0", "0 forward and backward, 1 forward, 2 backward (dx, and dweight with a weight)"},
    {"input", 'X', "100x3x32x32", "input shape (any rank); a ',layout' suffix is ignored"},
    {"eps", 'e', "0.00001", "epsilon"},
    {"mode", 'm', "5", "5 with a weight (MIOpen WEIGHT_BIAS_T5), 4 without (ELEMENTWISE_AFFINE_T5: w = 1)"},
    {"normalized_dim", 'o', "", "boo: first normalized axis (default: the last, as MIOpen)"},
};

Status read_layer_norm_forw(const ParsedFlags& flags, NormSignature& sig);

// MIOpen's current layernorm syntax: the shape from -N -C -D -H -W (rank 5
// with D, 4 with C and H, 2 ([N, W]) with neither) and --layout. False where
// none of them is given (the -X syntax).
Result<bool> read_layer_norm_dims(const ParsedFlags& flags, NormSignature& sig) {
  constexpr std::string_view kDims[] = {"in_n", "in_c", "in_d", "in_h", "in_w", "layout"};
  bool any = false;
  for (std::string_view f : kDims) any = any || flags.given(f);
  if (!any) return false;
  if (flags.given("input"))
    return invalid_argument("layernorm takes its input as -X or as -N -C [-D] -H -W (MIOpen's current syntax), "
                            "not both");
  int64_t n = 0, c = 0, d = 0, h = 0, w = 0;
  for (auto [name, value] : {std::pair{"in_n", &n}, {"in_c", &c}, {"in_d", &d}, {"in_h", &h}, {"in_w", &w}}) {
    BOO_ASSIGN_OR_RETURN(*value, flags.integer(name));
    if (*value < 0)
      return invalid_argument("layernorm " + flags.display(name) + " must be non-negative, got " +
                              std::to_string(*value));
  }
  if (d != 0) {
    sig.input_shape = {n, c, d, h, w};
  } else if (c != 0 && h != 0) {
    sig.input_shape = {n, c, h, w};
  } else if (c == 0 && h == 0) {
    sig.input_shape = {n, w};
  } else {
    return invalid_argument("layernorm -C " + std::to_string(c) + " -H " + std::to_string(h) +
                            ": give both (NCHW, with -D NCDHW) or neither (an [N, W] input)");
  }
  sig.layout = flags.given("layout") ? base::to_upper(flags.text("layout"))
                                     : std::string(logical_layout(static_cast<int>(sig.input_shape.size())));
  return true;
}

// layernorm's -m, --bias, -F, the shape of the -N -C -H -W syntax,
// --input-permutation and --use-aten.
Status read_layer_norm_flags(const ParsedFlags& flags, NormSignature& sig) {
  BOO_ASSIGN_OR_RETURN(int64_t mode, flags.integer("mode"));
  if (mode == 2 || mode == 3)
    return invalid_argument("layernorm --mode/-m " + std::to_string(mode) +
                            " (fused add) is MIOpen's addlayernorm: use the addlayernorm command (boo runs it)");
  if (mode == 4 || mode == 5)
    return invalid_argument("layernorm --mode/-m " + std::to_string(mode) +
                            " is a T5 (RMSNorm) mode: use the t5layernorm command (boo runs it)");
  if (mode != 0 && mode != 1)
    return invalid_argument("layernorm --mode/-m " + std::to_string(mode) +
                            ": accepted values are 0 (no weight and bias) and 1 (weight and bias)");
  sig.weight = mode == 1;
  BOO_ASSIGN_OR_RETURN(int64_t bias, flags.integer("bias"));
  if (bias != 0 && bias != 1) return invalid_argument("layernorm --bias must be 0 or 1, got " + std::to_string(bias));
  if (!sig.weight && flags.given("bias") && bias == 1)
    return invalid_argument("layernorm --bias 1 needs -m 1 (the bias comes with the weight)");
  sig.bias = sig.weight && bias == 1;
  BOO_ASSIGN_OR_RETURN(const bool dims_syntax, read_layer_norm_dims(flags, sig));
  if (dims_syntax) {
    int64_t forw = 0;  // MIOpen's default in this syntax: forward and backward
    if (flags.given("forw")) {
      BOO_ASSIGN_OR_RETURN(forw, flags.integer("forw"));
    }
    const uint8_t backward =
        kNormBackwardData | (sig.weight ? kNormBackwardWeight : 0) | (sig.bias ? kNormBackwardBias : 0);
    switch (forw) {
      case 0: sig.directions = kNormForward | backward; break;
      case 1: sig.directions = kNormForward; break;
      case 2: sig.directions = backward; break;
      default:
        return invalid_argument("layernorm --forw/-F " + std::to_string(forw) +
                                " with -N -C -H -W: use 0 (forward and backward), 1 (forward) or 2 (backward)");
    }
  } else {
    BOO_RETURN_IF_ERROR(read_layer_norm_forw(flags, sig));
  }
  if (flags.given("input-permutation")) {
    for (const std::string& p : flags.list("input-permutation")) {
      Result<int64_t> v = base::parse_int(p);
      if (!v.ok()) return invalid_argument("--input-permutation: " + v.status().message());
      const std::optional<int> axis = base::narrow<int>(*v);
      if (!axis) return invalid_argument("--input-permutation: " + p + " is not an axis of the input");
      sig.input_permutation.push_back(*axis);
    }
  }
  const std::string aten = base::to_lower(flags.text("use-aten"));
  sig.use_aten = !(aten == "0" || aten == "false" || aten.empty());
  return ok_status();
}

// BOO's -F of the -X syntax: a bit set of results.
Status read_layer_norm_forw(const ParsedFlags& flags, NormSignature& sig) {
  BOO_ASSIGN_OR_RETURN(int64_t forw, flags.integer("forw"));
  if (forw < 1 || forw > 14)
    return invalid_argument("layernorm --forw/-F " + std::to_string(forw) +
                            ": use 1 (forward), 2 (input backward), 4 (weight backward), 8 (bias backward) or "
                            "14 (full backward)");
  // BOO's modes are the forward or a backward (MIOpen's -N -C -H -W syntax has both in one).
  if ((forw & kNormForward) && forw != kNormForward)
    return invalid_argument("layernorm --forw/-F " + std::to_string(forw) +
                            " is not a mode: use 1 (forward), 2 (input backward), 4 (weight backward), "
                            "8 (bias backward), 14 (full backward) or another sum of 2, 4 and 8 (for the "
                            "forward and backward in one command, MIOpen's -N -C -H -W syntax with -F 0)");
  sig.directions = static_cast<uint8_t>(forw);
  return ok_status();
}

// addlayernorm's -m and -F.
Status read_add_layer_norm_flags(const ParsedFlags& flags, NormSignature& sig) {
  BOO_ASSIGN_OR_RETURN(int64_t mode, flags.integer("mode"));
  if (mode != 2 && mode != 3)
    return invalid_argument("addlayernorm --mode/-m " + std::to_string(mode) +
                            ": accepted values are 2 (no weight and bias) and 3 (weight and bias)");
  sig.weight = sig.bias = mode == 3;
  BOO_ASSIGN_OR_RETURN(int64_t forw, flags.integer("forw"));
  if (forw == 0) {
    sig.directions = kNormForward | kNormBackwardData | (sig.weight ? kNormBackwardWeight | kNormBackwardBias : 0);
    return ok_status();
  }
  return read_layer_norm_forw(flags, sig);
}

// t5layernorm's -m and -F.
Status read_rms_norm_flags(const ParsedFlags& flags, NormSignature& sig) {
  BOO_ASSIGN_OR_RETURN(int64_t mode, flags.integer("mode"));
  if (mode != 4 && mode != 5)
    return invalid_argument("t5layernorm --mode/-m " + std::to_string(mode) +
                            ": accepted values are 5 (with a weight) and 4 (without)");
  sig.weight = mode == 5;
  BOO_ASSIGN_OR_RETURN(int64_t forw, flags.integer("forw"));
  const uint8_t backward = sig.weight ? (kNormBackwardData | kNormBackwardWeight) : kNormBackwardData;
  switch (forw) {
    case 0: sig.directions = kNormForward | backward; break;
    case 1: sig.directions = kNormForward; break;
    case 2: sig.directions = backward; break;
    default:
      return invalid_argument("t5layernorm --forw/-F " + std::to_string(forw) +
                              ": use 0 (forward and backward), 1 (forward) or 2 (backward)");
  }
  return ok_status();
}

// What makes one norm op: its kind, names and command-line syntax.
struct NormOpSpec {
  NormKind kind;
  std::string_view name;  ///< the registry name (also in the implementations' names)
  std::span<const OpToken> tokens;
  std::span<const FlagSpec> flags;
  bool last_axis_by_default;  ///< without -o, normalize the last dim (MIOpen's t5layernorm)
  Status (*read_kind_flags)(const ParsedFlags&, NormSignature&);  ///< the flags past -X, -o and -e
  std::unique_ptr<NormSignature> (*new_signature)();
};

const NormOpSpec kLayerNormOp{
    NormKind::kLayer, "layernorm", kLayerNormTokens, kLayerNormFlags, false, read_layer_norm_flags,
    []() -> std::unique_ptr<NormSignature> { return std::make_unique<LayerNormSignature>(); }};

const NormOpSpec kAddLayerNormOp{
    NormKind::kLayer, "addlayernorm", kAddLayerNormTokens, kAddLayerNormFlags, false, read_add_layer_norm_flags,
    []() -> std::unique_ptr<NormSignature> { return std::make_unique<AddLayerNormSignature>(); }};

const NormOpSpec kRmsNormOp{
    NormKind::kRms, "rmsnorm", kRmsNormTokens, kRmsNormFlags, true, read_rms_norm_flags,
    []() -> std::unique_ptr<NormSignature> { return std::make_unique<RmsNormSignature>(); }};

std::vector<FlagSpec> with_common_flags(std::span<const FlagSpec> flags) {
  std::vector<FlagSpec> table(flags.begin(), flags.end());
  for (const FlagSpec& f : common_run_flags()) table.push_back(f);
  return table;
}

class NormOp final : public OpDefinition {
 public:
  explicit NormOp(const NormOpSpec& spec)
      : spec_(spec),
        table_(with_common_flags(spec.flags)),
        rows_(make_rows_implementation(spec.kind, "gpu:" + std::string(spec.name) + ":rows")),
        simple_(make_simple_implementation(spec.kind, "gpu:" + std::string(spec.name) + ":simple")),
        gpu_reference_(make_gpu_reference(spec.kind, "gpu:" + std::string(spec.name) + ":reference")),
        // The row kernels first; the simple ones take what they decline
        // (permuted inputs, rows too wide for them).
        implementations_{rows_.get(), simple_.get()} {}

  std::string_view name() const override { return spec_.name; }
  std::span<const OpToken> tokens() const override { return spec_.tokens; }
  std::span<const FlagSpec> flags() const override { return table_; }

  Result<std::unique_ptr<OpSignature>> make_signature(DType dtype, const ParsedFlags& flags) const override {
    std::unique_ptr<NormSignature> sig = spec_.new_signature();
    sig->dtype = dtype;
    BOO_ASSIGN_OR_RETURN(sig->input_shape, parse_shape_flag(flags.text("input"), "--input/-X"));
    if (spec_.last_axis_by_default && !flags.given("normalized_dim")) {
      sig->normalized_dim = static_cast<int>(sig->input_shape.size()) - 1;
    } else {
      BOO_ASSIGN_OR_RETURN(int64_t normalized_dim, flags.integer("normalized_dim"));
      const std::optional<int> axis = base::narrow<int>(normalized_dim);
      if (!axis)
        return invalid_argument(flags.display("normalized_dim") + " " + std::to_string(normalized_dim) +
                                " is not an axis of the input");
      sig->normalized_dim = *axis;
    }
    BOO_ASSIGN_OR_RETURN(sig->eps, flags.number("eps"));
    BOO_RETURN_IF_ERROR(spec_.read_kind_flags(flags, *sig));
    BOO_RETURN_IF_ERROR(sig->validate());
    if (!sig->permuted()) sig->input_permutation.clear();  // the identity is the default
    return std::unique_ptr<OpSignature>(std::move(sig));
  }

  Result<std::unique_ptr<OpProblem>> make_problem(const OpSignature& sig) const override {
    return make_norm_problem(sig, spec_.kind);
  }

  // A backward without the forward needs statistics that belong to x (BOO
  // passes random values; a kernel fed inconsistent statistics computes
  // meaningless gradients), so they are computed from x by the reference forward.
  Status derive_arguments(const OpSignature& sig, std::vector<base::HostTensor>& args) const override {
    const auto& norm = dynamic_cast<const NormSignature&>(sig);
    if (norm.directions & kNormForward) return ok_status();
    const std::vector<TensorSpec> specs = sig.arguments();
    if (args.size() != specs.size()) return internal_error("norm arguments: expected one per argument spec");
    std::unique_ptr<OpSignature> forward_copy = sig.clone();
    auto& forward = dynamic_cast<NormSignature&>(*forward_copy);
    forward.directions = kNormForward;
    forward.weight = forward.bias = false;
    // The forward's arguments (x, and add-layernorm's x2) from the backward's.
    std::vector<base::HostTensor> forward_args;
    for (const TensorSpec& f : forward.arguments())
      for (size_t i = 0; i < specs.size(); ++i)
        if (specs[i].name == f.name) forward_args.push_back(args[i]);
    // Layer norm's dbias alone reads dy only.
    if (forward_args.size() != forward.arguments().size()) return ok_status();
    BOO_ASSIGN_OR_RETURN(std::vector<base::HostTensor> computed,
                         norm_reference(forward, forward_args, NormForwardParts::kStatistics));
    const std::vector<TensorSpec> computed_specs = forward.results();
    for (size_t i = 0; i < specs.size(); ++i)
      for (size_t j = 0; j < computed_specs.size(); ++j)
        if (computed_specs[j].name != "y" && computed_specs[j].name == specs[i].name)
          args[i] = base::convert_tensor(computed[j], specs[i]);
    return ok_status();
  }

  int64_t reduction_length(const OpSignature& sig, size_t result_index) const override {
    const auto& norm = dynamic_cast<const NormSignature&>(sig);
    const std::string name = sig.results().at(result_index).name;
    return name == "dweight" || name == "dbias" ? norm.rows() : norm.row_length();
  }

  // RMS norm's dx with short rows cancels (see rms_dx_term_rms); the layer
  // norm bounds need no such term.
  Result<double> cancellation_scale(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                                    size_t result_index) const override {
    if (spec_.kind != NormKind::kRms || sig.results().at(result_index).name != "dx") return 0.0;
    return rms_dx_term_rms(dynamic_cast<const NormSignature&>(sig), args);
  }

  std::span<const GpuImplementation* const> gpu_implementations() const override { return implementations_; }
  const GpuReference* gpu_reference() const override { return gpu_reference_.get(); }

  Result<std::vector<base::HostTensor>> reference(const OpSignature& sig,
                                                  const std::vector<base::HostTensor>& args) const override {
    const auto* norm = dynamic_cast<const NormSignature*>(&sig);
    if (!norm || norm->kind() != spec_.kind || norm->op_name() != spec_.name)
      return internal_error(std::string(spec_.name) + " reference called with a " + std::string(sig.op_name()) +
                            " signature");
    return norm_reference(*norm, args);
  }

 private:
  const NormOpSpec& spec_;
  std::vector<FlagSpec> table_;
  std::unique_ptr<GpuImplementation> rows_, simple_;
  std::unique_ptr<GpuReference> gpu_reference_;
  const GpuImplementation* implementations_[2];
};

}  // namespace

const OpDefinition& layer_norm_definition() {
  static const NormOp op(kLayerNormOp);
  return op;
}

const OpDefinition& add_layer_norm_definition() {
  static const NormOp op(kAddLayerNormOp);
  return op;
}

const OpDefinition& rms_norm_definition() {
  static const NormOp op(kRmsNormOp);
  return op;
}

}  // namespace boo::ops::norm
