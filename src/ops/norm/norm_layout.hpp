// boo: the activation layouts of MIOpen's norm drivers (layernorm's -N -C -H
// -W syntax, bnorm; boo's groupnorm --layout): letters naming the logical dims N, C, [D,] H, W (or N, W)
// in memory order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "boo/status.hpp"

namespace boo::ops::norm {

/// The logical order of a rank's dims: "NW" (2), "NCW" (3), "NCHW" (4), "NCDHW" (5); "" for others.
std::string_view logical_layout(int rank);

/// The memory order (outermost first) of `layout`, as logical dim indices of
/// a rank-`rank` tensor; INVALID_ARGUMENT naming `flag` and the layouts that
/// rank accepts where `layout` is not a permutation of logical_layout(rank).
Result<std::vector<int>> layout_order(std::string_view layout, int rank, std::string_view flag);

/// Strides of `shape` stored in `layout` (validated by layout_order first).
std::vector<int64_t> layout_strides(const std::vector<int64_t>& shape, std::string_view layout);

}  // namespace boo::ops::norm
