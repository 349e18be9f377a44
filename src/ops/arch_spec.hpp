// boo: the facts about a GPU architecture that planning uses.
//
// Every heuristic reads SM counts, shared memory and rates from here, never
// from literals, so that one place says what is known about a device, what is
// assumed where the driver cannot tell (a description without a device), and
// which figures are measured orders of magnitude rather than datasheet values.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "boo/device.hpp"
#include "ops/cost_model.hpp"

namespace boo::ops {

struct ArchSpec {
  std::string target;  ///< the NVRTC target, "sm_90a"
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int max_shared_bytes_per_block = 0;  ///< opt-in maximum of one block
  int max_shared_bytes_per_sm = 0;
  int l2_bytes = 0;
  int max_threads_per_sm = 0;
  int registers_per_sm = 0;  ///< 32-bit registers of an SM's register file
  /// Measured orders of magnitude, not datasheet peaks: what boo's kernels
  /// reach, which is what a cost model comparing plans of boo's kernels needs.
  double copy_bytes_per_s = 0;     ///< device-memory copy bandwidth (3.0 TB/s on an H100)
  double mma_sync_macs_per_s = 0;  ///< boo's mma.sync tier, every SM busy (150e12 on an H100)
  double wgmma_macs_per_s = 0;     ///< boo's wgmma tier (sm_90a), every SM busy (350e12 on an H100)
  double ffma_macs_per_s = 0;      ///< fp32 FFMA, every SM busy (25e12 on an H100: an estimate, not yet measured)
  /// The scales of the tiers' cost-model terms (ops/cost_model.hpp): the
  /// hand-set model unless dispatch found a refitted file for the device.
  std::shared_ptr<const CostModel> cost_model = CostModel::hand_set();

  /// A term's scale in the cost model (1 in the hand-set one).
  double cost_scale(std::string_view tier, std::string_view term) const { return cost_model->scale(tier, term); }

  /// The spec of `device`, with the architecture's typical values where the
  /// device description leaves a field unknown (0).
  static ArchSpec of(const DeviceInfo& device);
};

}  // namespace boo::ops
