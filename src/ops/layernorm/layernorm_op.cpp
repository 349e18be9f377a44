// boo: the layernorm op — MIOpenDriver/BOO flag table, parsing, inputs and registration.
#include "ops/layernorm/layernorm_op.hpp"

#include "base/parallel.hpp"
#include "base/strings.hpp"
#include "boo/layernorm.hpp"
#include "ops/common/row_norm_impl.hpp"
#include "ops/common/shape_flag.hpp"
#include "ops/layernorm/layernorm_ref.hpp"
#include "ops/layernorm/layernorm_simple_impl.hpp"

namespace boo::ops::layernorm {
namespace {

constexpr OpToken kTokens[] = {
    {"layernorm", DType::kF32},
    {"layernormfp16", DType::kF16},
    {"layernormbfp16", DType::kBF16},
};

// MIOpenDriver's layernorm flags (2024 syntax, driver/layernorm_driver.hpp) with
// BOO's -F modes and --input-permutation.
constexpr FlagSpec kLayerNormFlags[] = {
    {"forw", 'F', "1", "1 forward, 2 input backward, 4 weight backward, 8 bias backward, 14 full backward"},
    {"input", 'X', "100x3x32x32", "input shape NxC[xD]xHxW (any rank); a ',layout' suffix is ignored"},
    {"eps", 'e', "0.00001", "epsilon"},
    {"normalized_dim", 'o', "3", "first normalized axis: statistics over dims [o, rank)"},
    {"mode", 'm', "0", "0 no weight and bias (MIOpen elementwise affine, w=1 b=0), 1 weight and bias"},
    {"bias", 0, "1", "boo: with -m 1, 0 keeps the weight but drops the bias"},
    {"input-permutation", 0, "", "BOO: memory order of the input, outermost first (e.g. 0 2 1)", 0},
    {"use-aten", 0, "1", "BOO: selects ATen's full-backward formula; only changes the function name"},
};

std::vector<FlagSpec> make_flag_table() {
  std::vector<FlagSpec> table(std::begin(kLayerNormFlags), std::end(kLayerNormFlags));
  for (const FlagSpec& f : common_run_flags()) table.push_back(f);
  return table;
}

// What the row kernels compute for a layernorm signature; they take
// contiguous inputs only (a permuted one runs on gpu:layernorm:simple).
Result<RowNormProblem> row_problem(const OpSignature& sig) {
  const auto* ln = dynamic_cast<const LayerNormSignature*>(&sig);
  if (!ln) return invalid_argument("not a layernorm signature");
  if (ln->permuted()) return unimplemented("a permuted input (--input-permutation) is not contiguous");
  RowNormProblem p;
  p.dtype = ln->dtype;
  p.rows = ln->rows();
  p.cols = ln->row_length();
  p.eps = ln->eps;
  p.weight = ln->weight;
  p.bias = ln->bias;
  p.forward = ln->directions & kLayerNormForward;
  p.dx = ln->directions & kLayerNormBackwardData;
  p.dweight = ln->directions & kLayerNormBackwardWeight;
  p.dbias = ln->directions & kLayerNormBackwardBias;
  return p;
}

class LayerNormOp final : public OpDefinition {
 public:
  std::string_view name() const override { return "layernorm"; }
  std::span<const OpToken> tokens() const override { return kTokens; }
  std::span<const FlagSpec> flags() const override { return table_; }

