// boo: element types and tensor descriptions shared by every op and backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace boo {

/// Element types. kF64 is the CPU reference's results and ATen's double
/// tensors (which run on the CPU reference only); kI64 holds indices (ATen's
/// argmax/argmin results).
enum class DType : uint8_t { kF32, kF16, kBF16, kF64, kI64 };

/// "float32", "float16", "bfloat16", "float64", "int64" (PyTorch's names without "torch.").
std::string_view dtype_name(DType dtype);
size_t dtype_size_bytes(DType dtype);

/// The logical shape and the memory strides (in elements) of one tensor.
///
/// `shape` is always in the op's logical order (N, C, [D,] H, W for conv
/// activations; K, C/g, [Z,] Y, X for filters; the user's order for layernorm).
/// `strides` encode the memory layout, so an NHWC tensor is a logical NCHW
/// shape with channels-last strides, as in PyTorch.
struct TensorSpec {
  std::string name;          ///< role in the op: "x", "w", "b", "dy", "dx", "mean", ...
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  DType dtype = DType::kF32;
  std::string layout;        ///< layout letters (e.g. "NHWC") or "" when not meaningful

  int rank() const { return static_cast<int>(shape.size()); }
  /// Sizes saturate at INT64_MAX instead of overflowing; signatures' validate()
  /// rejects tensors of more than 2^48 elements before any is described.
  int64_t numel() const;
  /// Number of elements the strided storage spans (max offset + 1).
  int64_t storage_elems() const;
  size_t storage_bytes() const;
  bool operator==(const TensorSpec&) const = default;
};

/// A tensor in memory: pointer, logical shape, strides (elements), dtype. Device
/// memory for Launchable::launch (boo/runtime.hpp), host memory for
/// run_reference (boo/reference.hpp).
struct TensorRef {
  void* data = nullptr;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  DType dtype = DType::kF32;
};

/// Row-major (C-contiguous) strides for `shape` (saturating, as numel()).
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape);

/// Strides for `shape` stored with dimension order `outer_to_inner` (a permutation
/// of 0..rank-1): the last listed dimension is innermost (stride 1).
std::vector<int64_t> permuted_strides(const std::vector<int64_t>& shape,
                                      const std::vector<int>& outer_to_inner);

/// "[2, 3, 4]"
std::string format_dims(const std::vector<int64_t>& dims);

}  // namespace boo
