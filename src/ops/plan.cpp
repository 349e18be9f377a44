// boo: launch plans.
#include "ops/plan.hpp"

#include <algorithm>

namespace boo::ops {
namespace {

Result<TensorBinding> find_role(const std::vector<std::string>& names, std::string_view name,
                                TensorBinding::Source source, const char* what) {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return TensorBinding{source, static_cast<uint32_t>(i), 0};
  std::string have;
  for (const std::string& n : names) have += (have.empty() ? "" : ", ") + n;
  return internal_error("the plan binds " + std::string(what) + " '" + std::string(name) +
                        "', which the signature does not have (it has: " + (have.empty() ? "none" : have) + ")");
}

bool in_range(const TensorBinding& t, size_t arguments, size_t results, size_t workspace_bytes) {
  return t.source == TensorBinding::Source::kArgument ? t.index < arguments
         : t.source == TensorBinding::Source::kResult ? t.index < results
                                                       : t.offset <= workspace_bytes;
}

// What cuTensorMapEncodeTiled (cuTensorMapEncodeIm2col) requires of a tiled (im2col) map (cuda.h) that the plan
// fixes, and the map's place in the parameter block: empty, or what is wrong.
std::string tensor_map_error(const TensorMapSlot& m, const LaunchStep& step, uint32_t tensor_alignment) {
  if (m.params_offset % TensorMapSlot::kAlignment != 0)
    return "lies at byte " + std::to_string(m.params_offset) + " of the parameter block, not 64-byte aligned";
  if (size_t{m.params_offset} + TensorMapSlot::kBytes > step.params.size())
    return "lies outside the parameter block";
  for (const LaunchStep::AddressSlot& a : step.addresses)
    if (a.params_offset + sizeof(unsigned long long) > m.params_offset &&
        a.params_offset < m.params_offset + TensorMapSlot::kBytes)
      return "overlaps an address slot";
  // (fp32 maps are TF32 operands: the copy rounds them to TF32, runtime/tensor_maps.cpp.)
  if (m.dtype != DType::kBF16 && m.dtype != DType::kF16 && m.dtype != DType::kF32)
    return "is not of a 16-bit type or fp32 (TF32 operands)";
  const uint64_t element = dtype_size_bytes(m.dtype);
  // The map's first element: the tensor's address (aligned to the plan's tensor alignment, the workspace
  // to 256 bytes) plus the offsets, 16-byte aligned.
  const uint64_t offset = m.byte_offset + (m.tensor.source == TensorBinding::Source::kWorkspace ? m.tensor.offset : 0);
  if (offset % 16 != 0 || (m.tensor.source != TensorBinding::Source::kWorkspace && tensor_alignment % 16 != 0))
    return "starts at an address that is not 16-byte aligned";
  if (m.rank < 1 || m.rank > 5) return "has rank " + std::to_string(m.rank) + ", not 1-5";
  const bool im2col = m.mode == TensorMapSlot::Mode::kIm2col;
  for (uint32_t d = 0; d < m.rank; ++d) {
    if (m.dims[d] < 1 || m.dims[d] > (uint64_t{1} << 32)) return "has a dim outside 1..2^32";
    if (!im2col && (m.box[d] < 1 || m.box[d] > 256)) return "has a box dim outside 1..256";
    if (m.element_strides[d] < 1 || m.element_strides[d] > 8) return "has an element stride outside 1..8";
  }
  uint64_t extent = m.dims[0] * element;  // bytes one index of the next dim must at least step
  for (uint32_t d = 1; d < m.rank; ++d) {
    const uint64_t stride = m.strides[d - 1];
    if (stride % 16 != 0 || stride >= (uint64_t{1} << 40)) return "has a stride that is not a multiple of 16 below 2^40";
    if (stride < extent) return "has a stride smaller than the dims below it";
    extent = stride * m.dims[d];
  }
  if (im2col) {
    // cuda.h: ranks 3-5; each corner within [-2^15, 2^15) at rank 3, [-128, 128) at 4, [-16, 16) at 5, and a
    // bounding box of non-zero area; at most 256 channels a pixel and 1024 pixels a copy.
    if (m.rank < 3) return "is an im2col map of rank " + std::to_string(m.rank) + ", not 3-5";
    const int32_t reach = m.rank == 3 ? 32768 : m.rank == 4 ? 128 : 16;
    for (uint32_t d = 0; d + 2 < m.rank; ++d) {
      if (m.lower_corner[d] < -reach || m.lower_corner[d] >= reach || m.upper_corner[d] < -reach ||
          m.upper_corner[d] >= reach)
        return "has an im2col corner outside [" + std::to_string(-reach) + ", " + std::to_string(reach) + ")";
      if (static_cast<int64_t>(m.dims[d + 1]) + m.upper_corner[d] - m.lower_corner[d] < 1)
        return "has an empty im2col bounding box";
    }
    if (m.channels_per_pixel < 1 || m.channels_per_pixel > 256 || m.pixels_per_column < 1 ||
        m.pixels_per_column > 1024)
      return "has an im2col box outside 1..256 channels by 1..1024 pixels";
  }
  const uint64_t row = (im2col ? m.channels_per_pixel : m.box[0]) * element;
  if (row % 16 != 0) return "has a box row that is not a multiple of 16 bytes";
  if (m.swizzle == TensorMapSlot::Swizzle::k128B && row > 128) return "has a box row wider than the 128-byte swizzle";
  return "";
}

}  // namespace

uint64_t TensorMapSlot::box_bytes() const {
  if (mode == Mode::kIm2col) return uint64_t{channels_per_pixel} * pixels_per_column * dtype_size_bytes(dtype);
  uint64_t bytes = dtype_size_bytes(dtype);
  for (uint32_t d = 0; d < rank && d < box.size(); ++d) bytes *= box[d];
  return bytes;
}

std::string TensorMapSlot::text() const {
  auto joined = [&](auto values, uint32_t n) {
    std::string out;
    for (uint32_t d = 0; d < n; ++d) out += (d ? "x" : "") + std::to_string(values[d]);
    return out;
  };
  std::string out = std::string(mode == Mode::kIm2col ? "im2col" : "tensor") + " map at byte " +
                    std::to_string(params_offset) + ": dims " + joined(dims, rank);
  if (rank > 1) out += ", strides " + joined(strides, rank - 1) + " B";
  if (mode == Mode::kIm2col) {
    auto signed_joined = [&](const std::array<int32_t, 3>& v) {
      std::string s;
      for (uint32_t d = 0; d + 2 < rank; ++d) s += (d ? "," : "") + std::to_string(v[d]);
      return "{" + s + "}";
    };
    out += ", corners " + signed_joined(lower_corner) + " " + signed_joined(upper_corner) + ", element strides " +
           joined(element_strides, rank) + ", " + std::to_string(channels_per_pixel) + " channels x " +
           std::to_string(pixels_per_column) + " pixels (" + std::to_string(box_bytes()) + " B), ";
  } else {
    out += ", box " + joined(box, rank) + " (" + std::to_string(box_bytes()) + " B), ";
  }
  out += swizzle == Swizzle::k128B ? "128-byte swizzle" : "no swizzle";
  return out;
}

TensorRoles::TensorRoles(const OpSignature& sig) {
  for (const TensorSpec& t : sig.arguments()) arguments_.push_back(t.name);
  for (const TensorSpec& t : sig.results()) results_.push_back(t.name);
}

Result<TensorBinding> TensorRoles::argument(std::string_view name) const {
  return find_role(arguments_, name, TensorBinding::Source::kArgument, "argument");
}

Result<TensorBinding> TensorRoles::result(std::string_view name) const {
  return find_role(results_, name, TensorBinding::Source::kResult, "result");
}

bool TensorRoles::has_argument(std::string_view name) const {
  return std::find(arguments_.begin(), arguments_.end(), name) != arguments_.end();
}

Result<TensorBinding> TensorRoles::tensor(std::string_view name) const {
  return has_argument(name) ? argument(name) : result(name);
}

std::optional<TensorBinding> TensorRoles::find(std::string_view name) const {
  for (size_t i = 0; i < arguments_.size(); ++i)
    if (arguments_[i] == name) return TensorBinding{TensorBinding::Source::kArgument, static_cast<uint32_t>(i), 0};
  for (size_t i = 0; i < results_.size(); ++i)
    if (results_[i] == name) return TensorBinding{TensorBinding::Source::kResult, static_cast<uint32_t>(i), 0};
  return std::nullopt;
}

Result<uint32_t> grid_extent(long long blocks, long long limit, std::string_view what) {
  if (blocks < 1 || blocks > limit)
    return internal_error("the plan needs " + std::to_string(blocks) + " blocks along " + std::string(what) +
                          ", outside 1.." + std::to_string(limit));
  return static_cast<uint32_t>(blocks);
}

Status Plan::validate(size_t arguments, size_t results) const {
  for (const LaunchStep& step : steps) {
    const std::string where = "plan step '" + step.entry + "': ";
    if (std::find(source.entries.begin(), source.entries.end(), step.entry) == source.entries.end())
      return internal_error(where + "the source defines no such entry");
    if (step.grid.x < 1 || step.grid.y < 1 || step.grid.z < 1 || step.grid.y > 65535 || step.grid.z > 65535 ||
        step.grid.x > 0x7fffffffu)
      return internal_error(where + "grid " + std::to_string(step.grid.x) + "x" + std::to_string(step.grid.y) + "x" +
                            std::to_string(step.grid.z) + " is outside the hardware's limits");
    if (step.cluster_x < 1 || step.cluster_x > 8 || step.grid.x % step.cluster_x != 0 ||
        (step.cluster_x > 1 && step.cooperative))
      return internal_error(where + "clusters of " + std::to_string(step.cluster_x) + " CTAs along x need a grid.x of "
                            "whole clusters (of at most 8) and an ordinary launch, not grid.x " +
                            std::to_string(step.grid.x) + (step.cooperative ? " launched cooperatively" : ""));
    if (step.cleared_workspace_bytes > workspace_bytes)
      return internal_error(where + "clears " + std::to_string(step.cleared_workspace_bytes) +
                            " bytes of a workspace of " + std::to_string(workspace_bytes));
    const uint64_t threads = uint64_t{step.block.x} * step.block.y * step.block.z;
    if (threads < 1 || threads > 1024) return internal_error(where + std::to_string(threads) + " threads per block");
    for (const LaunchStep::AddressSlot& slot : step.addresses) {
      if (size_t{slot.params_offset} + sizeof(unsigned long long) > step.params.size())
        return internal_error(where + "an address slot lies outside the parameter block");
      if (!in_range(slot.tensor, arguments, results, workspace_bytes))
        return internal_error(where + "a tensor binding lies past the signature's tensors or workspace");
    }
    for (const TensorMapSlot& map : step.tensor_maps) {
      if (const std::string error = tensor_map_error(map, step, tensor_alignment); !error.empty())
        return internal_error(where + "the tensor map at byte " + std::to_string(map.params_offset) + " " + error);
      if (!in_range(map.tensor, arguments, results, workspace_bytes))
        return internal_error(where + "a tensor map's binding lies past the signature's tensors or workspace");
    }
  }
  return ok_status();
}

}  // namespace boo::ops
