// boo: checks of caller-provided tensors against a signature's specs.
#include "ops/tensor_refs.hpp"

#include <string>

namespace boo::ops {

Status check_tensor_refs(std::span<const TensorRef> refs, const std::vector<TensorSpec>& specs, std::string_view what,
                         std::string_view layout_owner) {
  const std::string kind(what);
  if (refs.size() != specs.size())
    return invalid_argument("expected " + std::to_string(specs.size()) + " " + kind + "s, got " +
                            std::to_string(refs.size()));
  for (size_t i = 0; i < refs.size(); ++i) {
    const TensorSpec& s = specs[i];
    const TensorRef& t = refs[i];
    if (t.shape != s.shape)
      return invalid_argument(kind + " '" + s.name + "' has shape " + format_dims(t.shape) +
                              ", the signature needs " + format_dims(s.shape));
    if (t.dtype != s.dtype)
      return invalid_argument(kind + " '" + s.name + "' is " + std::string(dtype_name(t.dtype)) +
                              ", the signature needs " + std::string(dtype_name(s.dtype)));
    if (t.strides.size() != s.shape.size())
      return invalid_argument(kind + " '" + s.name + "' needs one stride per dimension");
    for (size_t d = 0; d < s.shape.size(); ++d)
      if (s.shape[d] > 1 && t.strides[d] != s.strides[d])
        return invalid_argument(kind + " '" + s.name + "' has strides " + format_dims(t.strides) +
                                ", the signature's layout" + std::string(layout_owner) + " needs " +
                                format_dims(s.strides));
    if (!t.data && s.numel() > 0) return invalid_argument(kind + " '" + s.name + "' is null");
  }
  return ok_status();
}

}  // namespace boo::ops
