// boo: architecture facts.
#include "ops/arch_spec.hpp"

namespace boo::ops {

ArchSpec ArchSpec::of(const DeviceInfo& device) {
  ArchSpec a;
  a.target = device.arch();
  a.cc_major = device.cc_major;
  a.cc_minor = device.cc_minor;
  const bool hopper_or_newer = device.cc_major >= 9;
  // The flagship part of each generation where the description has no count (H100 SXM: 132 SMs).
  a.sm_count = device.sm_count > 0 ? device.sm_count : hopper_or_newer ? 132 : device.cc_major == 8 ? 108 : 80;
  a.max_shared_bytes_per_block = device.max_shared_bytes_per_block > 0 ? device.max_shared_bytes_per_block
                                 : hopper_or_newer                     ? 232448
                                 : device.cc_major == 8                ? 166912
                                                                       : 98304;
  // Per SM: the block maximum plus the 1 KiB the driver reserves per block (sm_80 and newer).
  a.max_shared_bytes_per_sm = hopper_or_newer ? 233472 : device.cc_major == 8 ? 167936 : 98304;
  a.l2_bytes = device.l2_bytes > 0 ? device.l2_bytes : hopper_or_newer ? 50 * 1024 * 1024 : 40 * 1024 * 1024;
  a.max_threads_per_sm = device.cc_major == 8 && device.cc_minor != 0 ? 1536 : 2048;
  a.registers_per_sm = 65536;  // every architecture since sm_50
  // Measured on an H100 (docs/perf/): copies at 3.0 TB/s; the sm80-style mma.sync
  // tier at ~150e12 MAC/s over 132 SMs, scaled by SM count for other parts.
  a.copy_bytes_per_s = 3.0e12;
  a.mma_sync_macs_per_s = 150e12 * a.sm_count / 132;
  // The wgmma tier's forward convs: median 720 TFLOP/s on an H100 (docs/perf/2026-11-24-wgmma-h100.md).
  a.wgmma_macs_per_s = 350e12 * a.sm_count / 132;
  // fp32 FFMA, every SM busy: three quarters of the H100's 33.5e12 FMA/s peak, an estimate until
  // gpu:conv:pointwise's fp32 lines are timed (gpu:conv:implicit_gemm's fastest FFMA lines of nchw-models.txt
  // reached 18e12 on an H100 at 8a84b3d, its median 9e12).
  a.ffma_macs_per_s = 25e12 * a.sm_count / 132;
  return a;
}

}  // namespace boo::ops
