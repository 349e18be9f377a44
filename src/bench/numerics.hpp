// boo: comparing a backend's results with the float64 CPU reference.
//
// Tolerances (docs/tolerances.md): inputs are exactly representable in the
// dtype and the reference sees the same values, so the error of a result is
// its rounding to the output dtype plus the rounding of its float
// accumulation over K terms. Relative tolerance:
//   rtol(dtype, K) = 2^-p(dtype) + 8 * sqrt(K) * 2^-24      (p = 8 bf16, 11 fp16, 24 fp32; TF32: p = 11 for the products)
// and every element must satisfy |out - ref| <= rtol * (|ref| + rms(ref)),
// which scales with the tensor's magnitude where cancellation makes |ref| small,
// plus kCancellationUlps float32 ulps of the op's cancellation scale where the
// result is a difference of larger terms (OpDefinition::cancellation_scale).
// An op that bounds each element by magnitudes of its own
// (OpDefinition::element_allowances: attention) replaces rtol * rms(ref) with
// that element's allowance.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "base/host_tensor.hpp"
#include "bench/reference.hpp"
#include "boo/signature.hpp"

namespace boo::bench {

double relative_tolerance(DType dtype, int64_t reduction_length, bool tf32 = false);
/// relative_tolerance of result `result_index` of `sig` (its dtype, reduction length and TF32 mode).
double result_tolerance(const OpSignature& sig, size_t result_index);

/// Float32 ulps of the cancelling terms' magnitude allowed on top of rtol.
inline constexpr double kCancellationUlps = 32;
/// The absolute error allowed for a cancellation scale (0 for 0).
double cancellation_allowance(double cancellation_scale);

struct Comparison {
  std::string name;                ///< result name ("y", "dx", ...)
  int64_t elements = 0;             ///< elements compared (the sample's size when sampled)
  int64_t population = 0;          ///< the result's element count when sampled, else 0
  uint64_t sample_seed = 0;        ///< the seed the sampled positions were drawn from
  int64_t over_tolerance = 0;      ///< elements beyond the bound
  int64_t nan_mismatches = 0;      ///< NaN in one and not the other
  double max_abs_error = 0;
  double relative_l2_error = 0;    ///< ||out - ref|| / ||ref||
  double rtol = 0;
  int64_t worst_index = -1;        ///< logical index of the largest error relative to its bound
  double worst_value = 0, worst_reference = 0;
  bool pass() const { return over_tolerance == 0 && nan_mismatches == 0; }
  bool sampled() const { return population > 0; }
  /// "y: max |err| 1.2e-03, rel L2 3.4e-04, rtol 7.9e-03, 0 of 1000 over", or for a sample
  /// "..., 0 of 4096 sampled (of 2097152, seed 10) over"
  std::string summary() const;
};

/// `element_allowance`: one absolute allowance per element in logical order,
/// in place of rtol * rms(ref); null or empty: the rms.
Comparison compare_to_reference(const base::HostTensor& result, const base::HostTensor& reference, double rtol,
                                double cancellation_scale = 0, const std::vector<double>* element_allowance = nullptr);

/// The same comparison at sampled positions: `linear` logical indices with
/// their reference values (and allowances, where given, in the same order).
Comparison compare_to_sample(const base::HostTensor& result, const std::vector<int64_t>& linear,
                             const std::vector<double>& reference, double rtol, double cancellation_scale = 0,
                             const std::vector<double>* element_allowance = nullptr);

/// About `count` logical row-major positions of a tensor of logical shape `shape` (all of them when
/// it has no more), sorted and distinct: always every corner (each index first or last in every
/// dimension) and the first and last elements in row-major order (where a short-written tail or a
/// misplaced start shows); positions on each border face (one index first or last); and uniform
/// random ones, all drawn from `seed`: the same seed gives the same positions, another seed others.
std::vector<int64_t> sample_positions(const std::vector<int64_t>& shape, int64_t count, uint64_t seed);

/// Where a numerics check spent its time, in seconds (the driver's closing summary).
struct NumericsSeconds {
  double inputs = 0;     ///< seeded and structured inputs made for the check
  double runs = 0;       ///< the judged backend and the vendor run on them
  double reference = 0;  ///< the float64 reference (whole or sampled)
  double checks = 0;     ///< comparisons and statistics on the host
  NumericsSeconds& operator+=(const NumericsSeconds& other);
};

/// Adds the seconds of its own lifetime to `*sink` (nothing when null).
class AddSeconds {
 public:
  explicit AddSeconds(double* sink) : sink_(sink) {}
  ~AddSeconds() {
    if (sink_) *sink_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  AddSeconds(const AddSeconds&) = delete;
  AddSeconds& operator=(const AddSeconds&) = delete;

 private:
  double* sink_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

struct VerifyOptions {
  /// Signatures with more floating-point operations are checked at sampled
  /// output positions instead of computing the whole reference.
  double full_reference_flops = 2e9;
  int64_t samples_per_result = 4096;
  uint64_t sample_seed = 0;  ///< the positions' seed (the driver passes its --seed)
  /// Where the reference runs (bench/reference.hpp); null: the CPU.
  Reference* reference = nullptr;
  /// Where the reference's and the comparisons' seconds are added (null: not measured).
  NumericsSeconds* seconds = nullptr;
};

/// Runs the reference (whole or sampled) and compares every result.
Result<std::vector<Comparison>> verify_results(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                                               const std::vector<base::HostTensor>& results,
                                               const VerifyOptions& options = {});

/// Compares every result of `sig` with the reference, with each result's
/// tolerance (its dtype and reduction length).
Result<std::vector<Comparison>> compare_results(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                                                const std::vector<base::HostTensor>& results,
                                        const std::vector<base::HostTensor>& reference);

}  // namespace boo::bench
