// boo: cuBLASLt, loaded at run time (the GEMM baseline, bench/cublaslt_backend.cpp).
// Only the toolkit's header is needed to build; the library is found at run
// time like cuDNN's (BOO_CUBLASLT_DIR, the loader's path, the toolkit, pip wheels).
#pragma once

#include <cublasLt.h>

#include <source_location>
#include <string>

#include "boo/status.hpp"

namespace boo::cuda {

#define BOO_CUBLASLT_FUNCTIONS(X)                                                                                  \
  X(cublasLtGetVersion) X(cublasLtGetStatusName) X(cublasLtGetStatusString) X(cublasLtCreate) X(cublasLtDestroy)  \
  X(cublasLtMatmulDescCreate) X(cublasLtMatmulDescDestroy) X(cublasLtMatmulDescSetAttribute)                      \
  X(cublasLtMatrixLayoutCreate) X(cublasLtMatrixLayoutDestroy) X(cublasLtMatrixLayoutSetAttribute)                \
  X(cublasLtMatmulPreferenceCreate) X(cublasLtMatmulPreferenceDestroy) X(cublasLtMatmulPreferenceSetAttribute)    \
  X(cublasLtMatmulAlgoGetHeuristic) X(cublasLtMatmulAlgoCheck) X(cublasLtMatmul)

struct CublasLtApi {
#define BOO_CUBLASLT_DECLARE(name) decltype(&::name) name = nullptr;
  BOO_CUBLASLT_FUNCTIONS(BOO_CUBLASLT_DECLARE)
#undef BOO_CUBLASLT_DECLARE
  std::string library_path;
};

/// Loads libcublasLt once per process (thread-safe); the error is sticky.
Result<const CublasLtApi*> cublaslt_api();

/// "cublasLtMatmul(...) failed: CUBLAS_STATUS_NOT_SUPPORTED (<cuBLASLt's description>)".
Status cublaslt_status(const CublasLtApi& api, cublasStatus_t status, const char* call,
                       std::source_location where = std::source_location::current());

}  // namespace boo::cuda
