// boo: conv layout strings and direction codes.
#include "ops/conv/conv_layout.hpp"

#include <algorithm>

#include "base/strings.hpp"
#include "boo/conv.hpp"

namespace boo::ops::conv {

std::string spatial_letters(int spatial_dims) {
  switch (spatial_dims) {
    case 1: return "H";
    case 2: return "HW";
    case 3: return "DHW";
  }
  return "";
}

Status check_layout(const std::string& layout, int spatial_dims, const std::string& what) {
  std::string expected = "NC" + spatial_letters(spatial_dims);
  std::string sorted_layout = layout, sorted_expected = expected;
  std::sort(sorted_layout.begin(), sorted_layout.end());
  std::sort(sorted_expected.begin(), sorted_expected.end());
  if (sorted_layout != sorted_expected)
    return invalid_argument(what + " '" + base::echo_word(layout) + "' is not a layout of a " + std::to_string(spatial_dims) +
                            "-D convolution: it must use each of the letters " + expected +
                            " exactly once (e.g. " + expected + " or N" + spatial_letters(spatial_dims) + "C)");
  return ok_status();
}

std::vector<int> layout_order(const std::string& layout) {
  const std::string spatial = spatial_letters(static_cast<int>(layout.size()) - 2);
  std::vector<int> order;
  for (char ch : layout) {
    if (ch == 'N') order.push_back(0);
    else if (ch == 'C') order.push_back(1);
    else order.push_back(2 + static_cast<int>(spatial.find(ch)));
  }
  return order;
}

namespace {
// MIOpenDriver's -F values and BOO's extensions 7..10.
constexpr uint8_t kCodeDirections[] = {
    /*0*/ kConvForward | kConvBackwardData | kConvBackwardWeight,
    /*1*/ kConvForward,
    /*2*/ kConvBackwardData,
    /*3*/ kConvForward | kConvBackwardData,
    /*4*/ kConvBackwardWeight,
    /*5*/ kConvForward | kConvBackwardWeight,
    /*6*/ kConvBackwardData | kConvBackwardWeight,
    /*7*/ kConvBackwardBias,
    /*8*/ kConvBackwardData | kConvBackwardBias,
    /*9*/ kConvBackwardWeight | kConvBackwardBias,
    /*10*/ kConvBackwardData | kConvBackwardWeight | kConvBackwardBias,
};
}  // namespace

uint8_t directions_of_code(int64_t code) {
  if (code < 0 || code > 10) return 0;
  return kCodeDirections[code];
}

int direction_code(uint8_t directions) {
  // With a forward pass the bias gradient comes from -b 1, not from the code.
  uint8_t key = (directions & kConvForward) ? (directions & ~kConvBackwardBias) : directions;
  for (int code = 0; code <= 10; ++code)
    if (kCodeDirections[code] == key) return code;
  return -1;
}

}  // namespace boo::ops::conv
