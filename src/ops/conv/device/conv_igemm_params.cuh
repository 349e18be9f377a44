// boo: the runtime parameter block of the implicit-GEMM conv kernels, shared
// by host and device code. Every size and stride is a compile-time constant of
// the kernel's Cfg; only addresses and activation constants travel at launch.
#pragma once

namespace boo {

struct ConvIgemmParams {
  unsigned long long a, b, w;   ///< the relation's A (N, Ca, ...), B (N, Cb, ...) and W (Cb, Ca/g, ...) tensors
  unsigned long long out;       ///< the face's output (one of the three)
  unsigned long long bias;      ///< per-channel bias of the output, or 0
  unsigned long long residual;  ///< the forward's residual z, laid out as `out` (a staged y's copy has z's), or 0
  unsigned long long workspace; ///< fp32 split-K partials (splits, groups, M, N), or 0
  float act_alpha, act_lo, act_hi;
  int unused_padding;
};

/// A conv tensor with any strides (`strided`) and its dense channels-last copy
/// with zero-padded channels (`dense`: [outer][z][y][x][padded_channels]);
/// conv_channel_pad.cuh copies one way or the other.
struct ConvChannelPadParams {
  unsigned long long strided, dense;
  long long strides[5];  ///< of the strided tensor: (outer, channel, z, y, x), in elements (may be negative)
  long long origin;      ///< element offset of (0, 0, 0, 0, 0) in the strided tensor: a flipped copy starts at its end
  long long sizes[4];    ///< outer (N or K), z, y, x
  long long channels, padded_channels;
  /// conv_stage_tiles: a tile's outer indices, channels and pixels, and the
  /// elements between its rows in shared memory (conv_stage_index.cuh).
  long long tile[4];
  /// conv_copy_pixels: the dense pixels' (outer, z, y, x) as the digits of a
  /// row index, slowest first, dimensions contiguous with the next merged
  /// (NHWC's are one): sizes and strides in the tensor; only the last
  /// `kRowDims` are read.
  long long row_sizes[4], row_strides[4];
};

}  // namespace boo