  Result<std::unique_ptr<OpSignature>> make_signature(DType dtype, const ParsedFlags& flags) const override {
    auto sig = std::make_unique<LayerNormSignature>();
    sig->dtype = dtype;
    BOO_ASSIGN_OR_RETURN(sig->input_shape, parse_shape_flag(flags.text("input"), "--input/-X"));
    BOO_ASSIGN_OR_RETURN(int64_t normalized_dim, flags.integer("normalized_dim"));
    sig->normalized_dim = static_cast<int>(normalized_dim);
    BOO_ASSIGN_OR_RETURN(sig->eps, flags.number("eps"));
    BOO_ASSIGN_OR_RETURN(int64_t mode, flags.integer("mode"));
    if (mode == 2 || mode == 3)
      return unimplemented("layernorm --mode/-m " + std::to_string(mode) +
                           " (fused add) is MIOpen's addlayernorm, which boo does not implement yet");
    if (mode == 4 || mode == 5)
      return invalid_argument("layernorm --mode/-m " + std::to_string(mode) +
                              " is a T5 (RMSNorm) mode: use the t5layernorm command (boo runs it)");
    if (mode != 0 && mode != 1)
      return invalid_argument("layernorm --mode/-m " + std::to_string(mode) +
                              ": accepted values are 0 (no weight and bias) and 1 (weight and bias)");
    sig->weight = mode == 1;
    BOO_ASSIGN_OR_RETURN(int64_t bias, flags.integer("bias"));
    if (bias != 0 && bias != 1) return invalid_argument("layernorm --bias must be 0 or 1, got " + std::to_string(bias));
    if (!sig->weight && flags.given("bias") && bias == 1)
      return invalid_argument("layernorm --bias 1 needs -m 1 (the bias comes with the weight)");
    sig->bias = sig->weight && bias == 1;
    BOO_ASSIGN_OR_RETURN(int64_t forw, flags.integer("forw"));
    if (forw < 1 || forw > 14)
      return invalid_argument("layernorm --forw/-F " + std::to_string(forw) +
                              ": use 1 (forward), 2 (input backward), 4 (weight backward), 8 (bias backward) or "
                              "14 (full backward)");
    sig->directions = static_cast<uint8_t>(forw);
    if (flags.given("input-permutation")) {
      for (const std::string& p : flags.list("input-permutation")) {
        Result<int64_t> v = base::parse_int(p);
        if (!v.ok()) return invalid_argument("--input-permutation: " + v.status().message());
        sig->input_permutation.push_back(static_cast<int>(*v));
      }
    }
    const std::string aten = base::to_lower(flags.text("use-aten"));
    sig->use_aten = !(aten == "0" || aten == "false" || aten.empty());
    BOO_RETURN_IF_ERROR(sig->validate());
    if (!sig->permuted()) sig->input_permutation.clear();  // the identity is the default
    return std::unique_ptr<OpSignature>(std::move(sig));
  }

  // Backward inputs need mean and rstd that belong to x (BOO passes random
  // values; a kernel fed inconsistent statistics computes meaningless
  // gradients), so they are computed from x by the reference forward.
  Result<std::vector<base::HostTensor>> make_arguments(const OpSignature& sig,
                                                       const InputOptions& options) const override {
    BOO_ASSIGN_OR_RETURN(std::vector<base::HostTensor> args, OpDefinition::make_arguments(sig, options));
    const auto& ln = dynamic_cast<const LayerNormSignature&>(sig);
    if (ln.directions & kLayerNormForward) return args;
    const std::vector<TensorSpec> specs = sig.arguments();
    int x_index = -1, mean_index = -1, rstd_index = -1;
    for (size_t i = 0; i < specs.size(); ++i) {
      if (specs[i].name == "x") x_index = static_cast<int>(i);
      if (specs[i].name == "mean") mean_index = static_cast<int>(i);
      if (specs[i].name == "rstd") rstd_index = static_cast<int>(i);
    }
    if (x_index < 0) return args;
    LayerNormSignature forward = ln;
    forward.directions = kLayerNormForward;
    forward.weight = forward.bias = false;
    BOO_ASSIGN_OR_RETURN(std::vector<base::HostTensor> stats, layernorm_reference(forward, {args[x_index]}));
    args[mean_index] = base::convert_tensor(stats[1], specs[mean_index]);
    args[rstd_index] = base::convert_tensor(stats[2], specs[rstd_index]);
    return args;
  }

  int64_t reduction_length(const OpSignature& sig, size_t result_index) const override {
    const auto& ln = dynamic_cast<const LayerNormSignature&>(sig);
    const std::string name = sig.results().at(result_index).name;
    return name == "dweight" || name == "dbias" ? ln.rows() : ln.row_length();
  }

  Result<std::unique_ptr<OpProblem>> make_problem(const OpSignature& sig) const override {
    const auto* typed = dynamic_cast<const LayerNormSignature*>(&sig);
    if (!typed) return internal_error("layernorm was given another op's signature");
    return std::unique_ptr<OpProblem>(std::make_unique<LayerNormProblem>(*typed));
  }

  std::span<const GpuImplementation* const> gpu_implementations() const override {
    // The row kernels first; the simple ones take what they decline (permuted inputs, very wide rows).
    static const std::unique_ptr<GpuImplementation> rows = make_row_norm_implementation("gpu:layernorm:rows", row_problem);
    static const GpuImplementation* const kImpls[] = {rows.get(), &simple_implementation()};
    return kImpls;
  }

  Result<std::vector<base::HostTensor>> reference(const OpSignature& sig,
                                                  const std::vector<base::HostTensor>& args) const override {
    const auto* ln = dynamic_cast<const LayerNormSignature*>(&sig);
    if (!ln) return internal_error("layernorm reference called with a " + std::string(sig.op_name()) + " signature");
    return layernorm_reference(*ln, args);
  }

 private:
  std::vector<FlagSpec> table_ = make_flag_table();
};

}  // namespace

const OpDefinition& definition() {
  static const LayerNormOp op;
  return op;
}

}  // namespace boo::ops::layernorm
