// boo: deterministic, counter-based random numbers for test inputs.
//
// The value of element i of stream s under seed k is a pure function of
// (k, s, i), so inputs do not depend on thread count, layout or device: the
// same logical tensor is produced on the CPU and (later) directly on a GPU.
#pragma once

#include <cstdint>

namespace boo::base {

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// Uniform in [-1, 1), exactly representable as a float (24 random bits).
inline float uniform_pm1(uint64_t seed, uint64_t stream, uint64_t index) {
  uint64_t h = splitmix64(seed ^ splitmix64(stream * 0x632be59bd9b4e019ull ^ splitmix64(index)));
  return static_cast<float>(static_cast<int64_t>(h >> 40) - (int64_t{1} << 23)) * (1.0f / 8388608.0f);
}

}  // namespace boo::base
