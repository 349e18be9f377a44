// boo: launchables of plans made outside dispatch.
//
// Dispatch plans the implementation that computes a signature's results
// (Runtime::get_launchable). Other kernels of a signature are planned by
// whoever needs them: the float64 reference of the numerics check
// (ops/gpu_reference.hpp, bench/reference.hpp) and the GPU input generator
// (ops/input_generation_gpu.hpp). They are built through the same cache,
// loaded into the same context and launched the same way.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "boo/runtime.hpp"
#include "ops/gpu_implementation.hpp"
#include "ops/plan.hpp"

namespace boo::runtime {

/// A launchable of `plan`, made for `sig` by `implementation` with `config`
/// (the cache key's), whose bindings index `arguments` and `results`: the
/// tensors launch() takes and checks (shapes, dtypes, strides) instead of
/// the signature's. Its module is compiled or read from the cache once per
/// runtime; every call returns a fresh launchable (the caller keeps it).
/// INTERNAL when the plan is inconsistent (Plan::validate).
Result<std::shared_ptr<Launchable>> load_plan(Runtime& rt, const OpSignature& sig, std::string_view implementation,
                                              const ops::Config& config, ops::Plan plan,
                                              std::vector<TensorSpec> arguments, std::vector<TensorSpec> results);

}  // namespace boo::runtime
