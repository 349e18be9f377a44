// boo: the CPU reference RMS normalization, float64 accumulation.
#include "ops/rmsnorm/rmsnorm_ref.hpp"

#include <cmath>

#include "base/parallel.hpp"
#include "ops/op_definition.hpp"

namespace boo::ops::rmsnorm {
namespace {

const base::HostTensor* find(const std::vector<TensorSpec>& specs, const std::vector<base::HostTensor>& tensors,
                             std::string_view name) {
  for (size_t i = 0; i < specs.size() && i < tensors.size(); ++i)
    if (specs[i].name == name) return &tensors[i];
  return nullptr;
}

base::HostTensor* find(const std::vector<TensorSpec>& specs, std::vector<base::HostTensor>& tensors,
                       std::string_view name) {
  for (size_t i = 0; i < specs.size() && i < tensors.size(); ++i)
    if (specs[i].name == name) return &tensors[i];
  return nullptr;
}

// 1 / sqrt(mean(x^2) + eps) of row r.
double row_rstd(const base::HostTensor& x, int64_t r, int64_t n, double eps) {
  double sq = 0;
  for (int64_t j = 0; j < n; ++j) {
    const double v = x.load(r * n + j);
    sq += v * v;
  }
  return 1.0 / std::sqrt(sq / static_cast<double>(n) + eps);
}

}  // namespace

Result<std::vector<base::HostTensor>> rmsnorm_reference(const RmsNormSignature& sig,
                                                        const std::vector<base::HostTensor>& args) {
  BOO_RETURN_IF_ERROR(sig.validate());
  const std::vector<TensorSpec> arg_specs = sig.arguments(), result_specs = sig.results();
  if (args.size() != arg_specs.size())
    return invalid_argument("rmsnorm reference: expected " + std::to_string(arg_specs.size()) + " arguments, got " +
                            std::to_string(args.size()));
  const int64_t rows = sig.rows(), n = sig.row_length();
  std::vector<base::HostTensor> results = make_f64_results(sig);
  const base::HostTensor& x = *find(arg_specs, args, "x");
  std::vector<double> weight(static_cast<size_t>(n), 1.0);
  if (const base::HostTensor* w = find(arg_specs, args, "weight"))
    for (int64_t j = 0; j < n; ++j) weight[static_cast<size_t>(j)] = w->load(j);

  // rstd: computed by the forward, or given to the backward.
  std::vector<double> rstd(static_cast<size_t>(rows));
  if (sig.directions & kRmsNormForward) {
    base::HostTensor& y = *find(result_specs, results, "y");
    base::HostTensor& rstd_out = *find(result_specs, results, "rstd");
    base::parallel_for(rows, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const double rs = row_rstd(x, r, n, sig.eps);
        for (int64_t j = 0; j < n; ++j) y.store(r * n + j, x.load(r * n + j) * rs * weight[static_cast<size_t>(j)]);
        rstd_out.store(r, rs);
        rstd[static_cast<size_t>(r)] = rs;
      }
    });
  } else {
    const base::HostTensor& rstd_in = *find(arg_specs, args, "rstd");
    for (int64_t r = 0; r < rows; ++r) rstd[static_cast<size_t>(r)] = rstd_in.load(r);
  }
  if (!(sig.directions & (kRmsNormBackwardData | kRmsNormBackwardWeight))) return results;

  const base::HostTensor& dy = *find(arg_specs, args, "dy");
  base::HostTensor* dx = find(result_specs, results, "dx");
  base::HostTensor* dweight = find(result_specs, results, "dweight");
  // dweight from per-chunk partial sums combined in chunk order: independent of scheduling.
  const int64_t chunks = std::min<int64_t>(rows, 64);
  std::vector<std::vector<double>> partial(static_cast<size_t>(chunks), std::vector<double>(dweight ? n : 0));
  base::parallel_for(chunks, [&](int64_t chunk_begin, int64_t chunk_end) {
    for (int64_t chunk = chunk_begin; chunk < chunk_end; ++chunk) {
      for (int64_t r = rows * chunk / chunks; r < rows * (chunk + 1) / chunks; ++r) {
        const double rs = rstd[static_cast<size_t>(r)];
        if (dx) {
          double mean_gx = 0;
          for (int64_t j = 0; j < n; ++j)
            mean_gx += dy.load(r * n + j) * weight[static_cast<size_t>(j)] * x.load(r * n + j) * rs;
          mean_gx /= static_cast<double>(n);
          for (int64_t j = 0; j < n; ++j) {
            const double g = dy.load(r * n + j) * weight[static_cast<size_t>(j)];
            dx->store(r * n + j, rs * (g - x.load(r * n + j) * rs * mean_gx));
          }
        }
        if (dweight)
          for (int64_t j = 0; j < n; ++j)
            partial[static_cast<size_t>(chunk)][static_cast<size_t>(j)] += dy.load(r * n + j) * x.load(r * n + j) * rs;
      }
    }
  });
  if (dweight) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t chunk = 0; chunk < chunks; ++chunk) sum += partial[static_cast<size_t>(chunk)][static_cast<size_t>(j)];
      dweight->store(j, sum);
    }
  }
  return results;
}

Result<double> rmsnorm_dx_term_rms(const RmsNormSignature& sig, const std::vector<base::HostTensor>& args) {
  if (!(sig.directions & kRmsNormBackwardData)) return 0.0;
  const std::vector<TensorSpec> arg_specs = sig.arguments();
  if (args.size() != arg_specs.size())
    return invalid_argument("rmsnorm cancellation scale: expected " + std::to_string(arg_specs.size()) +
                            " arguments, got " + std::to_string(args.size()));
  const int64_t rows = sig.rows(), n = sig.row_length();
  const base::HostTensor& x = *find(arg_specs, args, "x");
  const base::HostTensor& dy = *find(arg_specs, args, "dy");
  const base::HostTensor* w = find(arg_specs, args, "weight");
  const base::HostTensor* rstd_in = find(arg_specs, args, "rstd");
  double sum_sq = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const double rs = rstd_in ? rstd_in->load(r) : row_rstd(x, r, n, sig.eps);
    for (int64_t j = 0; j < n; ++j) {
      const double term = rs * dy.load(r * n + j) * (w ? w->load(j) : 1.0);
      sum_sq += term * term;
    }
  }
  return rows * n > 0 ? std::sqrt(sum_sq / static_cast<double>(rows * n)) : 0.0;
}

}  // namespace boo::ops::rmsnorm
