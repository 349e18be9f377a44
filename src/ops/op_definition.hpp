// boo: what each op folder provides to the rest of the system.
//
// One op = one folder under src/ops/ that defines one OpDefinition, plus one
// line in registry.cpp (ops/op_registry.hpp looks ops up).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "base/host_tensor.hpp"
#include "boo/signature.hpp"
#include "ops/flag_table.hpp"
#include "ops/gpu_implementation.hpp"
#include "ops/gpu_reference.hpp"
#include "ops/input_generation.hpp"

namespace boo::ops {

/// An op token of the command line and the element type it selects.
struct OpToken {
  std::string_view token;  ///< "convbfp16"
  DType dtype;
};

class OpDefinition {
 public:
  virtual ~OpDefinition() = default;

  virtual std::string_view name() const = 0;
  virtual std::span<const OpToken> tokens() const = 0;
  virtual std::span<const FlagSpec> flags() const = 0;
  /// Builds (and validates) a signature from parsed flags.
  virtual Result<std::unique_ptr<OpSignature>> make_signature(DType dtype, const ParsedFlags& flags) const = 0;

  /// Host input tensors for `sig.arguments()`: make_default_arguments, then
  /// derive_arguments.
  Result<std::vector<base::HostTensor>> make_arguments(const OpSignature& sig, const InputOptions& options) const;
  /// Every argument filled with deterministic uniform values in [-1, 1) (or
  /// the splat value: input_generation.cpp). The GPU makes the same bytes
  /// (bench::make_arguments_on_gpu), in a fraction of the time.
  Result<std::vector<base::HostTensor>> make_default_arguments(const OpSignature& sig,
                                                               const InputOptions& options) const;
  /// Replaces the default arguments that must be consistent with the others
  /// (a backward's saved statistics are x's own; drawn variances are
  /// positive), on the host, wherever the defaults were made. Nothing by default.
  virtual Status derive_arguments(const OpSignature&, std::vector<base::HostTensor>&) const { return ok_status(); }

  /// Terms summed into one element of result `result_index` (sets the
  /// numerics tolerance of that result).
  virtual int64_t reduction_length(const OpSignature& sig, size_t result_index) const = 0;

  /// Whether the signature's fp32 products are formed from operands rounded to
  /// TF32 (`--fp32-math tf32`): the numerics tolerance then allows that rounding.
  virtual bool tf32_operands(const OpSignature&) const { return false; }

  /// Per result: the rms magnitude of the terms whose difference forms its
  /// elements, where they cancel (0, the default, where nothing cancels). A
  /// float32 difference is exact to a few ulps of its terms, not of its value,
  /// so the numerics bound adds kCancellationUlps float32 ulps of this scale
  /// (docs/tolerances.md). RMS norm's dx with short rows is the case: the part
  /// of dy along x is scaled by eps * rstd^2 through such a difference.
  virtual Result<double> cancellation_scale(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                                            size_t result_index) const;

  /// Per result, where the op bounds its elements' errors by magnitudes of
  /// their own: the absolute error allowed at each element beyond
  /// rtol * |ref| (the result's relative tolerance `rtol`), at each logical
  /// row-major position of `linear`, or of every element in order where
  /// `linear` is null. It replaces rtol * rms(ref), the default (an empty
  /// vector), which bounds terms that cancel by the tensor's typical size;
  /// attention's output element is a softmax-weighted mean whose terms'
  /// magnitude varies by row (docs/tolerances.md, "Attention").
  virtual Result<std::vector<double>> element_allowances(const OpSignature& sig,
                                                         const std::vector<base::HostTensor>& args,
                                                         size_t result_index, double rtol,
                                                         const std::vector<int64_t>* linear) const;

  /// The problem every implementation plans from, read once from the signature.
  virtual Result<std::unique_ptr<OpProblem>> make_problem(const OpSignature& sig) const = 0;

  /// A simpler signature of the same computation on the same memory, for dispatch to plan the GPU
  /// implementations' problem from (a 3-D conv whose extra dim changes nothing, as the 2-D one), or null.
  /// Only dispatch uses it: the references and vendor baselines plan the user's signature, so they check it.
  virtual std::unique_ptr<OpSignature> simpler_signature(const OpSignature& /*sig*/) const { return nullptr; }

  /// GPU implementations, best first (dispatch takes the first that accepts).
  virtual std::span<const GpuImplementation* const> gpu_implementations() const = 0;

  /// The reference at positions `linear` (logical row-major indices) of
  /// result `result_index` only. The default computes the whole result; ops
  /// whose elements are independent sums override it.
  virtual Result<std::vector<double>> reference_sample(const OpSignature& sig,
                                                       const std::vector<base::HostTensor>& args,
                                                       size_t result_index, const std::vector<int64_t>& linear) const;

  /// The CPU reference: float64 results (TensorSpec dtype kF64, layouts as
  /// `sig.results()`), accumulated in double precision.
  virtual Result<std::vector<base::HostTensor>> reference(const OpSignature& sig,
                                                          const std::vector<base::HostTensor>& args) const = 0;

  /// The same reference as GPU kernels (ops/gpu_reference.hpp), which the
  /// numerics check runs where a GPU is present; nullptr (the default): the
  /// op has none, and the CPU reference runs.
  virtual const GpuReference* gpu_reference() const { return nullptr; }
};

/// Float64 tensors with the shapes and strides of `sig.results()`: what a
/// reference() fills.
std::vector<base::HostTensor> make_f64_results(const OpSignature& sig);

/// Run flags every op accepts (-t, --iter, ...), appended to each op's table
/// (read by parse_command, ops/command_parse.cpp).
std::span<const FlagSpec> common_run_flags();

}  // namespace boo::ops
