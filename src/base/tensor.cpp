// boo: element types and tensor descriptions.
#include "boo/tensor.hpp"

#include <limits>

#include "base/checked_int.hpp"

namespace boo {

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "float32";
    case DType::kF16: return "float16";
    case DType::kBF16: return "bfloat16";
    case DType::kF64: return "float64";
    case DType::kI64: return "int64";
  }
  return "unknown";
}

size_t dtype_size_bytes(DType dtype) {
  switch (dtype) {
    case DType::kF32: return 4;
    case DType::kF16: return 2;
    case DType::kBF16: return 2;
    case DType::kF64: return 8;
    case DType::kI64: return 8;
  }
  return 0;
}

namespace {

// Sizes of shapes no validated signature has (checked_int.hpp) saturate
// instead of wrapping: an allocation of the saturated size fails cleanly.
constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max();

}  // namespace

int64_t TensorSpec::numel() const { return base::checked_product(shape).value_or(kSaturated); }

int64_t TensorSpec::storage_elems() const {
  if (numel() == 0) return 0;
  base::CheckedInt max_offset = 0;
  for (size_t i = 0; i < shape.size(); ++i) max_offset += (base::CheckedInt(shape[i]) - 1) * strides[i];
  return (max_offset + 1).value_or(kSaturated);
}

size_t TensorSpec::storage_bytes() const {
  const base::CheckedInt bytes = base::CheckedInt(storage_elems()) * static_cast<int64_t>(dtype_size_bytes(dtype));
  return static_cast<size_t>(bytes.value_or(kSaturated));
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  base::CheckedInt s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s.value_or(kSaturated);
    s *= shape[i];
  }
  return strides;
}

std::vector<int64_t> permuted_strides(const std::vector<int64_t>& shape,
                                      const std::vector<int>& outer_to_inner) {
  std::vector<int64_t> strides(shape.size());
  base::CheckedInt s = 1;
  for (size_t i = outer_to_inner.size(); i-- > 0;) {
    strides[outer_to_inner[i]] = s.value_or(kSaturated);
    s *= shape[outer_to_inner[i]];
  }
  return strides;
}

std::string format_dims(const std::vector<int64_t>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(dims[i]);
  }
  return out + "]";
}

}  // namespace boo
