// boo: run_reference (boo/reference.hpp), the CPU reference on the caller's host tensors.
#include <cstring>
#include <new>
#include <string>

#include "boo/reference.hpp"
#include "ops/op_registry.hpp"
#include "ops/tensor_refs.hpp"

namespace boo {

Status run_reference(const OpSignature& sig, std::span<const TensorRef> args, std::span<const TensorRef> results) {
  const ops::OpDefinition* op = ops::find_op(sig.op_name());
  if (!op) return internal_error("no op registered under '" + std::string(sig.op_name()) + "'");
  const std::vector<TensorSpec> arg_specs = sig.arguments();
  const std::vector<TensorSpec> result_specs = sig.results();
  BOO_RETURN_IF_ERROR(ops::check_tensor_refs(args, arg_specs, "argument", ""));
  BOO_RETURN_IF_ERROR(ops::check_tensor_refs(results, result_specs, "result", ""));
  // The references allocate with std::vector: a failure is a Status here, as everywhere in boo.
  try {
    // The caller's strides equal the signature's where they matter, so each
    // tensor's storage is the same bytes in either description.
    std::vector<base::HostTensor> inputs;
    for (size_t i = 0; i < args.size(); ++i) {
      BOO_ASSIGN_OR_RETURN(base::HostTensor t, base::HostTensor::allocate(arg_specs[i]));
      if (t.size_bytes() > 0) std::memcpy(t.data(), args[i].data, t.size_bytes());  // null when empty
      inputs.push_back(std::move(t));
    }
    BOO_ASSIGN_OR_RETURN(std::vector<base::HostTensor> reference, op->reference(sig, inputs));
    for (size_t i = 0; i < results.size(); ++i) {
      // float64 sums, rounded once to the result's dtype.
      BOO_ASSIGN_OR_RETURN(base::HostTensor rounded, base::HostTensor::allocate(result_specs[i]));
      base::copy_tensor(reference[i], rounded);
      if (rounded.size_bytes() > 0) std::memcpy(results[i].data, rounded.data(), rounded.size_bytes());
    }
  } catch (const std::bad_alloc&) {
    return resource_exhausted("the CPU reference of " + sig.command() + " could not allocate its host memory");
  }
  return ok_status();
}

}  // namespace boo
