// boo: the groupnorm op — MIOpenDriver's groupnorm commands: flags, parsing,
// inputs, reference and registration.
#include "ops/norm/groupnorm_op.hpp"

#include "base/strings.hpp"
#include "boo/groupnorm.hpp"
#include "ops/norm/groupnorm_impl.hpp"
#include "ops/norm/groupnorm_ref.hpp"
#include "ops/norm/groupnorm_ref_gpu.hpp"
#include "ops/norm/norm_layout.hpp"
#include "ops/norm/norm_problem.hpp"

namespace boo::ops::norm {
namespace {

constexpr OpToken kGroupNormTokens[] = {
    {"groupnorm", DType::kF32},
    {"groupnormfp16", DType::kF16},
    {"groupnormbfp16", DType::kBF16},
};

// MIOpenDriver's groupnorm flags (driver/groupnorm_driver.hpp) and boo's --layout.
constexpr FlagSpec kGroupNormFlags[] = {
    {"forw", 'F', "1",
     "1 forward; 0 forward and backward, 2 backward (dx, and dweight, dbias with -m 1; MIOpenDriver's "
     "backward is a no-op)"},
    {"batchsize", 'n', "32", "N"},
    {"in_channels", 'c', "32", "C"},
    {"in_d", 'D', "14", "D (0: a 4-D input; MIOpenDriver's default is 14, a 5-D one)"},
    {"in_h", 'H', "14", "H (0 with -D 0: a 3-D [N, C, W] input)"},
    {"in_w", 'W', "14", "W"},
    {"num_groups", 'g', "4", "groups: statistics over C / groups channels and the spatial dims"},
    {"eps", 'e', "0.00001", "epsilon"},
    {"mode", 'm', "0", "0 no weight and bias (MIOpen's elementwise affine: w=1 b=0), 1 weight and bias"},
    {"layout", 'L', "", "boo: NCW, NCHW or NCDHW (the default), or channels last NWC, NHWC, NDHWC"},
};

std::vector<FlagSpec> with_common_flags(std::span<const FlagSpec> flags) {
  std::vector<FlagSpec> table(flags.begin(), flags.end());
  for (const FlagSpec& f : common_run_flags()) table.push_back(f);
  return table;
}

class GroupNormOp final : public OpDefinition {
 public:
  GroupNormOp()
      : table_(with_common_flags(kGroupNormFlags)),
        fused_(make_group_norm_fused_implementation("gpu:groupnorm:fused")),
        rows_(make_group_norm_rows_implementation("gpu:groupnorm:rows")),
        groups_(make_group_norm_implementation("gpu:groupnorm:groups")),
        gpu_reference_(make_group_norm_gpu_reference("gpu:groupnorm:reference")),
        implementations_{fused_.get(), rows_.get(), groups_.get()} {}

  std::string_view name() const override { return "groupnorm"; }
  std::span<const OpToken> tokens() const override { return kGroupNormTokens; }
  std::span<const FlagSpec> flags() const override { return table_; }

