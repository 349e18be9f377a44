// boo tests (label gpu): when a GPU test may skip. Only when there is no GPU:
// Runtime::create says UNAVAILABLE for a missing CUDA driver or a driver with
// no device; every other error of a GPU machine fails the test. With
// BOO_REQUIRE_GPU=1 (scripts/gpu-check.sh sets it) a missing GPU fails too.
#pragma once

#include <cstdlib>
#include <cstring>

#include "boo/status.hpp"

namespace boo::testing {

inline bool gpu_required() {
  const char* v = std::getenv("BOO_REQUIRE_GPU");
  return v && std::strcmp(v, "1") == 0;
}

/// Whether `create_status`, the status of Runtime::create, means "no GPU here" and the test may skip.
inline bool skip_for_no_gpu(const Status& create_status) {
  return create_status.code() == StatusCode::kUnavailable && !gpu_required();
}

}  // namespace boo::testing
