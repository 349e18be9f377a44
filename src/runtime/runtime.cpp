// boo: the GPU runtime — device context, module and launchable caches, launches.
#include "boo/runtime.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <map>
#include <mutex>

#include "base/log.hpp"
#include "cache/artifact_cache.hpp"
#include "cuda/driver_api.hpp"
#include "ops/op_definition.hpp"
#include "ops/tensor_refs.hpp"
#include "runtime/dispatch.hpp"
#include "runtime/kernel_builder.hpp"
#include "runtime/plan_loader.hpp"
#include "runtime/tensor_maps.hpp"

namespace boo {

// Lets the runtime fill in DeviceBuffer's private fields.
class RuntimeAccess {
 public:
  static DeviceBuffer make_buffer(uint64_t address, size_t bytes, void* context) {
    DeviceBuffer b;
    b.address_ = address;
    b.bytes_ = bytes;
    b.context_ = context;
    return b;
  }
  static uint64_t address(const DeviceBuffer& b) { return b.address_; }
  static size_t bytes(const DeviceBuffer& b) { return b.bytes_; }
};

namespace {

using cuda::DriverApi;

Result<DeviceInfo> query_device(const DriverApi& api, int ordinal, CUdevice* out_device) {
  int count = 0;
  BOO_CU_RETURN_IF_ERROR(api, cuDeviceGetCount(&count));
  if (ordinal < 0 || ordinal >= count)
    return invalid_argument("GPU " + std::to_string(ordinal) + " does not exist: this machine has " +
                            std::to_string(count) + " (ordinals 0.." + std::to_string(count - 1) + ")");
  CUdevice dev = 0;
  BOO_CU_RETURN_IF_ERROR(api, cuDeviceGet(&dev, ordinal));
  DeviceInfo info;
  info.ordinal = ordinal;
  char name[256] = {};
  BOO_CU_RETURN_IF_ERROR(api, cuDeviceGetName(name, sizeof name, dev));
  info.name = name;
  auto attr = [&](CUdevice_attribute a, int* v) { return api.cuDeviceGetAttribute(v, a, dev); };
  attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &info.cc_major);
  attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &info.cc_minor);
  attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &info.sm_count);
  attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &info.max_shared_bytes_per_block);
  attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &info.l2_bytes);
  size_t total = 0;
  BOO_CU_RETURN_IF_ERROR(api, cuDeviceTotalMem(&total, dev));
  info.total_memory_bytes = static_cast<int64_t>(total);
  *out_device = dev;
  return info;
}

// A loaded module: its functions by entry name. Owned by the runtime.
struct LoadedModule {
  CUmodule module = nullptr;
  std::map<std::string, CUfunction> functions;
};

class RuntimeImpl;

// One step of the plan with its function resolved and a parameter block that
// launch() fills with this call's addresses.
struct ResolvedStep {
  CUfunction function = nullptr;
  ops::Dim3 grid, block;
  uint32_t shared_bytes = 0;
  bool cooperative = false;
  uint32_t cleared_workspace_bytes = 0;
  std::vector<std::byte> params;
  std::vector<ops::LaunchStep::AddressSlot> addresses;
  runtime::StepTensorMaps tensor_maps;  // encoded into `params` by launch(), when their tensors moved
};

class LaunchableImpl final : public Launchable {
 public:
  // `arguments` and `results`: the tensors the plan's bindings index (the signature's, but for plans made
  // outside dispatch: load_plan).
  LaunchableImpl(RuntimeImpl& rt, std::unique_ptr<OpSignature> sig, std::string implementation,
                 std::vector<std::string> names, std::vector<TensorSpec> arguments, std::vector<TensorSpec> results,
                 std::vector<ResolvedStep> steps, size_t workspace_bytes, uint32_t tensor_alignment)
      : rt_(rt),
        sig_(std::move(sig)),
        implementation_(std::move(implementation)),
        names_(std::move(names)),
        arg_specs_(std::move(arguments)),
        result_specs_(std::move(results)),
        arg_addresses_(arg_specs_.size()),
        result_addresses_(result_specs_.size()),
        steps_(std::move(steps)),
        workspace_bytes_(workspace_bytes),
        tensor_alignment_(tensor_alignment) {}

