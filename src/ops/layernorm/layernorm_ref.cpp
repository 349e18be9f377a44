// boo: the CPU reference layer normalization, float64 accumulation.
#include "ops/layernorm/layernorm_ref.hpp"

#include <cmath>

#include "base/parallel.hpp"
#include "ops/op_definition.hpp"

namespace boo::ops::layernorm {
namespace {

const base::HostTensor* find_arg(const LayerNormSignature& sig, const std::vector<base::HostTensor>& args,
                                 std::string_view name) {
  const std::vector<TensorSpec> specs = sig.arguments();
  for (size_t i = 0; i < specs.size() && i < args.size(); ++i)
    if (specs[i].name == name) return &args[i];
  return nullptr;
}

// Reads row `row` of a tensor shaped like x (rows x row_length in logical order).
void load_row(const base::HostTensor& t, int64_t row, int64_t row_length, std::vector<double>& out) {
  for (int64_t j = 0; j < row_length; ++j) out[static_cast<size_t>(j)] = t.load(base::offset_of_linear(t.spec(), row * row_length + j));
}

}  // namespace

Result<std::vector<base::HostTensor>> layernorm_reference(const LayerNormSignature& sig,
                                                          const std::vector<base::HostTensor>& args) {
  BOO_RETURN_IF_ERROR(sig.validate());
  const std::vector<TensorSpec> specs = sig.arguments();
  if (args.size() != specs.size())
    return invalid_argument("layernorm reference: expected " + std::to_string(specs.size()) + " arguments, got " +
                            std::to_string(args.size()));
  const int64_t rows = sig.rows(), n = sig.row_length();
  std::vector<base::HostTensor> results = make_f64_results(sig);
  auto param = [&](std::string_view name, double fallback) {
    const base::HostTensor* t = find_arg(sig, args, name);
    std::vector<double> v(static_cast<size_t>(n), fallback);
    if (t)
      for (int64_t j = 0; j < n; ++j) v[static_cast<size_t>(j)] = t->load(j);
    return v;
  };

  if (sig.directions & kLayerNormForward) {
    const base::HostTensor& x = *find_arg(sig, args, "x");
    const std::vector<double> weight = param("weight", 1.0), bias = param("bias", 0.0);
    base::HostTensor &y = results[0], &mean_out = results[1], &rstd_out = results[2];
    base::parallel_for(rows, [&](int64_t begin, int64_t end) {
      std::vector<double> row(static_cast<size_t>(n));
      for (int64_t r = begin; r < end; ++r) {
        load_row(x, r, n, row);
        double sum = 0;
        for (double v : row) sum += v;
        const double mean = sum / static_cast<double>(n);
        double sq = 0;
        for (double v : row) sq += (v - mean) * (v - mean);
        const double rstd = 1.0 / std::sqrt(sq / static_cast<double>(n) + sig.eps);
        for (int64_t j = 0; j < n; ++j) {
          const size_t js = static_cast<size_t>(j);
          y.store(r * n + j, (row[js] - mean) * rstd * weight[js] + bias[js]);
        }
        mean_out.store(r, mean);
        rstd_out.store(r, rstd);
      }
    });
    return results;
  }

  const base::HostTensor& dy = *find_arg(sig, args, "dy");
  const base::HostTensor* x = find_arg(sig, args, "x");
  const base::HostTensor* mean_in = find_arg(sig, args, "mean");
  const base::HostTensor* rstd_in = find_arg(sig, args, "rstd");
  const std::vector<double> weight = param("weight", 1.0);
  size_t next = 0;
  base::HostTensor* dx = (sig.directions & kLayerNormBackwardData) ? &results[next++] : nullptr;
  base::HostTensor* dweight = (sig.directions & kLayerNormBackwardWeight) ? &results[next++] : nullptr;
  base::HostTensor* dbias = (sig.directions & kLayerNormBackwardBias) ? &results[next++] : nullptr;

  // Per-chunk partial sums of dweight/dbias, combined in chunk order so the
  // result does not depend on scheduling.
  const int64_t chunks = std::min<int64_t>(rows, 64);
  std::vector<std::vector<double>> partial_dw(static_cast<size_t>(chunks), std::vector<double>(dweight ? n : 0));
  std::vector<std::vector<double>> partial_db(static_cast<size_t>(chunks), std::vector<double>(dbias ? n : 0));
  base::parallel_for(chunks, [&](int64_t chunk_begin, int64_t chunk_end) {
    std::vector<double> g(static_cast<size_t>(n)), xhat(static_cast<size_t>(n)), dyrow(static_cast<size_t>(n));
    for (int64_t chunk = chunk_begin; chunk < chunk_end; ++chunk) {
      for (int64_t r = rows * chunk / chunks; r < rows * (chunk + 1) / chunks; ++r) {
        load_row(dy, r, n, dyrow);
        if (x) {
          load_row(*x, r, n, xhat);
          const double mean = mean_in->load(r), rstd = rstd_in->load(r);
          for (double& v : xhat) v = (v - mean) * rstd;
        }
        if (dx) {
          double mean_g = 0, mean_gx = 0;
          for (int64_t j = 0; j < n; ++j) {
            const size_t js = static_cast<size_t>(j);
            g[js] = dyrow[js] * weight[js];
            mean_g += g[js];
            mean_gx += g[js] * xhat[js];
          }
          mean_g /= static_cast<double>(n);
          mean_gx /= static_cast<double>(n);
          const double rstd = rstd_in->load(r);
          for (int64_t j = 0; j < n; ++j) {
            const size_t js = static_cast<size_t>(j);
            dx->store(r * n + j, rstd * (g[js] - mean_g - xhat[js] * mean_gx));
          }
        }
        std::vector<double>& dw = partial_dw[static_cast<size_t>(chunk)];
        std::vector<double>& db = partial_db[static_cast<size_t>(chunk)];
        for (int64_t j = 0; j < n; ++j) {
          const size_t js = static_cast<size_t>(j);
          if (dweight) dw[js] += dyrow[js] * xhat[js];
          if (dbias) db[js] += dyrow[js];
        }
      }
    }
  });
  for (int64_t j = 0; j < n; ++j) {
    double dw = 0, db = 0;
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      if (dweight) dw += partial_dw[static_cast<size_t>(chunk)][static_cast<size_t>(j)];
      if (dbias) db += partial_db[static_cast<size_t>(chunk)][static_cast<size_t>(j)];
    }
    if (dweight) dweight->store(j, dw);
    if (dbias) dbias->store(j, db);
  }
  return results;
}

}  // namespace boo::ops::layernorm
