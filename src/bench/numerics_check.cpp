// boo: --verify-numerics.
#include "bench/numerics_check.hpp"

#include <algorithm>
#include <cmath>

#include "base/random.hpp"
#include "bench/numerics.hpp"
#include "ops/op_registry.hpp"

namespace boo::bench {
namespace {

constexpr int kMaxBatches = 32;

}  // namespace

void apply_block_pattern(base::HostTensor& t, uint64_t index) {
  const int64_t n = t.spec().numel();
  if (n == 0) return;  // nothing to mark (BOO's pattern leaves an empty tensor as it is)
  const int64_t block = std::max<int64_t>(1, std::min<int64_t>(n / 4, 128));
  const int64_t offset = static_cast<int64_t>(base::splitmix64(index) % static_cast<uint64_t>(n - block + 1));
  for (int64_t i = offset; i < offset + block; ++i) t.store(base::offset_of_linear(t.spec(), i), 1.0);
}

std::vector<base::HostTensor> structured_arguments(const OpSignature& sig) {
  std::vector<base::HostTensor> args;
  uint64_t index = 0;
  for (TensorSpec& spec : sig.arguments()) {
    base::HostTensor t(std::move(spec));  // zero bytes: 0.0 in every dtype
    apply_block_pattern(t, index++);
    args.push_back(std::move(t));
  }
  return args;
}

NumericsVerdict check_numerics(const OpSignature& sig, Backend& candidate, Backend* vendor,
                               const NumericsOptions& options, uint64_t seed, Reference* reference,
                               const CheckContext& context) {
  NumericsSeconds* seconds = context.seconds;
  auto sink = [&](double NumericsSeconds::*phase) { return seconds ? &(seconds->*phase) : nullptr; };
  NumericsVerdict verdict;
  const ops::OpDefinition* op = ops::find_op(sig.op_name());
  const TensorSpec main = sig.results().at(0);  // BOO judges the main result
  const double rtol = result_tolerance(sig, 0);
  Reference& ref = reference ? *reference : cpu_reference();
  VerifyOptions verify;
  verify.sample_seed = seed;
  verify.reference = &ref;
  verify.seconds = seconds;
  std::string reference_scope = "whole results";  // what the per-element check computed
  bool sampled_any = false;
  const RunOptions untimed{1, false};
  ErrorSets sets;
  double tolerance_bound = 0;
  double reference_sq = 0, cancellation_sq = 0;
  int64_t reference_count = 0;
  int batches = 0;
  bool vendor_ok = vendor != nullptr;
  std::vector<std::string> tolerance_failures;
  for (int batch = 0; batch < kMaxBatches && static_cast<int64_t>(sets.boo.size()) < options.min_samples; ++batch) {
    // The first batch's inputs and results may be the caller's (the timed run's).
    const FirstBatch* given = batch == 0 && context.first_batch ? &*context.first_batch : nullptr;
    std::vector<base::HostTensor> made;
    if (!given) {
      AddSeconds timed(sink(&NumericsSeconds::inputs));
      const ops::InputOptions inputs{seed + static_cast<uint64_t>(batch), {}};
      Result<std::vector<base::HostTensor>> args =
          context.make_arguments ? context.make_arguments(sig, inputs) : op->make_arguments(sig, inputs);
      if (!args.ok()) {
        verdict.error = args.status().to_string();
        return verdict;
      }
      made = std::move(*args);
    }
    const std::vector<base::HostTensor>& args = given ? *given->arguments : made;
    std::optional<AddSeconds> running(std::in_place, sink(&NumericsSeconds::runs));
    std::vector<base::HostTensor> candidate_ran;
    if (!given) {
      Result<BackendRun> run = candidate.run(sig, args, untimed);
      if (!run.ok()) {
        verdict.error = run.status().to_string();
        return verdict;
      }
      candidate_ran = std::move(run->results);
    }
    const std::vector<base::HostTensor>& results = given ? *given->candidate : candidate_ran;
    std::vector<base::HostTensor> vendor_ran;
    const std::vector<base::HostTensor>* vendor_results = nullptr;
    if (vendor_ok && given && given->vendor) {
      vendor_results = given->vendor;
    } else if (vendor_ok) {
      Result<BackendRun> v = vendor->run(sig, args, untimed);
      if (v.ok()) {
        vendor_ran = std::move(v->results);
        vendor_results = &vendor_ran;
      } else {
        vendor_ok = false;
        verdict.notes.push_back("the vendor cannot run this signature (" + v.status().message() + ")");
      }
    }
    running.reset();
    // The per-element tolerance on every result (first batch).
    if (batch == 0) {
      Result<std::vector<Comparison>> comparisons = verify_results(sig, args, results, verify);
      if (!comparisons.ok()) {
        verdict.error = comparisons.status().to_string();
        return verdict;
      }
      for (const Comparison& c : *comparisons) {
        if (!c.pass()) tolerance_failures.push_back(c.summary());
        if (!c.sampled()) continue;
        reference_scope = (sampled_any ? reference_scope + ", " : "") + c.name + " at " + std::to_string(c.elements) +
                          " of " + std::to_string(c.population) + " positions";
        sampled_any = true;
        verdict.notes.push_back("per-element tolerance of " + c.name + " checked at " + std::to_string(c.elements) +
                                  " of " + std::to_string(c.population) + " positions (seed " +
                                  std::to_string(c.sample_seed) + ": --seed draws others)");
      }
    }
    // Signed errors of the main result at sampled positions.
    const int64_t want = std::max<int64_t>(options.min_samples - static_cast<int64_t>(sets.boo.size()), 1);
    const std::vector<int64_t> positions = sample_positions(main.shape, std::max<int64_t>(want, 1024), seed + batch);
    Result<std::vector<double>> reference = [&] {
      AddSeconds timed(sink(&NumericsSeconds::reference));
      return ref.sample(sig, args, 0, positions);
    }();
    if (!reference.ok()) {
      verdict.error = reference.status().to_string();
      return verdict;
    }
    AddSeconds checking(sink(&NumericsSeconds::checks));
    const base::HostTensor& out = results.at(0);
    for (size_t i = 0; i < positions.size(); ++i) {
      double ref = (*reference)[i];
      if (options.reference_float32) ref = static_cast<float>(ref);
      const double v = out.load(base::offset_of_linear(out.spec(), positions[i]));
      std::optional<double> vend;
      if (vendor_results) vend = vendor_results->at(0).load(base::offset_of_linear(vendor_results->at(0).spec(), positions[i]));
      sets.add(v, ref, vend);
    }
    // The tolerance bound on the spread when there is no vendor: rtol times the rms of every
    // sampled reference value, plus the allowance for cancelling terms (rms over the batches).
    // Every batch counts: a small output's first batch alone (3 values) can be far below typical.
    for (double r : *reference)
      if (std::isfinite(r)) {
        reference_sq += r * r;
        ++reference_count;
      }
    Result<double> scale = op->cancellation_scale(sig, args, 0);
    if (!scale.ok()) {
      verdict.error = scale.status().to_string();
      return verdict;
    }
    cancellation_sq += *scale * *scale;
    ++batches;
  }
  if (batches > 0)
    tolerance_bound = rtol * std::sqrt(reference_sq / static_cast<double>(std::max<int64_t>(reference_count, 1))) +
                      cancellation_allowance(std::sqrt(cancellation_sq / batches));
  if (!vendor_ok) {
    sets.vendor.clear();
    sets.diff.clear();
  }
  const std::vector<std::string> notes = verdict.notes;
  verdict = decide(sets, options, tolerance_bound,
                   op->tf32_operands(sig) ? ToleranceRole::kFloor : ToleranceRole::kWithoutVendor);
  verdict.notes.insert(verdict.notes.begin(), notes.begin(), notes.end());
  verdict.reference = ref.describe(sig) + " (" + reference_scope + ")";
  if (static_cast<int64_t>(sets.boo.size()) < options.min_samples)
    verdict.notes.push_back("only " + std::to_string(sets.boo.size()) + " samples after " +
                            std::to_string(kMaxBatches) + " batches (the output is small)");
  if (!tolerance_failures.empty()) {
    verdict.tolerance_ok = false;
    for (const std::string& f : tolerance_failures) verdict.notes.push_back("over the per-element tolerance: " + f);
  }
  if (options.structured_tests) {
    const std::vector<base::HostTensor> args = [&] {
      AddSeconds timed(sink(&NumericsSeconds::inputs));
      return structured_arguments(sig);
    }();
    Result<BackendRun> run = [&] {
      AddSeconds timed(sink(&NumericsSeconds::runs));
      return candidate.run(sig, args, untimed);
    }();
    if (!run.ok()) {
      verdict.structured_ok = false;
      verdict.notes.push_back("structured test failed to run: " + run.status().message());
    } else if (Result<std::vector<Comparison>> c = verify_results(sig, args, run->results, verify); !c.ok()) {
      verdict.structured_ok = false;
      verdict.notes.push_back("structured test: " + c.status().message());
    } else {
      verdict.structured_ok = true;
      for (const Comparison& cmp : *c) {
        if (cmp.pass()) continue;
        verdict.structured_ok = false;
        verdict.notes.push_back("structured test: " + cmp.summary());
      }
    }
  }
  return verdict;
}

}  // namespace boo::bench
