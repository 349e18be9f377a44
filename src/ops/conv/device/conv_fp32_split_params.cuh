// boo: the runtime parameter blocks of gpu:conv:fp32_bf16x6's own kernels
// (device/conv_fp32_split.cuh), shared by host and device code.
#pragma once

namespace boo {

/// An fp32 conv tensor with any strides (`src`, read as (outer, channel, z, y, x)) and the
/// dense bf16 buffer of its six segments (`dst`): element (o, c, pixel) of segment s at
/// s * seg_stride + o * outer_stride + pixel * pixel_stride + c. Rows o >= outer and channels
/// c >= channels of the buffer (up to sizes[0] rows, `padded` channels) are zeros.
struct ConvSplitParams {
  unsigned long long src, dst;
  long long strides[5];  ///< src's (outer, channel, z, y, x), in elements
  long long sizes[4];    ///< the buffer's rows (outer, padded), z, y, x
  long long outer, channels, padded;
  long long seg_stride, outer_stride, pixel_stride;  ///< the buffer's, in elements
  int pattern;  ///< the part segment s holds (0 high, 1 middle, 2 low) at bits 2s, 2s + 1
  int unused_padding;
};

/// The fp32 sums [rows][channels_padded] of a forward conv, in place: bias (per channel) and activation
/// on the `channels` real ones (the padded ones are never copied out, and the bias has no entry for them).
struct ConvSumsEpilogueParams {
  unsigned long long sums, bias;
  long long elements, channels_padded, channels;
  float act_alpha, act_lo, act_hi;
  int unused_padding;
};

}  // namespace boo
