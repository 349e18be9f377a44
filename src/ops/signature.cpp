// boo: OpSignature's members that every op shares (boo/signature.hpp).
#include "boo/signature.hpp"

namespace boo {

double OpSignature::min_bytes_moved() const {
  double bytes = 0;
  for (const TensorSpec& t : arguments()) bytes += static_cast<double>(t.numel()) * dtype_size_bytes(t.dtype);
  for (const TensorSpec& t : results()) bytes += static_cast<double>(t.numel()) * dtype_size_bytes(t.dtype);
  return bytes;
}

}  // namespace boo
