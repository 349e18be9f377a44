// boo: ATen's matrix products (aten::mm, bmm, addmm, linear, baddbmm) as one
// registered op, aten_gemm: each call is a GemmProblem over the call's own
// tensors, strides included (ops/gemm/gemm_problem.hpp), so it runs on the
// GEMM tiers, the GEMM reference and the cuBLASLt baseline like a `gemm` command.
#pragma once

#include <array>
#include <vector>

#include "ops/aten/aten_signature.hpp"
#include "ops/gemm/gemm_problem.hpp"
#include "ops/op_definition.hpp"

namespace boo::ops::aten {

class AtenGemmSignature final : public AtenSignature {
 public:
  /// `inputs`: the call's tensors, in call order; `output` the result (contiguous, named desc.out.tensor).
  AtenGemmSignature(AtenCall call, gemm::GemmDesc desc, std::vector<TensorSpec> inputs, TensorSpec output)
      : AtenSignature(std::move(call)), desc_(std::move(desc)), inputs_(std::move(inputs)), output_(std::move(output)) {}
  const gemm::GemmDesc& desc() const { return desc_; }

  std::string_view op_name() const override { return "aten_gemm"; }
  /// One dtype for every tensor, positive sizes, every view inside its tensor.
  Status validate() const override;
  std::vector<TensorSpec> arguments() const override { return inputs_; }
  std::vector<TensorSpec> results() const override { return {output_}; }
  double flop_count() const override;
  std::unique_ptr<OpSignature> clone() const override { return std::make_unique<AtenGemmSignature>(*this); }

 private:
  gemm::GemmDesc desc_;
  std::vector<TensorSpec> inputs_;
  TensorSpec output_;
};

/// The [batch, rows, cols] view of a rank-2 (batch stride 0) or rank-3 tensor.
std::array<int64_t, 3> matrix_strides(const TensorSpec& t);
/// The view of `t` broadcast (PyTorch's rules, aligned right) to [batch, rows,
/// cols]: a size-1 or missing dim gets stride 0. INVALID_ARGUMENT when `t`
/// does not broadcast to that shape.
Result<std::array<int64_t, 3>> broadcast_strides(const TensorSpec& t, int64_t batch, int64_t rows, int64_t cols,
                                                 const std::string& where);
/// INVALID_ARGUMENT unless `t` has rank `rank` ("mat1 of aten::addmm must be 2-D").
Status expect_rank(const TensorSpec& t, int rank, const AtenCall& call);

/// The product `a` @ `b` of two matrices (rank 2) or two batches of them
/// (rank 3, equal batch) into a contiguous result "out": the desc's sizes,
/// a, b and out views, and the result's spec. Errors name the disagreeing sizes.
struct Product {
  gemm::GemmDesc desc;
  TensorSpec out;
};
Result<Product> product(const AtenCall& call, const TensorSpec& a, const TensorSpec& b, int rank);

/// Validates and returns the signature: the step every mm-family op ends with.
Result<std::unique_ptr<OpSignature>> finish(AtenGemmSignature sig);

/// The registered op of every AtenGemmSignature.
const OpDefinition& gemm_definition();

}  // namespace boo::ops::aten
