// boo: gpu:groupnorm:reference — the float64 CPU reference of group norm
// (groupnorm_ref.cpp) as GPU kernels (device/group_norm_ref.cuh).
#pragma once

#include <memory>
#include <string>

#include "ops/gpu_reference.hpp"

namespace boo::ops::norm {

std::unique_ptr<GpuReference> make_group_norm_gpu_reference(std::string name);

}  // namespace boo::ops::norm
