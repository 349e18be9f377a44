// boo: numerics comparison against the float64 reference.
#include "bench/numerics.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "boo/conv.hpp"
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

double cancellation_allowance(double cancellation_scale) {
  return kCancellationUlps * std::ldexp(1.0, -24) * cancellation_scale;
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

Comparison compare_to_reference(const base::HostTensor& result, const base::HostTensor& reference, double rtol,
                                double cancellation_scale) {
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
    const double bound = rtol * (std::abs(r) + rms) + cancellation_allowance(cancellation_scale);
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

Comparison compare_to_sample(const base::HostTensor& result, const std::vector<int64_t>& linear,
                             const std::vector<double>& reference, double rtol, double cancellation_scale) {
  // The sampled values as small dense tensors, compared like whole ones.
  TensorSpec spec{result.spec().name, {static_cast<int64_t>(linear.size())}, {1}, result.spec().dtype, ""};
  TensorSpec ref_spec = spec;
  ref_spec.dtype = DType::kF64;
  base::HostTensor picked(spec), ref(ref_spec);
  for (size_t i = 0; i < linear.size(); ++i) {
    picked.store(static_cast<int64_t>(i), result.load(base::offset_of_linear(result.spec(), linear[i])));
    ref.store(static_cast<int64_t>(i), reference[i]);
  }
  Comparison c = compare_to_reference(picked, ref, rtol, cancellation_scale);
  if (c.worst_index >= 0) c.worst_index = linear[static_cast<size_t>(c.worst_index)];
  return c;
}

std::vector<int64_t> sample_positions(int64_t numel, int64_t count) {
  std::vector<int64_t> out;
  if (numel <= count) {
    for (int64_t i = 0; i < numel; ++i) out.push_back(i);
    return out;
  }
  const int64_t edge = std::min<int64_t>(count / 8, 256);
  for (int64_t i = 0; i < edge; ++i) {
    out.push_back(i);
    out.push_back(numel - 1 - i);
  }
  uint64_t state = 0x5eed;
  while (static_cast<int64_t>(out.size()) < count) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    out.push_back(static_cast<int64_t>((state >> 11) % static_cast<uint64_t>(numel)));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Result<std::vector<Comparison>> verify_results(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                                               const std::vector<base::HostTensor>& results,
                                               const VerifyOptions& options) {
  const ops::OpDefinition* op = ops::find_op(sig.op_name());
  if (sig.flop_count() <= options.full_reference_flops) {
    BOO_ASSIGN_OR_RETURN(std::vector<base::HostTensor> reference, op->reference(sig, args));
    return compare_results(sig, args, results, reference);
  }
  const auto* conv = dynamic_cast<const ConvSignature*>(&sig);
  const bool tf32 = conv && conv->fp32_tf32;
  std::vector<Comparison> out;
  for (size_t i = 0; i < results.size(); ++i) {
    const std::vector<int64_t> positions = sample_positions(results[i].spec().numel(), options.samples_per_result);
    BOO_ASSIGN_OR_RETURN(std::vector<double> reference, op->reference_sample(sig, args, i, positions));
    const double rtol = relative_tolerance(results[i].spec().dtype, op->reduction_length(sig, i), tf32);
    BOO_ASSIGN_OR_RETURN(double scale, op->cancellation_scale(sig, args, i));
    out.push_back(compare_to_sample(results[i], positions, reference, rtol, scale));
  }
  return out;
}

Result<std::vector<Comparison>> compare_results(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                                                const std::vector<base::HostTensor>& results,
                                                const std::vector<base::HostTensor>& reference) {
  const ops::OpDefinition* op = ops::find_op(sig.op_name());
  const auto* conv = dynamic_cast<const ConvSignature*>(&sig);
  const bool tf32 = conv && conv->fp32_tf32;
  std::vector<Comparison> out;
  for (size_t i = 0; i < results.size() && i < reference.size(); ++i) {
    const double rtol = relative_tolerance(results[i].spec().dtype, op->reduction_length(sig, i), tf32);
    BOO_ASSIGN_OR_RETURN(double scale, op->cancellation_scale(sig, args, i));
    out.push_back(compare_to_reference(results[i], reference[i], rtol, scale));
  }
  return out;
}

}  // namespace boo::bench
