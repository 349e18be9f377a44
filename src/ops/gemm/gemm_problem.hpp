// boo: the GEMM problem — any strided, batched matrix product with its
// epilogue, whatever signature it came from (a `gemm` command or an ATen
// mm/bmm/addmm/linear/baddbmm call):
//
//   out[b, i, j] = act(alpha * sum_p A[b, i, p] * B[b, p, j] + beta * C[b, i, j] + bias[j])
//
// Each matrix is a view of a signature tensor: element (b, row, col) lives at
// b * strides[0] + row * strides[1] + col * strides[2] (stride 0: broadcast).
// The CPU reference and the GPU tiers (gemm_conv_impl.cpp: the conv tiers'
// GEMMs, a GEMM being a 1x1 convolution) read only this.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/host_tensor.hpp"
#include "boo/conv.hpp"
#include "boo/gemm.hpp"
#include "ops/problem.hpp"

namespace boo::ops::gemm {

/// One matrix operand as a [batch, rows, cols] view of a signature tensor.
struct MatrixView {
  std::string tensor;                  ///< the signature's argument or result name
  std::array<int64_t, 3> strides{};    ///< batch, row, column (elements; 0 broadcasts)
  bool operator==(const MatrixView&) const = default;
};

struct GemmDesc {
  DType dtype = DType::kF32;
  bool fp32_tf32 = false;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  MatrixView a;                    ///< [batch, m, k]
  MatrixView b;                    ///< [batch, k, n]
  MatrixView out;                  ///< [batch, m, n], a result
  std::optional<MatrixView> c;     ///< [batch, m, n] addend scaled by beta
  std::optional<MatrixView> bias;  ///< [batch, m, n] view of a length-n vector (strides 0, 0, s)
  double alpha = 1.0, beta = 0.0;
  Activation activation;

  /// Whether the result is exactly act(A @ B + bias[j]) with a unit-stride
  /// bias: what the conv tiers' epilogue computes.
  bool conv_epilogue() const;
  /// The one view that plays the bias in conv_epilogue(): bias, or C when it
  /// is a unit-stride row vector with beta 1 (addmm's usual input).
  std::optional<MatrixView> fused_bias() const;
};

/// The description of a `gemm` command.
GemmDesc desc_of(const GemmSignature& sig);

/// `d` computed as its transpose, out^T = op(B)^T @ op(A)^T: m and n swap, A's
/// view becomes B's and B's A's, and out, C and the bias are read transposed
/// (a per-column bias becomes a per-row one). The same elements, the same sums.
GemmDesc transposed(const GemmDesc& d);

/// Checks that every view stays inside its tensor (shape and strides of the
/// signature's spec): INVALID_ARGUMENT naming the view otherwise.
Status check_views(const GemmDesc& desc, const OpSignature& sig);

class GemmProblem final : public OpProblem {
 public:
  GemmProblem(const OpSignature& sig, GemmDesc desc) : OpProblem(sig), desc(std::move(desc)) {}
  const GemmDesc desc;
};

/// The float64 reference of `desc` over the signature's arguments, written
/// into `out` (the result named desc.out.tensor, any strides).
Status gemm_reference(const GemmDesc& desc, const OpSignature& sig, const std::vector<base::HostTensor>& args,
                      base::HostTensor& out);
/// The reference at logical row-major positions `linear` of the result only.
Result<std::vector<double>> gemm_reference_sample(const GemmDesc& desc, const OpSignature& sig,
                                                  const std::vector<base::HostTensor>& args,
                                                  const std::vector<int64_t>& linear);

}  // namespace boo::ops::gemm