  const OpSignature& signature() const override { return *sig_; }
  std::string_view implementation() const override { return implementation_; }
  const std::vector<std::string>& kernel_names() const override { return names_; }
  Status launch(std::span<const TensorRef> args, std::span<const TensorRef> results, void* stream) override;
  size_t workspace_bytes() const override { return workspace_bytes_; }
  Status launch(std::span<const TensorRef> args, std::span<const TensorRef> results, void* stream,
                void* workspace) override;

 private:
  RuntimeImpl& rt_;
  std::unique_ptr<OpSignature> sig_;
  const std::string implementation_;
  std::vector<std::string> names_;
  // Fixed by the signature, so computed once (launch() is on every eager call's path).
  const std::vector<TensorSpec> arg_specs_, result_specs_;
  // This launch's tensor addresses, by position (kept here so that a launch allocates nothing).
  std::vector<uint64_t> arg_addresses_, result_addresses_;
  std::vector<ResolvedStep> steps_;
  const size_t workspace_bytes_;
  const uint32_t tensor_alignment_;
  // Held while a launch fills the addresses and parameter blocks above and enqueues its kernels
  // (cuLaunchKernel copies the parameters): concurrent launches (autograd's device threads, a graph
  // capture beside eager calls) each enqueue their own.
  std::mutex launch_mutex_;
  // Scratch memory of the plan (split-K partials, staged copies) for launches without a caller's
  // workspace, allocated on the first. Such launches on several streams at once share it: a caller that
  // runs one signature on several streams concurrently passes each its own workspace.
  DeviceBuffer workspace_;
};

class RuntimeImpl final : public Runtime {
 public:
  RuntimeImpl(const DriverApi& api, RuntimeOptions options, DeviceInfo info, CUdevice dev, CUcontext ctx,
              CUstream stream, std::string driver_version)
      : api_(api),
        options_(std::move(options)),
        info_(std::move(info)),
        device_(dev),
        context_(ctx),
        stream_(stream),
        driver_version_(std::move(driver_version)),
        cache_(cache::CacheConfig{options_.cache_dir, options_.cache_enabled}),
        tuning_(runtime::open_tuning_db(options_.tuning_db)),
        shipped_(cache::ShippedTunings::shared(options_.shipped_tuning)) {}

  ~RuntimeImpl() override {
    api_.cuCtxSetCurrent(context_);
    launchables_.clear();
    for (auto& [key, m] : modules_) api_.cuModuleUnload(m.module);
    api_.cuStreamDestroy(stream_);
    api_.cuDevicePrimaryCtxRelease(device_);
  }

  const DeviceInfo& device() const override { return info_; }
  void* stream() const override { return stream_; }
  const DriverApi& api() const { return api_; }

  Status make_current() {
    BOO_CU_RETURN_IF_ERROR(api_, cuCtxSetCurrent(context_));
    return ok_status();
  }

