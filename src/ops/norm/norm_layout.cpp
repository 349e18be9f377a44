// boo: norm activation layouts.
#include "ops/norm/norm_layout.hpp"

#include "boo/tensor.hpp"

namespace boo::ops::norm {

std::string_view logical_layout(int rank) {
  switch (rank) {
    case 2: return "NW";
    case 3: return "NCW";
    case 4: return "NCHW";
    case 5: return "NCDHW";
  }
  return "";
}

Result<std::vector<int>> layout_order(std::string_view layout, int rank, std::string_view flag) {
  const std::string_view logical = logical_layout(rank);
  // MIOpen's layouts of each rank (its drivers take no others): the logical
  // order, and channels last.
  std::string channels_last(logical);
  if (channels_last.size() > 2) channels_last = channels_last.substr(0, 1) + channels_last.substr(2) + "C";
  if (logical.empty() || (layout != logical && layout != channels_last)) {
    const std::string accepted =
        logical.empty() ? "none (ranks 2 to 5 have layouts)"
        : channels_last == logical ? std::string(logical)
                                   : std::string(logical) + " or " + channels_last;
    return invalid_argument(std::string(flag) + " " + std::string(layout) + " does not fit a rank-" +
                            std::to_string(rank) + " tensor: accepted " + accepted);
  }
  std::vector<int> order;
  for (char c : layout) order.push_back(static_cast<int>(logical.find(c)));
  return order;
}

std::vector<int64_t> layout_strides(const std::vector<int64_t>& shape, std::string_view layout) {
  Result<std::vector<int>> order = layout_order(layout, static_cast<int>(shape.size()), "");
  return order.ok() ? permuted_strides(shape, *order) : contiguous_strides(shape);
}

}  // namespace boo::ops::norm
