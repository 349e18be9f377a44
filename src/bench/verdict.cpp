// boo: BOO's statistical numerics verdict.
#include "bench/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace boo::bench {
namespace {

// As Python's f"{v:.6e}" writes it: NaN is "nan" whatever its sign bit (printf may write "-nan").
std::string sci(double v) {
  if (std::isnan(v)) return "nan";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6e", v);
  return buf;
}

}  // namespace

ErrorStats error_stats(const std::vector<double>& errors) {
  ErrorStats s;
  s.samples = static_cast<int64_t>(errors.size());
  if (errors.empty()) return s;
  double sum = 0;
  for (double e : errors) {
    sum += e;
    s.max_abs = std::max(s.max_abs, std::abs(e));
  }
  s.mean = sum / static_cast<double>(errors.size());
  // Bessel's correction has no spread to correct with one sample: NaN, as torch.std gives BOO (whose
  // tests pin it), so a one-sample set fails both statistical tests instead of passing on a zero spread.
  if (errors.size() == 1) {
    s.stddev = std::nan("");
  } else {
    double sq = 0;
    for (double e : errors) sq += (e - s.mean) * (e - s.mean);
    s.stddev = std::sqrt(sq / static_cast<double>(errors.size() - 1));
  }
  return s;
}

void ErrorSets::add(double boo_value, double reference, std::optional<double> vendor_value) {
  const bool boo_nan = std::isnan(boo_value), ref_nan = std::isnan(reference);
  if (boo_nan != ref_nan) ++boo_nan_mismatches;
  if (vendor_value && std::isnan(*vendor_value) != ref_nan) ++vendor_nan_mismatches;
  if (boo_nan || ref_nan) return;
  boo.push_back(boo_value - reference);
  if (vendor_value && !std::isnan(*vendor_value)) {
    vendor.push_back(*vendor_value - reference);
    diff.push_back(boo_value - *vendor_value);
  }
}

bool NumericsVerdict::pass() const {
  return error.empty() && mean_ok && stddev_ok && nan_ok && tolerance_ok && structured_ok.value_or(true);
}

std::string NumericsVerdict::failure_reasons() const {
  std::vector<std::string> r;
  if (!mean_ok) r.emplace_back("mean bias");
  if (!stddev_ok) r.emplace_back("stddev");
  if (!nan_ok) r.emplace_back("NaN mismatch");
  if (!tolerance_ok) r.emplace_back("tolerance");
  if (structured_ok && !*structured_ok) r.emplace_back("structured test");
  if (!error.empty()) r.emplace_back("error");
  std::string out;
  for (size_t i = 0; i < r.size(); ++i) out += (i ? ", " : "") + r[i];
  return out;
}

Criteria evaluate_criteria(const ErrorStats& boo, double spread_bar, const std::string& spread_label,
                           const NumericsOptions& options) {
  Criteria c;
  // The mean of n unbiased errors still wanders by stddev / sqrt(n): with few
  // samples (a small output) the bar is 4 standard errors, not mean_rtol.
  const double n = static_cast<double>(std::max<int64_t>(boo.samples, 1));
  const double mean_rtol = std::max(options.mean_rtol, kMeanStandardErrors / std::sqrt(n));
  // Written so that a NaN statistic fails, as BOO's comparisons do.
  c.mean_ok = std::abs(boo.mean) <= options.mean_atol + mean_rtol * boo.stddev;
  if (!c.mean_ok)
    c.reasons.push_back("Mean error |" + sci(boo.mean) + "| > threshold (atol=" + sci(options.mean_atol) +
                        " + rtol=" + sci(mean_rtol) + " * boo_stddev=" + sci(boo.stddev) + ")");
  c.stddev_ok = boo.stddev <= options.stddev_atol + options.stddev_rtol * spread_bar;
  if (!c.stddev_ok)
    c.reasons.push_back("BOO stddev " + sci(boo.stddev) + " > threshold (atol=" + sci(options.stddev_atol) +
                        " + rtol=" + sci(options.stddev_rtol) + " * " + spread_label + "=" + sci(spread_bar) + ")");
  return c;
}

