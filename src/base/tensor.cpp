// boo: element types and tensor descriptions.
#include "boo/tensor.hpp"

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

int64_t TensorSpec::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t TensorSpec::storage_elems() const {
  if (numel() == 0) return 0;
  int64_t max_offset = 0;
  for (size_t i = 0; i < shape.size(); ++i) max_offset += (shape[i] - 1) * strides[i];
  return max_offset + 1;
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

std::vector<int64_t> permuted_strides(const std::vector<int64_t>& shape,
                                      const std::vector<int>& outer_to_inner) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (size_t i = outer_to_inner.size(); i-- > 0;) {
    strides[outer_to_inner[i]] = s;
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
