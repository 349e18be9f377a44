// boo: the rmsnorm op — MIOpenDriver's t5layernorm flag table, parsing, inputs and registration.
#include "ops/rmsnorm/rmsnorm_op.hpp"

#include "boo/rmsnorm.hpp"
#include "ops/common/row_norm_impl.hpp"
#include "ops/common/shape_flag.hpp"
#include "ops/rmsnorm/rmsnorm_ref.hpp"
#include "ops/rmsnorm/rmsnorm_simple_impl.hpp"

namespace boo::ops::rmsnorm {
namespace {

constexpr OpToken kTokens[] = {
    {"t5layernorm", DType::kF32},
    {"t5layernormfp16", DType::kF16},
    {"t5layernormbfp16", DType::kBF16},
};

// MIOpenDriver's t5layernorm flags (driver/t5layernorm_driver.hpp) and boo's -o.
constexpr FlagSpec kRmsNormFlags[] = {
    {"forw", 'F', "0", "0 forward and backward, 1 forward, 2 backward (dx, and dweight with a weight)"},
    {"input", 'X', "100x3x32x32", "input shape (any rank); a ',layout' suffix is ignored"},
    {"eps", 'e', "0.00001", "epsilon"},
    {"mode", 'm', "5", "5 with a weight (MIOpen WEIGHT_BIAS_T5), 4 without (ELEMENTWISE_AFFINE_T5: w = 1)"},
    {"normalized_dim", 'o', "", "boo: first normalized axis (default: the last, as MIOpen)"},
};

std::vector<FlagSpec> make_flag_table() {
  std::vector<FlagSpec> table(std::begin(kRmsNormFlags), std::end(kRmsNormFlags));
  for (const FlagSpec& f : common_run_flags()) table.push_back(f);
  return table;
}

// What the row kernels compute for an rmsnorm signature.
Result<RowNormProblem> row_problem(const OpSignature& sig) {
  const auto* rms = dynamic_cast<const RmsNormSignature*>(&sig);
  if (!rms) return invalid_argument("not an rmsnorm signature");
  RowNormProblem p;
  p.dtype = rms->dtype;
  p.rows = rms->rows();
  p.cols = rms->row_length();
  p.eps = rms->eps;
  p.rms = true;
  p.weight = rms->weight;
  p.forward = rms->directions & kRmsNormForward;
  p.dx = rms->directions & kRmsNormBackwardData;
  p.dweight = rms->directions & kRmsNormBackwardWeight;
  return p;
}

class RmsNormOp final : public OpDefinition {
 public:
  std::string_view name() const override { return "rmsnorm"; }
  std::span<const OpToken> tokens() const override { return kTokens; }
  std::span<const FlagSpec> flags() const override { return table_; }

  Result<std::unique_ptr<OpSignature>> make_signature(DType dtype, const ParsedFlags& flags) const override {
    auto sig = std::make_unique<RmsNormSignature>();
    sig->dtype = dtype;
    BOO_ASSIGN_OR_RETURN(sig->input_shape, parse_shape_flag(flags.text("input"), "--input/-X"));
    sig->normalized_dim = static_cast<int>(sig->input_shape.size()) - 1;
    if (flags.given("normalized_dim")) {
      BOO_ASSIGN_OR_RETURN(int64_t o, flags.integer("normalized_dim"));
      sig->normalized_dim = static_cast<int>(o);
    }
    BOO_ASSIGN_OR_RETURN(sig->eps, flags.number("eps"));
    BOO_ASSIGN_OR_RETURN(int64_t mode, flags.integer("mode"));
    if (mode != 4 && mode != 5)
      return invalid_argument("t5layernorm --mode/-m " + std::to_string(mode) +
                              ": accepted values are 5 (with a weight) and 4 (without)");
    sig->weight = mode == 5;
    BOO_ASSIGN_OR_RETURN(int64_t forw, flags.integer("forw"));
    const uint8_t backward = sig->weight ? (kRmsNormBackwardData | kRmsNormBackwardWeight) : kRmsNormBackwardData;
    switch (forw) {
      case 0: sig->directions = kRmsNormForward | backward; break;
      case 1: sig->directions = kRmsNormForward; break;
      case 2: sig->directions = backward; break;
      default:
        return invalid_argument("t5layernorm --forw/-F " + std::to_string(forw) +
                                ": use 0 (forward and backward), 1 (forward) or 2 (backward)");
    }
    BOO_RETURN_IF_ERROR(sig->validate());
    return std::unique_ptr<OpSignature>(std::move(sig));
  }

  // A backward-only command needs the rstd that belongs to x (a random one
  // gives meaningless gradients): it is computed from x by the reference.
  Result<std::vector<base::HostTensor>> make_arguments(const OpSignature& sig,
                                                       const InputOptions& options) const override {
    BOO_ASSIGN_OR_RETURN(std::vector<base::HostTensor> args, OpDefinition::make_arguments(sig, options));
    const auto& rms = dynamic_cast<const RmsNormSignature&>(sig);
    if (rms.directions & kRmsNormForward) return args;
    const std::vector<TensorSpec> specs = sig.arguments();
    RmsNormSignature forward = rms;
    forward.directions = kRmsNormForward;
    forward.weight = false;
    BOO_ASSIGN_OR_RETURN(std::vector<base::HostTensor> stats, rmsnorm_reference(forward, {args[0]}));
    for (size_t i = 0; i < specs.size(); ++i)
      if (specs[i].name == "rstd") args[i] = base::convert_tensor(stats[1], specs[i]);
    return args;
  }

  int64_t reduction_length(const OpSignature& sig, size_t result_index) const override {
    const auto& rms = dynamic_cast<const RmsNormSignature&>(sig);
    return sig.results().at(result_index).name == "dweight" ? rms.rows() : rms.row_length();
  }

  Result<double> cancellation_scale(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                                    size_t result_index) const override {
    if (sig.results().at(result_index).name != "dx") return 0.0;
    return rmsnorm_dx_term_rms(dynamic_cast<const RmsNormSignature&>(sig), args);
  }

  Result<std::unique_ptr<OpProblem>> make_problem(const OpSignature& sig) const override {
    const auto* typed = dynamic_cast<const RmsNormSignature*>(&sig);
    if (!typed) return internal_error("rmsnorm was given another op's signature");
    return std::unique_ptr<OpProblem>(std::make_unique<RmsNormProblem>(*typed));
  }

  std::span<const GpuImplementation* const> gpu_implementations() const override {
    // The row kernels first; the simple ones take the rows too wide for them.
    static const std::unique_ptr<GpuImplementation> rows = make_row_norm_implementation("gpu:rmsnorm:rows", row_problem);
    static const GpuImplementation* const kImpls[] = {rows.get(), &simple_implementation()};
    return kImpls;
  }

  Result<std::vector<base::HostTensor>> reference(const OpSignature& sig,
                                                  const std::vector<base::HostTensor>& args) const override {
    const auto* rms = dynamic_cast<const RmsNormSignature*>(&sig);
    if (!rms) return internal_error("rmsnorm reference called with a " + std::string(sig.op_name()) + " signature");
    return rmsnorm_reference(*rms, args);
  }

 private:
  std::vector<FlagSpec> table_ = make_flag_table();
};

}  // namespace

const OpDefinition& definition() {
  static const RmsNormOp op;
  return op;
}

}  // namespace boo::ops::rmsnorm
