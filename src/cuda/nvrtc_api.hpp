// boo: the NVRTC API, loaded at run time. NVRTC needs no GPU.
#pragma once

#include <nvrtc.h>

#include <string>

#include "boo/status.hpp"

namespace boo::cuda {

#define BOO_NVRTC_FUNCTIONS(X)                                                                           \
  X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcCreateProgram) X(nvrtcDestroyProgram) X(nvrtcCompileProgram) \
  X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN) X(nvrtcGetPTXSize)  \
  X(nvrtcGetPTX) X(nvrtcGetNumSupportedArchs) X(nvrtcGetSupportedArchs)

struct NvrtcApi {
#define BOO_NVRTC_DECLARE(name) decltype(&::name) name = nullptr;
  BOO_NVRTC_FUNCTIONS(BOO_NVRTC_DECLARE)
#undef BOO_NVRTC_DECLARE
  std::string library_path;
  int major = 0, minor = 0;  ///< nvrtcVersion()
};

/// Loads libnvrtc once per process (thread-safe); the error is sticky.
Result<const NvrtcApi*> nvrtc_api();

Status nvrtc_status(const NvrtcApi& api, nvrtcResult result, const char* call,
                    std::source_location where = std::source_location::current());

}  // namespace boo::cuda
