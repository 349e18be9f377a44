// boo: the batchnorm ops — MIOpenDriver's bnorm commands: flags, parsing,
// inputs, reference and registration. bnorm, bnormfp16 and bnormbfp16 (one
// data type, float32 parameters) are the op "batchnorm"; bnormfp16fp32 and
// bnormbfp16fp32 (16-bit data and parameters, float32 gradients) are
// "batchnorm_mixed": one token's data type cannot tell them apart.
#include "ops/norm/batchnorm_op.hpp"

#include "base/strings.hpp"
#include "boo/batchnorm.hpp"
#include "ops/input_generation.hpp"
#include "ops/norm/batchnorm_impl.hpp"
#include "ops/norm/batchnorm_ref.hpp"
#include "ops/norm/batchnorm_ref_gpu.hpp"
#include "ops/norm/norm_layout.hpp"
#include "ops/norm/norm_problem.hpp"

namespace boo::ops::norm {
namespace {

constexpr OpToken kBatchNormTokens[] = {
    {"bnorm", DType::kF32},
    {"bnormfp16", DType::kF16},
    {"bnormbfp16", DType::kBF16},
};

constexpr OpToken kMixedBatchNormTokens[] = {
    {"bnormfp16fp32", DType::kF16},
    {"bnormbfp16fp32", DType::kBF16},
};

// MIOpenDriver's bnorm flags (driver/bn_driver.hpp) and boo's --eps and --momentum.
constexpr FlagSpec kBatchNormFlags[] = {
    {"forw", 'F', "0", "0 off (with -b 0: training), 1 forward training, 2 forward inference"},
    {"back", 'b', "0", "1 backward (dx, dscale, dbias; with -F 0)"},
    {"batchsize", 'n', "32", "N"},
    {"in_channels", 'c', "3", "C"},
    {"in_h", 'H', "32", "H"},
    {"in_w", 'W', "32", "W"},
    {"in_d", 'D', "0", "D (non-zero: a 5-D input)"},
    {"layout", 'L', "", "NCHW, NHWC, NCDHW or NDHWC (default NCHW, NCDHW with -D)"},
    {"mode", 'm', "0", "0 per activation, 1 spatial (CNN batch norm)"},
    {"save", 's', "0", "training: save mean and inverse variance; backward: use them"},
    {"run", 'r', "0", "training: update the running statistics; inference: use them"},
    {"alpha", 'A', "1.0", "MIOpenDriver reads it but always passes alpha 1", 1, true},
    {"beta", 'B', "0.", "MIOpenDriver reads it but always passes beta 0", 1, true},
    {"printconv", 'P', "1", "MIOpenDriver's dimension printout", 1, true},
    {"eps", 0, "0.001", "boo: epsilon (MIOpenDriver's is 1e-3)"},
    {"momentum", 0, "1", "boo: running-average factor (MIOpenDriver's first iteration: 1; PyTorch's 0.1)"},
};

std::vector<FlagSpec> with_common_flags(std::span<const FlagSpec> flags) {
  std::vector<FlagSpec> table(flags.begin(), flags.end());
  for (const FlagSpec& f : common_run_flags()) table.push_back(f);
  return table;
}

Result<bool> read_switch(const ParsedFlags& flags, std::string_view name) {
  BOO_ASSIGN_OR_RETURN(int64_t v, flags.integer(name));
  if (v != 0 && v != 1)
    return invalid_argument("bnorm " + flags.display(name) + " must be 0 or 1, got " + std::to_string(v));
  return v == 1;
}

class BatchNormOp final : public OpDefinition {
 public:
  BatchNormOp(std::string_view name, std::span<const OpToken> tokens, bool mixed)
      : name_(name),
        tokens_(tokens),
        mixed_(mixed),
        table_(with_common_flags(kBatchNormFlags)),
        resident_(make_batch_norm_resident_implementation("gpu:" + std::string(name) + ":resident")),
        slabs_(make_batch_norm_slabs_implementation("gpu:" + std::string(name) + ":slabs")),
        columns_(make_batch_norm_implementation("gpu:" + std::string(name) + ":columns")),
        gpu_reference_(make_batch_norm_gpu_reference("gpu:" + std::string(name) + ":reference")),
        implementations_{resident_.get(), slabs_.get(), columns_.get()} {}

  std::string_view name() const override { return name_; }
  std::span<const OpToken> tokens() const override { return tokens_; }
  std::span<const FlagSpec> flags() const override { return table_; }

