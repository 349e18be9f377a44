// boo tests: plans computed on the host (no GPU), with every tensor address
// resolved to a distinct fake one, so tests can read the parameter blocks.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "boo/registry.hpp"
#include "ops/common/unverified_kernels.hpp"
#include "ops/conv/device/conv_wgmma_params.cuh"
#include "ops/op_registry.hpp"

namespace boo::ops::test {

/// Environment variable `name` set to `value` while it lives (unset after):
/// the planner's switches (BOO_WGMMA_TMA, ...) for one scope of a test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

/// BOO_UNVERIFIED_KERNELS=1 while it lives (ops/common/unverified_kernels.hpp):
/// the tests that plan a kernel not yet run on a GPU turn it on.
struct UnverifiedKernelsEnabled : ScopedEnv {
  UnverifiedKernelsEnabled() : ScopedEnv(kUnverifiedKernelsVariable, "1") {}
};

struct ResolvedLaunch {
  std::string entry;
  Dim3 grid, block;
  uint32_t shared_bytes = 0;
  std::vector<std::byte> params;  ///< with the fake addresses written in
  bool cooperative = false;
  uint32_t cleared_workspace_bytes = 0;
};

struct Planned {
  std::string config;  ///< Config::text()
  base::KernelSource source;
  std::vector<std::string> entries;  ///< per launch, its kernel's name
  std::vector<ResolvedLaunch> launches;
  uint64_t workspace = 0;
  size_t workspace_bytes = 0;
  std::map<std::string, uint64_t> address;  ///< of each argument and result
};

inline std::unique_ptr<OpProblem> problem_of(const std::string& command) {
  Result<ParsedCommand> p = parse_command(std::string_view(command));
  EXPECT_TRUE(p.ok()) << command << ": " << p.status().to_string();
  if (!p.ok()) return nullptr;
  Result<std::unique_ptr<OpProblem>> problem = find_op(p->signature->op_name())->make_problem(*p->signature);
  EXPECT_TRUE(problem.ok()) << problem.status().to_string();
  return problem.ok() ? std::move(problem).value() : nullptr;
}

inline ArchSpec sm90() { return ArchSpec::of(*DeviceInfo::for_arch("sm_90a")); }

/// Whether `impl` accepts and configures `command` on sm_90a.
inline bool accepts(const GpuImplementation& impl, const std::string& command) {
  std::unique_ptr<OpProblem> problem = problem_of(command);
  return problem && impl.accepts(*problem, sm90()).ok() && impl.configure(*problem, sm90()).ok();
}

/// `impl`'s plan of `command` on sm_90a, addresses resolved.
inline Planned plan_of(const GpuImplementation& impl, const std::string& command) {
  Planned out;
  std::unique_ptr<OpProblem> problem = problem_of(command);
  if (!problem) return out;
  const ArchSpec arch = sm90();
  EXPECT_TRUE(impl.accepts(*problem, arch).ok()) << command;
  Result<std::unique_ptr<const Config>> config = impl.configure(*problem, arch);
  EXPECT_TRUE(config.ok()) << config.status().to_string();
  if (!config.ok()) return out;
  Result<Plan> plan = impl.plan(*problem, **config, arch);
  EXPECT_TRUE(plan.ok()) << plan.status().to_string();
  if (!plan.ok()) return out;
  const OpSignature& sig = problem->signature();
  EXPECT_TRUE(plan->validate(sig.arguments().size(), sig.results().size()).ok());
  out.config = (*config)->text();
  out.source = plan->source;
  std::vector<uint64_t> args, results;
  uint64_t next = 1 << 20;  // distinct 16-byte aligned fake addresses
  for (const TensorSpec& s : sig.arguments()) {
    args.push_back(next);
    out.address[s.name] = next;
    next += 1 << 20;
  }
  for (const TensorSpec& s : sig.results()) {
    results.push_back(next);
    out.address[s.name] = next;
    next += 1 << 20;
  }
  out.workspace = next;
  out.workspace_bytes = plan->workspace_bytes;
  for (const LaunchStep& step : plan->steps) {
    ResolvedLaunch l{step.entry, step.grid, step.block, step.shared_bytes, step.params, step.cooperative,
                     step.cleared_workspace_bytes};
    for (const LaunchStep::AddressSlot& slot : step.addresses) {
      const TensorBinding& t = slot.tensor;
      const uint64_t address = t.source == TensorBinding::Source::kArgument ? args.at(t.index)
                               : t.source == TensorBinding::Source::kResult ? results.at(t.index)
                                                                             : out.workspace + t.offset;
      std::memcpy(l.params.data() + slot.params_offset, &address, sizeof address);
    }
    out.entries.push_back(step.entry);
    out.launches.push_back(std::move(l));
  }
  return out;
}

// The launch's parameter block as Params. A Hopper launch that loads by TMA takes ConvWgmmaParams, whose
// first member is its ConvIgemmParams, and one that also stores y by TMA ConvWgmmaStoreParams, whose first
// member is a ConvWgmmaParams: params_of<ConvIgemmParams> reads that.
template <typename Params>
Params params_of(const ResolvedLaunch& l) {
  Params p;
  if constexpr (std::is_same_v<Params, ConvIgemmParams>) {
    if (l.params.size() == sizeof(ConvWgmmaParams) || l.params.size() == sizeof(ConvWgmmaStoreParams)) {
      static_assert(offsetof(ConvWgmmaStoreParams, base) == 0 && offsetof(ConvWgmmaParams, p) == 0);
      std::memcpy(&p, l.params.data(), sizeof(Params));
      return p;
    }
  }
  EXPECT_EQ(l.params.size(), sizeof(Params));
  std::memcpy(&p, l.params.data(), sizeof(Params));
  return p;
}

}  // namespace boo::ops::test
