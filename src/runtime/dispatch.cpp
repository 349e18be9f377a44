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

Result<Dispatch> choose_gpu_implementation(const OpSignature& sig, const DeviceInfo& device, std::string_view only) {
  const ops::OpDefinition* op = ops::find_op(sig.op_name());
  if (!op) return invalid_argument("no op named '" + std::string(sig.op_name()) + "' is registered");
  Dispatch d;
  d.arch = ops::ArchSpec::of(device);
  BOO_ASSIGN_OR_RETURN(std::unique_ptr<ops::OpProblem> problem, op->make_problem(sig));
  d.problem = std::move(problem);
  for (const ops::GpuImplementation* impl : op->gpu_implementations()) {
    Status verdict = !only.empty() && impl->name() != only
                         ? unimplemented("not selected (--impl " + std::string(only) + ")")
                         : impl->accepts(*d.problem, d.arch);
    // The first that accepts is configured; a configuration it cannot find declines it too.
    if (verdict.ok() && !d.chosen) {
      Result<std::unique_ptr<const ops::Config>> config = impl->configure(*d.problem, d.arch);
      if (config.ok()) {
        d.chosen = impl;
        d.config = std::move(config).value();
      } else if (config.status().code() == StatusCode::kUnimplemented) {
        verdict = config.status();
      } else {
        return std::move(config).take_status();
      }
    }
    d.considered.push_back(Considered{std::string(impl->name()), std::move(verdict)});
  }
  return d;
}

Result<ops::Plan> plan_chosen(const Dispatch& dispatch) {
  BOO_RETURN_IF_ERROR(dispatch.failure());
  const OpSignature& sig = dispatch.problem->signature();
  // The implementation accepted and configured the problem: failing to plan it
  // (to generate its source) is boo's bug, whatever code the tier reported.
  Result<ops::Plan> planned = dispatch.chosen->plan(*dispatch.problem, *dispatch.config, dispatch.arch);
  if (!planned.ok())
    return internal_error(std::string(dispatch.chosen->name()) + " accepted and configured " + sig.command() +
                          " but could not plan it: " + planned.status().to_string());
  ops::Plan plan = std::move(*planned);
  Status valid = plan.validate(sig.arguments().size(), sig.results().size());
  if (!valid.ok()) return std::move(valid).annotate(std::string(dispatch.chosen->name()) + " for " + sig.command());
  return plan;
}

}  // namespace boo::runtime
