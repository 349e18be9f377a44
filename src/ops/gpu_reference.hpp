// boo: the float64 reference of an op as GPU kernels.
//
// The CPU reference (OpDefinition::reference) takes seconds on a large
// signature; the same sums in double precision on the GPU take milliseconds.
// An op's GpuReference plans kernels that compute exactly what its CPU
// reference computes, in the same order where the order is fixed (so that
// the two agree bit for bit; see docs/architecture.md), and the numerics
// check (bench/reference.hpp) runs them through the runtime like any plan.
// The ops layer knows no CUDA: this is the plan, the runtime runs it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ops/arch_spec.hpp"
#include "ops/gpu_implementation.hpp"
#include "ops/plan.hpp"
#include "ops/problem.hpp"

namespace boo::ops {

/// What a GPU reference computes: every result whole, or one result at
/// sampled positions.
struct ReferenceRequest {
  /// Unset: every result, as float64 tensors with the shapes and strides of
  /// sig.results(). Set: this result only, at `samples` positions.
  std::optional<size_t> sampled_result;
  int64_t samples = 0;

  /// "every result" or "result 1 at sampled positions" (the sample count is a launch parameter).
  std::string text() const;
};

/// The tensors a reference plan's bindings index. Arguments: the signature's
/// (in their dtypes and layouts), then for a sample the positions, a float64
/// [samples] tensor of logical row-major indices (exact integers: no tensor
/// has 2^53 elements). Results: the float64 versions of sig.results(), or for
/// a sample one dense float64 [samples] tensor.
std::vector<TensorSpec> reference_arguments(const OpSignature& sig, const ReferenceRequest& request);
std::vector<TensorSpec> reference_results(const OpSignature& sig, const ReferenceRequest& request);

/// The config a reference plan is cached under: the request (everything else
/// the kernels depend on is in their source).
class ReferenceConfig final : public Config {
 public:
  explicit ReferenceConfig(const ReferenceRequest& request) : text_("float64 reference: " + request.text()) {}
  std::string text() const override { return text_; }

 private:
  std::string text_;
};

class GpuReference {
 public:
  virtual ~GpuReference() = default;
  /// Stable name, e.g. "gpu:conv:reference".
  virtual std::string_view name() const = 0;
  /// OK, or why this problem is left to the CPU reference (UNIMPLEMENTED).
  virtual Status accepts(const OpProblem& problem) const = 0;
  /// Whether sampled requests are planned (else the caller computes the
  /// whole result and picks the positions: ops whose whole result is cheap).
  virtual bool samples() const = 0;
  /// The kernels, their launches and bindings (to reference_arguments and reference_results).
  virtual Result<Plan> plan(const OpProblem& problem, const ReferenceRequest& request, const ArchSpec& arch) const = 0;
};

}  // namespace boo::ops
