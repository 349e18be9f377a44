// boo device code: a grid-wide barrier for kernels launched cooperatively
// (LaunchStep::cooperative: the driver starts every block at once or refuses
// the launch, so no block waits on one that never starts). The arrival
// counter is a 32-bit word of device memory that is 0 at the launch (the plan
// clears it on the stream: LaunchStep::cleared_workspace_bytes) and is used
// for one barrier per launch. NVRTC-clean: includes nothing.
#pragma once

namespace boo {

/// Every block of the grid reaches this point before any block leaves it;
/// each block's global writes before it are visible to every block after it.
__device__ __forceinline__ void grid_barrier(unsigned long long counter) {
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    unsigned int* arrivals = reinterpret_cast<unsigned int*>(counter);
    const unsigned int blocks = gridDim.x * gridDim.y * gridDim.z;
    __threadfence();  // the block's writes (made visible to thread 0 by __syncthreads) before its arrival
    atomicAdd(arrivals, 1u);
    unsigned int seen = 0;
    do {
      asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(arrivals) : "memory");
      if (seen < blocks) __nanosleep(32);
    } while (seen < blocks);
  }
  __syncthreads();
}

}  // namespace boo
