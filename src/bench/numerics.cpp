// boo: numerics comparison against the float64 reference.
#include "bench/numerics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/parallel.hpp"
#include "base/random.hpp"
#include "ops/op_registry.hpp"

namespace boo::bench {

double relative_tolerance(DType dtype, int64_t reduction_length, bool tf32) {
  int mantissa_bits = 24;
  if (dtype == DType::kBF16) mantissa_bits = 8;
  if (dtype == DType::kF16) mantissa_bits = 11;
  const double k = static_cast<double>(std::max<int64_t>(1, reduction_length));
  // TF32 rounds both operands of every product to 11 significant bits: independent errors of up to
  // 2^-10 of each term, whose sum wanders like the terms' own sum (its rms), 8x margin.
  const double operand_rounding = tf32 && dtype == DType::kF32 ? 8.0 * std::ldexp(1.0, -11) : 0.0;
  return std::ldexp(1.0, -mantissa_bits) + operand_rounding + 8.0 * std::sqrt(k) * std::ldexp(1.0, -24);
}

double result_tolerance(const OpSignature& sig, size_t result_index) {
  const ops::OpDefinition* op = ops::find_op(sig.op_name());
  return relative_tolerance(sig.results().at(result_index).dtype, op->reduction_length(sig, result_index),
                            op->tf32_operands(sig));
}

NumericsSeconds& NumericsSeconds::operator+=(const NumericsSeconds& o) {
  inputs += o.inputs;
  runs += o.runs;
  reference += o.reference;
  checks += o.checks;
  return *this;
}

double cancellation_allowance(double cancellation_scale) {
  return kCancellationUlps * std::ldexp(1.0, -24) * cancellation_scale;
}

std::string Comparison::summary() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s: max |err| %.2e, rel L2 %.2e, rtol %.2e, %lld of %lld", name.c_str(),
                max_abs_error, relative_l2_error, rtol, static_cast<long long>(over_tolerance),
                static_cast<long long>(elements));
  std::string out = buf;
  if (sampled())
    out += " sampled (of " + std::to_string(population) + ", seed " + std::to_string(sample_seed) + ")";
  out += " over";
  if (nan_mismatches) out += ", " + std::to_string(nan_mismatches) + " NaN mismatches";
  if (!pass() && worst_index >= 0) {
    std::snprintf(buf, sizeof buf, " (worst at logical index %lld: %.6g vs %.6g)", static_cast<long long>(worst_index),
                  worst_value, worst_reference);
    out += buf;
  }
  return out;
}

