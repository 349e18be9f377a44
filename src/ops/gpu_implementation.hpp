// boo: what a GPU implementation of an op provides.
//
// The ops layer knows no CUDA: an implementation turns a signature into a
// CUDA source (compiled and cached by the jit/cache layers) and, at launch,
// into a list of kernel launches with packed parameter blocks, which the
// runtime issues with the driver API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "boo/device.hpp"
#include "boo/signature.hpp"
#include "base/kernel_source.hpp"

namespace boo::ops {

/// A tensor on the device: address and description.
struct DeviceTensor {
  uint64_t address = 0;
  TensorSpec spec;
};

/// The tensor named `name` ("x", "dw", ...) among `tensors`, or nullptr.
inline const DeviceTensor* find_tensor(std::span<const DeviceTensor> tensors, std::string_view name) {
  for (const DeviceTensor& t : tensors)
    if (t.spec.name == name) return &t;
  return nullptr;
}

/// The address of the tensor named `name` among a launch's arguments and
/// results, or 0 when the signature has no such tensor.
inline uint64_t tensor_address(std::span<const DeviceTensor> args, std::span<const DeviceTensor> results,
                               std::string_view name) {
  const DeviceTensor* t = find_tensor(args, name);
  if (!t) t = find_tensor(results, name);
  return t ? t->address : 0;
}

/// One kernel launch of a plan.
struct KernelLaunch {
  size_t entry = 0;  ///< index into KernelSource::entries
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t shared_bytes = 0;
  std::vector<std::byte> params;  ///< the kernel's single by-value parameter block

  template <typename Params>
  void set_params(const Params& p) {
    params.resize(sizeof(Params));
    std::memcpy(params.data(), &p, sizeof(Params));
  }
};

/// What an implementation decides once per signature and device, before any
/// tensor address is known (tile shapes, workspace layout). A Launchable keeps
/// it, so a repeated launch only binds addresses: eager calls are on the hot path.
class PreparedPlan {
 public:
  virtual ~PreparedPlan() = default;
};

class GpuImplementation {
 public:
  virtual ~GpuImplementation() = default;
  /// Stable name, e.g. "gpu:conv:direct" (selectable with --impl).
  virtual std::string_view name() const = 0;
  /// OK, or why this implementation declines the signature on this device.
  virtual Status accepts(const OpSignature& sig, const DeviceInfo& device) const = 0;
  /// The compile-time parameters as a readable record (goes into the cache key).
  virtual std::string compile_params(const OpSignature& sig, const DeviceInfo& device) const = 0;
  /// The CUDA translation unit for `sig`.
  virtual Result<base::KernelSource> source(const OpSignature& sig, const DeviceInfo& device) const = 0;
  /// Scratch device memory the launches need (split-K partials); 0 for none.
  virtual size_t workspace_bytes(const OpSignature&, const DeviceInfo&) const { return 0; }
  /// The launches that compute sig.results() from sig.arguments(), using
  /// `workspace` (workspace_bytes() of device memory, or 0).
  virtual Result<std::vector<KernelLaunch>> plan(const OpSignature& sig, const DeviceInfo& device,
                                                 std::span<const DeviceTensor> args,
                                                 std::span<const DeviceTensor> results, uint64_t workspace) const = 0;
  /// The address-independent part of plan(), computed once per Launchable, or
  /// nullptr (the default) when an implementation's plan is cheap anyway.
  virtual Result<std::shared_ptr<const PreparedPlan>> prepare(const OpSignature&, const DeviceInfo&) const {
    return std::shared_ptr<const PreparedPlan>();
  }
  /// plan() given what prepare() returned for the same signature and device.
  virtual Result<std::vector<KernelLaunch>> plan_prepared(const PreparedPlan* /*prepared*/, const OpSignature& sig,
                                                          const DeviceInfo& device, std::span<const DeviceTensor> args,
                                                          std::span<const DeviceTensor> results,
                                                          uint64_t workspace) const {
    return plan(sig, device, args, results, workspace);
  }
};

}  // namespace boo::ops
