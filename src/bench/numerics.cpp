// boo: numerics comparison against the float64 reference.
#include "bench/numerics.hpp"

#include <cmath>
#include <cstdio>

#include "boo/conv.hpp"
#include "ops/op_definition.hpp"

namespace boo::bench {

double relative_tolerance(DType dtype, int64_t reduction_length, bool tf32) {
  int mantissa_bits = 24;
  if (dtype == DType::kBF16) mantissa_bits = 8;
  if (dtype == DType::kF16 || (dtype == DType::kF32 && tf32)) mantissa_bits = 11;
  const double k = static_cast<double>(std::max<int64_t>(1, reduction_length));
  return std::ldexp(1.0, -mantissa_bits) + 8.0 * std::sqrt(k) * std::ldexp(1.0, -24);
}

std::string Comparison::summary() const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s: max |err| %.2e, rel L2 %.2e, rtol %.2e, %lld of %lld over", name.c_str(),
                max_abs_error, relative_l2_error, rtol, static_cast<long long>(over_tolerance),
                static_cast<long long>(elements));
  std::string out = buf;
  if (nan_mismatches) out += ", " + std::to_string(nan_mismatches) + " NaN mismatches";
  if (!pass() && worst_index >= 0) {
    std::snprintf(buf, sizeof buf, " (worst at logical index %lld: %.6g vs %.6g)", static_cast<long long>(worst_index),
                  worst_value, worst_reference);
    out += buf;
  }
  return out;
}

Comparison compare_to_reference(const base::HostTensor& result, const base::HostTensor& reference, double rtol) {
  Comparison c;
  c.name = result.spec().name;
  c.rtol = rtol;
  const TensorSpec& rs = result.spec();
  const TensorSpec& fs = reference.spec();
  c.elements = rs.numel();
  double ref_sq = 0, err_sq = 0;
  int64_t finite = 0;
  for (int64_t i = 0; i < c.elements; ++i) {
    const double r = reference.load(base::offset_of_linear(fs, i));
    if (std::isfinite(r)) {
      ref_sq += r * r;
      ++finite;
    }
  }
  const double rms = finite ? std::sqrt(ref_sq / static_cast<double>(finite)) : 0.0;
  double worst_ratio = -1;
  for (int64_t i = 0; i < c.elements; ++i) {
    const double v = result.load(base::offset_of_linear(rs, i));
    const double r = reference.load(base::offset_of_linear(fs, i));
    if (std::isnan(v) || std::isnan(r)) {
      if (std::isnan(v) != std::isnan(r)) {
        ++c.nan_mismatches;
        if (worst_ratio < INFINITY) {
          worst_ratio = INFINITY;
          c.worst_index = i;
          c.worst_value = v;
          c.worst_reference = r;
        }
      }
      continue;
    }
    const double err = std::abs(v - r);
    err_sq += err * err;
    c.max_abs_error = std::max(c.max_abs_error, err);
    const double bound = rtol * (std::abs(r) + rms);
    const double ratio = bound > 0 ? err / bound : (err > 0 ? INFINITY : 0);
    if (ratio > 1) ++c.over_tolerance;
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      c.worst_index = i;
      c.worst_value = v;
      c.worst_reference = r;
    }
  }
  c.relative_l2_error = ref_sq > 0 ? std::sqrt(err_sq / ref_sq) : std::sqrt(err_sq);
  return c;
}

std::vector<Comparison> compare_results(const OpSignature& sig, const std::vector<base::HostTensor>& results,
                                        const std::vector<base::HostTensor>& reference) {
  const ops::OpDefinition* op = ops::find_op(sig.op_name());
  const auto* conv = dynamic_cast<const ConvSignature*>(&sig);
  const bool tf32 = conv && conv->fp32_tf32;
  std::vector<Comparison> out;
  for (size_t i = 0; i < results.size() && i < reference.size(); ++i) {
    const double rtol = relative_tolerance(results[i].spec().dtype, op->reduction_length(sig, i), tf32);
    out.push_back(compare_to_reference(results[i], reference[i], rtol));
  }
  return out;
}

}  // namespace boo::bench