namespace {

// What one chunk of a comparison found: counts, the largest error, and its first element
// with the largest error relative to its bound (a NaN mismatch counting as infinitely far).
struct ChunkFindings {
  int64_t over_tolerance = 0, nan_mismatches = 0;
  double max_abs_error = 0;
  double worst_ratio = -1;
  int64_t worst_index = -1;
  double worst_value = 0, worst_reference = 0;
};

// Elements per chunk of the parallel pass: chunks are fixed by the element count alone.
constexpr int64_t kChunkElements = int64_t{1} << 16;

template <DType R, DType F>
Comparison compare_typed(const base::HostTensor& result, const base::HostTensor& reference, double rtol,
                         double cancellation_scale, const std::vector<double>* element_allowance) {
  Comparison c;
  c.name = result.spec().name;
  c.rtol = rtol;
  const TensorSpec& rs = result.spec();
  const TensorSpec& fs = reference.spec();
  const std::byte* rdata = result.data();
  const std::byte* fdata = reference.data();
  c.elements = rs.numel();
  // The sums, in one pass in logical order: their rounding (the rms in every bound, the
  // relative L2 error) is that of adding the elements one after another from the first.
  double ref_sq = 0, err_sq = 0;
  int64_t finite = 0;
  base::for_each_offset_pair_in(rs, fs, 0, c.elements, [&](int64_t, int64_t ro, int64_t fo) {
    const double v = base::load_element<R>(rdata, ro);
    const double r = base::load_element<F>(fdata, fo);
    if (std::isfinite(r)) {
      ref_sq += r * r;
      ++finite;
    }
    if (std::isnan(v) || std::isnan(r)) return;
    const double err = std::abs(v - r);
    err_sq += err * err;
  });
  const double rms = finite ? std::sqrt(ref_sq / static_cast<double>(finite)) : 0.0;
  const double allowance = cancellation_allowance(cancellation_scale);
  const bool per_element = element_allowance && !element_allowance->empty();
  // Each element against its bound, in chunks on every thread: counts, maxima and the first
  // worst element of each chunk combine, in chunk order, into those of one pass in logical order.
  const int64_t chunks = std::max<int64_t>(1, (c.elements + kChunkElements - 1) / kChunkElements);
  std::vector<ChunkFindings> found(static_cast<size_t>(chunks));
  base::parallel_for(chunks, [&](int64_t first_chunk, int64_t last_chunk) {
    for (int64_t k = first_chunk; k < last_chunk; ++k) {
      ChunkFindings& f = found[static_cast<size_t>(k)];
      const int64_t begin = k * kChunkElements, end = std::min(c.elements, begin + kChunkElements);
      base::for_each_offset_pair_in(rs, fs, begin, end, [&](int64_t i, int64_t ro, int64_t fo) {
        const double v = base::load_element<R>(rdata, ro);
        const double r = base::load_element<F>(fdata, fo);
        if (std::isnan(v) || std::isnan(r)) {
          if (std::isnan(v) != std::isnan(r)) {
            ++f.nan_mismatches;
            if (f.worst_ratio < INFINITY) {
              f.worst_ratio = INFINITY;
              f.worst_index = i;
              f.worst_value = v;
              f.worst_reference = r;
            }
          }
          return;
        }
        const double err = std::abs(v - r);
        f.max_abs_error = std::max(f.max_abs_error, err);
        const double beyond = per_element ? (*element_allowance)[static_cast<size_t>(i)] : rtol * rms;
        const double bound = rtol * std::abs(r) + beyond + allowance;
        const double ratio = bound > 0 ? err / bound : (err > 0 ? INFINITY : 0);
        if (ratio > 1) ++f.over_tolerance;
        if (ratio > f.worst_ratio) {
          f.worst_ratio = ratio;
          f.worst_index = i;
          f.worst_value = v;
          f.worst_reference = r;
        }
      });
    }
  });
  double worst_ratio = -1;
  for (const ChunkFindings& f : found) {
    c.over_tolerance += f.over_tolerance;
    c.nan_mismatches += f.nan_mismatches;
    c.max_abs_error = std::max(c.max_abs_error, f.max_abs_error);
    if (f.worst_ratio > worst_ratio) {
      worst_ratio = f.worst_ratio;
      c.worst_index = f.worst_index;
      c.worst_value = f.worst_value;
      c.worst_reference = f.worst_reference;
    }
  }
  c.relative_l2_error = ref_sq > 0 ? std::sqrt(err_sq / ref_sq) : std::sqrt(err_sq);
  return c;
}

// An op's per-element allowances must be one per compared element (or none).
Status check_allowances(const OpSignature& sig, size_t result_index, const std::vector<double>& allowances,
                        int64_t elements) {
  if (allowances.empty() || static_cast<int64_t>(allowances.size()) == elements) return ok_status();
  return internal_error(std::string(sig.op_name()) + ": " + std::to_string(allowances.size()) +
                        " element allowances for result " + std::to_string(result_index) + ", which compares " +
                        std::to_string(elements) + " elements");
}

}  // namespace

Comparison compare_to_reference(const base::HostTensor& result, const base::HostTensor& reference, double rtol,
                                double cancellation_scale, const std::vector<double>* element_allowance) {
  return base::visit_dtype(result.spec().dtype, [&](auto r) {
    return base::visit_dtype(reference.spec().dtype, [&](auto f) {
      return compare_typed<decltype(r)::value, decltype(f)::value>(result, reference, rtol, cancellation_scale,
                                                                   element_allowance);
    });
  });
}

Comparison compare_to_sample(const base::HostTensor& result, const std::vector<int64_t>& linear,
                             const std::vector<double>& reference, double rtol, double cancellation_scale,
                             const std::vector<double>* element_allowance) {
  // The sampled values as small dense tensors, compared like whole ones.
  TensorSpec spec{result.spec().name, {static_cast<int64_t>(linear.size())}, {1}, result.spec().dtype, ""};
  TensorSpec ref_spec = spec;
  ref_spec.dtype = DType::kF64;
  base::HostTensor picked(spec), ref(ref_spec);
  for (size_t i = 0; i < linear.size(); ++i) {
    picked.store(static_cast<int64_t>(i), result.load(base::offset_of_linear(result.spec(), linear[i])));
    ref.store(static_cast<int64_t>(i), reference[i]);
  }
  Comparison c = compare_to_reference(picked, ref, rtol, cancellation_scale, element_allowance);
  if (c.worst_index >= 0) c.worst_index = linear[static_cast<size_t>(c.worst_index)];
  c.population = result.spec().numel();
  return c;
}

