// boo: the seeded inputs of input_generation.hpp as GPU kernels
// (kernels/random/seeded_inputs.cuh), identical to the CPU's byte for byte.
#pragma once

#include "boo/signature.hpp"
#include "ops/arch_spec.hpp"
#include "ops/gpu_implementation.hpp"
#include "ops/input_generation.hpp"
#include "ops/plan.hpp"

namespace boo::ops {

/// The implementation name the generator's modules are cached under.
inline constexpr std::string_view kGpuInputsName = "gpu:inputs:seeded";

/// The generator's config: its kernels depend on the dtypes only (in the
/// source); seed, streams and the splat value are launch parameters.
class GpuInputsConfig final : public Config {
 public:
  std::string text() const override { return "seeded inputs"; }
};

/// A plan with no arguments whose results are sig.arguments(): each filled
/// as OpDefinition::make_default_arguments fills it (uniform values of the
/// argument's stream under options.seed, or options.splat), one step per
/// tensor. Storage between strided elements is left to the caller (the
/// host's tensors hold zeros there). UNIMPLEMENTED for a float64 argument or
/// one of rank above 8 (the CPU generates those).
Result<Plan> plan_gpu_inputs(const OpSignature& sig, const InputOptions& options, const ArchSpec& arch);

}  // namespace boo::ops
