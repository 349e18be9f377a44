// boo: gpu:<op>:reference — the float64 CPU reference of layer and RMS norm
// (norm_ref.cpp) as GPU kernels (device/norm_ref.cuh).
#pragma once

#include <memory>
#include <string>

#include "boo/norm.hpp"
#include "ops/gpu_reference.hpp"

namespace boo::ops::norm {

/// The GPU reference of norms of `kind`, named `name` ("gpu:layernorm:reference").
std::unique_ptr<GpuReference> make_gpu_reference(NormKind kind, std::string name);

}  // namespace boo::ops::norm
