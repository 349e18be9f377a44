// boo: gpu:batchnorm:reference — the float64 CPU reference of batch norm
// (batchnorm_ref.cpp) as GPU kernels (device/batch_norm_ref.cuh).
#pragma once

#include <memory>
#include <string>

#include "ops/gpu_reference.hpp"

namespace boo::ops::norm {

std::unique_ptr<GpuReference> make_batch_norm_gpu_reference(std::string name);

}  // namespace boo::ops::norm
