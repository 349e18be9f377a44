// boo: launch plans.
#include "ops/plan.hpp"

#include <algorithm>

namespace boo::ops {
namespace {

Result<TensorBinding> find_role(const std::vector<std::string>& names, std::string_view name,
                                TensorBinding::Source source, const char* what) {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return TensorBinding{source, static_cast<uint32_t>(i), 0};
  std::string have;
  for (const std::string& n : names) have += (have.empty() ? "" : ", ") + n;
  return internal_error("the plan binds " + std::string(what) + " '" + std::string(name) +
                        "', which the signature does not have (it has: " + (have.empty() ? "none" : have) + ")");
}

}  // namespace

TensorRoles::TensorRoles(const OpSignature& sig) {
  for (const TensorSpec& t : sig.arguments()) arguments_.push_back(t.name);
  for (const TensorSpec& t : sig.results()) results_.push_back(t.name);
}

Result<TensorBinding> TensorRoles::argument(std::string_view name) const {
  return find_role(arguments_, name, TensorBinding::Source::kArgument, "argument");
}

Result<TensorBinding> TensorRoles::result(std::string_view name) const {
  return find_role(results_, name, TensorBinding::Source::kResult, "result");
}

bool TensorRoles::has_argument(std::string_view name) const {
  return std::find(arguments_.begin(), arguments_.end(), name) != arguments_.end();
}

std::optional<TensorBinding> TensorRoles::find(std::string_view name) const {
  for (size_t i = 0; i < arguments_.size(); ++i)
    if (arguments_[i] == name) return TensorBinding{TensorBinding::Source::kArgument, static_cast<uint32_t>(i), 0};
  for (size_t i = 0; i < results_.size(); ++i)
    if (results_[i] == name) return TensorBinding{TensorBinding::Source::kResult, static_cast<uint32_t>(i), 0};
  return std::nullopt;
}

Result<uint32_t> grid_extent(long long blocks, long long limit, std::string_view what) {
  if (blocks < 1 || blocks > limit)
    return internal_error("the plan needs " + std::to_string(blocks) + " blocks along " + std::string(what) +
                          ", outside 1.." + std::to_string(limit));
  return static_cast<uint32_t>(blocks);
}

Status Plan::validate(size_t arguments, size_t results) const {
  for (const LaunchStep& step : steps) {
    const std::string where = "plan step '" + step.entry + "': ";
    if (std::find(source.entries.begin(), source.entries.end(), step.entry) == source.entries.end())
      return internal_error(where + "the source defines no such entry");
    if (step.grid.x < 1 || step.grid.y < 1 || step.grid.z < 1 || step.grid.y > 65535 || step.grid.z > 65535 ||
        step.grid.x > 0x7fffffffu)
      return internal_error(where + "grid " + std::to_string(step.grid.x) + "x" + std::to_string(step.grid.y) + "x" +
                            std::to_string(step.grid.z) + " is outside the hardware's limits");
    if (step.cleared_workspace_bytes > workspace_bytes)
      return internal_error(where + "clears " + std::to_string(step.cleared_workspace_bytes) +
                            " bytes of a workspace of " + std::to_string(workspace_bytes));
    const uint64_t threads = uint64_t{step.block.x} * step.block.y * step.block.z;
    if (threads < 1 || threads > 1024) return internal_error(where + std::to_string(threads) + " threads per block");
    for (const LaunchStep::AddressSlot& slot : step.addresses) {
      if (size_t{slot.params_offset} + sizeof(unsigned long long) > step.params.size())
        return internal_error(where + "an address slot lies outside the parameter block");
      const TensorBinding& t = slot.tensor;
      const bool in_range = t.source == TensorBinding::Source::kArgument ? t.index < arguments
                            : t.source == TensorBinding::Source::kResult ? t.index < results
                                                                          : t.offset <= workspace_bytes;
      if (!in_range) return internal_error(where + "a tensor binding lies past the signature's tensors or workspace");
    }
  }
  return ok_status();
}

}  // namespace boo::ops