  RuntimeStats stats() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }

  Result<std::shared_ptr<Launchable>> get_launchable(const OpSignature& sig) override {
    BOO_RETURN_IF_ERROR(sig.validate());
    const std::string identity = sig.command();
    // One thread plans and compiles a signature; others asking for the same
    // one wait for it, and everything else proceeds: NVRTC runs unlocked.
    std::promise<LaunchableResult> promise;
    std::shared_future<LaunchableResult> pending;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (auto it = launchables_.find(identity); it != launchables_.end()) {
        ++stats_.memory_hits;
        return std::shared_ptr<Launchable>(it->second);
      }
      if (auto it = pending_.find(identity); it != pending_.end()) {
        pending = it->second;
      } else {
        pending_.emplace(identity, promise.get_future().share());
      }
    }
    if (pending.valid()) {
      const LaunchableResult& made = pending.get();
      if (!made.ok()) return made.status();
      return std::shared_ptr<Launchable>(*made);
    }
    LaunchableResult made = make_launchable(sig, identity);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_.erase(identity);
      if (made.ok()) launchables_.emplace(identity, *made);
    }
    promise.set_value(made);
    if (!made.ok()) return made.status();
    return std::shared_ptr<Launchable>(*made);
  }

  std::shared_ptr<Launchable> find_launchable(const OpSignature& sig) override {
    const std::string identity = sig.command();
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = launchables_.find(identity);
    if (it == launchables_.end()) return nullptr;
    ++stats_.memory_hits;
    return it->second;
  }

  Result<DeviceBuffer> allocate(size_t bytes) override {
    BOO_RETURN_IF_ERROR(make_current());
    if (bytes == 0) return DeviceBuffer();
    CUdeviceptr ptr = 0;
    BOO_CU_RETURN_IF_ERROR(api_, cuMemAlloc(&ptr, bytes));
    return RuntimeAccess::make_buffer(static_cast<uint64_t>(ptr), bytes, context_);
  }

  Status copy_to_device(const DeviceBuffer& dst, const void* src, size_t bytes) override {
    BOO_RETURN_IF_ERROR(make_current());
    if (bytes) BOO_CU_RETURN_IF_ERROR(api_, cuMemcpyHtoD(static_cast<CUdeviceptr>(RuntimeAccess::address(dst)), src, bytes));
    return ok_status();
  }

  Status copy_to_host(void* dst, const DeviceBuffer& src, size_t bytes) override {
    BOO_RETURN_IF_ERROR(make_current());
    BOO_CU_RETURN_IF_ERROR(api_, cuStreamSynchronize(stream_));
    if (bytes) BOO_CU_RETURN_IF_ERROR(api_, cuMemcpyDtoH(dst, static_cast<CUdeviceptr>(RuntimeAccess::address(src)), bytes));
    return ok_status();
  }

  Status copy_on_device(const DeviceBuffer& dst, const DeviceBuffer& src, size_t bytes) override {
    BOO_RETURN_IF_ERROR(make_current());
    if (bytes)
      BOO_CU_RETURN_IF_ERROR(api_, cuMemcpyDtoD(static_cast<CUdeviceptr>(RuntimeAccess::address(dst)),
                                                static_cast<CUdeviceptr>(RuntimeAccess::address(src)), bytes));
    return ok_status();
  }

  Status fill_bytes(const DeviceBuffer& dst, uint8_t value) override {
    BOO_RETURN_IF_ERROR(make_current());
    if (RuntimeAccess::bytes(dst))
      BOO_CU_RETURN_IF_ERROR(api_, cuMemsetD8Async(static_cast<CUdeviceptr>(RuntimeAccess::address(dst)), value,
                                                   RuntimeAccess::bytes(dst), stream_));
    return ok_status();
  }

  Status synchronize() override {
    BOO_RETURN_IF_ERROR(make_current());
    BOO_CU_RETURN_IF_ERROR(api_, cuStreamSynchronize(stream_));
    return ok_status();
  }

  Result<int64_t> device_memory_used() override {
    BOO_RETURN_IF_ERROR(make_current());
    size_t free = 0, total = 0;
    BOO_CU_RETURN_IF_ERROR(api_, cuMemGetInfo(&free, &total));
    return static_cast<int64_t>(total - free);
  }

  Status context_health() override {
    BOO_RETURN_IF_ERROR(make_current());
    BOO_CU_RETURN_IF_ERROR(api_, cuCtxSynchronize());
    return ok_status();
  }

  Result<std::vector<double>> time_on_stream(const std::function<Status(int64_t)>& body, int64_t iterations,
                                             const std::function<Status()>& before_each) override {
    BOO_RETURN_IF_ERROR(make_current());
    // Run i lies between events start(i) and end(i). Back to back, one event
    // ends run i and starts run i+1; with work between runs each has its own pair.
    const bool separate = static_cast<bool>(before_each);
    const size_t n = static_cast<size_t>(iterations);
    std::vector<CUevent> events(separate ? 2 * n : n + 1, nullptr);
    auto start = [&](size_t i) { return separate ? events[2 * i] : events[i]; };
    auto end = [&](size_t i) { return separate ? events[2 * i + 1] : events[i + 1]; };
    auto destroy = [&] {
      for (CUevent e : events)
        if (e) api_.cuEventDestroy(e);
    };
    for (CUevent& e : events) {
      CUresult r = api_.cuEventCreate(&e, CU_EVENT_DEFAULT);
      if (r != CUDA_SUCCESS) {
        destroy();
        return cuda::cu_status(r, "cuEventCreate");
      }
    }
    Status status;
    auto record = [&](CUevent e) {
      if (CUresult r = api_.cuEventRecord(e, stream_); r != CUDA_SUCCESS) status = cuda::cu_status(r, "cuEventRecord");
    };
    for (size_t i = 0; status.ok() && i < n; ++i) {
      if (separate) status = before_each();
      if (status.ok() && (separate || i == 0)) record(start(i));
      if (status.ok()) status = body(static_cast<int64_t>(i));
      if (status.ok()) record(end(i));
    }
    std::vector<double> samples_us;
    if (status.ok() && n > 0) {
      if (CUresult r = api_.cuEventSynchronize(end(n - 1)); r != CUDA_SUCCESS)
        status = cuda::cu_status(r, "cuEventSynchronize");
    }
    for (size_t i = 0; status.ok() && i < n; ++i) {
      float ms = 0;
      if (CUresult r = api_.cuEventElapsedTime(&ms, start(i), end(i)); r != CUDA_SUCCESS)
        status = cuda::cu_status(r, "cuEventElapsedTime");
      samples_us.push_back(static_cast<double>(ms) * 1000.0);
    }
    destroy();
    if (!status.ok()) return status;
    return samples_us;
  }

 private:
  const DriverApi& api_;
  RuntimeOptions options_;
  DeviceInfo info_;
  CUdevice device_;
  CUcontext context_;
  CUstream stream_;
  std::string driver_version_;
  cache::ArtifactCache cache_;
  std::unique_ptr<cache::TuningDb> tuning_;  // read by dispatch (SQLite serializes its connection's users)
  std::shared_ptr<const cache::ShippedTunings> shipped_;  // the process's, read by dispatch (locked inside)
  mutable std::mutex mutex_;
  RuntimeStats stats_;
  using LaunchableResult = Result<std::shared_ptr<LaunchableImpl>>;

  // Plans, builds (cache or NVRTC, unlocked) and loads the launchable of `sig`.
  LaunchableResult make_launchable(const OpSignature& sig, const std::string& identity) {
    BOO_RETURN_IF_ERROR(make_current());
    BOO_ASSIGN_OR_RETURN(runtime::Dispatch dispatch,
                         runtime::choose_gpu_implementation(sig, info_, options_.implementation, tuning_.get(),
                                                                  shipped_.get()));
    BOO_ASSIGN_OR_RETURN(ops::Plan plan, runtime::plan_chosen(dispatch));
    return load(sig, identity, dispatch.chosen->name(), *dispatch.config, std::move(plan), sig.arguments(),
                sig.results(), false);
  }

 public:
  // Builds (cache or NVRTC, unlocked) and loads `plan`, whose bindings index `arguments` and `results`.
  // `reuse_loaded`: a module this runtime loaded already is used as it is, not read from the disk again
  // (plans made outside dispatch are loaded on every call: load_plan); it counts as reused in process.
  LaunchableResult load(const OpSignature& sig, const std::string& identity, std::string_view implementation_name,
                        const ops::Config& config, ops::Plan plan, std::vector<TensorSpec> arguments,
                        std::vector<TensorSpec> results, bool reuse_loaded) {
    BOO_RETURN_IF_ERROR(make_current());
    const std::string implementation(implementation_name);
    BOO_ASSIGN_OR_RETURN(runtime::ModuleRequest request,
                         runtime::describe_module(implementation, config, plan.source, info_.arch()));
    const auto start = std::chrono::steady_clock::now();
    const std::string key = request.key.digest();
    bool loaded = false;
    if (reuse_loaded) {
      std::lock_guard<std::mutex> lock(mutex_);
      loaded = modules_.count(key) > 0;
    }
    runtime::BuiltModule built;
    if (loaded) {
      built.key = key;
      built.from_cache = true;
    } else {
      BOO_ASSIGN_OR_RETURN(built, runtime::build_module(request, sig, cache_,
                                                        runtime::BuildOptions{options_.save_temps_dir, driver_version_}));
    }
    std::lock_guard<std::mutex> lock(mutex_);
    const LoadedModule* module = nullptr;
    if (auto it = modules_.find(built.key); it != modules_.end()) {
      module = &it->second;
    } else {
      LoadedModule m;
      BOO_CU_RETURN_IF_ERROR(api_, cuModuleLoadData(&m.module, built.cubin.data()));
      for (const std::string& entry : request.source.entries) {
        CUfunction fn = nullptr;
        CUresult r = api_.cuModuleGetFunction(&fn, m.module, entry.c_str());
        if (r != CUDA_SUCCESS) {
          api_.cuModuleUnload(m.module);
          return cuda::cu_status(r, ("cuModuleGetFunction(" + entry + ")").c_str());
        }
        m.functions.emplace(entry, fn);
      }
      module = &modules_.emplace(built.key, std::move(m)).first->second;
    }
    const double elapsed_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (loaded) {
      ++stats_.memory_hits;
    } else if (built.from_cache) {
      ++stats_.disk_hits;
      stats_.load_ms += elapsed_ms;
    } else {
      ++stats_.compiled;
      stats_.compile_ms += built.compile_ms;
    }
    base::log_debug(std::string(loaded ? "reused " : built.from_cache ? "loaded " : "compiled ") + implementation + " for " + identity +
                    " (key " + built.key.substr(0, 12) + ")");
    std::vector<ResolvedStep> steps;
    for (ops::LaunchStep& step : plan.steps) {
      CUfunction fn = module->functions.at(step.entry);  // Plan::validate checked the entry exists
      // Above the 48 KiB default (static and dynamic together), a kernel must be allowed its dynamic shared
      // memory: otherwise no block fits an SM, and a cooperative launch fails as "too many blocks".
      if (step.shared_bytes > 0) {
        int static_bytes = 0;
        BOO_CU_RETURN_IF_ERROR(api_, cuFuncGetAttribute(&static_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn));
        if (static_cast<uint64_t>(static_bytes) + step.shared_bytes > 48 * 1024)
          BOO_CU_RETURN_IF_ERROR(api_, cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                                          static_cast<int>(step.shared_bytes)));
      }
      if (step.cluster_x > 1) BOO_RETURN_IF_ERROR(trim_cluster_grid(fn, step));
      steps.push_back(ResolvedStep{fn, step.grid, step.block, step.shared_bytes, step.cooperative,
                                   step.cleared_workspace_bytes, std::move(step.params), std::move(step.addresses),
                                   runtime::StepTensorMaps(std::move(step.tensor_maps))});
    }
    return std::make_shared<LaunchableImpl>(*this, sig.clone(), implementation, request.source.entries,
                                            std::move(arguments), std::move(results), std::move(steps),
                                            plan.workspace_bytes, plan.tensor_alignment);
  }

 private:
  // A persistent grid of clusters (LaunchStep::cluster_x) trimmed to the clusters of `fn` that the device
  // runs at once; the grid stays whole clusters, at least one.
  Status trim_cluster_grid(CUfunction fn, ops::LaunchStep& step) const {
    CUlaunchAttribute cluster{};
    cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    cluster.value.clusterDim.x = step.cluster_x;
    cluster.value.clusterDim.y = 1;
    cluster.value.clusterDim.z = 1;
    CUlaunchConfig config{};
    config.gridDimX = step.grid.x;
    config.gridDimY = step.grid.y;
    config.gridDimZ = step.grid.z;
    config.blockDimX = step.block.x;
    config.blockDimY = step.block.y;
    config.blockDimZ = step.block.z;
    config.sharedMemBytes = step.shared_bytes;
    config.attrs = &cluster;
    config.numAttrs = 1;
    int clusters = 0;
    BOO_CU_RETURN_IF_ERROR(api_, cuOccupancyMaxActiveClusters(&clusters, fn, &config));
    if (clusters < 1)
      return resource_exhausted("kernel " + step.entry + ": the device runs no cluster of " +
                                std::to_string(step.cluster_x) + " CTAs with " + std::to_string(step.shared_bytes) +
                                " bytes of shared memory each");
    const uint64_t most = static_cast<uint64_t>(clusters) * step.cluster_x;
    if (step.grid.x > most) {
      base::log_debug("kernel " + step.entry + ": grid trimmed from " + std::to_string(step.grid.x) + " to " +
                      std::to_string(most) + " CTAs, the " + std::to_string(clusters) + " clusters of " +
                      std::to_string(step.cluster_x) + " that run at once");
      step.grid.x = static_cast<uint32_t>(most);
    }
    return ok_status();
  }

  std::map<std::string, LoadedModule> modules_;                         // by cache key
  std::map<std::string, std::shared_ptr<LaunchableImpl>> launchables_;  // by canonical command
  std::map<std::string, std::shared_future<LaunchableResult>> pending_;  // being made, by canonical command
};