  Result<std::unique_ptr<OpSignature>> make_signature(DType dtype, const ParsedFlags& flags) const override {
    auto sig = std::make_unique<GroupNormSignature>();
    sig->dtype = dtype;
    int64_t n = 0, c = 0, d = 0, h = 0, w = 0;
    for (auto [name, value] :
         {std::pair{"batchsize", &n}, {"in_channels", &c}, {"in_d", &d}, {"in_h", &h}, {"in_w", &w}}) {
      BOO_ASSIGN_OR_RETURN(*value, flags.integer(name));
      if (*value < 0)
        return invalid_argument("groupnorm " + flags.display(name) + " must be non-negative, got " +
                                std::to_string(*value));
    }
    // MIOpenDriver's ranks: 5 with D, 4 with H, 3 ([N, C, W]) with neither.
    if (d != 0 && h == 0)
      return invalid_argument("groupnorm -D " + std::to_string(d) + " -H 0: a 5-D input needs -H as well");
    sig->input_shape = d != 0   ? std::vector<int64_t>{n, c, d, h, w}
                       : h != 0 ? std::vector<int64_t>{n, c, h, w}
                                : std::vector<int64_t>{n, c, w};
    sig->layout = flags.given("layout") ? base::to_upper(flags.text("layout"))
                                        : std::string(logical_layout(static_cast<int>(sig->input_shape.size())));
    BOO_ASSIGN_OR_RETURN(sig->groups, flags.integer("num_groups"));
    BOO_ASSIGN_OR_RETURN(sig->eps, flags.number("eps"));
    BOO_ASSIGN_OR_RETURN(int64_t mode, flags.integer("mode"));
    if (mode != 0 && mode != 1)
      return invalid_argument("groupnorm --mode/-m " + std::to_string(mode) +
                              ": accepted values are 0 (no weight and bias) and 1 (weight and bias)");
    sig->affine = mode == 1;
    BOO_ASSIGN_OR_RETURN(int64_t forw, flags.integer("forw"));
    switch (forw) {
      case 0: sig->directions = kNormForward | sig->backward_directions(); break;
      case 1: sig->directions = kNormForward; break;
      case 2: sig->directions = sig->backward_directions(); break;
      default:
        return invalid_argument("groupnorm --forw/-F " + std::to_string(forw) +
                                ": use 1 (forward), 0 (forward and backward) or 2 (backward)");
    }
    BOO_RETURN_IF_ERROR(sig->validate());
    return std::unique_ptr<OpSignature>(std::move(sig));
  }

  Result<std::unique_ptr<OpProblem>> make_problem(const OpSignature& sig) const override {
    return make_norm_problem(sig, NormKind::kGroup);
  }

  // A backward alone reads statistics that belong to x (inconsistent ones
  // make meaningless gradients): the reference forward computes them.
  Status derive_arguments(const OpSignature& sig, std::vector<base::HostTensor>& args) const override {
    const auto& group = dynamic_cast<const GroupNormSignature&>(sig);
    if (group.directions & kNormForward) return ok_status();
    GroupNormSignature forward = group;
    forward.directions = kNormForward;
    forward.affine = false;
    const std::vector<TensorSpec> specs = sig.arguments();  // dy, x, [weight,] mean, rstd
    if (args.size() != specs.size()) return internal_error("groupnorm arguments: expected one per argument spec");
    BOO_ASSIGN_OR_RETURN(std::vector<base::HostTensor> computed, group_norm_reference(forward, {args[1]}));
    const std::vector<TensorSpec> computed_specs = forward.results();  // y, mean, rstd
    for (size_t i = 0; i < specs.size(); ++i)
      for (size_t j = 1; j < computed_specs.size(); ++j)
        if (computed_specs[j].name == specs[i].name) args[i] = base::convert_tensor(computed[j], specs[i]);
    return ok_status();
  }

  // dweight and dbias sum over the samples and the spatial elements; every
  // other result is built from a group's sums.
  int64_t reduction_length(const OpSignature& sig, size_t result_index) const override {
    const auto& group = dynamic_cast<const GroupNormSignature&>(sig);
    const std::string name = sig.results().at(result_index).name;
    return name == "dweight" || name == "dbias" ? group.input_shape[0] * group.spatial_size() : group.group_size();
  }

  std::span<const GpuImplementation* const> gpu_implementations() const override { return implementations_; }
  const GpuReference* gpu_reference() const override { return gpu_reference_.get(); }

  Result<std::vector<base::HostTensor>> reference(const OpSignature& sig,
                                                  const std::vector<base::HostTensor>& args) const override {
    const auto* group = dynamic_cast<const GroupNormSignature*>(&sig);
    if (!group) return internal_error("groupnorm reference called with a " + std::string(sig.op_name()) + " signature");
    return group_norm_reference(*group, args);
  }

 private:
  std::vector<FlagSpec> table_;
  std::unique_ptr<GpuImplementation> fused_;
  std::unique_ptr<GpuImplementation> rows_;
  std::unique_ptr<GpuImplementation> groups_;
  std::unique_ptr<GpuReference> gpu_reference_;
  const GpuImplementation* implementations_[3];
};

}  // namespace

const OpDefinition& group_norm_definition() {
  static const GroupNormOp op;
  return op;
}

}  // namespace boo::ops::norm
