// boo: the cublaslt backend of a build without cuBLASLt's header
// (src/CMakeLists.txt): every request for it says why it is missing.
#include "bench/backend.hpp"

namespace boo::bench {

Result<std::unique_ptr<Backend>> make_cublaslt_backend(Runtime&, const TimingOptions&) {
  return failed_precondition(std::string("the cublaslt backend is unavailable in this build: ") +
                             BOO_CUBLASLT_UNAVAILABLE_REASON);
}

}  // namespace boo::bench