Status LaunchableImpl::launch(std::span<const TensorRef> args, std::span<const TensorRef> results, void* stream) {
  void* workspace = nullptr;
  {
    std::lock_guard<std::mutex> lock(launch_mutex_);
    if (workspace_.size_bytes() < workspace_bytes_) {
      BOO_ASSIGN_OR_RETURN(workspace_, rt_.allocate(workspace_bytes_));
    }
    workspace = workspace_.data();
  }
  return launch(args, results, stream, workspace);
}

Status LaunchableImpl::launch(std::span<const TensorRef> args, std::span<const TensorRef> results, void* stream,
                              void* workspace_memory) {
  const auto workspace = reinterpret_cast<uint64_t>(workspace_memory);
  if (workspace_bytes_ > 0 && (workspace == 0 || workspace % 256 != 0))
    return invalid_argument(implementation_ + " needs a 256-byte aligned workspace of " +
                            std::to_string(workspace_bytes_) + " bytes, got " +
                            (workspace == 0 ? std::string("none") : "an unaligned address"));
  std::lock_guard<std::mutex> lock(launch_mutex_);
  // The plan compiled the signature's layouts in: tensors must match them.
  auto check = [&](std::span<const TensorRef> refs, const std::vector<TensorSpec>& specs, const char* what,
                   std::vector<uint64_t>& addresses) -> Status {
    BOO_RETURN_IF_ERROR(ops::check_tensor_refs(refs, specs, what, " (compiled into " + implementation_ + ")"));
    for (size_t i = 0; i < refs.size(); ++i) {
      const TensorSpec& s = specs[i];
      const auto address = reinterpret_cast<uint64_t>(refs[i].data);
      if (address % tensor_alignment_ != 0)
        return invalid_argument(std::string(what) + " '" + s.name + "' is not " + std::to_string(tensor_alignment_) +
                                "-byte aligned, which " + implementation_ + " needs");
      addresses[i] = address;
    }
    return ok_status();
  };
  BOO_RETURN_IF_ERROR(check(args, arg_specs_, "argument", arg_addresses_));
  BOO_RETURN_IF_ERROR(check(results, result_specs_, "result", result_addresses_));
  BOO_RETURN_IF_ERROR(rt_.make_current());
  const DriverApi& api = rt_.api();
  CUstream s = stream ? static_cast<CUstream>(stream) : static_cast<CUstream>(rt_.stream());
  auto address_of = [&](const ops::TensorBinding& t) -> uint64_t {
    return t.source == ops::TensorBinding::Source::kArgument ? arg_addresses_[t.index]
           : t.source == ops::TensorBinding::Source::kResult ? result_addresses_[t.index]
                                                              : workspace + t.offset;
  };
  for (ResolvedStep& step : steps_) {
    for (const ops::LaunchStep::AddressSlot& slot : step.addresses) {
      const uint64_t address = address_of(slot.tensor);
      std::memcpy(step.params.data() + slot.params_offset, &address, sizeof address);
    }
    if (!step.tensor_maps.empty())
      BOO_RETURN_IF_ERROR(step.tensor_maps.refresh({api.cuTensorMapEncodeTiled, api.cuTensorMapEncodeIm2col}, address_of, step.params).status());
    void* params[] = {step.params.data()};
    if (step.cleared_workspace_bytes > 0)
      BOO_CU_RETURN_IF_ERROR(api, cuMemsetD8Async(static_cast<CUdeviceptr>(workspace), 0, step.cleared_workspace_bytes, s));
    if (step.cooperative)
      BOO_CU_RETURN_IF_ERROR(api, cuLaunchCooperativeKernel(step.function, step.grid.x, step.grid.y, step.grid.z,
                                                            step.block.x, step.block.y, step.block.z,
                                                            step.shared_bytes, s, params));
    else
      BOO_CU_RETURN_IF_ERROR(api, cuLaunchKernel(step.function, step.grid.x, step.grid.y, step.grid.z, step.block.x,
                                                 step.block.y, step.block.z, step.shared_bytes, s, params, nullptr));
  }
  return ok_status();
}

}  // namespace

