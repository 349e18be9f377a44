// boo: the row-normalization kernels (norm/device/row_norm.cuh) as a GPU
// implementation of either norm kind: gpu:layernorm:rows, gpu:rmsnorm:rows.
#pragma once

#include <memory>
#include <string>

#include "boo/norm.hpp"
#include "ops/gpu_implementation.hpp"

namespace boo::ops::norm {

/// A GpuImplementation named `name` running the row kernels on `kind`'s
/// signatures. Declines permuted inputs and rows too wide to keep in registers.
std::unique_ptr<GpuImplementation> make_rows_implementation(NormKind kind, std::string name);

}  // namespace boo::ops::norm
