// boo: the boo GPU backend — boo's JIT kernels through the Runtime.
#include <limits>

#include "bench/backend.hpp"
#include "bench/launch_timer.hpp"
#include "bench/memory_check.hpp"
#include "boo/runtime.hpp"

namespace boo::bench {
namespace {

class BooBackend final : public Backend {
 public:
  BooBackend(Runtime& runtime, const TimingOptions& timing, std::shared_ptr<Launchable> pinned = nullptr)
      : rt_(runtime), timing_(timing), pinned_(std::move(pinned)) {}

  std::string name() const override { return "boo"; }

  Result<BackendRun> run(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                         const RunOptions& run) override {
    // float64 (ATen's double tensors) has no GPU kernels: the CPU reference
    // runs it, once, and the implementation says so.
    for (const TensorSpec& t : sig.arguments()) {
      if (t.dtype != DType::kF64) continue;
      BOO_ASSIGN_OR_RETURN(BackendRun out, cpu_->run(sig, args, run));
      out.implementation += " (float64 runs on the CPU reference only)";
      return out;
    }
    BOO_RETURN_IF_ERROR(check_device_memory(sig, rt_.device()));
    std::shared_ptr<Launchable> launchable = pinned_;
    if (!launchable) {
      BOO_ASSIGN_OR_RETURN(launchable, rt_.get_launchable(sig));
    } else if (pinned_->signature().command() != sig.command()) {
      return invalid_argument("this backend runs " + pinned_->signature().command() + " only, not " + sig.command());
    }
    BackendRun out;
    out.input_sets = run.time ? timed_input_sets(rt_, timing_, args) : 1;
    // Inputs: copied as stored (the host tensors already have the signature's
    // strides), once per rotation set: the first from the host, the others from the first.
    std::vector<DeviceBuffer> buffers;
    std::vector<std::vector<TensorRef>> arg_sets(static_cast<size_t>(out.input_sets));
    for (size_t set = 0; set < arg_sets.size(); ++set) {
      for (size_t a = 0; a < args.size(); ++a) {
        const base::HostTensor& t = args[a];
        BOO_ASSIGN_OR_RETURN(DeviceBuffer buf, rt_.allocate(t.size_bytes()));
        if (set == 0) BOO_RETURN_IF_ERROR(rt_.copy_to_device(buf, t.data(), t.size_bytes()));
        else BOO_RETURN_IF_ERROR(rt_.copy_on_device(buf, buffers[a], t.size_bytes()));
        arg_sets[set].push_back(TensorRef{buf.data(), t.spec().shape, t.spec().strides, t.spec().dtype});
        buffers.push_back(std::move(buf));
      }
    }
    const std::vector<TensorSpec> result_specs = sig.results();
    std::vector<TensorRef> result_refs;
    std::vector<DeviceBuffer> result_buffers;
    for (const TensorSpec& spec : result_specs) {
      BOO_ASSIGN_OR_RETURN(DeviceBuffer buf, rt_.allocate(spec.storage_bytes()));
      // 0xFF bytes are NaN in every float format: an element a kernel forgets
      // to write shows up as NaN instead of passing as a stale value.
      BOO_RETURN_IF_ERROR(rt_.fill_bytes(buf, 0xff));
      result_refs.push_back(TensorRef{buf.data(), spec.shape, spec.strides, spec.dtype});
      result_buffers.push_back(std::move(buf));
    }
    auto launch = [&](int64_t i) {
      return launchable->launch(arg_sets[static_cast<size_t>(i % out.input_sets)], result_refs, rt_.stream());
    };
    // The first launch's results are the ones checked; timed launches follow.
    BOO_RETURN_IF_ERROR(launch(0));
    out.device = "cuda:" + std::to_string(rt_.device().ordinal);
    out.implementation = std::string(launchable->implementation());
    for (size_t i = 0; i < result_specs.size(); ++i) {
      // Every byte is the device buffer's (0xFF where the kernel wrote nothing).
      BOO_ASSIGN_OR_RETURN(base::HostTensor host, base::HostTensor::allocate_unset(result_specs[i]));
      BOO_RETURN_IF_ERROR(rt_.copy_to_host(host.data(), result_buffers[i], host.size_bytes()));
      out.results.push_back(std::move(host));
    }
    if (run.time) {
      std::string label = out.implementation + " [";
      for (size_t i = 0; i < launchable->kernel_names().size(); ++i)
        label += (i ? "+" : "") + launchable->kernel_names()[i];
      BOO_RETURN_IF_ERROR(time_backend_launches(rt_, timing_, run, launch, label + "]", out));
    }
    BOO_RETURN_IF_ERROR(rt_.synchronize());
    return out;
  }

 private:
  Runtime& rt_;
  TimingOptions timing_;
  std::shared_ptr<Launchable> pinned_;  // the launchable every run uses (boo tune's candidates), else dispatch's
  std::unique_ptr<Backend> cpu_ = make_cpu_backend(1);
};

}  // namespace

std::unique_ptr<Backend> make_boo_backend(Runtime& runtime, const TimingOptions& timing) {
  return std::make_unique<BooBackend>(runtime, timing);
}

std::unique_ptr<Backend> make_boo_backend_of(Runtime& runtime, const TimingOptions& timing,
                                             std::shared_ptr<Launchable> launchable) {
  return std::make_unique<BooBackend>(runtime, timing, std::move(launchable));
}

}  // namespace boo::bench