namespace runtime {

Result<std::shared_ptr<Launchable>> load_plan(Runtime& rt, const OpSignature& sig, std::string_view implementation,
                                              const ops::Config& config, ops::Plan plan,
                                              std::vector<TensorSpec> arguments, std::vector<TensorSpec> results) {
  auto* impl = dynamic_cast<RuntimeImpl*>(&rt);
  if (!impl) return internal_error("load_plan: the runtime was not made by Runtime::create");
  BOO_RETURN_IF_ERROR(sig.validate());
  Status valid = plan.validate(arguments.size(), results.size());
  if (!valid.ok()) return std::move(valid).annotate(std::string(implementation) + " for " + sig.command());
  BOO_ASSIGN_OR_RETURN(std::shared_ptr<LaunchableImpl> made,
                       impl->load(sig, sig.command(), implementation, config, std::move(plan), std::move(arguments),
                                  std::move(results), true));
  return std::shared_ptr<Launchable>(std::move(made));
}

}  // namespace runtime

RuntimeOptions RuntimeOptions::from_environment() {
  RuntimeOptions o;
  const cache::CacheConfig c = cache::CacheConfig::from_environment();
  o.cache_dir = c.dir;
  o.cache_enabled = c.enabled;
  if (const char* dir = std::getenv("BOO_SAVE_TEMPS"); dir && *dir) o.save_temps_dir = dir;
  o.tuning_db = cache::TuningDb::default_path(o.cache_dir);
  o.shipped_tuning = cache::ShippedTunings::default_folder();
  return o;
}

