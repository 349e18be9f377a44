// boo: the GPU runtime — from a signature to a launchable kernel.
//
//   auto rt = boo::Runtime::create(boo::RuntimeOptions::from_environment());
//   auto conv = (*rt)->get_launchable(signature);      // compiles, or loads from the cache
//   (*conv)->launch(args, results, stream);            // TensorRefs of device memory
//
// This header includes no CUDA header: streams are passed as void* (CUstream).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "boo/device.hpp"
#include "boo/signature.hpp"
#include "boo/status.hpp"
#include "boo/tensor.hpp"

namespace boo {

struct RuntimeOptions {
  int device = 0;                 ///< CUDA device ordinal
  std::string cache_dir;          ///< the artifact cache folder
  bool cache_enabled = true;
  std::string save_temps_dir;     ///< non-empty: dump every intermediate artifact here
  std::string implementation;     ///< non-empty: use only this GPU implementation (--impl)
  /// The tuning database whose configs replace the heuristic's (`boo tune`
  /// writes it); empty: none, every config is the heuristic's.
  std::string tuning_db;
  /// The folder of the shipped tunings (one JSON file per device name),
  /// consulted where the tuning database has no row; empty: none.
  std::string shipped_tuning;

  /// BOO_CACHE_ON, BOO_CACHE_DIR (see README), BOO_SAVE_TEMPS, the tuning
  /// database: BOO_TUNING_DB, else BOO_TUNING_SPEC_PATH, else tuning.sqlite in the cache folder; and the
  /// shipped tunings: BOO_SHIPPED_TUNING (a folder, or 0 for none), else the package's own.
  static RuntimeOptions from_environment();
};

/// One signature, compiled and loaded, ready to launch. Thread-safe: concurrent launches are serialized
/// while they are enqueued (each copies its addresses into the shared parameter blocks).
class Launchable {
 public:
  virtual ~Launchable() = default;
  virtual const OpSignature& signature() const = 0;
  /// The implementation that runs, e.g. "gpu:conv:direct".
  virtual std::string_view implementation() const = 0;
  /// The kernels' entry names, in launch order.
  virtual const std::vector<std::string>& kernel_names() const = 0;
  /// Launches on `stream` (a CUstream; nullptr = the runtime's stream).
  /// `args` and `results` follow signature().arguments() and results():
  /// shapes, dtypes and strides must match (the layout is compiled into the
  /// kernels; strides of size-1 dimensions are free), addresses aligned as
  /// the implementation needs (16 bytes always suffices).
  /// The plan's workspace (scratch memory) runs in memory the launchable allocates on its first launch
  /// and keeps.
  virtual Status launch(std::span<const TensorRef> args, std::span<const TensorRef> results, void* stream) = 0;
  /// Bytes of scratch device memory a launch needs (0: none).
  virtual size_t workspace_bytes() const = 0;
  /// launch() with the caller's workspace: `workspace_bytes()` bytes of device memory, 256-byte aligned (as
  /// cuMemAlloc's; nullptr when that is 0), used until the launched kernels finish on `stream`. Allocates nothing and
  /// does not synchronize, so it can be recorded into a CUDA graph (PyTorch's caching allocator provides
  /// the workspace, from the graph's pool during a capture).
  virtual Status launch(std::span<const TensorRef> args, std::span<const TensorRef> results, void* stream,
                        void* workspace) = 0;
};

/// Device memory owned by a Runtime's context. Move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();
  void* data() const { return reinterpret_cast<void*>(address_); }
  size_t size_bytes() const { return bytes_; }

 private:
  friend class RuntimeAccess;
  uint64_t address_ = 0;
  size_t bytes_ = 0;
  void* context_ = nullptr;  ///< the CUcontext it was allocated in; must outlive the buffer
};

/// Counters of where launchables came from.
struct RuntimeStats {
  int64_t compiled = 0;      ///< modules compiled with NVRTC
  int64_t disk_hits = 0;     ///< modules loaded from the artifact cache
  int64_t memory_hits = 0;   ///< launchables found in this process
  double compile_ms = 0;     ///< total NVRTC time
  double load_ms = 0;        ///< total cache read + module load time
};

/// A device, its primary context and a stream, the in-process module and
/// launchable caches in front of the disk cache. Thread-safe.
class Runtime {
 public:
  static Result<std::unique_ptr<Runtime>> create(const RuntimeOptions& options);
  virtual ~Runtime() = default;

  virtual const DeviceInfo& device() const = 0;
  /// Compiles or loads the kernels of `sig` (first call), or returns the
  /// launchable this runtime already made for an equal signature.
  virtual Result<std::shared_ptr<Launchable>> get_launchable(const OpSignature& sig) = 0;
  /// The launchable this runtime already made for an equal signature, or nullptr; never plans, compiles
  /// or loads anything (what a caller recording a CUDA graph may use: module loads are not capturable).
  virtual std::shared_ptr<Launchable> find_launchable(const OpSignature& sig) = 0;
  virtual RuntimeStats stats() const = 0;

  /// The runtime's stream (a CUstream).
  virtual void* stream() const = 0;
  virtual Result<DeviceBuffer> allocate(size_t bytes) = 0;
  virtual Status copy_to_device(const DeviceBuffer& dst, const void* src, size_t bytes) = 0;
  virtual Status copy_to_host(void* dst, const DeviceBuffer& src, size_t bytes) = 0;
  /// Copies `bytes` from one device buffer to another (at device bandwidth, not the host link's).
  virtual Status copy_on_device(const DeviceBuffer& dst, const DeviceBuffer& src, size_t bytes) = 0;
  virtual Status fill_bytes(const DeviceBuffer& dst, uint8_t value) = 0;
  virtual Status synchronize() = 0;
  /// OK while the context is usable; the sticky error otherwise (after an
  /// illegal address or a failed launch every later call fails, and only a
  /// new process recovers).
  virtual Status context_health() = 0;
  /// Device memory in use on the runtime's GPU, by every process (total - free).
  virtual Result<int64_t> device_memory_used() = 0;
  /// Runs body(i) for i in [0, iterations) on the runtime's stream and
  /// returns the GPU time of each run in microseconds (CUDA events around
  /// each run). `before_each` (optional) runs before each body, outside the
  /// timed interval (an L2 flush); without it the runs are back to back.
  virtual Result<std::vector<double>> time_on_stream(const std::function<Status(int64_t)>& body, int64_t iterations,
                                                     const std::function<Status()>& before_each = nullptr) = 0;
};

/// "560.35.03"-style driver version and "13.0" NVRTC version, or why not.
Result<std::string> cuda_driver_version();

}  // namespace boo
