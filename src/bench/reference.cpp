// boo: the float64 reference on the CPU or the GPU, and seeded inputs made on the GPU.
#include "bench/reference.hpp"

#include "bench/numerics.hpp"
#include "ops/input_generation_gpu.hpp"
#include "ops/op_registry.hpp"
#include "runtime/plan_loader.hpp"

namespace boo::bench {
namespace {

Result<const ops::OpDefinition*> op_of(const OpSignature& sig) {
  const ops::OpDefinition* op = ops::find_op(sig.op_name());
  if (!op) return internal_error("no op registered under '" + std::string(sig.op_name()) + "'");
  return op;
}

std::string cpu_name(const OpSignature& sig) { return "cpu:" + std::string(sig.op_name()) + ":reference"; }

class CpuReference final : public Reference {
 public:
  std::string describe(const OpSignature& sig) const override { return cpu_name(sig); }
  Result<std::vector<base::HostTensor>> compute(const OpSignature& sig,
                                                const std::vector<base::HostTensor>& args) override {
    BOO_ASSIGN_OR_RETURN(const ops::OpDefinition* op, op_of(sig));
    return op->reference(sig, args);
  }
  Result<std::vector<double>> sample(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                                     size_t result_index, const std::vector<int64_t>& linear) override {
    BOO_ASSIGN_OR_RETURN(const ops::OpDefinition* op, op_of(sig));
    return op->reference_sample(sig, args, result_index, linear);
  }
};

// Device copies of host tensors and their refs.
struct DeviceTensors {
  std::vector<DeviceBuffer> buffers;
  std::vector<TensorRef> refs;
};

Status upload(Runtime& rt, const base::HostTensor& t, DeviceTensors& out) {
  BOO_ASSIGN_OR_RETURN(DeviceBuffer buf, rt.allocate(t.size_bytes()));
  BOO_RETURN_IF_ERROR(rt.copy_to_device(buf, t.data(), t.size_bytes()));
  out.refs.push_back(TensorRef{buf.data(), t.spec().shape, t.spec().strides, t.spec().dtype});
  out.buffers.push_back(std::move(buf));
  return ok_status();
}

// Buffers for `specs`, filled with `fill` bytes.
Result<DeviceTensors> allocate(Runtime& rt, const std::vector<TensorSpec>& specs, uint8_t fill) {
  DeviceTensors out;
  for (const TensorSpec& spec : specs) {
    BOO_ASSIGN_OR_RETURN(DeviceBuffer buf, rt.allocate(spec.storage_bytes()));
    BOO_RETURN_IF_ERROR(rt.fill_bytes(buf, fill));
    out.refs.push_back(TensorRef{buf.data(), spec.shape, spec.strides, spec.dtype});
    out.buffers.push_back(std::move(buf));
  }
  return out;
}

// Host copies of device tensors laid out as `specs`.
Result<std::vector<base::HostTensor>> download(Runtime& rt, const std::vector<TensorSpec>& specs,
                                               const DeviceTensors& tensors) {
  std::vector<base::HostTensor> out;
  for (size_t i = 0; i < specs.size(); ++i) {
    // Every byte is the device buffer's, which allocate() filled.
    BOO_ASSIGN_OR_RETURN(base::HostTensor host, base::HostTensor::allocate_unset(specs[i]));
    BOO_RETURN_IF_ERROR(rt.copy_to_host(host.data(), tensors.buffers[i], host.size_bytes()));
    out.push_back(std::move(host));
  }
  return out;
}

class GpuReferenceRunner final : public Reference {
 public:
  explicit GpuReferenceRunner(Runtime& rt) : rt_(rt) {}

  std::string describe(const OpSignature& sig) const override {
    Result<const ops::GpuReference*> gpu = gpu_reference_for(sig);
    if (!gpu.ok()) return cpu_name(sig) + " (" + gpu.status().message() + ")";
    return std::string((*gpu)->name()) + " on cuda:" + std::to_string(rt_.device().ordinal);
  }

  Result<std::vector<base::HostTensor>> compute(const OpSignature& sig,
                                                const std::vector<base::HostTensor>& args) override {
    Result<const ops::GpuReference*> gpu = gpu_reference_for(sig);
    if (!gpu.ok() && gpu.status().code() == StatusCode::kUnimplemented) return cpu_reference().compute(sig, args);
    if (!gpu.ok()) return gpu.status();
    return run(**gpu, sig, args, ops::ReferenceRequest{}, {});
  }

