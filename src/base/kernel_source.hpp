// boo: a generated CUDA translation unit (produced by ops, compiled by jit).
#pragma once

#include <string>
#include <vector>

namespace boo::base {

/// A complete CUDA translation unit: generated text that includes embedded
/// device headers ("boo/<op>/<file>.cuh") and defines extern "C" entry points.
struct KernelSource {
  std::string name;                  ///< file name for logs: "conv_direct.cu"
  std::string text;
  std::vector<std::string> entries;  ///< extern "C" kernel names, in launch-plan order
};

}  // namespace boo::base
