// boo: what a GPU implementation (a tier) of an op provides.
//
// problem -> config -> plan. `accepts` says whether the tier can run the
// problem on the architecture (or why not); `configure` chooses its typed
// compile-time parameters (tiles, pipeline depth, layouts of staged copies),
// which a tuning database may later override; `plan` turns problem and config
// into a Plan (source, launches, workspace). `candidates` lists the configs
// `boo tune` times (the heuristic's first), and `config_from_text` reads a
// tuning database row's config back. The ops layer knows no CUDA: the runtime
// compiles the plan's source and issues its launches.
#pragma once

#include <limits>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/strings.hpp"
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

/// Candidate configs per problem at most: what `boo tune` compiles and times.
/// (gpu:conv:wgmma_sm90's forward face lists its 16 tilings with either epilogue.)
inline constexpr size_t kMaxCandidates = 24;

using ConfigList = std::vector<std::unique_ptr<const Config>>;

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
  /// The configs worth timing for an accepted problem: configure's first, then
  /// the tier's alternatives best first by its cost model, texts distinct, at
  /// most kMaxCandidates. Errors as configure's. By default configure's alone.
  virtual Result<ConfigList> candidates(const OpProblem& problem, const ArchSpec& arch) const {
    BOO_ASSIGN_OR_RETURN(std::unique_ptr<const Config> chosen, configure(problem, arch));
    ConfigList out;
    out.push_back(std::move(chosen));
    return out;
  }

  /// The cost model's terms for `config` at the hand-set rates
  /// (ops/cost_model.hpp): what boo tune records beside each measurement for
  /// a refit. Empty where the tier has no model of its configs.
  virtual Result<CostTerms> cost_terms(const OpProblem& /*problem*/, const Config& /*config*/,
                                       const ArchSpec& /*arch*/) const {
    return CostTerms{};
  }

  /// Every config the tier would plan for the problem: candidates' list
  /// without its kMaxCandidates bound (by default candidates').
  virtual Result<ConfigList> every_candidate(const OpProblem& problem, const ArchSpec& arch) const {
    return candidates(problem, arch);
  }

  /// The candidate whose text() is `text`: a config is read back by matching
  /// the candidates' complete texts (every_candidate's, so that a row tuned
  /// before the list grew still finds its config), so a database row can only
  /// ever select a config the tier would plan for this problem on this
  /// architecture (an edited, truncated or stale text matches none:
  /// INVALID_ARGUMENT).
  Result<std::unique_ptr<const Config>> config_from_text(const OpProblem& problem, const ArchSpec& arch,
                                                         std::string_view text) const {
    BOO_ASSIGN_OR_RETURN(ConfigList list, every_candidate(problem, arch));
    for (std::unique_ptr<const Config>& c : list)
      if (c->text() == text) return std::move(c);
    return invalid_argument("the config '" + base::echo_word(text) + "' is none of the " +
                            std::to_string(list.size()) + " candidates of " + std::string(name()) + " for this problem");
  }
};

/// A GpuImplementation of one problem type with one config type: the casts
/// are done (and checked) here once, the tier sees its own types.
template <typename ProblemT, typename ConfigT>
class Tier : public GpuImplementation {
 public:
  virtual Status accepts_problem(const ProblemT& problem, const ArchSpec& arch) const = 0;
  virtual Result<ConfigT> configure_problem(const ProblemT& problem, const ArchSpec& arch) const = 0;
  virtual Result<Plan> plan_problem(const ProblemT& problem, const ConfigT& config, const ArchSpec& arch) const = 0;
  /// Alternatives to `chosen` (configure's config), best first by the tier's
  /// cost model; each must be a config plan_problem plans. None by default:
  /// the tier has one config per problem.
  virtual std::vector<ConfigT> alternatives(const ProblemT& /*problem*/, const ArchSpec& /*arch*/,
                                            const ConfigT& /*chosen*/) const {
    return {};
  }

  /// The cost model's terms of one of the tier's configs; none by default.
  virtual CostTerms cost_terms_of(const ProblemT& /*problem*/, const ConfigT& /*config*/,
                                  const ArchSpec& /*arch*/) const {
    return {};
  }

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
  Result<CostTerms> cost_terms(const OpProblem& problem, const Config& config, const ArchSpec& arch) const final {
    BOO_ASSIGN_OR_RETURN(const ProblemT* p, cast(problem));
    const auto* c = dynamic_cast<const ConfigT*>(&config);
    if (!c) return internal_error(std::string(name()) + " was given another tier's configuration");
    return cost_terms_of(*p, *c, arch);
  }
  Result<ConfigList> candidates(const OpProblem& problem, const ArchSpec& arch) const final {
    return candidates_up_to(problem, arch, kMaxCandidates);
  }
  Result<ConfigList> every_candidate(const OpProblem& problem, const ArchSpec& arch) const final {
    return candidates_up_to(problem, arch, std::numeric_limits<size_t>::max());
  }

 private:
  Result<ConfigList> candidates_up_to(const OpProblem& problem, const ArchSpec& arch, size_t most) const {
    BOO_ASSIGN_OR_RETURN(const ProblemT* p, cast(problem));
    BOO_ASSIGN_OR_RETURN(ConfigT chosen, configure_problem(*p, arch));
    std::vector<ConfigT> others = alternatives(*p, arch, chosen);
    ConfigList out;
    std::set<std::string> texts;
    auto add = [&](ConfigT c) {
      if (out.size() < most && texts.insert(c.text()).second)
        out.push_back(std::make_unique<ConfigT>(std::move(c)));
    };
    add(std::move(chosen));
    for (ConfigT& c : others) add(std::move(c));
    return out;
  }

  Result<const ProblemT*> cast(const OpProblem& problem) const {
    const auto* p = dynamic_cast<const ProblemT*>(&problem);
    if (!p) return internal_error(std::string(name()) + " was given another op's problem");
    return p;
  }
};

}  // namespace boo::ops
