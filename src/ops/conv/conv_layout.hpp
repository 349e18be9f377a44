// boo: conv layout strings ("NHWC", "NCDHW", ...) and direction codes (-F).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "boo/status.hpp"

namespace boo::ops::conv {

/// Spatial letters for a rank, outermost first: "H", "HW" or "DHW".
std::string spatial_letters(int spatial_dims);

/// Checks that `layout` is a permutation of "NC" + spatial_letters; `what`
/// names the flag in the error ("--in_layout").
Status check_layout(const std::string& layout, int spatial_dims, const std::string& what);

/// Logical dimension of each layout letter, outermost first: "NHWC" -> {0, 2, 3, 1}.
/// @pre check_layout(layout, ...) is OK.
std::vector<int> layout_order(const std::string& layout);

/// The -F value that selects `directions` (with -b), or -1 when none does.
int direction_code(uint8_t directions);
/// The direction bits of a -F value, or 0 when the value is not valid.
uint8_t directions_of_code(int64_t code);

}  // namespace boo::ops::conv
