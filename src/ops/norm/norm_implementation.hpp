// boo: what the norm tiers (rows, simple) share: each instance runs the
// problems of one kind, and their kernels' parameter blocks name the tensors
// alike.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "ops/gpu_implementation.hpp"
#include "ops/norm/norm_problem.hpp"

namespace boo::ops::norm {

/// A tier of one norm kind, named "gpu:<op>:<tier>".
template <typename ConfigT>
class NormTier : public Tier<NormProblem, ConfigT> {
 public:
  NormTier(NormKind kind, std::string name) : kind_(kind), name_(std::move(name)) {}
  std::string_view name() const override { return name_; }

 protected:
  /// OK for a problem of this tier's kind.
  Status check_kind(const NormProblem& problem) const {
    if (problem.kind == kind_) return ok_status();
    return invalid_argument(kind_ == NormKind::kLayer ? "not a layernorm signature" : "not an rmsnorm signature");
  }

 private:
  NormKind kind_;
  std::string name_;
};

/// The (blocks per SM, vectors per thread) tilings boo tune tries around a
/// column-reducing norm tier's heuristic (batch and group norm, which have no
/// cost model): one factor changed at a time, the nearest first.
inline std::array<std::pair<int64_t, int64_t>, 8> nearby_tilings(int64_t blocks_per_sm, int64_t vectors_per_thread) {
  return {{{blocks_per_sm, vectors_per_thread / 2},
           {blocks_per_sm, vectors_per_thread * 2},
           {blocks_per_sm / 2, vectors_per_thread},
           {blocks_per_sm * 2, vectors_per_thread},
           {blocks_per_sm, vectors_per_thread * 4},
           {blocks_per_sm * 2, vectors_per_thread / 4},
           {blocks_per_sm / 4, vectors_per_thread},
           {blocks_per_sm * 4, vectors_per_thread}}};
}

/// Binds the tensor address fields of a norm kernel's parameter block to the
/// signature's tensors; those it lacks stay 0 (mean and rstd are results with
/// the forward, arguments without). Layer norm's blocks also have mean, bias,
/// dbias and add-layernorm's x2.
template <typename Params>
void bind_tensors(StepBuilder<Params>& step, const TensorRoles& roles) {
  auto bind = [&](unsigned long long& field, std::string_view name) {
    if (std::optional<TensorBinding> t = roles.find(name)) step.bind(field, *t);
  };
  Params& p = step.params;
  bind(p.x, "x");
  bind(p.weight, "weight");
  bind(p.y, "y");
  bind(p.rstd, "rstd");
  bind(p.dy, "dy");
  bind(p.dx, "dx");
  bind(p.dweight, "dweight");
  if constexpr (requires { p.mean; }) {
    bind(p.mean, "mean");
    bind(p.bias, "bias");
    bind(p.dbias, "dbias");
    bind(p.x2, "x2");
  }
}

}  // namespace boo::ops::norm
