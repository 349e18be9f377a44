// boo: the cuDNN backend (graph) API, loaded at run time, and the legacy
// batch norm calls (cudnn_ops.h; deprecated in cuDNN 9, still what MIOpen's
// bnorm API mirrors) for the batch norms the graph API does not express.
#pragma once

#include <cudnn_graph.h>
#include <cudnn_ops.h>

#include <string>

#include "boo/status.hpp"

namespace boo::cuda {

#define BOO_CUDNN_FUNCTIONS(X)                                                                             \
  X(cudnnGetVersion) X(cudnnGetErrorString) X(cudnnGetLastErrorString) X(cudnnCreate) X(cudnnDestroy)       \
  X(cudnnSetStream) X(cudnnBackendCreateDescriptor) X(cudnnBackendDestroyDescriptor) X(cudnnBackendSetAttribute) \
  X(cudnnBackendGetAttribute) X(cudnnBackendFinalize) X(cudnnBackendExecute)

// Loaded where the library has them (null otherwise: a cuDNN without its
// legacy API, or a stand-in for the graph API alone).
#define BOO_CUDNN_LEGACY_FUNCTIONS(X)                                                                  \
  X(cudnnCreateTensorDescriptor) X(cudnnDestroyTensorDescriptor) X(cudnnSetTensorNdDescriptor)         \
  X(cudnnBatchNormalizationForwardTraining) X(cudnnBatchNormalizationForwardInference)                 \
  X(cudnnBatchNormalizationBackward)

struct CudnnApi {
#define BOO_CUDNN_DECLARE(name) decltype(&::name) name = nullptr;
  BOO_CUDNN_FUNCTIONS(BOO_CUDNN_DECLARE)
  BOO_CUDNN_LEGACY_FUNCTIONS(BOO_CUDNN_DECLARE)
#undef BOO_CUDNN_DECLARE
  std::string library_path;

  /// Whether the legacy batch norm calls loaded (every one of them).
  bool has_legacy_batch_norm() const {
    bool all = true;
#define BOO_CUDNN_PRESENT(name) all = all && name != nullptr;
    BOO_CUDNN_LEGACY_FUNCTIONS(BOO_CUDNN_PRESENT)
#undef BOO_CUDNN_PRESENT
    return all;
  }
};

/// Loads libcudnn once per process (thread-safe); the error is sticky.
Result<const CudnnApi*> cudnn_api();

/// "cudnnBackendFinalize(...) failed: CUDNN_STATUS_NOT_SUPPORTED (<cuDNN's last error message>)".
Status cudnn_status(const CudnnApi& api, cudnnStatus_t status, const char* call,
                    std::source_location where = std::source_location::current());

}  // namespace boo::cuda
