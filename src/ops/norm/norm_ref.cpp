// boo: the CPU reference layer and RMS normalization, float64 accumulation.
#include "ops/norm/norm_ref.hpp"

#include <cmath>

#include "base/parallel.hpp"
#include "ops/norm/norm_problem.hpp"
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

// Reads row `row` of a tensor shaped like x (rows x row_length in logical order).
void load_row(const base::HostTensor& t, int64_t row, int64_t row_length, std::vector<double>& out) {
  for (int64_t j = 0; j < row_length; ++j)
    out[static_cast<size_t>(j)] = t.load(base::offset_of_linear(t.spec(), row * row_length + j));
}

// Row `row` of x, plus x2's (add-layernorm) where there is one.
void load_x_row(const base::HostTensor& x, const base::HostTensor* x2, int64_t row, int64_t row_length,
                std::vector<double>& out, std::vector<double>& scratch) {
  load_row(x, row, row_length, out);
  if (!x2) return;
  load_row(*x2, row, row_length, scratch);
  for (size_t j = 0; j < out.size(); ++j) out[j] += scratch[j];
}

// A per-column parameter (weight, bias) as `cols` doubles, `absent` where the signature has none.
std::vector<double> param(const base::HostTensor* t, int64_t cols, double absent) {
  std::vector<double> v(static_cast<size_t>(cols), absent);
  if (t)
    for (int64_t j = 0; j < cols; ++j) v[static_cast<size_t>(j)] = t->load(j);
  return v;
}

Status check_arguments(const NormSignature& sig, const std::vector<TensorSpec>& specs,
                       const std::vector<base::HostTensor>& args, std::string_view what) {
  if (args.size() == specs.size()) return ok_status();
  return invalid_argument(std::string(sig.op_name()) + " " + std::string(what) + ": expected " +
                          std::to_string(specs.size()) + " arguments, got " + std::to_string(args.size()));
}

// mean (0 for RMS norm) and rstd of one row of x.
struct RowStats {
  double mean = 0, rstd = 0;
};

RowStats row_stats(const NormProblem& p, const std::vector<double>& row) {
  RowStats s;
  const double n = static_cast<double>(p.cols);
  if (!p.rms()) {
    double sum = 0;
    for (double v : row) sum += v;
    s.mean = sum / n;
  }
  double sq = 0;
  for (double v : row) sq += (v - s.mean) * (v - s.mean);
  s.rstd = 1.0 / std::sqrt(sq / n + p.eps);
  return s;
}

}  // namespace

