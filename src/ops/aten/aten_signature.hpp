// boo: the base of the signatures boo has only for ATen calls (the mm family,
// argmax/argmin): the call is the signature's identity and its command.
#pragma once

#include <string>

#include "boo/signature.hpp"
#include "ops/aten/aten_call.hpp"

namespace boo::ops::aten {

class AtenSignature : public OpSignature {
 public:
  explicit AtenSignature(AtenCall call) : call_(std::move(call)) {}
  const AtenCall& call() const { return call_; }

  /// The ATen line: parse_command(command()) makes an equal signature.
  std::string command() const override { return call_.command(); }
  /// "aten_mm_bfloat16_3840x4352_4352x3840_<digest of the line>": the op,
  /// the dtype and shapes of the tensor arguments, and 8 hex digits of the
  /// whole line (strides and values distinguish calls of equal shapes).
  std::string func_name() const override;
  bool equals(const OpSignature& other) const override;

 private:
  AtenCall call_;
};

}  // namespace boo::ops::aten
