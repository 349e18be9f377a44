// boo: the simple norm kernels (norm/device/norm_simple.cuh) as a GPU
// implementation of either norm kind: gpu:layernorm:simple, gpu:rmsnorm:simple.
// A block per row: every signature, at a fraction of the row kernels' speed.
#pragma once

#include <memory>
#include <string>

#include "boo/norm.hpp"
#include "ops/gpu_implementation.hpp"

namespace boo::ops::norm {

/// The simple tier of `kind`'s problems, named `name`.
std::unique_ptr<GpuImplementation> make_simple_implementation(NormKind kind, std::string name);

}  // namespace boo::ops::norm