std::vector<int64_t> sample_positions(const std::vector<int64_t>& shape, int64_t count, uint64_t seed) {
  int64_t numel = 1;
  for (int64_t extent : shape) numel *= extent;
  std::vector<int64_t> out;
  if (numel <= count) {
    for (int64_t i = 0; i < numel; ++i) out.push_back(i);
    return out;
  }
  uint64_t draws = 0;
  auto below = [&](int64_t n) {  // uniform in [0, n), from the seed
    return static_cast<int64_t>(base::splitmix64(seed ^ base::splitmix64(draws++)) % static_cast<uint64_t>(n));
  };
  auto linear_of = [&](const std::vector<int64_t>& index) {
    int64_t linear = 0;
    for (size_t d = 0; d < shape.size(); ++d) linear = linear * shape[d] + index[d];
    return linear;
  };
  const size_t rank = shape.size();
  // Corners: every combination of first and last index (2^rank <= 32 for a 5-D tensor).
  for (uint32_t mask = 0; mask < (1u << rank); ++mask) {
    std::vector<int64_t> index(rank);
    for (size_t d = 0; d < rank; ++d) index[d] = (mask >> d) & 1 ? shape[d] - 1 : 0;
    out.push_back(linear_of(index));
  }
  // The first and last elements in row-major order.
  const int64_t edge = std::min<int64_t>(count / 16, 128);
  for (int64_t i = 0; i < edge; ++i) {
    out.push_back(i);
    out.push_back(numel - 1 - i);
  }
  // Border faces: one index first or last, the others random (an eighth of the budget).
  const int64_t per_face = std::max<int64_t>(1, count / 8 / static_cast<int64_t>(2 * std::max<size_t>(rank, 1)));
  for (size_t d = 0; d < rank; ++d)
    for (int64_t side : {int64_t{0}, shape[d] - 1})
      for (int64_t i = 0; i < per_face; ++i) {
        std::vector<int64_t> index(rank);
        for (size_t e = 0; e < rank; ++e) index[e] = e == d ? side : below(shape[e]);
        out.push_back(linear_of(index));
      }
  while (static_cast<int64_t>(out.size()) < count) out.push_back(below(numel));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Result<std::vector<Comparison>> verify_results(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                                               const std::vector<base::HostTensor>& results,
                                               const VerifyOptions& options) {
  const ops::OpDefinition* op = ops::find_op(sig.op_name());
  if (results.size() != sig.results().size())
    return internal_error("numerics: the backend returned " + std::to_string(results.size()) + " results, the signature has " +
                          std::to_string(sig.results().size()));
  Reference& ref = options.reference ? *options.reference : cpu_reference();
  double* reference_s = options.seconds ? &options.seconds->reference : nullptr;
  double* checks_s = options.seconds ? &options.seconds->checks : nullptr;
  if (sig.flop_count() <= options.full_reference_flops) {
    Result<std::vector<base::HostTensor>> reference = [&] {
      AddSeconds timed(reference_s);
      return ref.compute(sig, args);
    }();
    if (!reference.ok()) return reference.status();
    AddSeconds timed(checks_s);
    return compare_results(sig, args, results, *reference);
  }
  std::vector<Comparison> out;
  for (size_t i = 0; i < results.size(); ++i) {
    const std::vector<int64_t> positions =
        sample_positions(results[i].spec().shape, options.samples_per_result, options.sample_seed);
    Result<std::vector<double>> reference = [&] {
      AddSeconds timed(reference_s);
      return ref.sample(sig, args, i, positions);
    }();
    if (!reference.ok()) return reference.status();
    AddSeconds timed(checks_s);
    BOO_ASSIGN_OR_RETURN(double scale, op->cancellation_scale(sig, args, i));
    const double rtol = result_tolerance(sig, i);
    BOO_ASSIGN_OR_RETURN(std::vector<double> allowances, op->element_allowances(sig, args, i, rtol, &positions));
    BOO_RETURN_IF_ERROR(check_allowances(sig, i, allowances, static_cast<int64_t>(positions.size())));
    out.push_back(compare_to_sample(results[i], positions, *reference, rtol, scale, &allowances));
    out.back().sample_seed = options.sample_seed;
  }
  return out;
}

Result<std::vector<Comparison>> compare_results(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                                                const std::vector<base::HostTensor>& results,
                                                const std::vector<base::HostTensor>& reference) {
  const ops::OpDefinition* op = ops::find_op(sig.op_name());
  std::vector<Comparison> out;
  for (size_t i = 0; i < results.size() && i < reference.size(); ++i) {
    BOO_ASSIGN_OR_RETURN(double scale, op->cancellation_scale(sig, args, i));
    const double rtol = result_tolerance(sig, i);
    BOO_ASSIGN_OR_RETURN(std::vector<double> allowances, op->element_allowances(sig, args, i, rtol, nullptr));
    BOO_RETURN_IF_ERROR(check_allowances(sig, i, allowances, results[i].spec().numel()));
    out.push_back(compare_to_reference(results[i], reference[i], rtol, scale, &allowances));
  }
  return out;
}

}  // namespace boo::bench
