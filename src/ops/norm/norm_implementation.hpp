// boo: what the norm tiers (rows, simple) share: each instance runs one kind.
#pragma once

#include <span>
#include <string>

#include "ops/gpu_implementation.hpp"
#include "ops/norm/norm_problem.hpp"

namespace boo::ops::norm {

/// A GpuImplementation of one norm kind, named "gpu:<op>:<tier>".
class NormImplementation : public GpuImplementation {
 public:
  NormImplementation(NormKind kind, std::string name) : kind_(kind), name_(std::move(name)) {}
  std::string_view name() const override { return name_; }

 protected:
  /// The problem of `sig`; an error for a signature of another op or kind.
  Result<NormProblem> kind_problem(const OpSignature& sig) const { return norm_problem(sig, kind_); }

 private:
  NormKind kind_;
  std::string name_;
};

/// Sets the tensor addresses of a norm kernel's parameter block from a
/// launch's tensors, 0 for those the signature lacks (mean and rstd are
/// results with the forward, arguments without). Layer norm's blocks also
/// have mean, bias and dbias.
template <typename Params>
void bind_tensors(Params& params, std::span<const DeviceTensor> args, std::span<const DeviceTensor> results) {
  auto address = [&](std::string_view name) { return tensor_address(args, results, name); };
  params.x = address("x");
  params.weight = address("weight");
  params.y = address("y");
  params.rstd = address("rstd");
  params.dy = address("dy");
  params.dx = address("dx");
  params.dweight = address("dweight");
  if constexpr (requires { params.mean; }) {
    params.mean = address("mean");
    params.bias = address("bias");
    params.dbias = address("dbias");
  }
}

}  // namespace boo::ops::norm
