// boo: test-only ops (bootest_ok / bootest_fault / bootest_hang).
#include "ops/testing/test_op.hpp"

#include <chrono>
#include <cstdlib>
#include <thread>

#include "base/checked_int.hpp"
#include "ops/testing/device/test_op_params.cuh"

namespace boo::ops::testing {
namespace {

enum Behaviour { kOk = 0, kFault = 1, kHang = 2 };

struct TestSignature final : OpSignature {
  int behaviour = kOk;
  int64_t n = 1024;

  std::string_view op_name() const override { return "bootest"; }
  Status validate() const override {
    if (n < 1) return invalid_argument("bootest -n must be positive");
    if (n > base::kMaxTensorElements)
      return invalid_argument("bootest -n is over boo's limit of " + base::max_tensor_elements_text() + " elements");
    return ok_status();
  }
  std::string command() const override {
    static const char* kNames[] = {"bootest_ok", "bootest_fault", "bootest_hang"};
    return std::string(kNames[behaviour]) + " -n " + std::to_string(n);
  }
  std::string func_name() const override { return command(); }
  std::vector<TensorSpec> arguments() const override { return {TensorSpec{"x", {n}, {1}, DType::kF32, ""}}; }
  std::vector<TensorSpec> results() const override { return {TensorSpec{"y", {n}, {1}, DType::kF32, ""}}; }
  double flop_count() const override { return static_cast<double>(n); }
  std::unique_ptr<OpSignature> clone() const override { return std::make_unique<TestSignature>(*this); }
  bool equals(const OpSignature& o) const override {
    const auto* t = dynamic_cast<const TestSignature*>(&o);
    return t && t->behaviour == behaviour && t->n == n;
  }
};

constexpr OpToken kTokens[] = {{"bootest_ok", DType::kF32}, {"bootest_fault", DType::kF16},
                               {"bootest_hang", DType::kBF16}};  // the dtype slot selects the behaviour

// The problem is the signature itself; the config has no choices.
struct TestProblem final : OpProblem {
  explicit TestProblem(const TestSignature& sig) : OpProblem(sig) {}
  const TestSignature& test() const { return static_cast<const TestSignature&>(signature()); }
};

struct TestConfig final : Config {
  std::string text() const override { return "bootest"; }
};

class TestGpu final : public Tier<TestProblem, TestConfig> {
 public:
  std::string_view name() const override { return "gpu:bootest:faults"; }
  Status accepts_problem(const TestProblem&, const ArchSpec&) const override { return ok_status(); }
  Result<TestConfig> configure_problem(const TestProblem&, const ArchSpec&) const override { return TestConfig{}; }
  Result<Plan> plan_problem(const TestProblem& problem, const TestConfig&, const ArchSpec&) const override {
    const TestSignature& t = problem.test();
    Plan plan;
    plan.source = base::KernelSource{"bootest.cu",
                                     "#include \"boo/testing/faults.cuh\"\nextern \"C\" __global__ void boo_bootest(const "
                                     "boo::TestOpParams p) { boo::test_op_kernel(p); }\n",
                                     {"boo_bootest"}};
    plan.tensor_alignment = 4;
    const TensorRoles roles(t);
    BOO_ASSIGN_OR_RETURN(TensorBinding x, roles.argument("x"));
    BOO_ASSIGN_OR_RETURN(TensorBinding y, roles.result("y"));
    BOO_ASSIGN_OR_RETURN(uint32_t blocks, grid_extent((t.n + 255) / 256, 0x7fffffff, "x"));
    StepBuilder<TestOpParams> step("boo_bootest", {blocks, 1, 1}, {256, 1, 1});
    step.bind(step.params.x, x);
    step.bind(step.params.y, y);
    step.params.n = t.n;
    step.params.behaviour = t.behaviour;
    plan.steps.push_back(std::move(step).finish());
    return plan;
  }
};

class TestOp final : public OpDefinition {
 public:
  std::string_view name() const override { return "bootest"; }
  std::span<const OpToken> tokens() const override { return kTokens; }
  std::span<const FlagSpec> flags() const override { return table_; }
  Result<std::unique_ptr<OpSignature>> make_signature(DType dtype, const ParsedFlags& flags) const override {
    auto sig = std::make_unique<TestSignature>();
    sig->behaviour = dtype == DType::kF16 ? kFault : dtype == DType::kBF16 ? kHang : kOk;
    BOO_ASSIGN_OR_RETURN(sig->n, flags.integer("n"));
    BOO_RETURN_IF_ERROR(sig->validate());
    return std::unique_ptr<OpSignature>(std::move(sig));
  }
  Result<std::unique_ptr<OpProblem>> make_problem(const OpSignature& sig) const override {
    const auto* t = dynamic_cast<const TestSignature*>(&sig);
    if (!t) return internal_error("bootest was given another op's signature");
    return std::unique_ptr<OpProblem>(std::make_unique<TestProblem>(*t));
  }
  int64_t reduction_length(const OpSignature&, size_t) const override { return 1; }
  std::span<const GpuImplementation* const> gpu_implementations() const override {
    static const TestGpu gpu;
    static const GpuImplementation* const kImpls[] = {&gpu};
    return kImpls;
  }
  Result<std::vector<base::HostTensor>> reference(const OpSignature& sig,
                                                  const std::vector<base::HostTensor>& args) const override {
    const auto& t = dynamic_cast<const TestSignature&>(sig);
    if (t.behaviour == kFault) std::abort();  // what a crashing kernel does to its process
    if (t.behaviour == kHang)
      for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
    std::vector<base::HostTensor> out = make_f64_results(sig);
    for (int64_t i = 0; i < t.n; ++i) out[0].store(i, 2 * args[0].load(i));
    return out;
  }

 private:
  std::vector<FlagSpec> table_ = [] {
    std::vector<FlagSpec> t{{"n", 'n', "1024", "elements"}};
    for (const FlagSpec& f : common_run_flags()) t.push_back(f);
    return t;
  }();
};

}  // namespace

const OpDefinition& definition() {
  static const TestOp op;
  return op;
}

}  // namespace boo::ops::testing
