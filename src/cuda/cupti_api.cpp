// boo: loading CUPTI.
#include "cuda/cupti_api.hpp"

#include <mutex>

#include "cuda/library_loader.hpp"

namespace boo::cuda {
namespace {

Result<const CuptiApi*> load_cupti() {
  BOO_ASSIGN_OR_RETURN(SharedLibrary lib,
                       open_library({"libcupti.so.13", "libcupti.so.12", "libcupti.so"}, "BOO_CUPTI_DIR"));
  static CuptiApi api;
  api.library_path = lib.path;
#define BOO_CUPTI_LOAD(name)                                                                   \
  api.name = reinterpret_cast<decltype(api.name)>(find_symbol(lib, #name));                     \
  if (!api.name) return failed_precondition(std::string("CUPTI at ") + lib.path + " lacks " + #name);
  BOO_CUPTI_FUNCTIONS(BOO_CUPTI_LOAD)
#undef BOO_CUPTI_LOAD
  return static_cast<const CuptiApi*>(&api);
}

}  // namespace

Result<const CuptiApi*> cupti_api() {
  static std::once_flag once;
  static Result<const CuptiApi*> loaded = unavailable("not loaded");
  std::call_once(once, [] { loaded = load_cupti(); });
  return loaded;
}

Status cupti_status(const CuptiApi& api, CUptiResult result, const char* call, std::source_location where) {
  const char* text = "unknown CUPTI error";
  api.cuptiGetResultString(result, &text);
  return Status(StatusCode::kInternal, std::string(call) + " failed: " + text, where);
}

}  // namespace boo::cuda