Result<std::vector<base::HostTensor>> norm_reference(const NormSignature& sig,
                                                     const std::vector<base::HostTensor>& args,
                                                     NormForwardParts parts) {
  BOO_RETURN_IF_ERROR(sig.validate());
  const std::vector<TensorSpec> arg_specs = sig.arguments(), result_specs = sig.results();
  BOO_RETURN_IF_ERROR(check_arguments(sig, arg_specs, args, "reference"));
  const NormProblem p(sig);
  const int64_t rows = p.rows, n = p.cols;
  std::vector<base::HostTensor> results = make_f64_results(sig);
  const base::HostTensor* x = find(arg_specs, args, "x");  // absent from layer norm's dbias-only backward
  const base::HostTensor* x2 = find(arg_specs, args, "x2");  // add-layernorm: the rows are x + x2
  const std::vector<double> weight = param(find(arg_specs, args, "weight"), n, 1.0);
  const std::vector<double> bias = param(find(arg_specs, args, "bias"), n, 0.0);

  // The statistics: computed by the forward, or given to the backward.
  std::vector<RowStats> stats(static_cast<size_t>(rows));
  if (p.forward) {
    base::HostTensor& y = *find(result_specs, results, "y");
    base::HostTensor* mean_out = find(result_specs, results, "mean");
    base::HostTensor& rstd_out = *find(result_specs, results, "rstd");
    base::parallel_for(rows, [&](int64_t begin, int64_t end) {
      std::vector<double> row(static_cast<size_t>(n)), scratch(static_cast<size_t>(n));
      for (int64_t r = begin; r < end; ++r) {
        load_x_row(*x, x2, r, n, row, scratch);
        const RowStats s = row_stats(p, row);
        for (int64_t j = 0; parts == NormForwardParts::kAll && j < n; ++j) {
          const size_t js = static_cast<size_t>(j);
          y.store(base::offset_of_linear(y.spec(), r * n + j), (row[js] - s.mean) * s.rstd * weight[js] + bias[js]);
        }
        if (mean_out) mean_out->store(r, s.mean);
        rstd_out.store(r, s.rstd);
        stats[static_cast<size_t>(r)] = s;
      }
    });
  } else {
    const base::HostTensor* mean_in = find(arg_specs, args, "mean");
    const base::HostTensor* rstd_in = find(arg_specs, args, "rstd");
    for (int64_t r = 0; r < rows; ++r) {
      if (mean_in) stats[static_cast<size_t>(r)].mean = mean_in->load(r);
      if (rstd_in) stats[static_cast<size_t>(r)].rstd = rstd_in->load(r);
    }
  }
  if (!p.backward()) return results;

  const base::HostTensor& dy = *find(arg_specs, args, "dy");
  base::HostTensor* dx = find(result_specs, results, "dx");
  base::HostTensor* dweight = find(result_specs, results, "dweight");
  base::HostTensor* dbias = find(result_specs, results, "dbias");
  // Per-chunk partial sums of dweight/dbias, combined in chunk order so the
  // result does not depend on scheduling.
  const int64_t chunks = std::min<int64_t>(rows, 64);
  std::vector<std::vector<double>> partial_dw(static_cast<size_t>(chunks), std::vector<double>(dweight ? n : 0));
  std::vector<std::vector<double>> partial_db(static_cast<size_t>(chunks), std::vector<double>(dbias ? n : 0));
  base::parallel_for(chunks, [&](int64_t chunk_begin, int64_t chunk_end) {
    std::vector<double> g(static_cast<size_t>(n)), xhat(static_cast<size_t>(n)), dyrow(static_cast<size_t>(n)),
        scratch(static_cast<size_t>(n));
    for (int64_t chunk = chunk_begin; chunk < chunk_end; ++chunk) {
      for (int64_t r = rows * chunk / chunks; r < rows * (chunk + 1) / chunks; ++r) {
        const RowStats s = stats[static_cast<size_t>(r)];
        load_row(dy, r, n, dyrow);
        if (x) {
          load_x_row(*x, x2, r, n, xhat, scratch);
          for (double& v : xhat) v = (v - s.mean) * s.rstd;
        }
        if (dx) {
          double mean_g = 0, mean_gx = 0;
          for (int64_t j = 0; j < n; ++j) {
            const size_t js = static_cast<size_t>(j);
            g[js] = dyrow[js] * weight[js];
            mean_g += g[js];
            mean_gx += g[js] * xhat[js];
          }
          mean_g = p.rms() ? 0.0 : mean_g / static_cast<double>(n);  // RMS norm's y does not shift with x's mean
          mean_gx /= static_cast<double>(n);
          for (int64_t j = 0; j < n; ++j) {
            const size_t js = static_cast<size_t>(j);
            dx->store(base::offset_of_linear(dx->spec(), r * n + j), s.rstd * (g[js] - mean_g - xhat[js] * mean_gx));
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

Result<double> rms_dx_term_rms(const NormSignature& sig, const std::vector<base::HostTensor>& args) {
  if (!(sig.directions & kNormBackwardData)) return 0.0;
  const std::vector<TensorSpec> arg_specs = sig.arguments();
  BOO_RETURN_IF_ERROR(check_arguments(sig, arg_specs, args, "cancellation scale"));
  const NormProblem p(sig);
  const int64_t rows = p.rows, n = p.cols;
  const base::HostTensor& x = *find(arg_specs, args, "x");
  const base::HostTensor& dy = *find(arg_specs, args, "dy");
  const std::vector<double> weight = param(find(arg_specs, args, "weight"), n, 1.0);
  const base::HostTensor* rstd_in = find(arg_specs, args, "rstd");
  std::vector<double> row(static_cast<size_t>(n));
  double sum_sq = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double rstd = 0;
    if (rstd_in) {
      rstd = rstd_in->load(r);
    } else {
      load_row(x, r, n, row);
      rstd = row_stats(p, row).rstd;
    }
    for (int64_t j = 0; j < n; ++j) {
      const double term = rstd * dy.load(r * n + j) * weight[static_cast<size_t>(j)];
      sum_sq += term * term;
    }
  }
  return rows * n > 0 ? std::sqrt(sum_sq / static_cast<double>(rows * n)) : 0.0;
}

}  // namespace boo::ops::norm
