// boo: the launch plan of one launchable — what the runtime needs to run an
// op, decided once per signature and device.
//
// An implementation turns (problem, config) into a Plan: the CUDA translation
// unit, the kernel launches in order, the workspace they share and, for each
// launch, which tensor address goes where in its parameter block. Tensors are
// bound by role (the signature's argument or result at a position, or an
// offset into the workspace) and the role names are resolved while planning,
// so a launch only copies addresses into place: no planning, no name lookups.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "base/kernel_source.hpp"
#include "boo/signature.hpp"
#include "boo/status.hpp"

namespace boo::ops {

/// Where a launch finds one tensor.
struct TensorBinding {
  enum class Source : uint8_t { kArgument, kResult, kWorkspace };
  Source source = Source::kArgument;
  uint32_t index = 0;   ///< position in sig.arguments() / sig.results()
  uint64_t offset = 0;  ///< bytes into the workspace (kWorkspace only)

  static TensorBinding workspace(uint64_t byte_offset) { return {Source::kWorkspace, 0, byte_offset}; }
};

/// A signature's tensors by role name ("x", "dw", ...), resolved once. Asking
/// for a name the signature does not have is a planning bug: INTERNAL, with
/// the names it has.
class TensorRoles {
 public:
  explicit TensorRoles(const OpSignature& sig);
  Result<TensorBinding> argument(std::string_view name) const;
  Result<TensorBinding> result(std::string_view name) const;
  bool has_argument(std::string_view name) const;
  /// The argument or result `name` where the signature has one (optional
  /// tensors: a bias, saved statistics that are a result in one direction and
  /// an argument in another); nullopt otherwise.
  std::optional<TensorBinding> find(std::string_view name) const;

 private:
  std::vector<std::string> arguments_, results_;
};

/// Grid or block extents.
struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

/// One kernel launch. Its parameter block is one by-value struct; the tensor
/// addresses it holds are written at launch into the 8-byte slots listed.
struct LaunchStep {
  struct AddressSlot {
    uint32_t params_offset = 0;  ///< byte offset of an unsigned long long in `params`
    TensorBinding tensor;
  };
  std::string entry;  ///< the extern "C" kernel, one of the plan source's entries
  Dim3 grid, block;
  uint32_t shared_bytes = 0;  ///< dynamic shared memory
  /// A cooperative launch (cuLaunchCooperativeKernel): the driver starts every
  /// block at once or refuses the launch, so blocks may wait on each other (a
  /// grid barrier) without hanging where the grid would not fit.
  bool cooperative = false;
  /// Bytes at the workspace's start set to 0 on the stream before this launch
  /// (a grid barrier's arrival counter).
  uint32_t cleared_workspace_bytes = 0;
  std::vector<std::byte> params;
  std::vector<AddressSlot> addresses;
};

/// Builds a LaunchStep whose parameter block is a `Params` (a struct shared
/// with device code, addresses as unsigned long long).
template <typename Params>
class StepBuilder {
  static_assert(std::is_trivially_copyable_v<Params>, "kernel parameters are copied byte for byte");

 public:
  StepBuilder(std::string entry, Dim3 grid, Dim3 block, uint32_t shared_bytes = 0) {
    step_.entry = std::move(entry);
    step_.grid = grid;
    step_.block = block;
    step_.shared_bytes = shared_bytes;
  }
  Params params{};

  /// `field`, a member of `params`, receives the address of `tensor` at launch.
  void bind(unsigned long long& field, TensorBinding tensor) {
    const auto offset = reinterpret_cast<const std::byte*>(&field) - reinterpret_cast<const std::byte*>(&params);
    step_.addresses.push_back({static_cast<uint32_t>(offset), tensor});
  }

  LaunchStep finish() && {
    step_.params.resize(sizeof(Params));
    std::memcpy(step_.params.data(), &params, sizeof(Params));
    return std::move(step_);
  }

 private:
  LaunchStep step_;
};

struct Plan {
  base::KernelSource source;
  std::vector<LaunchStep> steps;  ///< in launch order, on one stream
  size_t workspace_bytes = 0;     ///< device scratch memory the steps share (split-K partials, staged copies)
  uint32_t tensor_alignment = 1;  ///< bytes every argument and result address must be a multiple of

  /// OK, or INTERNAL naming the first inconsistency: a step whose entry the
  /// source does not define, a grid beyond the hardware's limits, an address
  /// slot outside the parameter block, a binding past the signature's tensors
  /// or the workspace.
  Status validate(size_t arguments, size_t results) const;
};

/// A grid extent from a checked count: INTERNAL when `blocks` is below 1 or
/// above `limit` (2^31 - 1 for x, 65535 for y and z).
Result<uint32_t> grid_extent(long long blocks, long long limit, std::string_view what);

}  // namespace boo::ops
