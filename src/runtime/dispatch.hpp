// boo: picking the GPU implementation of a signature, with every reason, and
// its plan.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "boo/device.hpp"
#include "boo/signature.hpp"
#include "ops/gpu_implementation.hpp"

namespace boo::runtime {

struct Considered {
  std::string name;
  Status verdict;  ///< OK = chosen or would accept; otherwise why it declines (or "not selected by --impl")
};

struct Dispatch {
  std::unique_ptr<const ops::OpProblem> problem;
  ops::ArchSpec arch;
  std::vector<Considered> considered;  ///< in list order
  const ops::GpuImplementation* chosen = nullptr;
  std::unique_ptr<const ops::Config> config;  ///< the chosen implementation's
  /// kUnimplemented listing every reason, when nothing was chosen.
  Status failure() const;
};

/// The first GPU implementation of the signature's op that accepts and
/// configures it; an error only when the signature has no op or its problem
/// cannot be built. `only` (from --impl) restricts the choice to one name.
Result<Dispatch> choose_gpu_implementation(const OpSignature& sig, const DeviceInfo& device,
                                           std::string_view only = "");

/// The chosen implementation's plan, checked (Plan::validate).
Result<ops::Plan> plan_chosen(const Dispatch& dispatch);

}  // namespace boo::runtime
