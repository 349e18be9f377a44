// boo: picking the GPU implementation of a signature, with every reason.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "boo/device.hpp"
#include "boo/signature.hpp"
#include "ops/gpu_implementation.hpp"

namespace boo::runtime {

struct Considered {
  std::string name;
  Status verdict;  ///< OK = accepts; otherwise why it declines (or "not selected by --impl")
};

struct Dispatch {
  std::vector<Considered> considered;  ///< in list order
  const ops::GpuImplementation* chosen = nullptr;
  /// kUnimplemented listing every reason, when nothing was chosen.
  Status failure() const;
};

/// The first GPU implementation of the signature's op that accepts it.
/// `only` (from --impl) restricts the choice to one implementation name.
Dispatch choose_gpu_implementation(const OpSignature& sig, const DeviceInfo& device, std::string_view only = "");

}  // namespace boo::runtime
