// boo: dispatch with decline reasons.
#include "runtime/dispatch.hpp"

#include "ops/op_registry.hpp"

namespace boo::runtime {

Status Dispatch::failure() const {
  if (chosen) return ok_status();
  std::string reasons;
  for (const Considered& c : considered) reasons += (reasons.empty() ? "" : "; ") + c.name + ": " + c.verdict.message();
  if (considered.empty()) reasons = "the op has no GPU implementation";
  return unimplemented("no GPU implementation accepts this signature (" + reasons + ")");
}

Dispatch choose_gpu_implementation(const OpSignature& sig, const DeviceInfo& device, std::string_view only) {
  Dispatch d;
  const ops::OpDefinition* op = ops::find_op(sig.op_name());
  if (!op) return d;
  for (const ops::GpuImplementation* impl : op->gpu_implementations()) {
    Status verdict = !only.empty() && impl->name() != only
                         ? unimplemented("not selected (--impl " + std::string(only) + ")")
                         : impl->accepts(sig, device);
    if (verdict.ok() && !d.chosen) d.chosen = impl;
    d.considered.push_back(Considered{std::string(impl->name()), std::move(verdict)});
  }
  return d;
}

}  // namespace boo::runtime
