// boo: deliberately wrong backends. Each fault is a way a kernel can be wrong
// that --verify-numerics must catch; the tests run every fault through the
// check (tests/unit/fault_backend_test.cpp), and on the GPU machine
// BOO_TEST_FAULT puts the same fault on the boo backend's results, so that
// scripts/gpu-check.sh can be shown to fail.
//
// A fault changes what the wrapped backend returns (or, for missing-bias, the
// bias it is given); kernels never see it.
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "bench/backend.hpp"

namespace boo::bench {

enum class Fault {
  kShift,          ///< every result one element later in logical row-major order (the last wraps to the front)
  kPermute,        ///< neighbouring elements swapped: (0 1) (2 3) ...
  kMissingBias,    ///< the bias argument ('b' of conv -b 1, 'bias' of layernorm -m 1) read as zeros
  kUnwrittenTail,  ///< the last 1% of every result (at least one element) left as zeros
  /// Every element scaled by 1 + 2 rtol: for bf16 and fp16 two units of the dtype's rounding. A scale
  /// error of one rtol stays inside the per-element bound rtol * (|ref| + rms); twice it puts every
  /// element larger than the rms outside.
  kScale,
  kOutlier,        ///< one interior element off by 10x the result's rms
  kNan,            ///< one interior element NaN
};

struct FaultInfo {
  Fault fault;
  std::string_view name;  ///< as written after "faulty:" and in BOO_TEST_FAULT
};

/// Every fault, in declaration order.
std::span<const FaultInfo> all_faults();
std::string_view fault_name(Fault fault);
/// The fault of a name; the error lists the accepted names.
Result<Fault> parse_fault(std::string_view name);

/// Applies `fault` to result `result_index` of `sig` in place (not kMissingBias, an input fault).
void apply_result_fault(Fault fault, const OpSignature& sig, size_t result_index, base::HostTensor& result);

/// `inner` with `fault` on every run; `name` is the wrapper's --backend name.
std::unique_ptr<Backend> with_fault(std::unique_ptr<Backend> inner, Fault fault, std::string name);

/// The --backend names of the faulty CPU backends: "faulty:<fault>".
inline constexpr std::string_view kFaultyBackendPrefix = "faulty:";
bool is_faulty_backend_name(std::string_view name);
/// The CPU reference backend with the fault a "faulty:<fault>" name gives.
Result<std::unique_ptr<Backend>> make_faulty_backend(std::string_view name, int64_t max_iterations);

/// The environment variable that puts a fault on the boo GPU backend (scripts/gpu-check.sh).
inline constexpr const char* kTestFaultVariable = "BOO_TEST_FAULT";
/// `backend` with the fault BOO_TEST_FAULT names (unchanged when it is unset or empty); an
/// unknown fault name is an error. Warns on stderr: results are deliberately wrong.
Result<std::unique_ptr<Backend>> with_test_fault_from_environment(std::unique_ptr<Backend> backend);

}  // namespace boo::bench
