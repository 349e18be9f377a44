// boo: a tensor in host memory, with any strides and any boo dtype.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/float_convert.hpp"
#include "boo/status.hpp"
#include "boo/tensor.hpp"

namespace boo::base {

/// How an element of dtype D is stored and converted to and from double: the
/// one definition HostTensor::load/store and the typed loops below share, so
/// a typed loop reads and writes exactly the values load() and store() do.
template <DType D>
struct Element;
template <>
struct Element<DType::kF32> {
  using Storage = float;
  static double to_double(float v) { return v; }
  static float from_double(double v) { return static_cast<float>(v); }
};
template <>
struct Element<DType::kF64> {
  using Storage = double;
  static double to_double(double v) { return v; }
  static double from_double(double v) { return v; }
};
template <>
struct Element<DType::kI64> {  // indices: exact integers in a double
  using Storage = int64_t;
  static double to_double(int64_t v) { return static_cast<double>(v); }
  static int64_t from_double(double v) { return static_cast<int64_t>(v); }
};
template <>
struct Element<DType::kF16> {
  using Storage = uint16_t;
  static double to_double(uint16_t h) { return half_bits_to_float(h); }
  static uint16_t from_double(double v) { return float_to_half_bits(static_cast<float>(v)); }
};
template <>
struct Element<DType::kBF16> {
  using Storage = uint16_t;
  static double to_double(uint16_t h) { return bf16_bits_to_float(h); }
  static uint16_t from_double(double v) { return float_to_bf16_bits(static_cast<float>(v)); }
};

/// Calls f(std::integral_constant<DType, dtype>{}): a loop written once is
/// compiled per dtype, with no dtype switch per element.
template <typename F>
decltype(auto) visit_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kF32: return f(std::integral_constant<DType, DType::kF32>{});
    case DType::kF64: return f(std::integral_constant<DType, DType::kF64>{});
    case DType::kI64: return f(std::integral_constant<DType, DType::kI64>{});
    case DType::kF16: return f(std::integral_constant<DType, DType::kF16>{});
    case DType::kBF16: break;
  }
  return f(std::integral_constant<DType, DType::kBF16>{});
}

/// Element `offset` of storage `data` holding dtype D, as double.
template <DType D>
double load_element(const std::byte* data, int64_t offset) {
  typename Element<D>::Storage v;
  std::memcpy(&v, data + offset * static_cast<int64_t>(sizeof v), sizeof v);
  return Element<D>::to_double(v);
}
template <DType D>
void store_element(std::byte* data, int64_t offset, double value) {
  const typename Element<D>::Storage v = Element<D>::from_double(value);
  std::memcpy(data + offset * static_cast<int64_t>(sizeof v), &v, sizeof v);
}

/// Calls f(linear, offset) for the logical row-major indices [begin, end) of
/// `spec` in increasing order, with each storage offset. The index is stepped,
/// not divided out of each linear index as offset_of_linear does: a dimension
/// carries only when the one inside it wraps.
template <typename F>
void for_each_offset_in(const TensorSpec& spec, int64_t begin, int64_t end, F&& f) {
  if (begin >= end) return;
  const size_t rank = spec.shape.size();
  if (rank == 0) {
    f(int64_t{0}, int64_t{0});
    return;
  }
  std::vector<int64_t> index(rank);
  int64_t offset = 0;
  for (size_t d = rank, rest = static_cast<size_t>(begin); d-- > 0;) {
    const auto extent = static_cast<size_t>(spec.shape[d]);
    index[d] = static_cast<int64_t>(rest % extent);
    rest /= extent;
    offset += index[d] * spec.strides[d];
  }
  const size_t last = rank - 1;
  const int64_t inner_extent = spec.shape[last], inner_stride = spec.strides[last];
  for (int64_t linear = begin; linear < end;) {
    // The rest of the innermost dimension, as one tight loop.
    const int64_t run = std::min(inner_extent - index[last], end - linear);
    for (int64_t k = 0; k < run; ++k) f(linear + k, offset + k * inner_stride);
    linear += run;
    offset += run * inner_stride;
    index[last] += run;
    for (size_t d = last; d > 0 && index[d] == spec.shape[d]; --d) {
      offset += spec.strides[d - 1] - spec.shape[d] * spec.strides[d];
      index[d] = 0;
      ++index[d - 1];
    }
  }
}

/// A storage offset stepped through the logical row-major indices of a spec,
/// one element at a time (for walking a second tensor alongside a first).
class OffsetCursor {
 public:
  OffsetCursor(const TensorSpec& spec, int64_t linear) : spec_(spec), index_(spec.shape.size()) {
    for (size_t d = index_.size(), rest = static_cast<size_t>(linear); d-- > 0;) {
      const auto extent = static_cast<size_t>(spec.shape[d]);
      index_[d] = static_cast<int64_t>(rest % extent);
      rest /= extent;
      offset_ += index_[d] * spec.strides[d];
    }
  }
  int64_t offset() const { return offset_; }
  /// To the next logical index (past the last one, the offset is meaningless).
  void next() {
    for (size_t d = index_.size(); d-- > 0;) {
      offset_ += spec_.strides[d];
      if (++index_[d] < spec_.shape[d] || d == 0) return;
      offset_ -= spec_.shape[d] * spec_.strides[d];
      index_[d] = 0;
    }
  }

 private:
  const TensorSpec& spec_;
  std::vector<int64_t> index_;
  int64_t offset_ = 0;
};

/// for_each_offset_in over two specs of one logical shape: f(linear, offset in a, offset in b).
template <typename F>
void for_each_offset_pair_in(const TensorSpec& a, const TensorSpec& b, int64_t begin, int64_t end, F&& f) {
  if (a.strides == b.strides) {
    for_each_offset_in(a, begin, end, [&](int64_t linear, int64_t offset) { f(linear, offset, offset); });
    return;
  }
  OffsetCursor in_b(b, begin);
  for_each_offset_in(a, begin, end, [&](int64_t linear, int64_t offset) {
    f(linear, offset, in_b.offset());
    in_b.next();
  });
}

/// std::allocator, except that an element made without a value is left unset
/// (default-initialized) instead of zeroed: for storage written next anyway.
template <typename T>
struct UnsetAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UnsetAllocator<U>;
  };
  UnsetAllocator() = default;
  template <typename U>
  UnsetAllocator(const UnsetAllocator<U>&) noexcept {}
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    if constexpr (sizeof...(Args) == 0) ::new (static_cast<void*>(p)) U;
    else ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

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
  /// allocate() without zeroing the storage: for a tensor whose every storage
  /// byte is written next (a copy of a device buffer of size_bytes()), which
  /// then costs one pass over its memory instead of two.
  static Result<HostTensor> allocate_unset(TensorSpec spec);

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
  struct Unset {};
  HostTensor(TensorSpec spec, Unset);

  TensorSpec spec_;
  std::vector<std::byte, UnsetAllocator<std::byte>> storage_;
};

/// Converts a logical row-major linear index into a storage offset.
int64_t offset_of_linear(const TensorSpec& spec, int64_t linear);

/// A copy of `src` with the dtype and strides of `dst_spec` (same shape).
HostTensor convert_tensor(const HostTensor& src, const TensorSpec& dst_spec);
/// Copies the elements of `src` into `dst` (same shape; any dtypes and strides).
void copy_tensor(const HostTensor& src, HostTensor& dst);

}  // namespace boo::base
