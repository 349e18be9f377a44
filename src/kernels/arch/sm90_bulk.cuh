// boo device code: the copy engine's bulk copy of a contiguous run of bytes
// (no tensor map), signalled on an mbarrier of sm90.cuh. Kept out of sm90.cuh,
// whose text is part of the Hopper conv tiers' tuning version: a helper only
// the row norms use would retire their shipped tuning rows. NVRTC-clean:
// includes nothing but boo's device code.
#pragma once

#include "boo/kernels/arch/sm90.cuh"

namespace boo::sm90 {

/// Copies `bytes` (a multiple of 16) of global memory at `src` to the
/// shared-memory address `dst` (both 16-byte aligned) as one bulk copy of the
/// copy engine, its bytes signalled on `bar`.
__device__ __forceinline__ void bulk_load(unsigned dst, const void* src, unsigned bytes, unsigned long long* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(reinterpret_cast<unsigned long long>(src)), "r"(bytes), "r"(shared_address(bar))
               : "memory");
}

}  // namespace boo::sm90
