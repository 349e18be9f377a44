// boo: a command's memory, checked against the host's and the device's before
// anything is allocated (a tensor too large is refused with its size, never
// left to the allocator or the kernel's OOM killer).
#pragma once

#include <cstdint>

#include "boo/device.hpp"
#include "boo/signature.hpp"

namespace boo::bench {

/// Host bytes a command needs at least: its inputs, `result_copies` copies of
/// its results (one per backend) and, when `reference` runs (the cpu backend,
/// --verify-numerics), float64 copies of every tensor. Saturates at UINT64_MAX.
uint64_t host_bytes_needed(const OpSignature& sig, int64_t result_copies, bool reference);

/// OK, or RESOURCE_EXHAUSTED with both sizes when host_bytes_needed exceeds the host's memory.
Status check_host_memory(const OpSignature& sig, int64_t result_copies, bool reference);

/// OK, or RESOURCE_EXHAUSTED with both sizes when the inputs and results of
/// one launch exceed the device's memory.
Status check_device_memory(const OpSignature& sig, const DeviceInfo& device);

}  // namespace boo::bench
