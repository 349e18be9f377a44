// boo: the cudnn backend of a build without cuDNN's headers (BOO_WITH_CUDNN,
// src/CMakeLists.txt): every request for it says why it is missing.
#include "bench/backend.hpp"

namespace boo::bench {

Result<std::unique_ptr<Backend>> make_cudnn_backend(Runtime&, const TimingOptions&) {
  return failed_precondition(std::string("the cudnn backend is unavailable in this build: ") +
                             BOO_CUDNN_UNAVAILABLE_REASON);
}

}  // namespace boo::bench
