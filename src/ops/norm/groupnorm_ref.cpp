// boo: the CPU reference group normalization, float64 accumulation. The GPU
// reference (device/group_norm_ref.cuh) computes every value with the same
// expression in the same order: keep the two in step.
#include "ops/norm/groupnorm_ref.hpp"

#include <cmath>

#include "base/parallel.hpp"
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

double at(const base::HostTensor& t, int64_t linear) { return t.load(base::offset_of_linear(t.spec(), linear)); }
void put(base::HostTensor& t, int64_t linear, double v) { t.store(base::offset_of_linear(t.spec(), linear), v); }

}  // namespace

Result<std::vector<base::HostTensor>> group_norm_reference(const GroupNormSignature& sig,
                                                           const std::vector<base::HostTensor>& args) {
  BOO_RETURN_IF_ERROR(sig.validate());
  const std::vector<TensorSpec> arg_specs = sig.arguments(), result_specs = sig.results();
  if (args.size() != arg_specs.size())
    return invalid_argument("groupnorm reference: expected " + std::to_string(arg_specs.size()) +
                            " arguments, got " + std::to_string(args.size()));
  std::vector<base::HostTensor> results = make_f64_results(sig);
  const int64_t n_count = sig.input_shape[0], channels = sig.input_shape[1], spatial = sig.spatial_size();
  const int64_t cpg = sig.channels_per_group(), rows = n_count * sig.groups, m = sig.group_size();
  const double md = static_cast<double>(m);
  const base::HostTensor& x = *find(arg_specs, args, "x");
  const base::HostTensor* weight = find(arg_specs, args, "weight");
  const base::HostTensor* bias = find(arg_specs, args, "bias");
  // Channel of element j of row r: the group's first channel plus j / spatial.
  auto channel_of = [&](int64_t r, int64_t j) { return (r % sig.groups) * cpg + j / spatial; };
  auto weight_of = [&](int64_t c) { return weight ? weight->load(c) : 1.0; };

  std::vector<double> mean(static_cast<size_t>(rows)), rstd(static_cast<size_t>(rows));
  if (sig.directions & kNormForward) {
    base::HostTensor& y = *find(result_specs, results, "y");
    base::HostTensor& mean_out = *find(result_specs, results, "mean");
    base::HostTensor& rstd_out = *find(result_specs, results, "rstd");
    base::parallel_for(rows, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        double sum = 0;
        for (int64_t j = 0; j < m; ++j) sum += at(x, r * m + j);
        const double mu = sum / md;
        double sq = 0;
        for (int64_t j = 0; j < m; ++j) {
          const double d = at(x, r * m + j) - mu;
          sq += d * d;
        }
        const double rs = 1.0 / std::sqrt(sq / md + sig.eps);
        for (int64_t j = 0; j < m; ++j) {
          const int64_t c = channel_of(r, j);
          const double b = bias ? bias->load(c) : 0.0;
          put(y, r * m + j, (at(x, r * m + j) - mu) * rs * weight_of(c) + b);
        }
        mean_out.store(r, mu);
        rstd_out.store(r, rs);
        mean[static_cast<size_t>(r)] = mu;
        rstd[static_cast<size_t>(r)] = rs;
      }
    });
  } else {
    const base::HostTensor& mean_in = *find(arg_specs, args, "mean");
    const base::HostTensor& rstd_in = *find(arg_specs, args, "rstd");
    for (int64_t r = 0; r < rows; ++r) {
      mean[static_cast<size_t>(r)] = mean_in.load(r);
      rstd[static_cast<size_t>(r)] = rstd_in.load(r);
    }
  }
  if (!(sig.directions & kNormBackwardData)) return results;

  const base::HostTensor& dy = *find(arg_specs, args, "dy");
  auto xhat = [&](int64_t r, int64_t j) {
    return (at(x, r * m + j) - mean[static_cast<size_t>(r)]) * rstd[static_cast<size_t>(r)];
  };
  base::HostTensor& dx = *find(result_specs, results, "dx");
  base::parallel_for(rows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      double mean_g = 0, mean_gx = 0;
      for (int64_t j = 0; j < m; ++j) {
        const double g = at(dy, r * m + j) * weight_of(channel_of(r, j));
        mean_g += g;
        mean_gx += g * xhat(r, j);
      }
      mean_g /= md;
      mean_gx /= md;
      for (int64_t j = 0; j < m; ++j) {
        const double g = at(dy, r * m + j) * weight_of(channel_of(r, j));
        put(dx, r * m + j, rstd[static_cast<size_t>(r)] * ((g - mean_g) - xhat(r, j) * mean_gx));
      }
    }
  });
  base::HostTensor* dweight = find(result_specs, results, "dweight");
  base::HostTensor* dbias = find(result_specs, results, "dbias");
  if (!dweight && !dbias) return results;
  base::parallel_for(channels, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const int64_t g = c / cpg, first = (c % cpg) * spatial;  // the channel's run in its group's rows
      double dw = 0, db = 0;
      for (int64_t n = 0; n < n_count; ++n) {
        const int64_t r = n * sig.groups + g;
        for (int64_t s = 0; s < spatial; ++s) {
          const double d = at(dy, r * m + first + s);
          dw += d * xhat(r, first + s);
          db += d;
        }
      }
      if (dweight) dweight->store(c, dw);
      if (dbias) dbias->store(c, db);
    }
  });
  return results;
}

}  // namespace boo::ops::norm
