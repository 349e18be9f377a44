// boo: the parameter block of gpu:conv:wgmma_sm90's kernels that load operand
// tiles with TMA, shared by host and device code: the implicit GEMM's block
// and the tensor maps (TMA descriptors) the copies read. The kernel takes it
// as a `const __grid_constant__` parameter, so a map's generic address is its
// place in the parameter space, which the copy engine reads directly; the host
// encodes the maps at launch (ops::TensorMapSlot, runtime/tensor_maps.hpp).
#pragma once

// Device code names embedded headers boo/...; the host compiles from src/.
#ifdef BOO_NVRTC
#include "boo/conv/conv_igemm_params.cuh"
#else
#include "ops/conv/device/conv_igemm_params.cuh"
#endif

namespace boo {

/// A CUDA tensor map (CUtensorMap) as device code sees it: 128 opaque bytes,
/// 64-byte aligned (what cuTensorMapEncodeTiled and the copy engine require).
struct alignas(64) TmaMap {
  unsigned long long opaque[16];
};

struct ConvWgmmaParams {
  ConvIgemmParams p;  ///< first, so the split-K reduce reads its ConvIgemmParams from the block's start
  TmaMap tma_a;       ///< the GEMM's A tile: the weight face's dy (WgmmaConfig's `tma`), the forward face's
                      ///< plain x (`tma_a`), else unused
  TmaMap tma_b;       ///< the GEMM's B tile: the forward face's filter, else unused
};

/// The block of a forward kernel that also stores y by TMA (Cfg kTmaY; a
/// block of its own, so that every other kernel's stays as it was).
struct ConvWgmmaStoreParams {
  ConvWgmmaParams base;
  TmaMap tma_y;  ///< y as {K channels, pixels}: boxes of 32 pixels x 64 channels
};

}  // namespace boo
