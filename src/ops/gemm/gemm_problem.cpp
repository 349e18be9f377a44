// boo: the GEMM description, its views and the float64 reference.
#include "ops/gemm/gemm_problem.hpp"

#include <algorithm>

#include "base/parallel.hpp"

namespace boo::ops::gemm {
namespace {

// A stored [rows, cols] matrix of `sig`, batch-major: the view of element (b, row, col).
std::array<int64_t, 3> stored(const GemmSignature& sig, int64_t rows, int64_t cols) {
  return sig.col_major ? std::array<int64_t, 3>{rows * cols, 1, rows} : std::array<int64_t, 3>{rows * cols, cols, 1};
}
// The view of a stored matrix read transposed: (b, row, col) is stored (b, col, row).
std::array<int64_t, 3> swapped(const std::array<int64_t, 3>& s) { return {s[0], s[2], s[1]}; }

const TensorSpec* find_spec(const std::vector<TensorSpec>& specs, const std::string& name) {
  for (const TensorSpec& t : specs)
    if (t.name == name) return &t;
  return nullptr;
}

// The index of `name` in `specs`, or -1.
int index_of(const std::vector<TensorSpec>& specs, const std::string& name) {
  for (size_t i = 0; i < specs.size(); ++i)
    if (specs[i].name == name) return static_cast<int>(i);
  return -1;
}

int64_t view_offset(const MatrixView& v, int64_t b, int64_t row, int64_t col) {
  return b * v.strides[0] + row * v.strides[1] + col * v.strides[2];
}

// The operand tensors of a reference evaluation, found once.
struct Operands {
  const base::HostTensor *a = nullptr, *b = nullptr, *c = nullptr, *bias = nullptr;
};

Result<Operands> operands(const GemmDesc& d, const OpSignature& sig, const std::vector<base::HostTensor>& args) {
  const std::vector<TensorSpec> specs = sig.arguments();
  if (args.size() != specs.size())
    return invalid_argument("gemm reference: " + std::to_string(args.size()) + " arguments, the signature has " +
                            std::to_string(specs.size()));
  auto get = [&](const MatrixView& v) -> Result<const base::HostTensor*> {
    const int i = index_of(specs, v.tensor);
    if (i < 0) return internal_error("gemm reference: the signature has no argument '" + v.tensor + "'");
    return &args[static_cast<size_t>(i)];
  };
  Operands o;
  BOO_ASSIGN_OR_RETURN(o.a, get(d.a));
  BOO_ASSIGN_OR_RETURN(o.b, get(d.b));
  if (d.c) {
    BOO_ASSIGN_OR_RETURN(o.c, get(*d.c));
  }
  if (d.bias) {
    BOO_ASSIGN_OR_RETURN(o.bias, get(*d.bias));
  }
  return o;
}

double element(const GemmDesc& d, const Operands& o, int64_t b, int64_t i, int64_t j) {
  double sum = 0;
  for (int64_t p = 0; p < d.k; ++p)
    sum += o.a->load(view_offset(d.a, b, i, p)) * o.b->load(view_offset(d.b, b, p, j));
  double v = d.alpha * sum;
  if (o.c) v += d.beta * o.c->load(view_offset(*d.c, b, i, j));
  if (o.bias) v += o.bias->load(view_offset(*d.bias, b, i, j));
  return d.activation.apply(v);
}

// (b, i, j) of the result element at storage offset `offset`: results are
// dense, so the view's strides (larger first) divide it without remainder.
std::array<int64_t, 3> coordinates(const GemmDesc& d, int64_t offset) {
  const int64_t extents[3] = {d.batch, d.m, d.n};
  int order[3] = {0, 1, 2};
  std::sort(order, order + 3, [&](int x, int y) { return d.out.strides[x] > d.out.strides[y]; });
  std::array<int64_t, 3> at{0, 0, 0};
  for (int dim : order) {
    if (extents[dim] == 1 || d.out.strides[dim] == 0) continue;
    at[dim] = offset / d.out.strides[dim];
    offset %= d.out.strides[dim];
  }
  return at;
}

}  // namespace

bool GemmDesc::conv_epilogue() const {
  if (alpha != 1.0) return false;
  if (c && !(bias == std::nullopt && beta == 1.0 && c->strides == std::array<int64_t, 3>{0, 0, 1})) return false;
  if (bias && bias->strides != std::array<int64_t, 3>{0, 0, 1}) return false;
  return true;
}

std::optional<MatrixView> GemmDesc::fused_bias() const { return bias ? bias : c; }

GemmDesc desc_of(const GemmSignature& sig) {
  GemmDesc d;
  d.dtype = sig.dtype;
  d.fp32_tf32 = sig.fp32_tf32;
  d.batch = sig.batch;
  d.alpha = sig.alpha;
  const std::array<int64_t, 3> a = sig.trans_a ? swapped(stored(sig, sig.k, sig.m)) : stored(sig, sig.m, sig.k);
  const std::array<int64_t, 3> b = sig.trans_b ? swapped(stored(sig, sig.n, sig.k)) : stored(sig, sig.k, sig.n);
  const std::array<int64_t, 3> dd = stored(sig, sig.m, sig.n);
  switch (sig.direction) {
    case GemmDirection::kForward:
      d.m = sig.m, d.n = sig.n, d.k = sig.k;
      d.a = {"a", a};
      d.b = {"b", b};
      d.out = {"d", dd};
      if (sig.beta != 0.0) {
        d.c = MatrixView{"c", dd};
        d.beta = sig.beta;
      }
      if (sig.bias) d.bias = MatrixView{"bias", {0, 0, 1}};
      d.activation = sig.activation;
      break;
    case GemmDirection::kGradientA:  // da[i, p] = sum_j dd[i, j] * op(b)[p, j]
      d.m = sig.m, d.n = sig.k, d.k = sig.n;
      d.a = {"dd", dd};
      d.b = {"b", swapped(b)};
      d.out = {"da", a};
      break;
    case GemmDirection::kGradientB:  // db[p, j] = sum_i op(a)[i, p] * dd[i, j]
      d.m = sig.k, d.n = sig.n, d.k = sig.m;
      d.a = {"a", swapped(a)};
      d.b = {"dd", dd};
      d.out = {"db", b};
      break;
  }
  return d;
}

GemmDesc transposed(const GemmDesc& d) {
  GemmDesc t = d;
  std::swap(t.m, t.n);
  t.a = {d.b.tensor, swapped(d.b.strides)};
  t.b = {d.a.tensor, swapped(d.a.strides)};
  t.out.strides = swapped(d.out.strides);
  if (t.c) t.c->strides = swapped(d.c->strides);
  if (t.bias) t.bias->strides = swapped(d.bias->strides);
  return t;
}

Status check_views(const GemmDesc& d, const OpSignature& sig) {
  std::vector<TensorSpec> specs = sig.arguments();
  const std::vector<TensorSpec> results = sig.results();
  struct Role {
    const MatrixView* view;
    int64_t rows, cols;
    bool result;
  };
  std::vector<Role> roles = {{&d.a, d.m, d.k, false}, {&d.b, d.k, d.n, false}, {&d.out, d.m, d.n, true}};
  if (d.c) roles.push_back({&*d.c, d.m, d.n, false});
  if (d.bias) roles.push_back({&*d.bias, d.m, d.n, false});
  for (const Role& r : roles) {
    const TensorSpec* spec = find_spec(r.result ? results : specs, r.view->tensor);
    if (!spec)
      return internal_error("gemm: the signature has no " + std::string(r.result ? "result" : "argument") + " '" +
                            r.view->tensor + "'");
    if (spec->dtype != d.dtype)
      return invalid_argument("gemm: '" + spec->name + "' is " + std::string(dtype_name(spec->dtype)) +
                              ", the product is " + std::string(dtype_name(d.dtype)) + " (one dtype for every tensor)");
    // The largest offset the view reaches must lie in the tensor's storage.
    const int64_t extents[3] = {d.batch, r.rows, r.cols};
    int64_t last = 0;
    for (int i = 0; i < 3; ++i) {
      if (r.view->strides[static_cast<size_t>(i)] < 0)
        return invalid_argument("gemm: '" + spec->name + "' has a negative stride");
      last += (extents[i] - 1) * r.view->strides[static_cast<size_t>(i)];
    }
    if (spec->numel() > 0 && last >= spec->storage_elems())
      return internal_error("gemm: the view of '" + spec->name + "' reaches element " + std::to_string(last) +
                            " of a tensor of " + std::to_string(spec->storage_elems()));
  }
  return ok_status();
}

Status gemm_reference(const GemmDesc& d, const OpSignature& sig, const std::vector<base::HostTensor>& args,
                      base::HostTensor& out) {
  BOO_ASSIGN_OR_RETURN(const Operands o, operands(d, sig, args));
  base::parallel_for(d.batch * d.m, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t b = r / d.m, i = r % d.m;
      for (int64_t j = 0; j < d.n; ++j) out.store(view_offset(d.out, b, i, j), element(d, o, b, i, j));
    }
  });
  return ok_status();
}

Result<std::vector<double>> gemm_reference_sample(const GemmDesc& d, const OpSignature& sig,
                                                  const std::vector<base::HostTensor>& args,
                                                  const std::vector<int64_t>& linear) {
  BOO_ASSIGN_OR_RETURN(const Operands o, operands(d, sig, args));
  const std::vector<TensorSpec> results = sig.results();
  const TensorSpec* spec = find_spec(results, d.out.tensor);
  if (!spec) return internal_error("gemm reference: the signature has no result '" + d.out.tensor + "'");
  std::vector<double> values(linear.size());
  base::parallel_for(static_cast<int64_t>(linear.size()), [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s) {
      const auto [b, i, j] = coordinates(d, base::offset_of_linear(*spec, linear[static_cast<size_t>(s)]));
      values[static_cast<size_t>(s)] = element(d, o, b, i, j);
    }
  });
  return values;
}

}  // namespace boo::ops::gemm
