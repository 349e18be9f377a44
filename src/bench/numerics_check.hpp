// boo: --verify-numerics: runs a signature on fresh seeded inputs (several
// batches until enough samples), compares with the float64 reference at
// sampled positions, applies BOO's statistical verdict (bench/verdict.hpp) and
// boo's per-element tolerance (bench/numerics.hpp), and runs the structured test.
#pragma once

#include <functional>
#include <optional>

#include "bench/backend.hpp"
#include "bench/numerics.hpp"
#include "bench/reference.hpp"
#include "bench/verdict.hpp"
#include "ops/input_generation.hpp"

namespace boo::bench {

/// Makes the seeded inputs of `sig` as OpDefinition::make_arguments does (the same bytes), e.g. on a GPU.
using ArgumentMaker =
    std::function<Result<std::vector<base::HostTensor>>(const OpSignature& sig, const ops::InputOptions& options)>;

/// Results the backends already computed on the first batch's inputs (the driver's
/// timed run: its first launch, on inputs seeded with the check's seed), which the
/// check then uses instead of running the backends on them again. Pointers the
/// caller keeps alive for the call.
struct FirstBatch {
  const std::vector<base::HostTensor>* arguments = nullptr;  ///< make_arguments(sig, {seed, no splat})
  const std::vector<base::HostTensor>* candidate = nullptr;  ///< the judged backend's results on them
  const std::vector<base::HostTensor>* vendor = nullptr;     ///< the vendor's (null: the vendor runs)
};

/// What a caller passes beyond the check's options.
struct CheckContext {
  ArgumentMaker make_arguments;          ///< empty: the op's make_arguments, on the CPU
  std::optional<FirstBatch> first_batch;  ///< unset: the first batch is made and run like the others
  NumericsSeconds* seconds = nullptr;    ///< where the check's seconds are added (null: not measured)
};

/// `candidate` is judged; `vendor` (may be null) supplies the spread to beat;
/// `reference` computes the float64 reference (null: the CPU's), and the
/// verdict says what it was and how much of each result it computed.
NumericsVerdict check_numerics(const OpSignature& sig, Backend& candidate, Backend* vendor,
                               const NumericsOptions& options, uint64_t seed, Reference* reference = nullptr,
                               const CheckContext& context = {});

/// Writes BOO's block of ones into a zeroed tensor: max(1, min(numel/4, 128))
/// consecutive logical elements at an offset seeded by `index`; an empty tensor is left as it is.
void apply_block_pattern(base::HostTensor& t, uint64_t index);

/// The structured inputs: every argument zero except one block of ones
/// (max(1, min(numel/4, 128)) consecutive logical elements at an offset seeded
/// by the argument's position), which exposes indexing errors that random
/// inputs average away.
std::vector<base::HostTensor> structured_arguments(const OpSignature& sig);

}  // namespace boo::bench
