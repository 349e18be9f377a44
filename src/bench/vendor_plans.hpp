// boo: vendor plans remembered across runs.
//
// Choosing a vendor library's fastest plan for a signature (cuDNN: building
// and timing every engine configuration its heuristics offer) can take far
// longer than measuring it. The choice is stored in the cache folder, keyed
// by everything it depends on, and the next run builds that one plan:
//
//   <cache dir>/vendor-plans/<vendor>/<key[0:2]>/<key>.txt
//
// where key = SHA-256 of a readable record (the library version, the device,
// the signature and the graph), which the file repeats. As with kernels
// (docs/cache.md): writes are atomic, an unusable entry is a miss that is
// stored again, and an unwritable folder only costs the memory.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "boo/device.hpp"
#include "boo/status.hpp"

namespace boo::bench {

/// A vendor's choice for one graph: an engine (cuDNN's global engine index)
/// and its knob settings (knob type, value).
struct EngineChoice {
  int64_t engine = -1;
  std::vector<std::pair<int64_t, int64_t>> knobs;

  /// "engine 12 knobs 3=1,18=0" ("knobs -" when there are none).
  std::string to_text() const;
  /// The inverse of to_text; anything else is an error naming the text.
  static Result<EngineChoice> parse(std::string_view text);

  bool operator==(const EngineChoice&) const = default;
};

/// What every record of a vendor's plans starts with: the library and its
/// version, the device ("cudnn 90100 | NVIDIA H100 80GB HBM3 sm_90 132 SMs").
std::string vendor_plan_context(const std::string& library, const DeviceInfo& device);

class VendorPlanStore {
 public:
  /// Plans of `vendor` ("cudnn") under `cache_dir`; an empty `cache_dir`
  /// remembers nothing (every lookup misses, stores do nothing).
  VendorPlanStore(std::string cache_dir, std::string vendor);

  /// The plan stored for `record` (one line of text): kNotFound when there is
  /// none, kDataLoss for an unusable entry (truncated, foreign, another record).
  Result<std::string> find(const std::string& record) const;
  /// Stores `plan` (any text: kept on one line, escaped) for `record`, replacing what was there.
  Status store(const std::string& record, const std::string& plan) const;
  /// The file that holds `record`'s plan ("" when nothing is remembered).
  std::string path_of(const std::string& record) const;

 private:
  std::string folder_;  // <cache dir>/vendor-plans/<vendor>, or "" to remember nothing
};

}  // namespace boo::bench
