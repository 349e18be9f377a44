// boo: the boo GPU backend — boo's JIT kernels through the Runtime.
#include <limits>

#include "bench/backend.hpp"
#include "boo/runtime.hpp"

namespace boo::bench {
namespace {

class BooBackend final : public Backend {
 public:
  explicit BooBackend(Runtime& runtime) : rt_(runtime) {}

  std::string name() const override { return "boo"; }

  Result<BackendRun> run(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                         const RunOptions& run) override {
    BOO_ASSIGN_OR_RETURN(std::shared_ptr<Launchable> launchable, rt_.get_launchable(sig));
    // Inputs: copied as stored (the host tensors already have the signature's strides).
    std::vector<DeviceBuffer> arg_buffers, result_buffers;
    std::vector<TensorRef> arg_refs, result_refs;
    for (const base::HostTensor& t : args) {
      BOO_ASSIGN_OR_RETURN(DeviceBuffer buf, rt_.allocate(t.size_bytes()));
      BOO_RETURN_IF_ERROR(rt_.copy_to_device(buf, t.data(), t.size_bytes()));
      arg_refs.push_back(TensorRef{buf.data(), t.spec().shape, t.spec().strides, t.spec().dtype});
      arg_buffers.push_back(std::move(buf));
    }
    const std::vector<TensorSpec> result_specs = sig.results();
    for (const TensorSpec& spec : result_specs) {
      BOO_ASSIGN_OR_RETURN(DeviceBuffer buf, rt_.allocate(spec.storage_bytes()));
      // 0xFF bytes are NaN in every float format: an element a kernel forgets
      // to write shows up as NaN instead of passing as a stale value.
      BOO_RETURN_IF_ERROR(rt_.fill_bytes(buf, 0xff));
      result_refs.push_back(TensorRef{buf.data(), spec.shape, spec.strides, spec.dtype});
      result_buffers.push_back(std::move(buf));
    }
    // The first launch also checks the results; timed launches follow.
    BOO_RETURN_IF_ERROR(launchable->launch(arg_refs, result_refs, rt_.stream()));
    BackendRun out;
    out.device = "cuda:" + std::to_string(rt_.device().ordinal);
    out.implementation = std::string(launchable->implementation());
    for (size_t i = 0; i < result_specs.size(); ++i) {
      base::HostTensor host(result_specs[i]);
      BOO_RETURN_IF_ERROR(rt_.copy_to_host(host.data(), result_buffers[i], host.size_bytes()));
      out.results.push_back(std::move(host));
    }
    if (run.time) {
      BOO_ASSIGN_OR_RETURN(std::vector<double> samples,
                           rt_.time_on_stream([&] { return launchable->launch(arg_refs, result_refs, rt_.stream()); },
                                              run.iterations));
      std::string kernel = out.implementation + " [";
      for (size_t i = 0; i < launchable->kernel_names().size(); ++i)
        kernel += (i ? "+" : "") + launchable->kernel_names()[i];
      out.kernels.push_back(KernelTiming{kernel + "]", std::move(samples)});
      out.timed_launches = run.iterations;
    }
    BOO_RETURN_IF_ERROR(rt_.synchronize());
    return out;
  }

 private:
  Runtime& rt_;
};

}  // namespace

std::unique_ptr<Backend> make_boo_backend(Runtime& runtime) { return std::make_unique<BooBackend>(runtime); }

}  // namespace boo::bench
