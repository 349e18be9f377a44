// boo: the parameter block of the seeded-input kernels, shared by host and
// device code (plain integers and a float, identical layout on both sides).
#pragma once

namespace boo {

/// Tensors of at most this rank (the planner leaves higher ranks to the CPU).
constexpr int kSeededInputsMaxRank = 8;

/// One tensor to fill.
struct SeededInputParams {
  unsigned long long out;  ///< the tensor's storage (signature dtype)
  unsigned long long seed, stream;
  long long numel;
  int rank;
  int splat;    ///< 1: every element = value (--splat-input-value)
  float value;  ///< the splat value, rounded to float as the host's store rounds it
  int unused_padding;
  long long shape[kSeededInputsMaxRank], strides[kSeededInputsMaxRank];  ///< logical shape, strides in elements
};

}  // namespace boo
