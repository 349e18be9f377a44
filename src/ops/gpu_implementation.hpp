// boo: what a GPU implementation (a tier) of an op provides.
//
// problem -> config -> plan. `accepts` says whether the tier can run the
// problem on the architecture (or why not); `configure` chooses its typed
// compile-time parameters (tiles, pipeline depth, layouts of staged copies),
// which a tuning database may later override; `plan` turns problem and config
// into a Plan (source, launches, workspace). The ops layer knows no CUDA: the
// runtime compiles the plan's source and issues its launches.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "ops/arch_spec.hpp"
#include "ops/plan.hpp"
#include "ops/problem.hpp"

namespace boo::ops {

/// A tier's compile-time parameters. Its text is complete (two configs with
/// the same text plan the same kernels): it goes into the cache key and
/// `boo explain`.
class Config {
 public:
  virtual ~Config() = default;
  virtual std::string text() const = 0;
};

class GpuImplementation {
 public:
  virtual ~GpuImplementation() = default;
  /// Stable name, e.g. "gpu:conv:direct" (selectable with --impl).
  virtual std::string_view name() const = 0;
  /// OK, or why this implementation declines the problem on this architecture (UNIMPLEMENTED).
  virtual Status accepts(const OpProblem& problem, const ArchSpec& arch) const = 0;
  /// The configuration for an accepted problem; UNIMPLEMENTED declines (e.g.
  /// no tile fits in shared memory), anything else is an error.
  virtual Result<std::unique_ptr<const Config>> configure(const OpProblem& problem, const ArchSpec& arch) const = 0;
  virtual Result<Plan> plan(const OpProblem& problem, const Config& config, const ArchSpec& arch) const = 0;
};

/// A GpuImplementation of one problem type with one config type: the casts
/// are done (and checked) here once, the tier sees its own types.
template <typename ProblemT, typename ConfigT>
class Tier : public GpuImplementation {
 public:
  virtual Status accepts_problem(const ProblemT& problem, const ArchSpec& arch) const = 0;
  virtual Result<ConfigT> configure_problem(const ProblemT& problem, const ArchSpec& arch) const = 0;
  virtual Result<Plan> plan_problem(const ProblemT& problem, const ConfigT& config, const ArchSpec& arch) const = 0;

  Status accepts(const OpProblem& problem, const ArchSpec& arch) const final {
    BOO_ASSIGN_OR_RETURN(const ProblemT* p, cast(problem));
    return accepts_problem(*p, arch);
  }
  Result<std::unique_ptr<const Config>> configure(const OpProblem& problem, const ArchSpec& arch) const final {
    BOO_ASSIGN_OR_RETURN(const ProblemT* p, cast(problem));
    BOO_ASSIGN_OR_RETURN(ConfigT config, configure_problem(*p, arch));
    return std::unique_ptr<const Config>(std::make_unique<ConfigT>(std::move(config)));
  }
  Result<Plan> plan(const OpProblem& problem, const Config& config, const ArchSpec& arch) const final {
    BOO_ASSIGN_OR_RETURN(const ProblemT* p, cast(problem));
    const auto* c = dynamic_cast<const ConfigT*>(&config);
    if (!c) return internal_error(std::string(name()) + " was given another tier's configuration");
    return plan_problem(*p, *c, arch);
  }

 private:
  Result<const ProblemT*> cast(const OpProblem& problem) const {
    const auto* p = dynamic_cast<const ProblemT*>(&problem);
    if (!p) return internal_error(std::string(name()) + " was given another op's problem");
    return p;
  }
};

}  // namespace boo::ops
