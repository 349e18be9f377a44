// boo: aten_gemm — the signature, views and registered op of ATen's matrix products.
#include "ops/aten/aten_gemm.hpp"

#include "ops/gemm/gemm_op.hpp"

namespace boo::ops::aten {

std::array<int64_t, 3> matrix_strides(const TensorSpec& t) {
  if (t.rank() == 2) return {0, t.strides[0], t.strides[1]};
  return {t.strides[0], t.strides[1], t.strides[2]};
}

Result<std::array<int64_t, 3>> broadcast_strides(const TensorSpec& t, int64_t batch, int64_t rows, int64_t cols,
                                                 const std::string& where) {
  const int64_t target[3] = {batch, rows, cols};
  if (t.rank() > 3)
    return invalid_argument(where + " has shape " + format_dims(t.shape) + ", which does not broadcast to [" +
                            std::to_string(batch) + ", " + std::to_string(rows) + ", " + std::to_string(cols) + "]");
  std::array<int64_t, 3> s{0, 0, 0};
  for (int d = 0; d < t.rank(); ++d) {
    const int at = 3 - t.rank() + d;  // aligned right
    const int64_t size = t.shape[static_cast<size_t>(d)];
    if (size == 1) continue;  // broadcast: stride 0
    if (size != target[at])
      return invalid_argument(where + " has shape " + format_dims(t.shape) + ", which does not broadcast to [" +
                              (batch > 1 ? std::to_string(batch) + ", " : std::string()) + std::to_string(rows) + ", " +
                              std::to_string(cols) + "]");
    s[static_cast<size_t>(at)] = t.strides[static_cast<size_t>(d)];
  }
  return s;
}

Status expect_rank(const TensorSpec& t, int rank, const AtenCall& call) {
  if (t.rank() == rank) return ok_status();
  return invalid_argument(t.name + " of " + call.op + " must be " + std::to_string(rank) + "-D, got shape " +
                          format_dims(t.shape));
}

Result<Product> product(const AtenCall& call, const TensorSpec& a, const TensorSpec& b, int rank) {
  BOO_RETURN_IF_ERROR(expect_rank(a, rank, call));
  BOO_RETURN_IF_ERROR(expect_rank(b, rank, call));
  const size_t r = static_cast<size_t>(rank);
  if (a.shape[r - 1] != b.shape[r - 2] || (rank == 3 && a.shape[0] != b.shape[0]))
    return invalid_argument(call.op + ": " + a.name + " " + format_dims(a.shape) + " and " + b.name + " " +
                            format_dims(b.shape) + " cannot be multiplied (" +
                            (rank == 3 ? "[b, m, k] @ [b, k, n]" : "[m, k] @ [k, n]") + ")");
  Product p;
  gemm::GemmDesc& d = p.desc;
  d.dtype = a.dtype;
  d.batch = rank == 3 ? a.shape[0] : 1;
  d.m = a.shape[r - 2];
  d.k = a.shape[r - 1];
  d.n = b.shape[r - 1];
  d.a = {a.name, matrix_strides(a)};
  d.b = {b.name, matrix_strides(b)};
  std::vector<int64_t> shape = rank == 3 ? std::vector<int64_t>{d.batch, d.m, d.n} : std::vector<int64_t>{d.m, d.n};
  p.out = TensorSpec{"out", shape, contiguous_strides(shape), d.dtype, ""};
  d.out = {"out", {d.m * d.n, d.n, 1}};
  return p;
}

Status AtenGemmSignature::validate() const {
  for (const TensorSpec& t : inputs_) {
    if (t.dtype != desc_.dtype)
      return invalid_argument(call().op + ": " + t.name + " is " + std::string(dtype_name(t.dtype)) + " but the product is " +
                              std::string(dtype_name(desc_.dtype)) + " (one dtype for every tensor)");
  }
  if (desc_.batch < 1 || desc_.m < 1 || desc_.n < 1 || desc_.k < 1)
    return unimplemented(call().op + ": an empty product (batch " + std::to_string(desc_.batch) + ", m " +
                         std::to_string(desc_.m) + ", n " + std::to_string(desc_.n) + ", k " + std::to_string(desc_.k) +
                         "); boo's GEMM takes positive sizes");
  return gemm::check_views(desc_, *this);
}

double AtenGemmSignature::flop_count() const {
  const double outputs = static_cast<double>(desc_.batch) * static_cast<double>(desc_.m) * static_cast<double>(desc_.n);
  return 2.0 * outputs * static_cast<double>(desc_.k) + outputs * ((desc_.c ? 2 : 0) + (desc_.bias ? 1 : 0));
}

Result<std::unique_ptr<OpSignature>> finish(AtenGemmSignature sig) {
  BOO_RETURN_IF_ERROR(sig.validate());
  return std::unique_ptr<OpSignature>(std::make_unique<AtenGemmSignature>(std::move(sig)));
}

namespace {

const AtenGemmSignature& typed(const OpSignature& sig) { return dynamic_cast<const AtenGemmSignature&>(sig); }

class AtenGemmOp final : public OpDefinition {
 public:
  std::string_view name() const override { return "aten_gemm"; }
  // ATen lines are read by parse_aten_command, not by tokens and flags.
  std::span<const OpToken> tokens() const override { return {}; }
  std::span<const FlagSpec> flags() const override { return {}; }
  Result<std::unique_ptr<OpSignature>> make_signature(DType, const ParsedFlags&) const override {
    return internal_error("aten_gemm signatures come from ATen lines (aten::mm, ...), not flags");
  }

  int64_t reduction_length(const OpSignature& sig, size_t) const override { return typed(sig).desc().k; }

  Result<std::unique_ptr<OpProblem>> make_problem(const OpSignature& sig) const override {
    const auto* aten = dynamic_cast<const AtenGemmSignature*>(&sig);
    if (!aten) return internal_error("aten_gemm was given another op's signature");
    BOO_RETURN_IF_ERROR(gemm::check_views(aten->desc(), sig));
    return std::unique_ptr<OpProblem>(std::make_unique<gemm::GemmProblem>(sig, aten->desc()));
  }

  std::span<const GpuImplementation* const> gpu_implementations() const override {
    return gemm::gemm_implementations();
  }

  Result<std::vector<double>> reference_sample(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                                               size_t, const std::vector<int64_t>& linear) const override {
    return gemm::gemm_reference_sample(typed(sig).desc(), sig, args, linear);
  }

  Result<std::vector<base::HostTensor>> reference(const OpSignature& sig,
                                                  const std::vector<base::HostTensor>& args) const override {
    const auto* aten = dynamic_cast<const AtenGemmSignature*>(&sig);
    if (!aten) return internal_error("aten_gemm reference called with a " + std::string(sig.op_name()) + " signature");
    std::vector<base::HostTensor> out = make_f64_results(sig);
    BOO_RETURN_IF_ERROR(gemm::gemm_reference(aten->desc(), sig, args, out.at(0)));
    return out;
  }
};

}  // namespace

const OpDefinition& gemm_definition() {
  static const AtenGemmOp op;
  return op;
}

}  // namespace boo::ops::aten
