// boo: finding and opening the CUDA libraries at run time (dlopen).
#pragma once

#include <string>
#include <vector>

#include "boo/status.hpp"

namespace boo::cuda {

/// A dlopen'ed shared library. Owned; closed never (libraries stay loaded
/// for the process, so function pointers outlive every user).
struct SharedLibrary {
  void* handle = nullptr;
  std::string path;  ///< the file that was opened (as dlinfo reports it, else the name tried)
};

/// Opens the first of `sonames` that loads. The directory in environment
/// variable `env_dir` (if set) is tried first, then the loader's search path,
/// then the CUDA toolkit (CUDA_HOME, /usr/local/cuda) and the NVIDIA PyPI
/// wheels of the Python environments on the machine (site-packages/nvidia/*/lib).
Result<SharedLibrary> open_library(const std::vector<std::string>& sonames, const char* env_dir);

/// Resolves `name` in `lib`, or nullptr.
void* find_symbol(const SharedLibrary& lib, const char* name);

}  // namespace boo::cuda
