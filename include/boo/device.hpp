// boo: what boo knows about a GPU.
#pragma once

#include <cstdint>
#include <string>

#include "boo/status.hpp"

namespace boo {

struct DeviceInfo {
  int ordinal = -1;            ///< CUDA device ordinal; -1 for an architecture without a device (preload --arch)
  std::string name;            ///< "NVIDIA H100 80GB HBM3"
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int64_t total_memory_bytes = 0;
  int max_shared_bytes_per_block = 0;  ///< opt-in maximum
  int l2_bytes = 0;

  /// The NVRTC target: "sm_90a" on Hopper (arch-specific features: wgmma,
  /// setmaxnreg), "sm_100a" on Blackwell, "sm_XY" otherwise.
  std::string arch() const;

  /// A device description for an architecture name ("sm_90a", "sm_80"),
  /// with the typical resources of that architecture, for compiling without a GPU.
  static Result<DeviceInfo> for_arch(const std::string& arch);
};

}  // namespace boo
