// boo: cost-model terms and refitted scales.
#include "ops/cost_model.hpp"

#include <cmath>

#include "base/json.hpp"
#include "base/strings.hpp"

namespace boo::ops {
namespace {
constexpr const char* kFormat = "boo-cost-model-1";
constexpr std::string_view kScalePrefix = "scale.";
}  // namespace

double CostModel::scale(std::string_view tier, std::string_view term) const {
  if (scales_.empty()) return 1.0;
  const auto it = scales_.find(std::string(tier) + "." + std::string(term));
  return it == scales_.end() ? 1.0 : it->second;
}

bool CostModel::has(std::string_view tier, std::string_view term) const {
  return scales_.count(std::string(tier) + "." + std::string(term)) > 0;
}

std::shared_ptr<const CostModel> CostModel::hand_set() {
  static const std::shared_ptr<const CostModel> model = [] {
    auto m = std::make_shared<CostModel>();
    m->origin_ = "hand-set (ArchSpec rates)";
    return m;
  }();
  return model;
}

Result<std::shared_ptr<const CostModel>> CostModel::parse(const std::string& text, std::string_view device,
                                                          const std::string& path) {
  BOO_ASSIGN_OR_RETURN(const base::JsonObject o, base::JsonObject::parse(text));
  const std::string* format = o.get("format");
  if (!format || *format != kFormat)
    return data_loss("its format is " + (format ? base::echo_word(*format) : std::string("missing")) + ", not " +
                     kFormat);
  const std::string* of = o.get("device");
  if (!of || *of != device)
    return data_loss("it is the cost model of " + (of ? base::echo_word(*of) : std::string("no device")) +
                     ", not of " + std::string(device));
  auto m = std::make_shared<CostModel>();
  for (const base::JsonObject::Entry& e : o.entries()) {
    if (e.key.rfind(kScalePrefix, 0) != 0) continue;
    Result<double> v = o.number(e.key);
    if (e.is_string || !v.ok() || !std::isfinite(*v) || !(*v > 0))
      return data_loss("its " + base::echo_word(e.key) + " is not a positive number");
    m->scales_[e.key.substr(kScalePrefix.size())] = *v;
  }
  if (m->scales_.empty()) return data_loss("it has no scale.<tier>.<term> entries");
  m->origin_ = "refitted " + path + " (" + std::to_string(m->scales_.size()) + " scales)";
  return std::shared_ptr<const CostModel>(std::move(m));
}

void CostTerms::add(const std::string& term, double s) {
  for (auto& [name, value] : seconds)
    if (name == term) {
      value += s;
      return;
    }
  seconds.emplace_back(term, s);
}

double CostTerms::predicted_s(const CostModel& model, std::string_view tier) const {
  double total = 0;
  for (const auto& [term, s] : seconds) total += model.scale(tier, term) * s;
  return total;
}

}  // namespace boo::ops
