// boo: loading the CUDA driver API.
#include "cuda/driver_api.hpp"

#include <mutex>

#include "cuda/library_loader.hpp"

// Two-level stringizing expands cuda.h's renaming macros first, so the symbol
// looked up is the versioned one the header declares (cuMemAlloc_v2, ...).
#define BOO_STRINGIZE_INNER(x) #x
#define BOO_STRINGIZE(x) BOO_STRINGIZE_INNER(x)

namespace boo::cuda {
namespace {

Result<const DriverApi*> load_driver() {
  BOO_ASSIGN_OR_RETURN(SharedLibrary lib, open_library({"libcuda.so.1", "libcuda.so"}, "BOO_CUDA_DRIVER_DIR"));
  static DriverApi api;
  api.library_path = lib.path;
#define BOO_CUDA_LOAD(name)                                                                          \
  api.name = reinterpret_cast<decltype(api.name)>(find_symbol(lib, BOO_STRINGIZE(name)));            \
  if (!api.name)                                                                                     \
    return failed_precondition(std::string("the CUDA driver at ") + lib.path + " lacks " +           \
                               BOO_STRINGIZE(name) + "; the driver is older than boo's CUDA 13 headers");
  BOO_CUDA_DRIVER_FUNCTIONS(BOO_CUDA_LOAD)
#undef BOO_CUDA_LOAD
  CUresult init = api.cuInit(0);
  if (init == CUDA_ERROR_NO_DEVICE) return unavailable("the CUDA driver is installed but reports no GPU");
  if (init != CUDA_SUCCESS) return cu_status(init, "cuInit(0)");
  int count = 0;
  CUresult r = api.cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS) return cu_status(r, "cuDeviceGetCount(&count)");
  if (count == 0) return unavailable("the CUDA driver reports no GPU");
  return static_cast<const DriverApi*>(&api);
}

}  // namespace

Result<const DriverApi*> driver_api() {
  static std::once_flag once;
  static Result<const DriverApi*> loaded = unavailable("not loaded");
  std::call_once(once, [] { loaded = load_driver(); });
  return loaded;
}

Status cu_status(CUresult result, const char* call, std::source_location where) {
  const char* name = "CUDA_ERROR_UNKNOWN";
  const char* text = "unknown error";
  if (Result<const DriverApi*> api = driver_api(); api.ok()) {
    (*api)->cuGetErrorName(result, &name);
    (*api)->cuGetErrorString(result, &text);
  }
  StatusCode code = StatusCode::kInternal;
  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY: code = StatusCode::kResourceExhausted; break;
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED: code = StatusCode::kUnavailable; break;
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_NOT_SUPPORTED: code = StatusCode::kFailedPrecondition; break;
    case CUDA_ERROR_NOT_FOUND: code = StatusCode::kNotFound; break;
    case CUDA_ERROR_INVALID_VALUE: code = StatusCode::kInvalidArgument; break;
    default: break;
  }
  return Status(code,
                std::string(call) + " failed: " + name + " (" + std::to_string(static_cast<int>(result)) + "): " + text,
                where);
}

}  // namespace boo::cuda
