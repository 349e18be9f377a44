// boo: checks of caller-provided tensors against a signature's specs, shared
// by Launchable::launch (device memory) and run_reference (host memory).
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "boo/status.hpp"
#include "boo/tensor.hpp"

namespace boo::ops {

/// OK when `refs` match `specs` one for one: shape, dtype, strides (those of
/// size-1 dimensions are free) and a non-null pointer where the tensor has
/// elements. `what` names the tensors ("argument", "result"); `layout_owner`
/// says what fixed the layout (" (compiled into gpu:conv:direct)", or empty).
Status check_tensor_refs(std::span<const TensorRef> refs, const std::vector<TensorSpec>& specs, std::string_view what,
                         std::string_view layout_owner);

}  // namespace boo::ops
