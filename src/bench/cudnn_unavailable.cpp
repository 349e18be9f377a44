// boo: the cudnn backend of a build without cuDNN's headers: says so.
#include "bench/backend.hpp"

namespace boo::bench {

Result<std::unique_ptr<Backend>> make_cudnn_backend(Runtime&) {
  return failed_precondition(
      "boo was built without cuDNN's headers (cudnn_graph.h), so --backend cudnn is unavailable; install cuDNN 9's "
      "development headers (e.g. libcudnn9-dev) and rebuild");
}

}  // namespace boo::bench
