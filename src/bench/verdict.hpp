// boo: BOO's statistical numerics verdict (iree-turbine driver/numerics.py).
//
// Over sampled output positions, three signed error sets are formed:
//   boo    = boo's result    - float64 reference
//   vendor = vendor's result - float64 reference   (cuDNN; BOO used PyTorch)
//   diff   = boo - vendor
// and the verdict is PASS iff
//   |mean(boo)| <= mean_atol + max(mean_rtol, 4/sqrt(n)) * stddev(boo)   (no bias;
//                   4 standard errors of the mean where the n samples are few)
//   stddev(boo) <= stddev_atol + stddev_rtol * stddev(vendor)   (no noisier than the vendor)
//   boo has NaN exactly where the reference has                  (NaN pattern)
//   the structured test (zero inputs with a block of ones) passes.
// Without a vendor result the spread is instead bounded by the documented
// per-dtype tolerance (docs/tolerances.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace boo::bench {

/// Standard errors of the mean an unbiased error set may show (the bias test's
/// bar for small samples: with n >= 400 mean_rtol 0.2 is the larger).
inline constexpr double kMeanStandardErrors = 4;

struct NumericsOptions {
  int64_t min_samples = 1000;      ///< --numerics-min-samples
  double stddev_rtol = 1.2;        ///< --numerics-stddev-rtol
  double stddev_atol = 1e-5;       ///< --numerics-stddev-atol
  double mean_atol = 1e-5;         ///< --numerics-mean-atol
  double mean_rtol = 0.2;          ///< --numerics-mean-rtol
  bool structured_tests = true;    ///< off with --skip-structured-tests
  bool verbose = false;            ///< --numerics-verbose
  bool reference_float32 = false;  ///< --numerics-reference-dtype float32
  bool vendor = true;              ///< off with --numerics-vendor none: the spread is bounded by the tolerance alone
};

/// Mean, Bessel stddev (NaN for one sample, as BOO's torch.std), max |x| and count of a signed error set.
struct ErrorStats {
  double mean = 0, stddev = 0, max_abs = 0;
  int64_t samples = 0;
};

ErrorStats error_stats(const std::vector<double>& errors);

/// The error sets of one comparison, accumulated over batches.
struct ErrorSets {
  std::vector<double> boo, vendor, diff;
  int64_t boo_nan_mismatches = 0;     ///< boo NaN where the reference is not, or the reverse
  int64_t vendor_nan_mismatches = 0;  ///< warnings only, as in BOO
  /// Adds one position: NaN in both boo and the reference is dropped.
  void add(double boo_value, double reference, std::optional<double> vendor_value);
};

struct NumericsVerdict {
  ErrorStats boo, vendor, diff;
  bool has_vendor = false;
  bool mean_ok = true, stddev_ok = true, nan_ok = true;
  bool tolerance_ok = true;           ///< boo's per-element tolerance on every result (docs/tolerances.md)
  std::optional<bool> structured_ok;  ///< unset when skipped
  std::string error;                  ///< set when the check itself failed to run
  std::vector<std::string> notes;     ///< e.g. the tolerance used without a vendor
  /// Each failed statistical test with its numbers, in BOO's words ("Mean error |...| > threshold (...)",
  /// "BOO stddev ... > threshold (...)", "NaN mismatch: BOO vs float64 reference"): the verbose block lists them.
  std::vector<std::string> reasons;
  /// What computed the float64 reference and how much of it: "gpu:conv:reference on cuda:0 (whole results)",
  /// "cpu:conv:reference (y at 4103 of 2097152 positions)".
  std::string reference;
  bool pass() const;
  /// "mean bias, stddev, ..." for a FAIL line.
  std::string failure_reasons() const;
};

/// BOO's two statistical tests on error statistics (driver/numerics.py's evaluate_statistical_criteria, with
/// boo's standard-error floor on the mean's bar): `spread_bar` is the vendor's stddev, or without a vendor
/// the documented tolerance, which `spread_label` names in the reason.
struct Criteria {
  bool mean_ok = true, stddev_ok = true;
  std::vector<std::string> reasons;
};
Criteria evaluate_criteria(const ErrorStats& boo, double spread_bar, const std::string& spread_label,
                           const NumericsOptions& options);

/// How the documented tolerance bounds stddev(boo): only without a vendor result, or also as a floor under
/// the vendor's spread, for results computed in a looser math than the vendor may have used (TF32 operands
/// asked by `--fp32-math tf32`, where the vendor is free to run full fp32 and spread a thousandth as much).
enum class ToleranceRole { kWithoutVendor, kFloor };

/// Applies BOO's rules; `tolerance_bound` bounds stddev(boo) as `role` says.
NumericsVerdict decide(const ErrorSets& sets, const NumericsOptions& options, double tolerance_bound,
                       ToleranceRole role = ToleranceRole::kWithoutVendor);

/// "Numerics: PASS" or "Numerics: FAIL (mean bias, stddev)".
std::string format_verdict_line(const NumericsVerdict& v);
/// BOO's verbose block (=== command === ... VERDICT: PASS|FAIL).
std::string format_verdict_verbose(const NumericsVerdict& v, const std::string& command,
                                   const std::string& vendor_name, const std::string& reference_dtype);
/// The CSV cells: numerics_pass, boo_vs_ref_{mean,stddev,max}, <vendor>_vs_ref_{...},
/// boo_vs_<vendor>_{...}, structured_test, numerics_reference.
std::vector<std::string> verdict_csv_cells(const NumericsVerdict& v);
std::vector<std::string> verdict_csv_header(const std::string& vendor_name);

}  // namespace boo::bench
