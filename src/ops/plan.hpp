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

#include <array>
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
  /// The argument `name`, else the result `name` (a face task's operands are
  /// either, by direction); INTERNAL where it is neither.
  Result<TensorBinding> tensor(std::string_view name) const;
  /// The argument or result `name` where the signature has one (optional
  /// tensors: a bias, saved statistics that are a result in one direction and
  /// an argument in another); nullopt otherwise.
  std::optional<TensorBinding> find(std::string_view name) const;

 private:
  std::vector<std::string> arguments_, results_;
};

/// A CUDA tensor map (the 128-byte descriptor a TMA copy reads) in a launch's
/// parameter block. The map embeds its tensor's address, which is bound only at
/// launch, so the plan records what the map describes and the runtime encodes
/// it (cuTensorMapEncodeTiled, or cuTensorMapEncodeIm2col) into the block at
/// launch, again only when the tensor's address changed
/// (runtime/tensor_maps.hpp). No interleave, out-of-bounds elements read as
/// zeros; a tiled map's element strides are 1.
struct TensorMapSlot {
  enum class Swizzle : uint8_t { kNone, k128B };
  /// kIm2col (cuTensorMapEncodeIm2col): a channels-last activation {C, W, H, N} whose copy gathers
  /// `pixels_per_column` pixels (each `channels_per_pixel` channels) walking the output pixels W, H, N
  /// fastest first inside the bounding box the corners cut from each image, `element_strides` apart (the
  /// conv's stride), at a per-copy tap offset; `box` is unused. docs/wgmma-tma-design.md §2.
  static constexpr uint32_t kBytes = 128, kAlignment = 64;  ///< the map's size and its alignment in the block
  uint32_t params_offset = 0;  ///< byte offset of the map in `params`, a multiple of kAlignment
  TensorBinding tensor;        ///< the tensor the map reads
  uint64_t byte_offset = 0;    ///< from the tensor's address to the map's element 0, a multiple of 16
  DType dtype = DType::kBF16;  ///< the elements' type (16-bit types only)
  uint32_t rank = 2;           ///< dims used, 1-5
  std::array<uint64_t, 5> dims{};     ///< elements along each dim, the contiguous one first
  std::array<uint64_t, 4> strides{};  ///< bytes between consecutive indices of dims 1 .. rank - 1
  std::array<uint32_t, 5> box{};      ///< elements one copy moves along each dim
  Swizzle swizzle = Swizzle::k128B;
  enum class Mode : uint8_t { kTiled, kIm2col };
  Mode mode = Mode::kTiled;
  std::array<int32_t, 3> lower_corner{}, upper_corner{};  ///< im2col: per spatial dim (W first), rank - 2 used
  uint32_t channels_per_pixel = 0, pixels_per_column = 0;  ///< im2col: the copy's box
  std::array<uint32_t, 5> element_strides{1, 1, 1, 1, 1};  ///< im2col: the traversal stride per dim

  /// The bytes one copy of a whole box writes to shared memory (out-of-bounds
  /// elements included: they are written as zeros), what its barrier expects.
  uint64_t box_bytes() const;
  /// "tensor map at byte 192: dims 2304x256, strides 4608 B, box 64x128 (16384 B), 128-byte swizzle" (boo explain).
  std::string text() const;
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
  /// CTAs per cluster along x (the kernel's __cluster_dims__), above 1 for a
  /// persistent grid of clusters (each CTA striding its units by gridDim.x):
  /// the runtime trims grid.x at load to the clusters that run at once
  /// (cuOccupancyMaxActiveClusters), as the SMs' grouping into GPCs leaves
  /// some SMs without a partner; a cluster started late would add a wave.
  uint32_t cluster_x = 1;
  /// Bytes at the workspace's start set to 0 on the stream before this launch
  /// (a grid barrier's arrival counter).
  uint32_t cleared_workspace_bytes = 0;
  std::vector<std::byte> params;
  std::vector<AddressSlot> addresses;
  std::vector<TensorMapSlot> tensor_maps;

  /// Applies `rebind` to every tensor binding of the step (address slots and
  /// tensor maps): a plan wrapping another's steps maps their tensors to its own.
  template <typename Rebind>
  void rebind_tensors(Rebind&& rebind) {
    for (AddressSlot& slot : addresses) rebind(slot.tensor);
    for (TensorMapSlot& map : tensor_maps) rebind(map.tensor);
  }
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

  /// `field`, a 128-byte member of `params` (a device-side tensor map), receives
  /// `map` encoded for its tensor's address at launch (map.params_offset is set here).
  template <typename Map>
  void map(Map& field, TensorMapSlot map) {
    static_assert(sizeof(Map) == TensorMapSlot::kBytes && alignof(Map) == TensorMapSlot::kAlignment,
                  "a tensor map field is 128 bytes, 64-byte aligned");
    map.params_offset = static_cast<uint32_t>(reinterpret_cast<const std::byte*>(&field) -
                                              reinterpret_cast<const std::byte*>(&params));
    step_.tensor_maps.push_back(map);
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
  /// or the workspace, a tensor map that is not 64-byte aligned in the block,
  /// overlaps an address slot, or describes what cuTensorMapEncodeTiled rejects.
  Status validate(size_t arguments, size_t results) const;
};

/// A grid extent from a checked count: INTERNAL when `blocks` is below 1 or
/// above `limit` (2^31 - 1 for x, 65535 for y and z).
Result<uint32_t> grid_extent(long long blocks, long long limit, std::string_view what);

}  // namespace boo::ops
