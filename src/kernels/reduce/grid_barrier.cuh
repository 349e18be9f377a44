// boo device code: a grid-wide barrier for kernels launched cooperatively
// (LaunchStep::cooperative: the driver starts every block at once or refuses
// the launch, so no block waits on one that never starts). The arrival
// counter is a 32-bit word of device memory that is 0 at the launch (the plan
// clears it on the stream: LaunchStep::cleared_workspace_bytes); each
// barrier of the launch adds one arrival per block, so the k-th waits for k
// times the grid's blocks. NVRTC-clean: includes nothing.
#pragma once

namespace boo {

/// Barrier `generation` (1 for a launch's first, 2 for its second, ...):
/// every block of the grid reaches it before any block leaves it; each
/// block's global writes before it are visible to every block after it.
__device__ __forceinline__ void grid_barrier(unsigned long long counter, unsigned int generation) {
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    unsigned int* arrivals = reinterpret_cast<unsigned int*>(counter);
    const unsigned int target = generation * gridDim.x * gridDim.y * gridDim.z;
    __threadfence();  // the block's writes (made visible to thread 0 by __syncthreads) before its arrival
    atomicAdd(arrivals, 1u);
    unsigned int seen = 0;
    do {
      asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(arrivals) : "memory");
      if (seen < target) __nanosleep(32);
    } while (seen < target);
  }
  __syncthreads();
}

}  // namespace boo
