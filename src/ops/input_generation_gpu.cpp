// boo: the seeded inputs on the GPU — host side: kernel source and launch plan.
#include "ops/input_generation_gpu.hpp"

#include <algorithm>

#include "kernels/random/seeded_inputs_params.cuh"
#include "ops/common/reference_plan.hpp"

namespace boo::ops {
namespace {

constexpr uint32_t kThreads = 256;

}  // namespace

Result<Plan> plan_gpu_inputs(const OpSignature& sig, const InputOptions& options, const ArchSpec& arch) {
  const std::vector<TensorSpec> specs = sig.arguments();
  std::vector<KernelEntry> entries;
  for (const TensorSpec& s : specs) {
    if (s.dtype == DType::kF64)
      return unimplemented("GPU inputs: argument '" + s.name + "' is float64; the GPU generates float32, fp16 and bf16");
    if (s.rank() > kSeededInputsMaxRank)
      return unimplemented("GPU inputs: argument '" + s.name + "' has rank " + std::to_string(s.rank()) +
                           ", the kernel indexes at most " + std::to_string(kSeededInputsMaxRank) + " dims");
    // One entry per dtype, shared by the tensors of that dtype.
    const std::string entry = "boo_seeded_inputs_" + std::string(dtype_name(s.dtype));
    if (std::none_of(entries.begin(), entries.end(), [&](const KernelEntry& e) { return e.name == entry; }))
      entries.push_back({entry, "boo::seeded_inputs<" + std::string(device_type(s.dtype)) + ">(p)",
                         static_cast<int>(kThreads)});
  }
  Plan plan;
  plan.source = generated_source("seeded_inputs.cu", std::string(kGpuInputsName), "boo/kernels/random/seeded_inputs.cuh",
                                 "boo::SeededInputParams", entries);
  plan.tensor_alignment = 1;
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec& s = specs[i];
    StepBuilder<SeededInputParams> step("boo_seeded_inputs_" + std::string(dtype_name(s.dtype)), {1, 1, 1},
                                        {kThreads, 1, 1});
    SeededInputParams& p = step.params;
    p.seed = options.seed;
    p.stream = input_stream(s.name);
    p.numel = s.numel();
    p.rank = s.rank();
    p.splat = options.splat ? 1 : 0;
    p.value = options.splat ? static_cast<float>(*options.splat) : 0.f;
    std::copy(s.shape.begin(), s.shape.end(), p.shape);
    std::copy(s.strides.begin(), s.strides.end(), p.strides);
    step.bind(p.out, TensorBinding{TensorBinding::Source::kResult, static_cast<uint32_t>(i), 0});
    LaunchStep launch = std::move(step).finish();
    launch.grid.x = grid_stride_blocks(p.numel, kThreads, arch);
    plan.steps.push_back(std::move(launch));
  }
  return plan;
}

}  // namespace boo::ops
