// boo: the CPU reference batch normalization, float64 accumulation.
#include "ops/norm/batchnorm_ref.hpp"

#include <cmath>

#include "ops/op_definition.hpp"

namespace boo::ops::norm {
namespace {

// The tensor named `name` among `tensors` (laid out as `specs`), or nullptr.
template <typename Tensors>
auto find(const std::vector<TensorSpec>& specs, Tensors& tensors, std::string_view name) -> decltype(&tensors[0]) {
  for (size_t i = 0; i < specs.size() && i < tensors.size(); ++i)
    if (specs[i].name == name) return &tensors[i];
  return nullptr;
}

// x's logical elements grouped by statistic: statistic p of element (n, c,
// spatial s) is c (spatial) or c * S + s (per activation), which is also the
// logical index of its entry in the [1, C, 1...] or [1, C, ...] parameters.
struct Geometry {
  int64_t n = 0, c = 0, s = 1;  // batch, channels, spatial size
  bool spatial = false;
  int64_t stats() const { return spatial ? c : c * s; }
  int64_t stat_of(int64_t linear) const {
    const int64_t cs = linear % (c * s);
    return spatial ? cs / s : cs;
  }
};

Geometry geometry_of(const BatchNormSignature& sig) {
  Geometry g;
  g.n = sig.input_shape[0];
  g.c = sig.input_shape[1];
  for (size_t d = 2; d < sig.input_shape.size(); ++d) g.s *= sig.input_shape[d];
  g.spatial = sig.spatial();
  return g;
}

double at(const base::HostTensor& t, int64_t linear) { return t.load(base::offset_of_linear(t.spec(), linear)); }
void put(base::HostTensor& t, int64_t linear, double v) { t.store(base::offset_of_linear(t.spec(), linear), v); }

}  // namespace

BatchStatistics batch_statistics_of(const BatchNormSignature& sig, const base::HostTensor& x) {
  const Geometry g = geometry_of(sig);
  const int64_t total = g.n * g.c * g.s, stats = g.stats();
  const double m = static_cast<double>(total / stats);
  BatchStatistics out;
  out.mean.assign(static_cast<size_t>(stats), 0.0);
  out.var.assign(static_cast<size_t>(stats), 0.0);
  out.invstd.assign(static_cast<size_t>(stats), 0.0);
  // Logical order, as batch_norm_reference's other passes, with the offsets stepped rather than divided out.
  base::for_each_offset_in(x.spec(), 0, total, [&](int64_t i, int64_t offset) {
    out.mean[static_cast<size_t>(g.stat_of(i))] += x.load(offset);
  });
  for (double& v : out.mean) v /= m;
  base::for_each_offset_in(x.spec(), 0, total, [&](int64_t i, int64_t offset) {
    const size_t p = static_cast<size_t>(g.stat_of(i));
    const double d = x.load(offset) - out.mean[p];
    out.var[p] += d * d;
  });
  for (size_t p = 0; p < out.var.size(); ++p) {
    out.var[p] /= m;
    out.invstd[p] = 1 / std::sqrt(out.var[p] + sig.eps);
  }
  return out;
}

Result<std::vector<base::HostTensor>> batch_norm_reference(const BatchNormSignature& sig,
                                                           const std::vector<base::HostTensor>& args) {
  BOO_RETURN_IF_ERROR(sig.validate());
  const std::vector<TensorSpec> arg_specs = sig.arguments(), result_specs = sig.results();
  if (args.size() != arg_specs.size())
    return invalid_argument("bnorm reference: expected " + std::to_string(arg_specs.size()) + " arguments, got " +
                            std::to_string(args.size()));
  std::vector<base::HostTensor> results = make_f64_results(sig);
  const Geometry g = geometry_of(sig);
  const int64_t total = g.n * g.c * g.s, stats = g.stats();
  const double m = static_cast<double>(total / stats);
  const base::HostTensor& x = *find(arg_specs, args, "x");

  // The statistics: the batch's (two passes), or given.
  std::vector<double> mean(static_cast<size_t>(stats)), invstd(static_cast<size_t>(stats)),
      var(static_cast<size_t>(stats));
  const base::HostTensor* given_mean = find(arg_specs, args, "estimated_mean");
  const base::HostTensor* given_var = find(arg_specs, args, "estimated_variance");
  const base::HostTensor* saved_mean = find(arg_specs, args, "saved_mean");
  const base::HostTensor* saved_inv = find(arg_specs, args, "saved_inv_variance");
  if (given_mean && given_var) {
    for (int64_t p = 0; p < stats; ++p) {
      mean[static_cast<size_t>(p)] = at(*given_mean, p);
      invstd[static_cast<size_t>(p)] = 1 / std::sqrt(at(*given_var, p) + sig.eps);
    }
  } else if (saved_mean && saved_inv) {
    for (int64_t p = 0; p < stats; ++p) {
      mean[static_cast<size_t>(p)] = at(*saved_mean, p);
      invstd[static_cast<size_t>(p)] = at(*saved_inv, p);
    }
  } else {
    BatchStatistics batch = batch_statistics_of(sig, x);
    mean = std::move(batch.mean);
    var = std::move(batch.var);
    invstd = std::move(batch.invstd);
  }
  const base::HostTensor& scale = *find(arg_specs, args, "scale");

  if (sig.pass != BatchNormPass::kBackward) {
    const base::HostTensor& bias = *find(arg_specs, args, "bias");
    base::HostTensor& y = *find(result_specs, results, "y");
    for (int64_t i = 0; i < total; ++i) {
      const int64_t p = g.stat_of(i);
      const size_t ps = static_cast<size_t>(p);
      put(y, i, (at(x, i) - mean[ps]) * invstd[ps] * at(scale, p) + at(bias, p));
    }
    if (base::HostTensor* out = find(result_specs, results, "saved_mean"))
      for (int64_t p = 0; p < stats; ++p) put(*out, p, mean[static_cast<size_t>(p)]);
    if (base::HostTensor* out = find(result_specs, results, "saved_inv_variance"))
      for (int64_t p = 0; p < stats; ++p) put(*out, p, invstd[static_cast<size_t>(p)]);
    base::HostTensor* run_mean = find(result_specs, results, "running_mean");
    base::HostTensor* run_var = find(result_specs, results, "running_variance");
    if (run_mean && run_var) {
      const base::HostTensor& mean_in = *find(arg_specs, args, "running_mean_in");
      const base::HostTensor& var_in = *find(arg_specs, args, "running_variance_in");
      const double f = sig.momentum;
      for (int64_t p = 0; p < stats; ++p) {
        const size_t ps = static_cast<size_t>(p);
        put(*run_mean, p, (1 - f) * at(mean_in, p) + f * mean[ps]);
        put(*run_var, p, (1 - f) * at(var_in, p) + f * var[ps] * m / (m - 1));
      }
    }
    return results;
  }

  const base::HostTensor& dy = *find(arg_specs, args, "dy");
  std::vector<double> sum_dy(static_cast<size_t>(stats)), sum_dy_xhat(static_cast<size_t>(stats));
  for (int64_t i = 0; i < total; ++i) {
    const size_t p = static_cast<size_t>(g.stat_of(i));
    sum_dy[p] += at(dy, i);
    sum_dy_xhat[p] += at(dy, i) * (at(x, i) - mean[p]) * invstd[p];
  }
  base::HostTensor& dx = *find(result_specs, results, "dx");
  for (int64_t i = 0; i < total; ++i) {
    const int64_t p = g.stat_of(i);
    const size_t ps = static_cast<size_t>(p);
    const double xhat = (at(x, i) - mean[ps]) * invstd[ps];
    put(dx, i, at(scale, p) * invstd[ps] * (at(dy, i) - sum_dy[ps] / m - xhat * sum_dy_xhat[ps] / m));
  }
  for (int64_t p = 0; p < stats; ++p) {
    put(*find(result_specs, results, "dscale"), p, sum_dy_xhat[static_cast<size_t>(p)]);
    put(*find(result_specs, results, "dbias"), p, sum_dy[static_cast<size_t>(p)]);
  }
  return results;
}

}  // namespace boo::ops::norm
