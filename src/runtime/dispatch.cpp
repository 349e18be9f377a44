// boo: dispatch with decline reasons.
#include "runtime/dispatch.hpp"

#include "base/log.hpp"
#include "base/strings.hpp"
#include "jit/embedded_sources.hpp"
#include "ops/op_registry.hpp"

namespace boo::runtime {

Status Dispatch::failure() const {
  if (chosen) return ok_status();
  std::string reasons;
  for (const Considered& c : considered) reasons += (reasons.empty() ? "" : "; ") + c.name + ": " + c.verdict.message();
  if (considered.empty()) reasons = "the op has no GPU implementation";
  return unimplemented("no GPU implementation accepts this signature (" + reasons + ")");
}

cache::TuningKey tuning_key(std::string_view implementation, const OpSignature& sig, const DeviceInfo& device) {
  return {std::string(implementation), sig.command(), device.arch(), device.name, jit::device_sources_version()};
}

std::unique_ptr<cache::TuningDb> open_tuning_db(const std::string& path) {
  if (path.empty()) return nullptr;
  Result<std::unique_ptr<cache::TuningDb>> db = cache::TuningDb::open(path, false);
  if (db.ok()) return std::move(*db);
  if (db.status().code() == StatusCode::kNotFound)
    base::log_debug("no tuning database at " + path + ": every config is the heuristic's");
  else
    base::log_warning("the tuning database is not used: " + db.status().to_string());
  return nullptr;
}

namespace {

// The database's config for the chosen implementation, replacing the
// heuristic's in `d`, or the reason none was used (logged).
void apply_tuning(Dispatch& d, const OpSignature& sig, const DeviceInfo& device, const cache::TuningDb& tuning) {
  const cache::TuningKey key = tuning_key(d.chosen->name(), sig, device);
  Result<cache::TuningLookup> found = tuning.find(key);
  if (!found.ok()) {
    base::log_warning("tuning database " + tuning.path() + " not read for " + sig.command() + ": " +
                      found.status().to_string());
    d.config_origin = "heuristic (the tuning database could not be read: " + found.status().message() + ")";
    return;
  }
  std::string ignored;
  for (const std::string& why : found->ignored) {
    base::log_warning("tuning database " + tuning.path() + ": ignored " + why + " for " + key.implementation + " " +
                      sig.command());
    ignored += (ignored.empty() ? "" : "; ") + why;
  }
  if (!found->row) {
    d.config_origin = ignored.empty() ? "heuristic (no tuning database row)" : "heuristic (ignored " + ignored + ")";
    return;
  }
  const cache::TuningRow& row = *found->row;
  Result<std::unique_ptr<const ops::Config>> config = d.chosen->config_from_text(*d.problem, d.arch, row.config);
  if (!config.ok()) {
    base::log_warning("tuning database " + tuning.path() + ": ignored the row of " + key.implementation + " " +
                      sig.command() + ": " + config.status().message());
    d.config_origin = "heuristic (ignored a database row: " + config.status().message() + ")";
    return;
  }
  const bool same = (*config)->text() == d.config->text();
  d.config = std::move(config).value();
  d.config_origin = "tuning database " + tuning.path() + " (" + base::format_double(row.time_us) + " us" +
                    (same ? ": the heuristic's config measured best" :
                            " against the heuristic's " + base::format_double(row.heuristic_us) + " us") + ")";
}

}  // namespace

Result<Dispatch> choose_gpu_implementation(const OpSignature& sig, const DeviceInfo& device, std::string_view only,
                                           const cache::TuningDb* tuning) {
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
  if (d.chosen && tuning) apply_tuning(d, sig, device, *tuning);
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
