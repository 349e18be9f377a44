// boo: loading NVRTC.
#include "cuda/nvrtc_api.hpp"

#include <mutex>

#include "cuda/library_loader.hpp"

namespace boo::cuda {
namespace {

Result<const NvrtcApi*> load_nvrtc() {
  BOO_ASSIGN_OR_RETURN(SharedLibrary lib,
                       open_library({"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}, "BOO_NVRTC_DIR"));
  static NvrtcApi api;
  api.library_path = lib.path;
#define BOO_NVRTC_LOAD(name)                                                                        \
  api.name = reinterpret_cast<decltype(api.name)>(find_symbol(lib, #name));                          \
  if (!api.name) return failed_precondition(std::string("NVRTC at ") + lib.path + " lacks " + #name);
  BOO_NVRTC_FUNCTIONS(BOO_NVRTC_LOAD)
#undef BOO_NVRTC_LOAD
  api.nvrtcVersion(&api.major, &api.minor);
  return static_cast<const NvrtcApi*>(&api);
}

}  // namespace

Result<const NvrtcApi*> nvrtc_api() {
  static std::once_flag once;
  static Result<const NvrtcApi*> loaded = unavailable("not loaded");
  std::call_once(once, [] { loaded = load_nvrtc(); });
  return loaded;
}

Status nvrtc_status(const NvrtcApi& api, nvrtcResult result, const char* call, std::source_location where) {
  return Status(StatusCode::kInternal, std::string(call) + " failed: " + api.nvrtcGetErrorString(result), where);
}

}  // namespace boo::cuda
