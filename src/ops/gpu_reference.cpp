// boo: the tensors of GPU reference plans.
#include "ops/gpu_reference.hpp"

namespace boo::ops {

std::string ReferenceRequest::text() const {
  return sampled_result ? "result " + std::to_string(*sampled_result) + " at sampled positions" : "every result";
}

std::vector<TensorSpec> reference_arguments(const OpSignature& sig, const ReferenceRequest& request) {
  std::vector<TensorSpec> args = sig.arguments();
  if (request.sampled_result) args.push_back(TensorSpec{"positions", {request.samples}, {1}, DType::kF64, ""});
  return args;
}

std::vector<TensorSpec> reference_results(const OpSignature& sig, const ReferenceRequest& request) {
  std::vector<TensorSpec> results = sig.results();
  if (request.sampled_result)
    return {TensorSpec{results.at(*request.sampled_result).name, {request.samples}, {1}, DType::kF64, ""}};
  for (TensorSpec& r : results) r.dtype = DType::kF64;
  return results;
}

}  // namespace boo::ops
