// boo: what the float64 GPU reference plans share.
#include "ops/common/reference_plan.hpp"

#include <algorithm>

namespace boo::ops {

uint32_t grid_stride_blocks(long long items, uint32_t threads, const ArchSpec& arch) {
  return static_cast<uint32_t>(
      std::clamp<long long>((items + threads - 1) / threads, 1, static_cast<long long>(arch.sm_count) * 32));
}

}  // namespace boo::ops
