// boo device code: Hopper (sm_90a) thread-block clusters as PTX — a CTA's
// rank in its cluster, the cluster-wide barrier, arrivals on another CTA's
// mbarrier and TMA copies multicast into every CTA of a mask.
//
// A cluster's CTAs run at once on neighbouring SMs and may address each
// other's shared memory (the shared::cluster window): the same offset in
// another CTA is reached by `mapa` with that CTA's rank. A multicast copy
// writes its box at the same shared-memory offset in each CTA of the mask and
// signals the mbarrier at the same offset in each of them, so two CTAs that
// need one tile load half of it each and both receive the whole.
#pragma once

#include "boo/kernels/arch/sm90.cuh"

namespace boo {
namespace sm90 {

/// This CTA's rank in its cluster (0 ... cluster size - 1).
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  return rank;
}

/// Every non-exited thread of the cluster arrives (release: its earlier
/// writes, barrier initializations included, are visible) and waits for the
/// others (acquire). Every thread of a warp executes it together.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

/// One arrival on the mbarrier at `bar`'s offset in the shared memory of the
/// cluster's CTA `rank` (this CTA's own included), with the default (CTA-scope)
/// release, as CUTLASS's cluster barriers arrive: a consumer releasing a stage
/// has waited for its wgmma reads already, and a cluster-scope release stalls
/// the warp on a memory barrier each k-block (ncu: two thirds of the
/// consumers' stalls, 2.5x the kernel's time; H100, 2026-11-27).
__device__ __forceinline__ void mbarrier_arrive_cluster(unsigned long long* bar, unsigned rank) {
  asm volatile(
      "{\n.reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(
          shared_address(bar)),
      "r"(rank)
      : "memory");
}

/// tma_load_2d's copy (sm90.cuh) written at `dst`'s offset in the shared
/// memory of every CTA of the cluster whose rank bit is set in `mask`, its
/// bytes signalled on the mbarrier at `bar`'s offset in each of them.
__device__ __forceinline__ void tma_load_2d_multicast(unsigned dst, const void* map, int c0, int c1,
                                                      unsigned long long* bar, unsigned short mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1),
      "r"(shared_address(bar)), "h"(mask)
      : "memory");
}

}  // namespace sm90
}  // namespace boo
