// boo: host tensors.
#include "base/host_tensor.hpp"

#include <cstring>
#include <new>

#include "base/float_convert.hpp"
#include "base/host_memory.hpp"
#include "base/parallel.hpp"

namespace boo::base {

HostTensor::HostTensor(TensorSpec spec) : spec_(std::move(spec)), storage_(spec_.storage_bytes()) {}

Result<HostTensor> HostTensor::allocate(TensorSpec spec) {
  const std::string what = "tensor " + spec.name + " " + format_dims(spec.shape) + " (" +
                           std::string(dtype_name(spec.dtype)) + ")";
  const size_t bytes = spec.storage_bytes();
  BOO_RETURN_IF_ERROR(check_host_bytes(bytes, what));
  try {
    return HostTensor(std::move(spec));
  } catch (const std::bad_alloc&) {
    return resource_exhausted(what + ": allocating " + format_bytes(bytes) + " of host memory failed");
  }
}

double HostTensor::load(int64_t offset) const {
  const std::byte* p = storage_.data() + offset * static_cast<int64_t>(dtype_size_bytes(spec_.dtype));
  switch (spec_.dtype) {
    case DType::kF32: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::kF64: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case DType::kI64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    case DType::kF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return half_bits_to_float(h);
    }
    case DType::kBF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return bf16_bits_to_float(h);
    }
  }
  return 0.0;
}

void HostTensor::store(int64_t offset, double value) {
  std::byte* p = storage_.data() + offset * static_cast<int64_t>(dtype_size_bytes(spec_.dtype));
  switch (spec_.dtype) {
    case DType::kF32: {
      float v = static_cast<float>(value);
      std::memcpy(p, &v, 4);
      return;
    }
    case DType::kF64:
      std::memcpy(p, &value, 8);
      return;
    case DType::kI64: {  // indices: exact integers in a double
      const int64_t v = static_cast<int64_t>(value);
      std::memcpy(p, &v, 8);
      return;
    }
    case DType::kF16: {
      uint16_t h = float_to_half_bits(static_cast<float>(value));
      std::memcpy(p, &h, 2);
      return;
    }
    case DType::kBF16: {
      uint16_t h = float_to_bf16_bits(static_cast<float>(value));
      std::memcpy(p, &h, 2);
      return;
    }
  }
}

int64_t HostTensor::offset_of(const int64_t* index) const {
  int64_t offset = 0;
  for (size_t d = 0; d < spec_.shape.size(); ++d) offset += index[d] * spec_.strides[d];
  return offset;
}

int64_t offset_of_linear(const TensorSpec& spec, int64_t linear) {
  int64_t offset = 0;
  for (size_t d = spec.shape.size(); d-- > 0;) {
    offset += (linear % spec.shape[d]) * spec.strides[d];
    linear /= spec.shape[d];
  }
  return offset;
}

void HostTensor::for_each_offset(const std::function<void(int64_t, int64_t)>& f) const {
  const int64_t n = spec_.numel();
  for (int64_t i = 0; i < n; ++i) f(i, offset_of_linear(spec_, i));
}

HostTensor convert_tensor(const HostTensor& src, const TensorSpec& dst_spec) {
  HostTensor dst(dst_spec);
  copy_tensor(src, dst);
  return dst;
}

void copy_tensor(const HostTensor& src, HostTensor& dst) {
  parallel_for(src.spec().numel(), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      dst.store(offset_of_linear(dst.spec(), i), src.load(offset_of_linear(src.spec(), i)));
  });
}

}  // namespace boo::base
