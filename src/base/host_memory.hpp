// boo: the host's memory as a limit, checked before large host allocations.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "boo/status.hpp"

namespace boo::base {

/// The host's physical memory in bytes. Allocations beyond it would not fail
/// cleanly: Linux overcommits, then kills the process while it writes.
uint64_t host_memory_limit_bytes();

/// OK when `bytes` fit host_memory_limit_bytes(); else RESOURCE_EXHAUSTED
/// naming `what` and both sizes.
Status check_host_bytes(uint64_t bytes, std::string_view what);

/// Makes this process keep the host memory it frees for its next allocations
/// (glibc's malloc: no separate mappings for large blocks, no trimming) instead
/// of giving it back to the system. A process that allocates tensors of the
/// same sizes command after command (boo-driver) then reuses pages already
/// mapped, instead of faulting in and zeroing fresh ones for every tensor
/// (tens of milliseconds per 100 MB); its resident size stays at its peak.
void keep_freed_host_memory();

/// "12.0 GiB (12884901888 bytes)"
std::string format_bytes(uint64_t bytes);

}  // namespace boo::base
