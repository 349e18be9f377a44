// boo: the problem of one op — a signature read once into what every
// implementation, the CPU reference and the vendor baseline reason with.
#pragma once

#include <memory>

#include "boo/signature.hpp"

namespace boo::ops {

/// Base of every op's problem (ConvProblem, NormProblem, ...). Owns a copy of
/// its signature, so a problem outlives whatever it was built from.
class OpProblem {
 public:
  virtual ~OpProblem() = default;
  const OpSignature& signature() const { return *signature_; }

 protected:
  explicit OpProblem(const OpSignature& sig) : signature_(sig.clone()) {}

 private:
  std::unique_ptr<const OpSignature> signature_;
};

/// The problem of an op whose implementations read its signature as it is.
template <typename SignatureT>
class SignatureProblem final : public OpProblem {
 public:
  explicit SignatureProblem(const SignatureT& sig) : OpProblem(sig) {}
  const SignatureT& typed() const { return static_cast<const SignatureT&>(signature()); }
};

}  // namespace boo::ops
