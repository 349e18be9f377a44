// boo: MIOpen's tensor-shape flag values ("16x1024x768[,layout-or-strides]").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "boo/status.hpp"

namespace boo::ops {

/// The lengths of a shape flag value; a ",..." suffix (layout or strides) is
/// ignored. `flag` names the flag in errors (e.g. "--input/-X").
Result<std::vector<int64_t>> parse_shape_flag(const std::string& text, const std::string& flag);

}  // namespace boo::ops
