// boo: which optional CUDA libraries (cuDNN, CUPTI) are present, and their versions.
#pragma once

#include <string>

#include "boo/status.hpp"

namespace boo::cuda {

struct LibraryInfo {
  std::string path;
  std::string version;
};

/// cuDNN (libcudnn.so.9): version from cudnnGetVersion().
Result<LibraryInfo> probe_cudnn();
/// CUPTI (libcupti.so.13/12): version from cuptiGetVersion().
Result<LibraryInfo> probe_cupti();

}  // namespace boo::cuda
