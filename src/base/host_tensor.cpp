// boo: host tensors.
#include "base/host_tensor.hpp"

#include <cstring>
#include <new>

#include "base/host_memory.hpp"
#include "base/parallel.hpp"

namespace boo::base {

HostTensor::HostTensor(TensorSpec spec) : spec_(std::move(spec)), storage_(spec_.storage_bytes(), std::byte{0}) {}

HostTensor::HostTensor(TensorSpec spec, Unset) : spec_(std::move(spec)), storage_(spec_.storage_bytes()) {}

namespace {

template <typename Make>
Result<HostTensor> allocate_checked(const TensorSpec& spec, Make make) {
  const std::string what = "tensor " + spec.name + " " + format_dims(spec.shape) + " (" +
                           std::string(dtype_name(spec.dtype)) + ")";
  const size_t bytes = spec.storage_bytes();
  BOO_RETURN_IF_ERROR(check_host_bytes(bytes, what));
  try {
    return make();
  } catch (const std::bad_alloc&) {
    return resource_exhausted(what + ": allocating " + format_bytes(bytes) + " of host memory failed");
  }
}

}  // namespace

Result<HostTensor> HostTensor::allocate(TensorSpec spec) {
  return allocate_checked(spec, [&] { return HostTensor(std::move(spec)); });
}

Result<HostTensor> HostTensor::allocate_unset(TensorSpec spec) {
  return allocate_checked(spec, [&] { return HostTensor(std::move(spec), Unset{}); });
}

double HostTensor::load(int64_t offset) const {
  return visit_dtype(spec_.dtype, [&](auto d) { return load_element<decltype(d)::value>(storage_.data(), offset); });
}

void HostTensor::store(int64_t offset, double value) {
  visit_dtype(spec_.dtype, [&](auto d) { store_element<decltype(d)::value>(storage_.data(), offset, value); });
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
  const std::byte* from = src.data();
  std::byte* to = dst.data();
  visit_dtype(src.spec().dtype, [&](auto s) {
    visit_dtype(dst.spec().dtype, [&](auto d) {
      parallel_for(src.spec().numel(), [&](int64_t begin, int64_t end) {
        for_each_offset_pair_in(src.spec(), dst.spec(), begin, end, [&](int64_t, int64_t in, int64_t out) {
          store_element<decltype(d)::value>(to, out, load_element<decltype(s)::value>(from, in));
        });
      });
    });
  });
}

}  // namespace boo::base
