// boo: a minimal parallel loop for the CPU reference and host-side data work.
#pragma once

#include <cstdint>
#include <functional>

namespace boo::base {

/// Number of worker threads parallel_for uses (defaults to the hardware concurrency).
int num_threads();
void set_num_threads(int n);

/// Calls body(begin, end) on disjoint chunks covering [0, n), on up to
/// num_threads() threads, and returns when all chunks are done. Chunks are
/// contiguous and their boundaries depend only on n and the thread count.
void parallel_for(int64_t n, const std::function<void(int64_t begin, int64_t end)>& body);

}  // namespace boo::base
