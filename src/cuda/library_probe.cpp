// boo: probing cuDNN and CUPTI.
#include "cuda/library_probe.hpp"

#include <cstddef>
#include <cstdint>

#include "cuda/library_loader.hpp"

namespace boo::cuda {

Result<LibraryInfo> probe_cudnn() {
  BOO_ASSIGN_OR_RETURN(SharedLibrary lib, open_library({"libcudnn.so.9", "libcudnn.so"}, "BOO_CUDNN_DIR"));
  auto get_version = reinterpret_cast<size_t (*)()>(find_symbol(lib, "cudnnGetVersion"));
  if (!get_version) return failed_precondition(lib.path + " lacks cudnnGetVersion");
  const size_t v = get_version();  // e.g. 91900 = 9.19.0
  return LibraryInfo{lib.path, std::to_string(v / 10000) + "." + std::to_string(v % 10000 / 100) + "." +
                                   std::to_string(v % 100)};
}

Result<LibraryInfo> probe_cupti() {
  BOO_ASSIGN_OR_RETURN(SharedLibrary lib,
                       open_library({"libcupti.so.13", "libcupti.so.12", "libcupti.so"}, "BOO_CUPTI_DIR"));
  auto get_version = reinterpret_cast<int (*)(uint32_t*)>(find_symbol(lib, "cuptiGetVersion"));
  if (!get_version) return failed_precondition(lib.path + " lacks cuptiGetVersion");
  uint32_t v = 0;
  get_version(&v);
  return LibraryInfo{lib.path, "API " + std::to_string(v)};
}

}  // namespace boo::cuda
