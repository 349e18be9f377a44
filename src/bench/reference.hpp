// boo: where --verify-numerics computes its float64 reference.
//
// The CPU reference (OpDefinition::reference) runs anywhere; with a GPU, an
// op's GPU reference (ops/gpu_reference.hpp) computes the same values in
// milliseconds instead of seconds, bit for bit where the sums are the same
// (docs/architecture.md). --reference auto|cpu|gpu chooses (auto: the GPU's
// when the driver has one); an op without a GPU reference, or a signature
// its GPU reference leaves to the CPU, gets the CPU's either way, and
// describe() says which ran.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/host_tensor.hpp"
#include "boo/runtime.hpp"
#include "boo/signature.hpp"
#include "ops/input_generation.hpp"
#include "ops/op_definition.hpp"
#include "runtime/kernel_builder.hpp"

namespace boo::bench {

/// The --reference choice.
enum class ReferenceChoice { kAuto, kCpu, kGpu };

/// "auto", "cpu" or "gpu"; INVALID_ARGUMENT naming the accepted values otherwise.
Result<ReferenceChoice> parse_reference_choice(std::string_view text);

/// The float64 reference of every registered op.
class Reference {
 public:
  virtual ~Reference() = default;
  /// What computes `sig`'s reference: "gpu:conv:reference on cuda:0", or
  /// "cpu:conv:reference" (with the reason where a GPU reference declined).
  virtual std::string describe(const OpSignature& sig) const = 0;
  /// Every result: float64 tensors with the shapes and strides of sig.results().
  virtual Result<std::vector<base::HostTensor>> compute(const OpSignature& sig,
                                                        const std::vector<base::HostTensor>& args) = 0;
  /// Result `result_index` at logical row-major positions `linear` only.
  virtual Result<std::vector<double>> sample(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                                             size_t result_index, const std::vector<int64_t>& linear) = 0;
};

/// The CPU reference (shared; stateless).
Reference& cpu_reference();

/// The GPU reference on `runtime`'s device (which must outlive it), the
/// CPU's for what it does not compute.
std::unique_ptr<Reference> make_gpu_reference(Runtime& runtime);

/// The default arguments of `sig` generated on `runtime`'s GPU as
/// OpDefinition::make_default_arguments generates them on the CPU (the same bytes: the
/// same counter-based hash, ops/input_generation_gpu.hpp), copied to host
/// tensors. UNIMPLEMENTED where the GPU generator declines (the caller
/// generates on the CPU).
Result<std::vector<base::HostTensor>> make_arguments_on_gpu(Runtime& runtime, const OpSignature& sig,
                                                            const ops::InputOptions& options);

/// `op`'s arguments of `sig`: the defaults made on `runtime`'s GPU where it has
/// one and the generator takes the signature (else on the CPU: the same
/// bytes), then the op's derived ones (OpDefinition::derive_arguments).
Result<std::vector<base::HostTensor>> make_arguments(Runtime* runtime, const ops::OpDefinition& op,
                                                     const OpSignature& sig, const ops::InputOptions& options);

/// The modules --verify-numerics' GPU reference builds for `sig` on
/// `device`: every result whole where the check computes it whole
/// (VerifyOptions::full_reference_flops), and, where the reference samples,
/// the main result sampled (the signed-error batches) and, above that
/// threshold, each result sampled. Empty where the CPU's reference runs
/// (no GPU reference, or it declines `sig`). Plans only: for building ahead
/// of the check (boo-driver's precompile), under the keys the check loads.
Result<std::vector<runtime::ModuleRequest>> gpu_reference_modules(const OpSignature& sig, const DeviceInfo& device);

/// The module make_arguments_on_gpu builds for `sig` on `device`;
/// UNIMPLEMENTED where the GPU generator declines.
Result<runtime::ModuleRequest> gpu_inputs_module(const OpSignature& sig, const ops::InputOptions& options,
                                                 const DeviceInfo& device);

}  // namespace boo::bench
