// boo: the parameter block of the GEMM's copy and epilogue kernels
// (gemm_copy.cuh), shared by host and device code.
#pragma once

namespace boo {

/// dst[b, r, c] = act(alpha * src[b, r, c] + beta * addend[b, r, c] + bias[b, r, c]) over a
/// [batch, rows, cols] index space; every tensor is a strided view (element strides, batch, row,
/// column; 0 broadcasts). A plain copy has alpha 1 and neither addend nor bias.
struct GemmCopyParams {
  unsigned long long src, dst, addend, bias;
  long long sizes[3];  ///< batch, rows, cols
  long long src_strides[3], dst_strides[3], addend_strides[3], bias_strides[3];
  float alpha, beta, act_alpha, act_lo, act_hi;
  int unused_padding;
};

/// The block size of both forms; the tiled form (gemm_copy_tiled) moves one kGemmCopyTile x
/// kGemmCopyTile tile of (rows, cols) at a time through shared memory.
constexpr int kGemmCopyThreads = 256;
constexpr int kGemmCopyTile = 64;

}  // namespace boo
