// A stand-in for libcublasLt, for testing the cublaslt backend's algorithm
// choice without a GPU (with the fake libcuda). Descriptors and layouts are
// empty tokens; a matmul does nothing, so results are meaningless. The
// heuristics offer kAlgos algorithms (algo i has data[0] = i + 1); checking
// accepts exactly those.
//
// When FAKE_CUBLASLT_LOG names a file, these events are appended to it, one a line:
//   heuristics      a heuristics query (an algorithm search)
//   check <id>      an algorithm checked by its data[0]
#include <cublasLt.h>

#include <cstdio>
#include <cstdlib>

namespace {

constexpr int kAlgos = 2;

void log_event(const char* event, unsigned long long value, bool with_value) {
  const char* path = std::getenv("FAKE_CUBLASLT_LOG");
  if (!path || !*path) return;
  if (std::FILE* f = std::fopen(path, "a")) {
    if (with_value) std::fprintf(f, "%s %llu\n", event, value);
    else std::fprintf(f, "%s\n", event);
    std::fclose(f);
  }
}

// Distinct non-null tokens for the opaque handles (never dereferenced by boo).
template <typename T>
T token() {
  static char storage[64];
  return reinterpret_cast<T>(storage);
}

}  // namespace

extern "C" {

size_t cublasLtGetVersion(void) { return 130100; }
const char* cublasLtGetStatusName(cublasStatus_t) { return "CUBLAS_STATUS_FAKE"; }
const char* cublasLtGetStatusString(cublasStatus_t) { return "the fake libcublasLt's status"; }

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  *handle = token<cublasLtHandle_t>();
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t) { return CUBLAS_STATUS_SUCCESS; }

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t, cudaDataType_t) {
  *desc = token<cublasLtMatmulDesc_t>();
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t) { return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, const void*,
                                              size_t) {
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType, uint64_t, uint64_t, int64_t) {
  *layout = token<cublasLtMatrixLayout_t>();
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t) { return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t, cublasLtMatrixLayoutAttribute_t, const void*,
                                                size_t) {
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  *pref = token<cublasLtMatmulPreference_t>();
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t) { return CUBLAS_STATUS_SUCCESS; }
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t,
                                                    const void*, size_t) {
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
                                              cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                              cublasLtMatmulPreference_t, int requested,
                                              cublasLtMatmulHeuristicResult_t results[], int* count) {
  log_event("heuristics", 0, false);
  *count = requested < kAlgos ? requested : kAlgos;
  for (int i = 0; i < *count; ++i) {
    results[i] = cublasLtMatmulHeuristicResult_t{};
    results[i].algo.data[0] = static_cast<uint64_t>(i + 1);
    results[i].state = CUBLAS_STATUS_SUCCESS;
  }
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoCheck(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
                                       cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                       const cublasLtMatmulAlgo_t* algo, cublasLtMatmulHeuristicResult_t* result) {
  log_event("check", static_cast<unsigned long long>(algo->data[0]), true);
  if (algo->data[0] < 1 || algo->data[0] > kAlgos) return CUBLAS_STATUS_INVALID_VALUE;
  *result = cublasLtMatmulHeuristicResult_t{};
  result->algo = *algo;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t, const void*, const void*, cublasLtMatrixLayout_t,
                              const void*, cublasLtMatrixLayout_t, const void*, const void*, cublasLtMatrixLayout_t,
                              void*, cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t*, void*, size_t,
                              cudaStream_t) {
  return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
