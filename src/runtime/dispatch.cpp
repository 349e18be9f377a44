// boo: dispatch with decline reasons.
#include "runtime/dispatch.hpp"

#include <map>
#include <mutex>
#include <sys/stat.h>

#include "base/file_util.hpp"
#include "base/log.hpp"
#include "base/strings.hpp"
#include "boo/version.hpp"
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

Result<std::string> tuning_version(const ops::GpuImplementation& implementation, const ops::OpProblem& problem,
                                   const ops::ArchSpec& arch) {
  BOO_ASSIGN_OR_RETURN(ops::ConfigList candidates, implementation.candidates(problem, arch));
  std::string includes;  // every candidate's generated source: its #include lines name the device sources
  for (const std::unique_ptr<const ops::Config>& config : candidates) {
    Result<ops::Plan> plan = implementation.plan(problem, *config, arch);
    if (!plan.ok())
      return internal_error(std::string(implementation.name()) + " could not plan its candidate '" + config->text() +
                            "': " + plan.status().message());
    includes += plan->source.text;
  }
  return std::string(library_version()) + "+" + jit::included_sources_digest(includes).substr(0, 16);
}

Result<cache::TuningKey> tuning_key(const Dispatch& d, const DeviceInfo& device) {
  if (!d.chosen) return internal_error("a tuning key needs a chosen implementation");
  BOO_ASSIGN_OR_RETURN(std::string version, tuning_version(*d.chosen, *d.problem, d.arch));
  return cache::TuningKey{std::string(d.chosen->name()), d.problem->signature().command(), device.arch(), device.name,
                          std::move(version)};
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

std::shared_ptr<const ops::CostModel> cost_model_of(const cache::ShippedTunings* shipped, const DeviceInfo& device) {
  if (!shipped) return ops::CostModel::hand_set();
  const std::string path = shipped->cost_path_of(device.name);
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const ops::CostModel>> models;  // by path: each file read once
  const std::lock_guard<std::mutex> lock(mutex);
  std::shared_ptr<const ops::CostModel>& model = models[path];
  if (model) return model;
  model = ops::CostModel::hand_set();
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    base::log_debug("no refitted cost model for " + device.name + " (" + path + "): the hand-set one ranks configs");
    return model;
  }
  Result<std::string> text = base::read_file(path);
  Result<std::shared_ptr<const ops::CostModel>> parsed =
      text.ok() ? ops::CostModel::parse(*text, device.name, path)
                : Result<std::shared_ptr<const ops::CostModel>>(text.status());
  if (parsed.ok())
    model = *parsed;
  else
    base::log_warning("the refitted cost model " + path + " is not used (the hand-set one is): " +
                      parsed.status().message());
  return model;
}

namespace {

// One source's row for the chosen implementation (`source`: "tuning database <path>" or "shipped tuning
// <file>"): its config replaces the heuristic's in `d` (true), or why it was not used is added to
// `reasons` and logged. `quiet_log` logs a source's unreadable file and rows of other versions: the
// user's database warns at each lookup; a shipped file was reported once when it was read, and is
// expected to lag a development build's device sources, so it says them at debug level.
bool take_row(Dispatch& d, const OpSignature& sig, const cache::TuningKey& key, const std::string& source,
              const std::string& kind, const Result<cache::TuningLookup>& found,
              void (*quiet_log)(std::string_view), std::string& reasons) {
  auto add = [&](const std::string& why) { reasons += (reasons.empty() ? "" : "; ") + why; };
  if (!found.ok()) {
    quiet_log(source + " not read for " + sig.command() + ": " + found.status().to_string());
    add("the " + kind + " could not be read: " + found.status().message());
    return false;
  }
  for (const std::string& why : found->ignored) {
    quiet_log(source + ": ignored " + why + " for " + key.implementation + " " + sig.command());
    add("ignored " + why);
  }
  if (!found->row) return false;
  const cache::TuningRow& row = *found->row;
  Result<std::unique_ptr<const ops::Config>> config = d.chosen->config_from_text(*d.problem, d.arch, row.config);
  if (!config.ok()) {
    base::log_warning(source + ": ignored the row of " + key.implementation + " " + sig.command() + ": " +
                      config.status().message());
    add("ignored a " + std::string(kind == "tuning database" ? "database" : "shipped") +
        " row: " + config.status().message());
    return false;
  }
  const bool same = (*config)->text() == d.config->text();
  d.config = std::move(config).value();
  d.config_origin = source + " (" + base::format_double(row.time_us) + " us" +
                    (same ? ": the heuristic's config measured best" :
                            " against the heuristic's " + base::format_double(row.heuristic_us) + " us") + ")";
  return true;
}

// The user's database first, then the shipped tunings: the first usable row's config replaces the
// heuristic's; otherwise config_origin says what was looked at and why nothing was taken.
void apply_tuning(Dispatch& d, const OpSignature& sig, const DeviceInfo& device, const cache::TuningDb* tuning,
                  const cache::ShippedTunings* shipped) {
  Result<cache::TuningKey> found_key = tuning_key(d, device);
  if (!found_key.ok()) {
    base::log_warning("no tuning row is used for " + sig.command() + ": " + found_key.status().to_string());
    d.config_origin = "heuristic (" + found_key.status().message() + ")";
    return;
  }
  const cache::TuningKey& key = *found_key;
  std::string reasons;
  if (tuning && take_row(d, sig, key, "tuning database " + tuning->path(), "tuning database", tuning->find(key),
                         &base::log_warning, reasons))
    return;
  if (shipped && take_row(d, sig, key, "shipped tuning " + shipped->path_of(device.name), "shipped tuning",
                          shipped->find(key), &base::log_debug, reasons))
    return;
  const std::string looked = tuning && shipped ? "no tuning database or shipped tuning row"
                             : tuning          ? "no tuning database row"
                                               : "no shipped tuning row";
  d.config_origin = "heuristic (" + (reasons.empty() ? looked : reasons) + ")";
}

}  // namespace

Result<Dispatch> choose_gpu_implementation(const OpSignature& sig, const DeviceInfo& device, std::string_view only,
                                           const cache::TuningDb* tuning, const cache::ShippedTunings* shipped,
                                           std::shared_ptr<const ops::CostModel> cost_model) {
  const ops::OpDefinition* op = ops::find_op(sig.op_name());
  if (!op) return invalid_argument("no op named '" + std::string(sig.op_name()) + "' is registered");
  Dispatch d;
  d.arch = ops::ArchSpec::of(device);
  d.arch.cost_model = cost_model ? std::move(cost_model) : cost_model_of(shipped, device);
  const std::unique_ptr<OpSignature> simpler = op->simpler_signature(sig);
  BOO_ASSIGN_OR_RETURN(std::unique_ptr<ops::OpProblem> problem, op->make_problem(simpler ? *simpler : sig));
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
  if (d.chosen && (tuning || shipped)) apply_tuning(d, sig, device, tuning, shipped);
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
