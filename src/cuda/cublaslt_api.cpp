// boo: loading cuBLASLt.
#include "cuda/cublaslt_api.hpp"

#include <mutex>

#include "cuda/library_loader.hpp"

namespace boo::cuda {
namespace {

Result<const CublasLtApi*> load_cublaslt() {
  // CUDA 13's, then 12's: the API boo calls is the same in both.
  BOO_ASSIGN_OR_RETURN(SharedLibrary lib, open_library({"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"},
                                                       "BOO_CUBLASLT_DIR"));
  static CublasLtApi api;
  api.library_path = lib.path;
#define BOO_CUBLASLT_LOAD(name)                                                       \
  api.name = reinterpret_cast<decltype(api.name)>(find_symbol(lib, #name));            \
  if (!api.name) return failed_precondition(std::string("cuBLASLt at ") + lib.path + " lacks " + #name);
  BOO_CUBLASLT_FUNCTIONS(BOO_CUBLASLT_LOAD)
#undef BOO_CUBLASLT_LOAD
  return static_cast<const CublasLtApi*>(&api);
}

}  // namespace

Result<const CublasLtApi*> cublaslt_api() {
  static std::once_flag once;
  static Result<const CublasLtApi*> loaded = unavailable("not loaded");
  std::call_once(once, [] { loaded = load_cublaslt(); });
  return loaded;
}

Status cublaslt_status(const CublasLtApi& api, cublasStatus_t status, const char* call, std::source_location where) {
  const StatusCode code = status == CUBLAS_STATUS_NOT_SUPPORTED    ? StatusCode::kUnimplemented
                          : status == CUBLAS_STATUS_INVALID_VALUE ? StatusCode::kInvalidArgument
                                                                   : StatusCode::kInternal;
  return Status(code,
                std::string(call) + " failed: " + api.cublasLtGetStatusName(status) + " (" +
                    api.cublasLtGetStatusString(status) + ")",
                where);
}

}  // namespace boo::cuda
