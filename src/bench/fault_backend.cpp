// boo: deliberately wrong backends (see fault_backend.hpp).
#include "bench/fault_backend.hpp"

#include <cmath>
#include <cstdlib>
#include <limits>

#include "base/log.hpp"
#include "bench/numerics.hpp"
#include "ops/op_definition.hpp"

namespace boo::bench {
namespace {

constexpr FaultInfo kFaults[] = {
    {Fault::kShift, "shift"},         {Fault::kPermute, "permute"}, {Fault::kMissingBias, "missing-bias"},
    {Fault::kUnwrittenTail, "unwritten-tail"}, {Fault::kScale, "scale"},     {Fault::kOutlier, "outlier"},
    {Fault::kNan, "nan"},
};

std::string accepted_faults() {
  std::string out;
  for (const FaultInfo& f : kFaults) out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

// The one element a single-element fault hits: inside the result, away from its
// first and last elements (which every sample includes).
int64_t interior_element(int64_t numel) { return numel * 5 / 8; }

class FaultyBackend final : public Backend {
 public:
  FaultyBackend(std::unique_ptr<Backend> inner, Fault fault, std::string name)
      : inner_(std::move(inner)), fault_(fault), name_(std::move(name)) {}

  std::string name() const override { return name_; }

  Result<BackendRun> run(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                         const RunOptions& run) override {
    if (fault_ != Fault::kMissingBias) {
      BOO_ASSIGN_OR_RETURN(BackendRun out, inner_->run(sig, args, run));
      for (size_t i = 0; i < out.results.size(); ++i) apply_result_fault(fault_, sig, i, out.results[i]);
      out.implementation += " with fault " + std::string(fault_name(fault_));
      return out;
    }
    const std::vector<TensorSpec> specs = sig.arguments();
    std::vector<base::HostTensor> inputs = args;
    bool has_bias = false;
    for (size_t i = 0; i < specs.size() && i < inputs.size(); ++i) {
      if (specs[i].name != "b" && specs[i].name != "bias") continue;
      has_bias = true;
      ops::fill_splat(inputs[i], 0.0);
    }
    if (!has_bias)
      return invalid_argument("fault missing-bias: '" + sig.command() +
                              "' has no bias argument (conv with -b 1, layernorm with -m 1 have one)");
    BOO_ASSIGN_OR_RETURN(BackendRun out, inner_->run(sig, inputs, run));
    out.implementation += " with fault missing-bias";
    return out;
  }

 private:
  std::unique_ptr<Backend> inner_;
  Fault fault_;
  std::string name_;
};

}  // namespace

std::span<const FaultInfo> all_faults() { return kFaults; }

std::string_view fault_name(Fault fault) {
  for (const FaultInfo& f : kFaults)
    if (f.fault == fault) return f.name;
  return "unknown";
}

Result<Fault> parse_fault(std::string_view name) {
  for (const FaultInfo& f : kFaults)
    if (f.name == name) return f.fault;
  return invalid_argument("unknown fault '" + std::string(name) + "'; accepted: " + accepted_faults());
}

void apply_result_fault(Fault fault, const OpSignature& sig, size_t result_index, base::HostTensor& result) {
  const TensorSpec& spec = result.spec();
  const int64_t n = spec.numel();
  if (n == 0) return;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = result.load(base::offset_of_linear(spec, i));
  std::vector<double> faulty = v;
  switch (fault) {
    case Fault::kShift:
      for (int64_t i = 0; i < n; ++i) faulty[static_cast<size_t>(i)] = v[static_cast<size_t>((i + n - 1) % n)];
      break;
    case Fault::kPermute:
      for (int64_t i = 0; i + 1 < n; i += 2) std::swap(faulty[static_cast<size_t>(i)], faulty[static_cast<size_t>(i + 1)]);
      break;
    case Fault::kMissingBias:
      return;  // an input fault (FaultyBackend::run)
    case Fault::kUnwrittenTail:
      for (int64_t i = n - std::max<int64_t>(1, n / 100); i < n; ++i) faulty[static_cast<size_t>(i)] = 0.0;
      break;
    case Fault::kScale: {
      const double scale = 1.0 + 2.0 * result_tolerance(sig, result_index);
      for (double& x : faulty) x *= scale;
      break;
    }
    case Fault::kOutlier: {
      double sq = 0;
      int64_t finite = 0;
      for (double x : v)
        if (std::isfinite(x)) {
          sq += x * x;
          ++finite;
        }
      const double rms = finite && sq > 0 ? std::sqrt(sq / static_cast<double>(finite)) : 1.0;
      faulty[static_cast<size_t>(interior_element(n))] += 10.0 * rms;
      break;
    }
    case Fault::kNan:
      faulty[static_cast<size_t>(interior_element(n))] = std::numeric_limits<double>::quiet_NaN();
      break;
  }
  for (int64_t i = 0; i < n; ++i) result.store(base::offset_of_linear(spec, i), faulty[static_cast<size_t>(i)]);
}

std::unique_ptr<Backend> with_fault(std::unique_ptr<Backend> inner, Fault fault, std::string name) {
  return std::make_unique<FaultyBackend>(std::move(inner), fault, std::move(name));
}

bool is_faulty_backend_name(std::string_view name) {
  return name.starts_with(kFaultyBackendPrefix) && parse_fault(name.substr(kFaultyBackendPrefix.size())).ok();
}

Result<std::unique_ptr<Backend>> make_faulty_backend(std::string_view name, int64_t max_iterations) {
  if (!name.starts_with(kFaultyBackendPrefix))
    return invalid_argument("backend '" + std::string(name) + "': a faulty backend is named faulty:<fault>");
  Result<Fault> fault = parse_fault(name.substr(kFaultyBackendPrefix.size()));
  if (!fault.ok()) return invalid_argument("backend '" + std::string(name) + "': " + fault.status().message());
  return with_fault(make_cpu_backend(max_iterations), *fault, std::string(name));
}

Result<std::unique_ptr<Backend>> with_test_fault_from_environment(std::unique_ptr<Backend> backend) {
  const char* value = std::getenv(kTestFaultVariable);
  if (!value || !*value) return backend;
  Result<Fault> fault = parse_fault(value);
  if (!fault.ok()) return invalid_argument(std::string(kTestFaultVariable) + ": " + fault.status().message());
  base::log_warning(std::string(kTestFaultVariable) + "=" + value + ": the " + backend->name() +
                    " backend's results are deliberately wrong (a test of the numerics checks)");
  std::string name = backend->name();
  return with_fault(std::move(backend), *fault, std::move(name));
}

}  // namespace boo::bench