Result<std::string> cuda_driver_version() {
  BOO_ASSIGN_OR_RETURN(const DriverApi* api, cuda::driver_api());
  int v = 0;
  BOO_CU_RETURN_IF_ERROR(*api, cuDriverGetVersion(&v));
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

Result<std::unique_ptr<Runtime>> Runtime::create(const RuntimeOptions& options) {
  BOO_ASSIGN_OR_RETURN(const DriverApi* api, cuda::driver_api());
  CUdevice dev = 0;
  BOO_ASSIGN_OR_RETURN(DeviceInfo info, query_device(*api, options.device, &dev));
  CUcontext ctx = nullptr;
  BOO_CU_RETURN_IF_ERROR(*api, cuDevicePrimaryCtxRetain(&ctx, dev));
  if (CUresult r = api->cuCtxSetCurrent(ctx); r != CUDA_SUCCESS) {
    api->cuDevicePrimaryCtxRelease(dev);
    return cuda::cu_status(r, "cuCtxSetCurrent");
  }
  CUstream stream = nullptr;
  if (CUresult r = api->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING); r != CUDA_SUCCESS) {
    api->cuDevicePrimaryCtxRelease(dev);
    return cuda::cu_status(r, "cuStreamCreate");
  }
  std::string driver = cuda_driver_version().ok() ? *cuda_driver_version() : "";
  return std::unique_ptr<Runtime>(new RuntimeImpl(*api, options, std::move(info), dev, ctx, stream, driver));
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : address_(std::exchange(other.address_, 0)),
      bytes_(std::exchange(other.bytes_, 0)),
      context_(std::exchange(other.context_, nullptr)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    DeviceBuffer old(std::move(*this));
    address_ = std::exchange(other.address_, 0);
    bytes_ = std::exchange(other.bytes_, 0);
    context_ = std::exchange(other.context_, nullptr);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (!address_) return;
  if (Result<const DriverApi*> api = cuda::driver_api(); api.ok()) {
    (*api)->cuCtxSetCurrent(static_cast<CUcontext>(context_));
    (*api)->cuMemFree(static_cast<CUdeviceptr>(address_));
  }
}

}  // namespace boo