NumericsVerdict decide(const ErrorSets& sets, const NumericsOptions& options, double tolerance_bound,
                       ToleranceRole role) {
  NumericsVerdict v;
  v.boo = error_stats(sets.boo);
  v.vendor = error_stats(sets.vendor);
  v.diff = error_stats(sets.diff);
  v.has_vendor = v.vendor.samples > 0;
  Criteria c;
  const bool tolerance_above_vendor =
      role == ToleranceRole::kFloor && tolerance_bound > options.stddev_rtol * v.vendor.stddev;
  if (v.has_vendor && !tolerance_above_vendor) {
    c = evaluate_criteria(v.boo, v.vendor.stddev, "vendor_stddev", options);
  } else {
    // Without a vendor the documented tolerance is the whole bar (stddev_rtol does not scale it).
    NumericsOptions bar = options;
    bar.stddev_rtol = 1;
    c = evaluate_criteria(v.boo, tolerance_bound, "tolerance", bar);
    v.notes.push_back(std::string(v.has_vendor ? "TF32 operands: the vendor's spread is under"
                                                : "no vendor result:") +
                      " the spread is bounded by the documented tolerance " + sci(tolerance_bound));
  }
  v.mean_ok = c.mean_ok;
  v.stddev_ok = c.stddev_ok;
  v.reasons = std::move(c.reasons);
  v.nan_ok = sets.boo_nan_mismatches == 0;
  if (!v.nan_ok) v.reasons.push_back("NaN mismatch: BOO vs reference in " + std::to_string(sets.boo_nan_mismatches) + " positions");
  if (sets.vendor_nan_mismatches)
    v.notes.push_back("warning: the vendor's NaN pattern differs from the reference's in " +
                      std::to_string(sets.vendor_nan_mismatches) + " positions");
  return v;
}

std::string format_verdict_line(const NumericsVerdict& v) {
  return v.pass() ? "Numerics: PASS" : "Numerics: FAIL (" + v.failure_reasons() + ")";
}

std::string format_verdict_verbose(const NumericsVerdict& v, const std::string& command,
                                   const std::string& vendor_name, const std::string& reference_dtype) {
  auto stats_line = [](const std::string& label, const ErrorStats& s) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "  %-34s mean=%+.6e stddev=%.6e max_abs=%.6e samples=%lld\n", label.c_str(),
                  s.mean, s.stddev, s.max_abs, static_cast<long long>(s.samples));
    return std::string(buf);
  };
  std::string out = "=== " + command + " ===\nError Statistics:\n";
  out += stats_line("BOO GPU vs " + reference_dtype + " Reference", v.boo);
  if (v.has_vendor) {
    out += stats_line(vendor_name + " vs " + reference_dtype + " Reference", v.vendor);
    out += stats_line("BOO GPU vs " + vendor_name, v.diff);
  }
  out += "Statistical Tests:\n";
  out += std::string("  Mean near zero: ") + (v.mean_ok ? "PASS" : "FAIL") + "\n";
  out += std::string("  Stddev check: ") + (v.stddev_ok ? "PASS" : "FAIL") + "\n";
  out += std::string("  NaN pattern: ") + (v.nan_ok ? "PASS" : "FAIL") + "\n";
  out += std::string("  Per-element tolerance: ") + (v.tolerance_ok ? "PASS" : "FAIL") + "\n";
  out += std::string("Structured Test: ") + (!v.structured_ok ? "SKIPPED" : *v.structured_ok ? "PASS" : "FAIL") + "\n";
  if (!v.reference.empty()) out += "Reference: " + v.reference + "\n";
  for (const std::string& n : v.notes) out += "Note: " + n + "\n";
  if (!v.error.empty()) out += "ERROR: " + v.error + "\n";
  if (!v.pass()) {
    out += "Failure Reasons: " + v.failure_reasons() + "\n";
    for (const std::string& r : v.reasons) out += "  - " + r + "\n";
  }
  out += std::string("VERDICT: ") + (v.pass() ? "PASS" : "FAIL") + "\n";
  return out;
}

std::vector<std::string> verdict_csv_header(const std::string& vendor_name) {
  std::vector<std::string> h{"numerics_pass"};
  for (const std::string& prefix : {std::string("boo_vs_ref"), vendor_name + "_vs_ref", "boo_vs_" + vendor_name})
    for (const char* stat : {"_mean", "_stddev", "_max"}) h.push_back(prefix + stat);
  h.emplace_back("structured_test");
  h.emplace_back("numerics_reference");
  return h;
}

std::vector<std::string> verdict_csv_cells(const NumericsVerdict& v) {
  std::vector<std::string> c{v.pass() ? "PASS" : "FAIL"};
  for (const ErrorStats* s : {&v.boo, &v.vendor, &v.diff}) {
    const bool have = s->samples > 0;
    c.push_back(have ? sci(s->mean) : "N.A.");
    c.push_back(have ? sci(s->stddev) : "N.A.");
    c.push_back(have ? sci(s->max_abs) : "N.A.");
  }
  c.push_back(!v.structured_ok ? "N.A." : *v.structured_ok ? "PASS" : "FAIL");
  c.push_back(v.reference.empty() ? "N.A." : v.reference);
  return c;
}

}  // namespace boo::bench
