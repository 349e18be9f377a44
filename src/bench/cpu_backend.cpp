// boo: the CPU reference backend.
#include <algorithm>
#include <chrono>
#include <new>

#include "bench/backend.hpp"
#include "bench/memory_check.hpp"
#include "ops/op_registry.hpp"

namespace boo::bench {
namespace {

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(int64_t max_iterations) : max_iterations_(std::max<int64_t>(1, max_iterations)) {}

  std::string name() const override { return "cpu"; }

  Result<BackendRun> run(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                         const RunOptions& run) override {
    const ops::OpDefinition* op = ops::find_op(sig.op_name());
    if (!op) return internal_error("no op registered under '" + std::string(sig.op_name()) + "'");
    BackendRun out;
    out.device = "cpu";
    out.implementation = "cpu:" + std::string(sig.op_name()) + ":reference";
    KernelTiming timing{out.implementation, {}};
    const int64_t launches = run.time ? std::min(run.iterations, max_iterations_) : 1;
    BOO_RETURN_IF_ERROR(check_host_memory(sig, 1, true));
    std::vector<base::HostTensor> reference;
    // The references allocate with std::vector: a failure is a Status here, as everywhere in boo.
    try {
      for (int64_t i = 0; i < launches; ++i) {
        const auto start = std::chrono::steady_clock::now();
        BOO_ASSIGN_OR_RETURN(reference, op->reference(sig, args));
        const auto stop = std::chrono::steady_clock::now();
        timing.samples_us.push_back(std::chrono::duration<double, std::micro>(stop - start).count());
      }
    } catch (const std::bad_alloc&) {
      return resource_exhausted("the CPU reference of " + sig.command() + " could not allocate its host memory");
    }
    if (run.time) {
      out.kernels.push_back(std::move(timing));
      out.timed_launches = launches;
      out.timer = "wall clock";
    }
    // The backend's results have the signature's dtypes (the reference is float64).
    const std::vector<TensorSpec> specs = sig.results();
    for (size_t i = 0; i < specs.size(); ++i) {
      BOO_ASSIGN_OR_RETURN(base::HostTensor result, base::HostTensor::allocate(specs[i]));
      base::copy_tensor(reference[i], result);
      out.results.push_back(std::move(result));
    }
    return out;
  }

 private:
  int64_t max_iterations_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(int64_t max_iterations) {
  return std::make_unique<CpuBackend>(max_iterations);
}

}  // namespace boo::bench
