// boo: the tensor maps (TMA descriptors) of a launch step, encoded at launch.
//
// A map embeds its tensor's address, and boo binds addresses only at launch,
// so the plan describes each map (ops::TensorMapSlot) and the launch encodes
// it into the step's parameter block with cuTensorMapEncodeTiled. Encoding
// costs a driver call, so a map is encoded again only when its tensor's
// address changed since the last launch: a caller that launches with the same
// tensors (a training step's) pays it once. The parameter block keeps the
// last encoding between launches; a graph capture records the block's bytes
// as they are at launch.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <span>
#include <vector>

#include "boo/status.hpp"
#include "ops/plan.hpp"

namespace boo::runtime {

using EncodeTiledFn = decltype(&::cuTensorMapEncodeTiled);
using EncodeIm2colFn = decltype(&::cuTensorMapEncodeIm2col);

/// The driver's encoders: a slot's mode picks one.
struct TensorMapEncoders {
  EncodeTiledFn tiled = nullptr;
  EncodeIm2colFn im2col = nullptr;
};

/// Encodes `slot` for its tensor at `tensor_address` (the binding's address;
/// the slot's byte offset is added here) into `params` at the slot's offset.
Status encode_tensor_map(const TensorMapEncoders& encode, const ops::TensorMapSlot& slot, uint64_t tensor_address,
                         std::span<std::byte> params);

/// A launch step's tensor maps and the address each was last encoded for.
class StepTensorMaps {
 public:
  StepTensorMaps() = default;
  explicit StepTensorMaps(std::vector<ops::TensorMapSlot> slots)
      : slots_(std::move(slots)), encoded_for_(slots_.size(), 0) {}

  /// Encodes into `params` each map whose tensor's address (`address_of(binding)`)
  /// differs from the one it was last encoded for; returns how many it encoded.
  /// A map whose encoding failed is encoded again at the next call.
  template <typename AddressOf>
  Result<int> refresh(const TensorMapEncoders& encode, AddressOf&& address_of, std::span<std::byte> params) {
    int encoded = 0;
    for (size_t i = 0; i < slots_.size(); ++i) {
      const uint64_t address = address_of(slots_[i].tensor);
      if (address != 0 && address == encoded_for_[i]) continue;
      encoded_for_[i] = 0;
      BOO_RETURN_IF_ERROR(encode_tensor_map(encode, slots_[i], address, params));
      encoded_for_[i] = address;
      ++encoded;
    }
    return encoded;
  }

  bool empty() const { return slots_.empty(); }

 private:
  std::vector<ops::TensorMapSlot> slots_;
  std::vector<uint64_t> encoded_for_;  // 0: not encoded
};

}  // namespace boo::runtime
