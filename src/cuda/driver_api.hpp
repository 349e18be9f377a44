// boo: the CUDA driver API, loaded at run time.
//
// The library links no CUDA library: libcuda is dlopen'ed on first use, so a
// machine without a GPU runs everything that needs none. Member names are the
// driver API's (cuda.h maps e.g. cuMemAlloc to its current cuMemAlloc_v2), so
// calls read as plain driver API calls: api.cuMemAlloc(&ptr, bytes).
#pragma once

#include <cuda.h>

#include <source_location>
#include <string>

#include "boo/status.hpp"

namespace boo::cuda {

#define BOO_CUDA_DRIVER_FUNCTIONS(X)                                                                         \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGet) X(cuDeviceGetCount)  \
  X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain)                \
  X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuCtxGetCurrent) X(cuCtxSynchronize) X(cuMemAlloc)      \
  X(cuMemFree) X(cuMemGetInfo) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemsetD8) X(cuMemsetD8Async) \
  X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) X(cuFuncGetAttribute) X(cuFuncSetAttribute) \
  X(cuLaunchKernel) X(cuLaunchCooperativeKernel) X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuEventCreate)           \
  X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime) X(cuEventDestroy) X(cuGetProcAddress)       \
  X(cuStreamIsCapturing) X(cuTensorMapEncodeTiled) X(cuTensorMapEncodeIm2col)           \
  X(cuOccupancyMaxActiveClusters)

/// Pointers to the driver API functions boo uses.
struct DriverApi {
#define BOO_CUDA_DECLARE(name) decltype(&::name) name = nullptr;
  BOO_CUDA_DRIVER_FUNCTIONS(BOO_CUDA_DECLARE)
#undef BOO_CUDA_DECLARE
  std::string library_path;
};

/// Loads libcuda and calls cuInit once per process. Thread-safe. The error
/// (no driver, no device) is computed once and returned to every caller.
Result<const DriverApi*> driver_api();

/// Maps a CUresult to a Status with the call text, e.g.
/// "cuModuleLoadData(...) failed: CUDA_ERROR_INVALID_IMAGE (200): device kernel image is invalid".
Status cu_status(CUresult result, const char* call, std::source_location where = std::source_location::current());

}  // namespace boo::cuda

/// Calls a driver API function through `api` and returns its error as a Status.
#define BOO_CU_RETURN_IF_ERROR(api, call)                              \
  do {                                                                 \
    CUresult boo_cu_result_ = (api).call;                              \
    if (boo_cu_result_ != CUDA_SUCCESS)                                \
      return ::boo::cuda::cu_status(boo_cu_result_, #call);            \
  } while (0)
