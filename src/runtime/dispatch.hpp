// boo: picking the GPU implementation of a signature, with every reason, and
// its plan.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "boo/device.hpp"
#include "boo/signature.hpp"
#include "cache/shipped_tunings.hpp"
#include "cache/tuning_db.hpp"
#include "ops/gpu_implementation.hpp"

namespace boo::runtime {

struct Considered {
  std::string name;
  Status verdict;  ///< OK = chosen or would accept; otherwise why it declines (or "not selected by --impl")
};

struct Dispatch {
  std::unique_ptr<const ops::OpProblem> problem;
  ops::ArchSpec arch;
  std::vector<Considered> considered;  ///< in list order
  const ops::GpuImplementation* chosen = nullptr;
  std::unique_ptr<const ops::Config> config;  ///< the chosen implementation's
  /// Where config came from: "heuristic", "tuning database <path> (...)" or
  /// "shipped tuning <file> (...)", with why a row was not used where one was
  /// ignored.
  std::string config_origin = "heuristic";
  /// kUnimplemented listing every reason, when nothing was chosen.
  Status failure() const;
};

/// The first GPU implementation of the signature's op that accepts and
/// configures it; an error only when the signature has no op or its problem
/// cannot be built. `only` (from --impl) restricts the choice to one name.
/// With `tuning`, the chosen implementation's config is the database row's
/// for this problem, arch, device and tuning_version where there is
/// one and it is one of the tier's candidates; a row that is not (or a
/// database that cannot be read) is logged as a warning and the heuristic's
/// config is used. `shipped` is consulted the same way where `tuning` has no
/// usable row: the user's database wins. The tiers' cost models use
/// `cost_model`, or where it is null the refitted file beside the shipped
/// tunings (cost_model_of) when `shipped` is given, else the hand-set one.
Result<Dispatch> choose_gpu_implementation(const OpSignature& sig, const DeviceInfo& device,
                                           std::string_view only = "", const cache::TuningDb* tuning = nullptr,
                                           const cache::ShippedTunings* shipped = nullptr,
                                           std::shared_ptr<const ops::CostModel> cost_model = nullptr);

/// The cost model for `device`: the refitted file beside the shipped tunings
/// (ShippedTunings::cost_path_of) where it is there and reads as the device's,
/// else the hand-set one. Read once per path and process; a file that does not
/// parse, is another device's or has a bad scale is logged once and ignored.
std::shared_ptr<const ops::CostModel> cost_model_of(const cache::ShippedTunings* shipped, const DeviceInfo& device);

/// The version of the kernels a tuning row of `implementation` for `problem`
/// stands for: the library's version, "+", and a digest of every embedded
/// device source that any of the implementation's candidate configs for the
/// problem includes (the configs `boo tune` compared). A row is trusted only
/// while all of them are unchanged, so an edit to one tier's device code
/// retires that tier's rows and leaves the others'. INTERNAL where a candidate
/// cannot be planned.
Result<std::string> tuning_version(const ops::GpuImplementation& implementation, const ops::OpProblem& problem,
                                   const ops::ArchSpec& arch);

/// The database key of a dispatch's chosen implementation and problem on
/// `device` (tuning_version's version).
Result<cache::TuningKey> tuning_key(const Dispatch& dispatch, const DeviceInfo& device);

/// The tuning database at `path` (RuntimeOptions::tuning_db), opened
/// read-only; nullptr where there is none (logged at debug level when the
/// file is absent, as a warning when it cannot be read) or `path` is empty.
std::unique_ptr<cache::TuningDb> open_tuning_db(const std::string& path);

/// The chosen implementation's plan, checked (Plan::validate).
Result<ops::Plan> plan_chosen(const Dispatch& dispatch);

}  // namespace boo::runtime
