// boo: what the float64 GPU reference plans (and the seeded-input plan) share.
//
// Their kernels are one thread per work item (a row, an element, a channel,
// a statistic), grid-striding over the rest; the norm references' steps all
// take one parameter block whose tensors are bound where the signature has
// them, so the same planning loop serves each of them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ops/arch_spec.hpp"
#include "ops/common/generated_source.hpp"
#include "ops/plan.hpp"

namespace boo::ops {

/// The block size of the reference kernels.
constexpr uint32_t kReferenceThreads = 256;

/// Blocks of `threads` for `items` work items, one each, at least one block
/// and at most 32 per SM (the kernels grid-stride beyond).
uint32_t grid_stride_blocks(long long items, uint32_t threads, const ArchSpec& arch);

/// A reference step whose address fields are bound by role name, where the
/// signature has that tensor: optional tensors (a bias, x2) and statistics
/// that are an argument in one direction and a result in another.
template <typename Params>
class ReferenceStep : public StepBuilder<Params> {
 public:
  ReferenceStep(std::string entry, const TensorRoles& roles)
      : StepBuilder<Params>(std::move(entry), {1, 1, 1}, {kReferenceThreads, 1, 1}), roles_(roles) {}

  /// `field` receives argument `name`, if the signature has that argument.
  void bind_argument(unsigned long long& field, std::string_view name) {
    if (roles_.has_argument(name)) this->bind(field, *roles_.find(name));
  }
  /// `field` receives result `name`, if the signature has that result.
  void bind_result(unsigned long long& field, std::string_view name) {
    if (std::optional<TensorBinding> b = roles_.find(name); b && b->source == TensorBinding::Source::kResult)
      this->bind(field, *b);
  }

 private:
  const TensorRoles& roles_;
};

/// The kernels of a reference plan in launch order, each with its count of
/// work items, whose steps share one parameter block.
class ReferenceKernels {
 public:
  /// Entries are named `prefix` + the name given to add().
  explicit ReferenceKernels(std::string prefix) : prefix_(std::move(prefix)) {}

  void add(std::string_view entry, std::string call, long long items) {
    entries_.push_back({prefix_ + std::string(entry), std::move(call), static_cast<int>(kReferenceThreads)});
    items_.push_back(items);
  }

  const std::vector<KernelEntry>& entries() const { return entries_; }

  /// One step per kernel, its parameters and bindings set by `fill(ReferenceStep<Params>&)`
  /// (the same for every step), its grid sized for the kernel's work items.
  template <typename Params, typename Fill>
  std::vector<LaunchStep> steps(const TensorRoles& roles, const ArchSpec& arch, Fill&& fill) const {
    std::vector<LaunchStep> steps;
    for (size_t e = 0; e < entries_.size(); ++e) {
      ReferenceStep<Params> step(entries_[e].name, roles);
      fill(step);
      LaunchStep launch = std::move(step).finish();
      launch.grid.x = grid_stride_blocks(items_[e], kReferenceThreads, arch);
      steps.push_back(std::move(launch));
    }
    return steps;
  }

 private:
  std::string prefix_;
  std::vector<KernelEntry> entries_;
  std::vector<long long> items_;  // threads' work items of each entry
};

}  // namespace boo::ops
