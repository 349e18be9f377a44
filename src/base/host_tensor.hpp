// boo: a tensor in host memory, with any strides and any boo dtype.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "boo/status.hpp"
#include "boo/tensor.hpp"

namespace boo::base {

/// Owns the strided storage of one tensor described by a TensorSpec.
/// Elements are read and written as double whatever the dtype; stores round
/// to the dtype (round-to-nearest-even). Thread-compatible: concurrent stores
/// to distinct elements are safe.
class HostTensor {
 public:
  HostTensor() = default;
  explicit HostTensor(TensorSpec spec);
  /// The same, as a Status where the constructor would throw: RESOURCE_EXHAUSTED
  /// naming the tensor and its size when it exceeds the host's memory or the
  /// allocation fails.
  static Result<HostTensor> allocate(TensorSpec spec);

  const TensorSpec& spec() const { return spec_; }
  std::byte* data() { return storage_.data(); }
  const std::byte* data() const { return storage_.data(); }
  size_t size_bytes() const { return storage_.size(); }

  /// Element at storage offset `offset` (in elements), as double.
  double load(int64_t offset) const;
  void store(int64_t offset, double value);

  /// Storage offset of a logical index (one entry per dimension).
  int64_t offset_of(const int64_t* index) const;
  double at(const std::vector<int64_t>& index) const { return load(offset_of(index.data())); }

  /// Visits every element in logical row-major order: f(linear_index, offset).
  void for_each_offset(const std::function<void(int64_t linear, int64_t offset)>& f) const;

 private:
  TensorSpec spec_;
  std::vector<std::byte> storage_;
};

/// Converts a logical row-major linear index into a storage offset.
int64_t offset_of_linear(const TensorSpec& spec, int64_t linear);

/// A copy of `src` with the dtype and strides of `dst_spec` (same shape).
HostTensor convert_tensor(const HostTensor& src, const TensorSpec& dst_spec);
/// Copies the elements of `src` into `dst` (same shape; any dtypes and strides).
void copy_tensor(const HostTensor& src, HostTensor& dst);

}  // namespace boo::base
