// boo: gpu:batchnorm:columns, the batch norm kernels' host side.
#pragma once

#include <memory>
#include <string>

#include "ops/gpu_implementation.hpp"

namespace boo::ops::norm {

/// Batch norm of every layout, mode and pass: per-channel sums over slices of
/// the rows and a small kernel adding them in order (kernels/reduce/channel_sums.cuh),
/// then one elementwise pass (device/batch_norm.cuh).
std::unique_ptr<GpuImplementation> make_batch_norm_implementation(std::string name);

/// Channels-last batch norm (training, inference from the batch, backward
/// from saved statistics) in two launches: per-slice sums over channel slabs,
/// then each block adds its slab's sums and writes y or dx over its slice
/// (device/batch_norm_slabs.cuh).
std::unique_ptr<GpuImplementation> make_batch_norm_slabs_implementation(std::string name);

/// Channels-last batch norm as the slabs tier's, in one cooperative launch of
/// one block per SM with a grid barrier between the sums and the apply pass:
/// each block keeps the first rows of its slice in shared memory, so x (and
/// dy) are read from device memory once where they fit the SMs
/// (device/batch_norm_resident.cuh). Ahead of slabs where x (and dy) fit the
/// SMs' shared memory and L2 together.
std::unique_ptr<GpuImplementation> make_batch_norm_resident_implementation(std::string name);

}  // namespace boo::ops::norm
