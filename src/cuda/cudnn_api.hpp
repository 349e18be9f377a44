// boo: the cuDNN backend (graph) API, loaded at run time.
#pragma once

#include <cudnn_graph.h>

#include <string>

#include "boo/status.hpp"

namespace boo::cuda {

#define BOO_CUDNN_FUNCTIONS(X)                                                                             \
  X(cudnnGetVersion) X(cudnnGetErrorString) X(cudnnGetLastErrorString) X(cudnnCreate) X(cudnnDestroy)       \
  X(cudnnSetStream) X(cudnnBackendCreateDescriptor) X(cudnnBackendDestroyDescriptor) X(cudnnBackendSetAttribute) \
  X(cudnnBackendGetAttribute) X(cudnnBackendFinalize) X(cudnnBackendExecute)

struct CudnnApi {
#define BOO_CUDNN_DECLARE(name) decltype(&::name) name = nullptr;
  BOO_CUDNN_FUNCTIONS(BOO_CUDNN_DECLARE)
#undef BOO_CUDNN_DECLARE
  std::string library_path;
};

/// Loads libcudnn once per process (thread-safe); the error is sticky.
Result<const CudnnApi*> cudnn_api();

/// "cudnnBackendFinalize(...) failed: CUDNN_STATUS_NOT_SUPPORTED (<cuDNN's last error message>)".
Status cudnn_status(const CudnnApi& api, cudnnStatus_t status, const char* call,
                    std::source_location where = std::source_location::current());

}  // namespace boo::cuda
