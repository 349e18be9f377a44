// boo: the vendor baseline — cuBLASLt for GEMMs, cuDNN for the rest — as the
// one backend the driver compares boo against (its `cudnn` backend).
#include "bench/backend.hpp"
#include "ops/gemm/gemm_problem.hpp"
#include "ops/op_registry.hpp"

namespace boo::bench {
namespace {

class VendorBackend final : public Backend {
 public:
  VendorBackend(Runtime& runtime, const TimingOptions& timing) : rt_(runtime), timing_(timing) {}

  std::string name() const override { return "cudnn"; }

  Result<BackendRun> run(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                         const RunOptions& run) override {
    const ops::OpDefinition* op = ops::find_op(sig.op_name());
    if (!op) return internal_error("no op registered under '" + std::string(sig.op_name()) + "'");
    BOO_ASSIGN_OR_RETURN(std::unique_ptr<ops::OpProblem> problem, op->make_problem(sig));
    const bool gemm = dynamic_cast<const ops::gemm::GemmProblem*>(problem.get()) != nullptr;
    BOO_ASSIGN_OR_RETURN(Backend* vendor, gemm ? open(cublaslt_, [&] { return make_cublaslt_backend(rt_, timing_); })
                                               : open(cudnn_, [&] { return make_cudnn_backend(rt_, timing_); }));
    return vendor->run(sig, args, run);
  }

 private:
  // The library's backend, opened on first use; a failure to open is kept and repeated.
  struct Lazy {
    std::unique_ptr<Backend> backend;
    Status failure;
  };
  template <typename Make>
  Result<Backend*> open(Lazy& lazy, Make make) {
    if (!lazy.backend && lazy.failure.ok()) {
      Result<std::unique_ptr<Backend>> made = make();
      if (made.ok()) lazy.backend = std::move(*made);
      else lazy.failure = made.status();
    }
    if (!lazy.failure.ok()) return lazy.failure;
    return lazy.backend.get();
  }

  Runtime& rt_;
  TimingOptions timing_;
  Lazy cudnn_, cublaslt_;
};

}  // namespace

std::unique_ptr<Backend> make_vendor_backend(Runtime& runtime, const TimingOptions& timing) {
  return std::make_unique<VendorBackend>(runtime, timing);
}

}  // namespace boo::bench