  Result<std::unique_ptr<OpSignature>> make_signature(DType dtype, const ParsedFlags& flags) const override {
    auto sig = std::make_unique<BatchNormSignature>();
    sig->dtype = dtype;
    sig->param_dtype = mixed_ ? dtype : DType::kF32;
    sig->grad_dtype = mixed_ ? DType::kF32 : dtype;
    int64_t n = 0, c = 0, d = 0, h = 0, w = 0;
    for (auto [name, value] :
         {std::pair{"batchsize", &n}, {"in_channels", &c}, {"in_d", &d}, {"in_h", &h}, {"in_w", &w}}) {
      BOO_ASSIGN_OR_RETURN(*value, flags.integer(name));
    }
    sig->input_shape = d != 0 ? std::vector<int64_t>{n, c, d, h, w} : std::vector<int64_t>{n, c, h, w};
    sig->layout = flags.given("layout") ? base::to_upper(flags.text("layout"))
                                        : std::string(logical_layout(static_cast<int>(sig->input_shape.size())));
    BOO_ASSIGN_OR_RETURN(int64_t mode, flags.integer("mode"));
    if (mode != 0 && mode != 1)
      return invalid_argument("bnorm --mode/-m " + std::to_string(mode) +
                              ": accepted values are 0 (per activation) and 1 (spatial)");
    sig->mode = mode == 1 ? BatchNormMode::kSpatial : BatchNormMode::kPerActivation;
    // MIOpenDriver: -F 0 with -b 0 trains; -F 1 or 2 with -b 1 runs the forward only.
    BOO_ASSIGN_OR_RETURN(int64_t forw, flags.integer("forw"));
    if (forw < 0 || forw > 2)
      return invalid_argument("bnorm --forw/-F " + std::to_string(forw) +
                              ": use 0 (off: -b 1 runs the backward), 1 (training) or 2 (inference)");
    BOO_ASSIGN_OR_RETURN(const bool back, read_switch(flags, "back"));
    sig->pass = forw == 2              ? BatchNormPass::kInference
                : forw == 0 && back    ? BatchNormPass::kBackward
                                       : BatchNormPass::kTraining;
    BOO_ASSIGN_OR_RETURN(sig->save, read_switch(flags, "save"));
    BOO_ASSIGN_OR_RETURN(sig->running, read_switch(flags, "run"));
    BOO_ASSIGN_OR_RETURN(sig->eps, flags.number("eps"));
    BOO_ASSIGN_OR_RETURN(sig->momentum, flags.number("momentum"));
    BOO_RETURN_IF_ERROR(sig->validate());
    return std::unique_ptr<OpSignature>(std::move(sig));
  }

  Result<std::unique_ptr<OpProblem>> make_problem(const OpSignature& sig) const override {
    return make_norm_problem(sig, NormKind::kBatch);
  }

  // Variances must be positive: the estimated and running ones are drawn in
  // [0.5, 1.5). The saved statistics a backward reads are x's own: inconsistent
  // ones make meaningless gradients.
  Status derive_arguments(const OpSignature& sig, std::vector<base::HostTensor>& args) const override {
    const auto& bn = dynamic_cast<const BatchNormSignature&>(sig);
    const std::vector<TensorSpec> specs = sig.arguments();
    if (args.size() != specs.size()) return internal_error("bnorm arguments: expected one per argument spec");
    for (size_t i = 0; i < specs.size(); ++i) {
      if (specs[i].name != "estimated_variance" && specs[i].name != "running_variance_in") continue;
      const TensorSpec& spec = args[i].spec();
      for (int64_t j = 0; j < spec.numel(); ++j) {
        const int64_t offset = base::offset_of_linear(spec, j);
        args[i].store(offset, 1.0 + 0.5 * args[i].load(offset));
      }
    }
    if (bn.pass != BatchNormPass::kBackward || !bn.save) return ok_status();
    // x's own statistics (statistics only: the reference's training pass would also compute y, which on
    // ResNet-50's 100M-element lines took most of the driver's time per line).
    const BatchStatistics stats = batch_statistics_of(bn, args[0]);
    for (size_t i = 0; i < specs.size(); ++i) {
      const std::vector<double>* values = specs[i].name == "saved_mean"           ? &stats.mean
                                          : specs[i].name == "saved_inv_variance" ? &stats.invstd
                                                                                  : nullptr;
      if (!values) continue;
      for (int64_t j = 0; j < args[i].spec().numel(); ++j)
        args[i].store(base::offset_of_linear(args[i].spec(), j), (*values)[static_cast<size_t>(j)]);
    }
    return ok_status();
  }

  // Each statistic and gradient sums its channel's elements; y and dx are
  // built from such sums.
  int64_t reduction_length(const OpSignature& sig, size_t) const override {
    return dynamic_cast<const BatchNormSignature&>(sig).reduction_size();
  }

  std::span<const GpuImplementation* const> gpu_implementations() const override { return implementations_; }
  const GpuReference* gpu_reference() const override { return gpu_reference_.get(); }

  Result<std::vector<base::HostTensor>> reference(const OpSignature& sig,
                                                  const std::vector<base::HostTensor>& args) const override {
    const auto* bn = dynamic_cast<const BatchNormSignature*>(&sig);
    if (!bn) return internal_error("batchnorm reference called with a " + std::string(sig.op_name()) + " signature");
    return batch_norm_reference(*bn, args);
  }

 private:
  std::string_view name_;
  std::span<const OpToken> tokens_;
  bool mixed_;
  std::vector<FlagSpec> table_;
  std::unique_ptr<GpuImplementation> resident_;
  std::unique_ptr<GpuImplementation> slabs_;
  std::unique_ptr<GpuImplementation> columns_;
  std::unique_ptr<GpuReference> gpu_reference_;
  const GpuImplementation* implementations_[3];
};

}  // namespace

const OpDefinition& batch_norm_definition() {
  static const BatchNormOp op("batchnorm", kBatchNormTokens, false);
  return op;
}

const OpDefinition& mixed_batch_norm_definition() {
  static const BatchNormOp op("batchnorm_mixed", kMixedBatchNormTokens, true);
  return op;
}

}  // namespace boo::ops::norm
