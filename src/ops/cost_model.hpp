// boo: the tiers' cost models as terms a fit can scale, and the refitted
// scales that `scripts/refit_cost_model.py` writes.
//
// A tier that ranks its configs by a model reports each config's modelled time
// as named terms (seconds of compute at an ArchSpec rate, of memory traffic at
// copy bandwidth, of launches), computed at the hand-set rates. The time the
// model predicts is the terms' sum, each multiplied by the CostModel's scale
// for (tier, term): 1 everywhere unless a refitted file
// (tuning/<device>.cost.json, beside the shipped tunings) says otherwise.
// `boo tune` records the unscaled terms with each measurement, so a refit
// always starts from the hand-set model and a refitted one never compounds.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "boo/status.hpp"

namespace boo::ops {

class CostModel {
 public:
  /// Where the scales came from: "hand-set (ArchSpec rates)" or "refitted <path> (...)".
  const std::string& origin() const { return origin_; }
  /// The scale of `term` of `tier`'s model (1 where the file has none).
  double scale(std::string_view tier, std::string_view term) const;
  /// Whether the file gives `term` of `tier` a scale (a refit measured it).
  bool has(std::string_view tier, std::string_view term) const;
  const std::map<std::string, double>& scales() const { return scales_; }

  /// The hand-set model: every scale 1.
  static std::shared_ptr<const CostModel> hand_set();
  /// A refitted model from a cost file's text (a flat JSON object: "format":
  /// "boo-cost-model-1", "device" naming `device`, and "scale.<tier>.<term>"
  /// numbers, each positive and finite; other keys are the fit's report).
  /// DATA_LOSS naming what is wrong: another format, another device's file, a
  /// scale that is not a positive number.
  static Result<std::shared_ptr<const CostModel>> parse(const std::string& text, std::string_view device,
                                                        const std::string& path);

 private:
  std::string origin_;
  std::map<std::string, double> scales_;  // "<tier>.<term>"
};

/// One config's modelled time as terms at the hand-set rates (seconds each).
struct CostTerms {
  std::vector<std::pair<std::string, double>> seconds;

  void add(const std::string& term, double s);
  /// The model's time: each term times its scale in `model`.
  double predicted_s(const CostModel& model, std::string_view tier) const;
};

}  // namespace boo::ops
