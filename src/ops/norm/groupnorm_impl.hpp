// boo: gpu:groupnorm:groups, the group norm kernels' host side.
#pragma once

#include <memory>
#include <string>

#include "ops/gpu_implementation.hpp"

namespace boo::ops::norm {

/// Group norm of every layout, mode and direction: per-(sample, channel) sums
/// over pieces of the planes or slices of the channels-last rows
/// (kernels/reduce/channel_sums.cuh), a small kernel per group adding them in
/// order, then one elementwise pass (device/group_norm.cuh).
std::unique_ptr<GpuImplementation> make_group_norm_implementation(std::string name);

/// One block per (sample, group), each streaming its group twice (device/group_norm_rows.cuh): one
/// launch (two with dweight and dbias) for groups small enough (at most 48 KiB streamed per SM) that it
/// beats the groups tier's three to five launches.
std::unique_ptr<GpuImplementation> make_group_norm_rows_implementation(std::string name);

/// The same phases and sums in one cooperative launch with grid barriers
/// between them (device/group_norm_fused.cuh): one launch where the groups
/// tier makes three (forward) to five (backward). Awaits its first GPU run (gated).
std::unique_ptr<GpuImplementation> make_group_norm_fused_implementation(std::string name);

}  // namespace boo::ops::norm
