// boo: GemmSignature — validation, tensors, canonical command and function name.
#include "base/strings.hpp"
#include "boo/gemm.hpp"

namespace boo {
namespace {

TensorSpec matrix(std::string name, int64_t batch, int64_t rows, int64_t cols, DType dtype, bool col_major) {
  std::vector<int64_t> shape = batch > 1 ? std::vector<int64_t>{batch, rows, cols} : std::vector<int64_t>{rows, cols};
  std::vector<int64_t> strides = contiguous_strides(shape);
  if (col_major) {  // the last two dims swap strides: a column's rows are adjacent
    strides[shape.size() - 1] = rows;
    strides[shape.size() - 2] = 1;
  }
  return TensorSpec{std::move(name), std::move(shape), std::move(strides), dtype, ""};
}

std::string op_token(DType dtype) {
  switch (dtype) {
    case DType::kF16: return "gemmfp16";
    case DType::kBF16: return "gemmbfp16";
    default: return "gemm";
  }
}

}  // namespace

TensorSpec GemmSignature::a_spec(std::string name) const {
  return trans_a ? matrix(std::move(name), batch, k, m, dtype, col_major)
                 : matrix(std::move(name), batch, m, k, dtype, col_major);
}

TensorSpec GemmSignature::b_spec(std::string name) const {
  return trans_b ? matrix(std::move(name), batch, n, k, dtype, col_major)
                 : matrix(std::move(name), batch, k, n, dtype, col_major);
}

TensorSpec GemmSignature::d_spec(std::string name) const {
  return matrix(std::move(name), batch, m, n, dtype, col_major);
}

TensorSpec GemmSignature::bias_spec(std::string name) const { return TensorSpec{std::move(name), {n}, {1}, dtype, ""}; }

std::vector<TensorSpec> GemmSignature::arguments() const {
  switch (direction) {
    case GemmDirection::kForward: {
      std::vector<TensorSpec> args{a_spec("a"), b_spec("b")};
      if (beta != 0.0) args.push_back(d_spec("c"));
      if (bias) args.push_back(bias_spec("bias"));
      return args;
    }
    case GemmDirection::kGradientA: return {d_spec("dd"), b_spec("b")};
    case GemmDirection::kGradientB: return {d_spec("dd"), a_spec("a")};
  }
  return {};
}

std::vector<TensorSpec> GemmSignature::results() const {
  switch (direction) {
    case GemmDirection::kForward: return {d_spec("d")};
    case GemmDirection::kGradientA: return {a_spec("da")};
    case GemmDirection::kGradientB: return {b_spec("db")};
  }
  return {};
}

double GemmSignature::flop_count() const {
  double flops = 2.0 * static_cast<double>(batch) * static_cast<double>(m) * static_cast<double>(n) *
                 static_cast<double>(k);
  if (direction == GemmDirection::kForward && (beta != 0.0 || bias))
    flops += static_cast<double>(batch * m * n) * ((beta != 0.0 ? 2 : 0) + (bias ? 1 : 0));
  return flops;
}

Status GemmSignature::validate() const {
  struct Size {
    int64_t v;
    const char* flag;
  };
  for (Size s : {Size{m, "--a_w/-k (rows of op(A), m)"}, Size{k, "--a_h/-m (the reduction, k)"},
                 Size{n, "--b_w/-n (columns of op(B), n)"}, Size{batch, "--batch_count"}}) {
    if (s.v < 1) return invalid_argument(std::string(s.flag) + " must be positive, got " + std::to_string(s.v));
  }
  if (direction != GemmDirection::kForward) {
    const char* which = direction == GemmDirection::kGradientA ? "-F 2 (gradient of A)" : "-F 3 (gradient of B)";
    if (beta != 0.0 || bias || activation.kind != Activation::Kind::kNone)
      return invalid_argument(std::string(which) +
                              " computes alpha * the product only: --beta, --bias and --activation apply to the "
                              "forward (-F 1)");
  }
  if (fp32_tf32 && dtype != DType::kF32)
    return invalid_argument("--fp32-math tf32 applies to fp32 GEMMs (gemm), not " + std::string(dtype_name(dtype)));
  return ok_status();
}

std::string GemmSignature::command() const {
  std::vector<std::string> w{op_token(dtype)};
  auto add = [&](const char* flag, const std::string& value) {
    w.push_back(flag);
    w.push_back(value);
  };
  add("--a_w", std::to_string(m));
  add("--a_h", std::to_string(k));
  add("--b_w", std::to_string(n));
  if (trans_a) add("--transA", "1");
  if (trans_b) add("--transB", "1");
  if (col_major) add("--isColMajor", "1");
  if (direction != GemmDirection::kForward) add("-F", std::to_string(static_cast<int>(direction)));
  if (batch != 1) add("--batch_count", std::to_string(batch));
  if (alpha != 1.0) add("--alpha", base::format_double(alpha));
  if (beta != 0.0) add("--beta", base::format_double(beta));
  if (bias) add("--bias", "1");
  if (activation.kind != Activation::Kind::kNone) add("--activation", activation.to_string());
  if (fp32_tf32) add("--fp32-math", "tf32");
  return base::shell_join(w);
}

std::string GemmSignature::func_name() const {
  // BOO's GEMMSignature.func_name: gemm_{dtype}_{mode}_{m}x{k}x{n}[_transA][_transB]; boo appends what
  // BOO's signature lacks (batch, alpha, beta, bias, activation, TF32).
  const char* mode = direction == GemmDirection::kForward     ? "forward"
                     : direction == GemmDirection::kGradientA ? "a_backward"
                                                              : "b_backward";
  std::string name = "gemm_" + std::string(dtype_name(dtype)) + "_" + mode + "_" + std::to_string(m) + "x" +
                     std::to_string(k) + "x" + std::to_string(n);
  if (trans_a) name += "_transA";
  if (trans_b) name += "_transB";
  if (col_major) name += "_colmajor";
  if (batch != 1) name += "_batch" + std::to_string(batch);
  if (alpha != 1.0) name += "_alpha" + base::format_double(alpha);
  if (beta != 0.0) name += "_beta" + base::format_double(beta);
  if (bias) name += "_bias";
  if (activation.kind != Activation::Kind::kNone) {
    std::string act = activation.to_string();
    for (char& ch : act)
      if (ch == ':') ch = '_';
    name += "_" + act;
  }
  if (fp32_tf32) name += "_tf32";
  return name;
}

std::unique_ptr<OpSignature> GemmSignature::clone() const { return std::make_unique<GemmSignature>(*this); }

bool GemmSignature::operator==(const GemmSignature& o) const {
  return dtype == o.dtype && batch == o.batch && m == o.m && n == o.n && k == o.k && trans_a == o.trans_a &&
         trans_b == o.trans_b && col_major == o.col_major && direction == o.direction && alpha == o.alpha &&
         beta == o.beta && bias == o.bias && activation == o.activation && fp32_tf32 == o.fp32_tf32;
}

bool GemmSignature::equals(const OpSignature& other) const {
  const auto* o = dynamic_cast<const GemmSignature*>(&other);
  return o && *o == *this;
}

}  // namespace boo
