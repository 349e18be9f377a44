// boo: test-only ops (bootest_ok / bootest_fault / bootest_hang).
#include "ops/testing/test_op.hpp"

#include <chrono>
#include <cstdlib>
#include <thread>

#include "ops/testing/device/test_op_params.cuh"

namespace boo::ops::testing {
namespace {

enum Behaviour { kOk = 0, kFault = 1, kHang = 2 };

struct TestSignature final : OpSignature {
  int behaviour = kOk;
  int64_t n = 1024;

  std::string_view op_name() const override { return "bootest"; }
  Status validate() const override {
    return n >= 1 ? ok_status() : invalid_argument("bootest -n must be positive");
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

class TestGpu final : public GpuImplementation {
 public:
  std::string_view name() const override { return "gpu:bootest:faults"; }
  Status accepts(const OpSignature&, const DeviceInfo&) const override { return ok_status(); }
  std::string compile_params(const OpSignature&, const DeviceInfo&) const override { return "bootest"; }
  Result<base::KernelSource> source(const OpSignature&, const DeviceInfo&) const override {
    return base::KernelSource{"bootest.cu",
                              "#include \"boo/testing/faults.cuh\"\nextern \"C\" __global__ void boo_bootest(const "
                              "boo::TestOpParams p) { boo::test_op_kernel(p); }\n",
                              {"boo_bootest"}};
  }
  Result<std::vector<KernelLaunch>> plan(const OpSignature& sig, const DeviceInfo&, std::span<const DeviceTensor> args,
                                         std::span<const DeviceTensor> results, uint64_t) const override {
    const auto& t = dynamic_cast<const TestSignature&>(sig);
    TestOpParams p{args[0].address, results[0].address, t.n, t.behaviour, 0};
    KernelLaunch l;
    l.grid[0] = static_cast<uint32_t>((t.n + 255) / 256);
    l.block[0] = 256;
    l.set_params(p);
    return std::vector<KernelLaunch>{l};
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
