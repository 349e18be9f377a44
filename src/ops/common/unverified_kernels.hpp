// boo: the gate for kernels that compile and plan in the tests but have not yet
// passed numerics on a GPU. Dispatch leaves their problems to a verified tier
// (or to "unsupported") unless BOO_UNVERIFIED_KERNELS=1 asks for them, so a
// default run never times or returns results of a kernel nobody has checked.
// Which kernels are gated: docs/architecture.md, "Kernels awaiting a GPU".
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>

namespace boo::ops {

inline constexpr const char* kUnverifiedKernelsVariable = "BOO_UNVERIFIED_KERNELS";

/// Whether BOO_UNVERIFIED_KERNELS=1 (read at every call: tests toggle it).
inline bool unverified_kernels_enabled() {
  const char* v = std::getenv(kUnverifiedKernelsVariable);
  return v != nullptr && std::string_view(v) == "1";
}

/// The decline reason of a gated kernel: `what` names it.
inline std::string unverified_kernel_reason(std::string_view what) {
  return std::string(what) + " only with " + kUnverifiedKernelsVariable +
         "=1: its kernel awaits its first numerics run on a GPU";
}

}  // namespace boo::ops
