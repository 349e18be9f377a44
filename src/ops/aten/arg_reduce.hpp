// boo: aten::argmax / aten::argmin (dim, keepdim) as one registered op,
// aten_arg_reduce: the index (int64) of the first extreme element along a dim,
// or over the whole tensor in row-major order when dim is None. NaN is the
// extreme of both (ATen's rule).
#pragma once

#include <optional>
#include <vector>

#include "ops/aten/aten_signature.hpp"
#include "ops/op_definition.hpp"
#include "ops/problem.hpp"

namespace boo::ops::aten {

class ArgReduceSignature final : public AtenSignature {
 public:
  ArgReduceSignature(AtenCall call, bool is_max, TensorSpec self, std::optional<int> dim, bool keepdim);
  bool is_max() const { return is_max_; }
  const TensorSpec& self() const { return self_; }
  /// The reduced dim (wrapped to [0, rank)), or nullopt: every dim.
  std::optional<int> dim() const { return dim_; }

  std::string_view op_name() const override { return "aten_arg_reduce"; }
  Status validate() const override;
  std::vector<TensorSpec> arguments() const override { return {self_}; }
  std::vector<TensorSpec> results() const override { return {out_}; }
  double flop_count() const override { return static_cast<double>(self_.numel()); }
  std::unique_ptr<OpSignature> clone() const override { return std::make_unique<ArgReduceSignature>(*this); }

 private:
  bool is_max_;
  TensorSpec self_;
  std::optional<int> dim_;
  TensorSpec out_;  // int64, contiguous
};

/// The reduction as dims of x: the kept dims (output order) and the reduced
/// ones, each (size, stride); every implementation and the reference walk these.
struct ArgReduceProblem final : OpProblem {
  explicit ArgReduceProblem(const ArgReduceSignature& sig);
  const ArgReduceSignature& typed() const { return static_cast<const ArgReduceSignature&>(signature()); }
  std::vector<int64_t> outer_sizes, outer_strides, reduced_sizes, reduced_strides;
  int64_t outputs = 1, length = 1;
};

/// The signature of an argmax (is_max) or argmin call: (Tensor self, int? dim=None, bool keepdim=False).
Result<std::unique_ptr<OpSignature>> make_arg_reduce(const AtenCall& call, bool is_max, std::string_view schema);

const OpDefinition& arg_reduce_definition();

}  // namespace boo::ops::aten