  Result<std::vector<double>> sample(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                                     size_t result_index, const std::vector<int64_t>& linear) override {
    Result<const ops::GpuReference*> gpu = gpu_reference_for(sig);
    if (!gpu.ok() && gpu.status().code() == StatusCode::kUnimplemented)
      return cpu_reference().sample(sig, args, result_index, linear);
    if (!gpu.ok()) return gpu.status();
    if (result_index >= sig.results().size())
      return invalid_argument("reference sample of result " + std::to_string(result_index) + ": " +
                              std::string(sig.op_name()) + " has " + std::to_string(sig.results().size()));
    std::vector<double> out;
    if (linear.empty()) return out;
    if (!(*gpu)->samples()) {
      // Cheap whole: computed, then picked.
      BOO_ASSIGN_OR_RETURN(std::vector<base::HostTensor> all, run(**gpu, sig, args, ops::ReferenceRequest{}, {}));
      const base::HostTensor& r = all.at(result_index);
      for (int64_t i : linear) out.push_back(r.load(base::offset_of_linear(r.spec(), i)));
      return out;
    }
    const ops::ReferenceRequest request{result_index, static_cast<int64_t>(linear.size())};
    BOO_ASSIGN_OR_RETURN(std::vector<base::HostTensor> picked, run(**gpu, sig, args, request, linear));
    const base::HostTensor& values = picked.at(0);
    for (size_t i = 0; i < linear.size(); ++i) out.push_back(values.load(static_cast<int64_t>(i)));
    return out;
  }

 private:
  // The op's GPU reference when it computes `sig`; UNIMPLEMENTED (why) where the CPU's runs instead.
  Result<const ops::GpuReference*> gpu_reference_for(const OpSignature& sig) const {
    BOO_ASSIGN_OR_RETURN(const ops::OpDefinition* op, op_of(sig));
    const ops::GpuReference* gpu = op->gpu_reference();
    if (!gpu) return unimplemented(std::string(sig.op_name()) + " has no GPU reference");
    BOO_ASSIGN_OR_RETURN(std::unique_ptr<ops::OpProblem> problem, op->make_problem(sig));
    BOO_RETURN_IF_ERROR(gpu->accepts(*problem));
    return gpu;
  }

  // Runs `request` of `gpu` on `args` (and the sample's positions), returns the results on the host.
  Result<std::vector<base::HostTensor>> run(const ops::GpuReference& gpu, const OpSignature& sig,
                                            const std::vector<base::HostTensor>& args,
                                            const ops::ReferenceRequest& request, const std::vector<int64_t>& linear) {
    BOO_ASSIGN_OR_RETURN(const ops::OpDefinition* op, op_of(sig));
    BOO_ASSIGN_OR_RETURN(std::unique_ptr<ops::OpProblem> problem, op->make_problem(sig));
    BOO_ASSIGN_OR_RETURN(ops::Plan plan, gpu.plan(*problem, request, ops::ArchSpec::of(rt_.device())));
    const std::vector<TensorSpec> arg_specs = ops::reference_arguments(sig, request);
    const std::vector<TensorSpec> result_specs = ops::reference_results(sig, request);
    BOO_ASSIGN_OR_RETURN(std::shared_ptr<Launchable> launchable,
                         runtime::load_plan(rt_, sig, gpu.name(), ops::ReferenceConfig(request), std::move(plan),
                                            arg_specs, result_specs));
    DeviceTensors inputs;
    for (const base::HostTensor& t : args) BOO_RETURN_IF_ERROR(upload(rt_, t, inputs));
    if (request.sampled_result) {
      base::HostTensor positions(arg_specs.back());
      for (size_t i = 0; i < linear.size(); ++i) positions.store(static_cast<int64_t>(i), static_cast<double>(linear[i]));
      BOO_RETURN_IF_ERROR(upload(rt_, positions, inputs));
    }
    // 0xFF bytes are NaN: an element the kernels miss cannot pass as a value.
    BOO_ASSIGN_OR_RETURN(DeviceTensors results, allocate(rt_, result_specs, 0xff));
    BOO_RETURN_IF_ERROR(launchable->launch(inputs.refs, results.refs, rt_.stream()));
    return download(rt_, result_specs, results);
  }

