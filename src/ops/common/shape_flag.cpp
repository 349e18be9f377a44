// boo: MIOpen's tensor-shape flag values.
#include "ops/common/shape_flag.hpp"

#include "base/strings.hpp"

namespace boo::ops {

Result<std::vector<int64_t>> parse_shape_flag(const std::string& text, const std::string& flag) {
  const std::string lengths = text.substr(0, text.find(','));
  std::vector<int64_t> shape;
  for (const std::string& part : base::split(lengths, 'x')) {
    Result<int64_t> d = base::parse_int(part);
    if (!d.ok()) return invalid_argument(flag + " '" + base::echo_word(text) + "': " + d.status().message() + " (expected e.g. 16x1024x768)");
    shape.push_back(*d);
  }
  if (shape.empty()) return invalid_argument(flag + " '" + base::echo_word(text) + "': expected a shape such as 16x1024x768");
  return shape;
}

}  // namespace boo::ops
