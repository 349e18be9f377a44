// boo: loading cuDNN.
#include "cuda/cudnn_api.hpp"

#include <mutex>

#include "cuda/library_loader.hpp"

namespace boo::cuda {
namespace {

Result<const CudnnApi*> load_cudnn() {
  BOO_ASSIGN_OR_RETURN(SharedLibrary lib, open_library({"libcudnn.so.9", "libcudnn.so"}, "BOO_CUDNN_DIR"));
  static CudnnApi api;
  api.library_path = lib.path;
#define BOO_CUDNN_LOAD(name)                                                                    \
  api.name = reinterpret_cast<decltype(api.name)>(find_symbol(lib, #name));                      \
  if (!api.name) return failed_precondition(std::string("cuDNN at ") + lib.path + " lacks " + #name);
  BOO_CUDNN_FUNCTIONS(BOO_CUDNN_LOAD)
#undef BOO_CUDNN_LOAD
#define BOO_CUDNN_LOAD_OPTIONAL(name) api.name = reinterpret_cast<decltype(api.name)>(find_symbol(lib, #name));
  BOO_CUDNN_LEGACY_FUNCTIONS(BOO_CUDNN_LOAD_OPTIONAL)
#undef BOO_CUDNN_LOAD_OPTIONAL
  if (api.cudnnGetVersion() < 90000)
    return failed_precondition("cuDNN at " + lib.path + " is version " + std::to_string(api.cudnnGetVersion()) +
                               "; boo needs cuDNN 9");
  return static_cast<const CudnnApi*>(&api);
}

}  // namespace

Result<const CudnnApi*> cudnn_api() {
  static std::once_flag once;
  static Result<const CudnnApi*> loaded = unavailable("not loaded");
  std::call_once(once, [] { loaded = load_cudnn(); });
  return loaded;
}

Status cudnn_status(const CudnnApi& api, cudnnStatus_t status, const char* call, std::source_location where) {
  char last[1024] = {};
  api.cudnnGetLastErrorString(last, sizeof last);
  const StatusCode code = status == CUDNN_STATUS_NOT_SUPPORTED ? StatusCode::kUnimplemented
                          : status == CUDNN_STATUS_BAD_PARAM   ? StatusCode::kInvalidArgument
                                                               : StatusCode::kInternal;
  std::string message = std::string(call) + " failed: " + api.cudnnGetErrorString(status);
  if (last[0]) message += " (" + std::string(last) + ")";
  return Status(code, message, where);
}

}  // namespace boo::cuda
