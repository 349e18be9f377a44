// boo: what the GPU implementations' generated translation units share.
#pragma once

#include <string>
#include <vector>

#include "base/kernel_source.hpp"
#include "boo/tensor.hpp"

namespace boo::ops {

/// The device code's element type for `dtype`: "float", "boo::f16", "boo::bf16".
const char* device_type(DType dtype);

/// One extern "C" kernel of a generated translation unit: `name(const Params p) { call; }`.
struct KernelEntry {
  std::string name;
  std::string call;   ///< e.g. "boo::layernorm_forward<float, true, true>(p)"
  int threads = 256;  ///< the launch bound (the block size the plan launches it with)
  int min_blocks = 0; ///< blocks per SM the compiler must leave registers for (0: no bound)
  int cluster = 1;    ///< CTAs per cluster along x (__cluster_dims__, sm_90 and newer), 1: no cluster
};

/// A translation unit named `file` that includes `header` and defines
/// `entries` (in launch-plan order), each taking a `params_type` by value.
base::KernelSource generated_source(const std::string& file, const std::string& implementation,
                                    const std::string& header, const std::string& params_type,
                                    const std::vector<KernelEntry>& entries);

}  // namespace boo::ops