  Runtime& rt_;
};

}  // namespace

Result<ReferenceChoice> parse_reference_choice(std::string_view text) {
  if (text == "auto") return ReferenceChoice::kAuto;
  if (text == "cpu") return ReferenceChoice::kCpu;
  if (text == "gpu") return ReferenceChoice::kGpu;
  return invalid_argument("--reference: expected auto (the GPU's where the driver has a GPU), cpu or gpu, got '" +
                          std::string(text) + "'");
}

Reference& cpu_reference() {
  static CpuReference reference;
  return reference;
}

std::unique_ptr<Reference> make_gpu_reference(Runtime& runtime) { return std::make_unique<GpuReferenceRunner>(runtime); }

Result<std::vector<base::HostTensor>> make_arguments_on_gpu(Runtime& runtime, const OpSignature& sig,
                                                            const ops::InputOptions& options) {
  BOO_ASSIGN_OR_RETURN(ops::Plan plan, ops::plan_gpu_inputs(sig, options, ops::ArchSpec::of(runtime.device())));
  const std::vector<TensorSpec> specs = sig.arguments();
  BOO_ASSIGN_OR_RETURN(std::shared_ptr<Launchable> launchable,
                       runtime::load_plan(runtime, sig, ops::kGpuInputsName, ops::GpuInputsConfig(), std::move(plan),
                                          {}, specs));
  // Zero bytes between strided elements, as a host tensor's storage holds.
  BOO_ASSIGN_OR_RETURN(DeviceTensors tensors, allocate(runtime, specs, 0));
  BOO_RETURN_IF_ERROR(launchable->launch({}, tensors.refs, runtime.stream()));
  return download(runtime, specs, tensors);
}

Result<std::vector<base::HostTensor>> make_arguments(Runtime* runtime, const ops::OpDefinition& op,
                                                     const OpSignature& sig, const ops::InputOptions& options) {
  Result<std::vector<base::HostTensor>> args = unimplemented("no GPU");
  if (runtime) args = make_arguments_on_gpu(*runtime, sig, options);
  if (!args.ok() && args.status().code() != StatusCode::kUnimplemented) return args;
  if (!args.ok()) args = op.make_default_arguments(sig, options);
  if (!args.ok()) return args;
  BOO_RETURN_IF_ERROR(op.derive_arguments(sig, *args));
  return args;
}

Result<std::vector<runtime::ModuleRequest>> gpu_reference_modules(const OpSignature& sig, const DeviceInfo& device) {
  BOO_ASSIGN_OR_RETURN(const ops::OpDefinition* op, op_of(sig));
  std::vector<runtime::ModuleRequest> out;
  const ops::GpuReference* gpu = op->gpu_reference();
  if (!gpu) return out;
  BOO_ASSIGN_OR_RETURN(std::unique_ptr<ops::OpProblem> problem, op->make_problem(sig));
  if (!gpu->accepts(*problem).ok()) return out;
  // The requests check_numerics and verify_results make (a reference that does not sample computes whole).
  const bool whole = sig.flop_count() <= VerifyOptions{}.full_reference_flops;
  std::vector<ops::ReferenceRequest> requests;
  if (whole || !gpu->samples()) requests.push_back(ops::ReferenceRequest{});
  if (gpu->samples()) {
    const size_t sampled = whole ? 1 : sig.results().size();
    // The sample count is a launch parameter: any count plans the module the check loads.
    for (size_t i = 0; i < sampled; ++i) requests.push_back(ops::ReferenceRequest{i, 1});
  }
  const ops::ArchSpec arch = ops::ArchSpec::of(device);
  for (const ops::ReferenceRequest& request : requests) {
    BOO_ASSIGN_OR_RETURN(ops::Plan plan, gpu->plan(*problem, request, arch));
    BOO_ASSIGN_OR_RETURN(runtime::ModuleRequest module,
                         runtime::describe_module(gpu->name(), ops::ReferenceConfig(request), std::move(plan.source),
                                                  device.arch()));
    out.push_back(std::move(module));
  }
  return out;
}

Result<runtime::ModuleRequest> gpu_inputs_module(const OpSignature& sig, const ops::InputOptions& options,
                                                 const DeviceInfo& device) {
  BOO_ASSIGN_OR_RETURN(ops::Plan plan, ops::plan_gpu_inputs(sig, options, ops::ArchSpec::of(device)));
  return runtime::describe_module(ops::kGpuInputsName, ops::GpuInputsConfig(), std::move(plan.source), device.arch());
}

}  // namespace boo::bench
