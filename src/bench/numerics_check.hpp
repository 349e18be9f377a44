// boo: --verify-numerics: runs a signature on fresh seeded inputs (several
// batches until enough samples), compares with the float64 reference at
// sampled positions, applies BOO's statistical verdict (bench/verdict.hpp) and
// boo's per-element tolerance (bench/numerics.hpp), and runs the structured test.
#pragma once

#include "bench/backend.hpp"
#include "bench/numerics.hpp"
#include "bench/reference.hpp"
#include "bench/verdict.hpp"

namespace boo::bench {

/// What a caller passes beyond the check's options.
struct CheckContext {
  NumericsSeconds* seconds = nullptr;  ///< where the check's seconds are added (null: not measured)
};

/// `candidate` is judged; `vendor` (may be null) supplies the spread to beat;
/// `reference` computes the float64 reference (null: the CPU's), and the
/// verdict says what it was and how much of each result it computed.
NumericsVerdict check_numerics(const OpSignature& sig, Backend& candidate, Backend* vendor,
                               const NumericsOptions& options, uint64_t seed, Reference* reference = nullptr,
                               const CheckContext& context = {});

/// The structured inputs: every argument zero except one block of ones
/// (max(1, min(numel/4, 128)) consecutive logical elements at an offset seeded
/// by the argument's position), which exposes indexing errors that random
/// inputs average away.
std::vector<base::HostTensor> structured_arguments(const OpSignature& sig);

}  // namespace boo::bench
