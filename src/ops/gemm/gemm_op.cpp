// boo: the gemm op — MIOpenDriver's and BOO's flag table, parsing and registration.
#include "ops/gemm/gemm_op.hpp"

#include "base/strings.hpp"
#include "boo/gemm.hpp"
#include "ops/gemm/gemm_conv_impl.hpp"
#include "ops/gemm/gemm_problem.hpp"

namespace boo::ops::gemm {
namespace {

constexpr OpToken kTokens[] = {
    {"gemm", DType::kF32},
    {"gemmfp16", DType::kF16},
    {"gemmbfp16", DType::kBF16},
};

// BOO's GEMM flags (op_exports/gemm.py), MIOpenDriver's (driver/gemm_driver.hpp) beside them, and boo's.
constexpr FlagSpec kGemmFlags[] = {
    {"a_w", 'k', "256", "BOO: rows of op(A), m (MIOpenDriver: width of A, the reduction)"},
    {"a_h", 'm', "256", "BOO: the reduction k (MIOpenDriver: height of A)"},
    {"b_w", 'n', "256", "columns of op(B), n"},
    {"transA", 'u', "0", "1: A is stored k x m"},
    {"transB", 'v', "0", "1: B is stored n x k"},
    {"forw", 'F', "1", "1 forward, 2 gradient of A (from dd and b), 3 gradient of B (from dd and a)"},
    {"batch_count", 'b', "1", "MIOpenDriver: independent products, every matrix batch-major"},
    {"alpha", 'A', "1.0", "MIOpenDriver: scales the product"},
    {"beta", 'B', "0.0", "MIOpenDriver: scales the addend c (an input when not 0)"},
    {"isColMajor", 'C', "0", "MIOpenDriver: 1 stores every matrix column-major (the same logical shapes)"},
    {"bias", 0, "0", "boo: 1 adds a per-column bias of length n"},
    {"activation", 0, "none",
     "boo: activation applied last: none|relu|sigmoid|tanh|silu|gelu|gelu_tanh|leaky_relu[:alpha]|clamp:lo:hi"},
    {"fp32-math", 0, "ieee", "boo: fp32 arithmetic, ieee (full fp32) or tf32 (TF32 tensor cores)"},
};

std::vector<FlagSpec> make_flag_table() {
  std::vector<FlagSpec> table(std::begin(kGemmFlags), std::end(kGemmFlags));
  for (const FlagSpec& f : common_run_flags()) table.push_back(f);
  return table;
}

Result<bool> read_bool(const ParsedFlags& flags, const char* name) {
  BOO_ASSIGN_OR_RETURN(int64_t v, flags.integer(name));
  if (v != 0 && v != 1) return invalid_argument(flags.display(name) + " must be 0 or 1, got " + std::to_string(v));
  return v == 1;
}

class GemmOp final : public OpDefinition {
 public:
  std::string_view name() const override { return "gemm"; }
  std::span<const OpToken> tokens() const override { return kTokens; }
  std::span<const FlagSpec> flags() const override { return table_; }

  Result<std::unique_ptr<OpSignature>> make_signature(DType dtype, const ParsedFlags& flags) const override {
    auto sig = std::make_unique<GemmSignature>();
    sig->dtype = dtype;
    BOO_ASSIGN_OR_RETURN(sig->m, flags.integer("a_w"));
    BOO_ASSIGN_OR_RETURN(sig->k, flags.integer("a_h"));
    BOO_ASSIGN_OR_RETURN(sig->n, flags.integer("b_w"));
    BOO_ASSIGN_OR_RETURN(sig->batch, flags.integer("batch_count"));
    BOO_ASSIGN_OR_RETURN(sig->trans_a, read_bool(flags, "transA"));
    BOO_ASSIGN_OR_RETURN(sig->trans_b, read_bool(flags, "transB"));
    BOO_ASSIGN_OR_RETURN(sig->col_major, read_bool(flags, "isColMajor"));
    BOO_ASSIGN_OR_RETURN(int64_t forw, flags.integer("forw"));
    if (forw < 1 || forw > 3)
      return invalid_argument("--forw/-F " + std::to_string(forw) +
                              " is not a gemm direction: use 1 (forward), 2 (gradient of A) or 3 (gradient of B)");
    sig->direction = static_cast<GemmDirection>(forw);
    BOO_ASSIGN_OR_RETURN(sig->alpha, flags.number("alpha"));
    BOO_ASSIGN_OR_RETURN(sig->beta, flags.number("beta"));
    BOO_ASSIGN_OR_RETURN(sig->bias, read_bool(flags, "bias"));
    BOO_ASSIGN_OR_RETURN(sig->activation, Activation::parse(flags.text("activation")));
    const std::string math = base::to_lower(flags.text("fp32-math"));
    if (math != "ieee" && math != "tf32")
      return invalid_argument("--fp32-math '" + flags.text("fp32-math") + "': accepted values are ieee and tf32");
    sig->fp32_tf32 = math == "tf32";
    BOO_RETURN_IF_ERROR(sig->validate());
    return std::unique_ptr<OpSignature>(std::move(sig));
  }

  int64_t reduction_length(const OpSignature& sig, size_t) const override {
    return desc_of(dynamic_cast<const GemmSignature&>(sig)).k;
  }

  bool tf32_operands(const OpSignature& sig) const override { return dynamic_cast<const GemmSignature&>(sig).fp32_tf32; }

  Result<std::unique_ptr<OpProblem>> make_problem(const OpSignature& sig) const override {
    const auto* gemm = dynamic_cast<const GemmSignature*>(&sig);
    if (!gemm) return internal_error("gemm was given another op's signature");
    GemmDesc desc = desc_of(*gemm);
    BOO_RETURN_IF_ERROR(check_views(desc, sig));
    return std::unique_ptr<OpProblem>(std::make_unique<GemmProblem>(sig, std::move(desc)));
  }

  std::span<const GpuImplementation* const> gpu_implementations() const override { return gemm_implementations(); }

  Result<std::vector<double>> reference_sample(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                                               size_t, const std::vector<int64_t>& linear) const override {
    return gemm_reference_sample(desc_of(dynamic_cast<const GemmSignature&>(sig)), sig, args, linear);
  }

  Result<std::vector<base::HostTensor>> reference(const OpSignature& sig,
                                                  const std::vector<base::HostTensor>& args) const override {
    const auto* gemm = dynamic_cast<const GemmSignature*>(&sig);
    if (!gemm) return internal_error("gemm reference called with a " + std::string(sig.op_name()) + " signature");
    std::vector<base::HostTensor> out = make_f64_results(sig);
    BOO_RETURN_IF_ERROR(gemm_reference(desc_of(*gemm), sig, args, out.at(0)));
    return out;
  }

 private:
  std::vector<FlagSpec> table_ = make_flag_table();
};

}  // namespace

std::span<const GpuImplementation* const> gemm_implementations() {
  static const GpuImplementation* const kImpls[] = {&gemm_via_conv_wgmma(), &gemm_via_conv_fp32_bf16x6(),
                                                    &gemm_via_conv_implicit_gemm(), &gemm_via_conv_direct()};
  return kImpls;
}

const OpDefinition& definition() {
  static const GemmOp op;
  return op;
}

}  // namespace boo::ops::gemm
