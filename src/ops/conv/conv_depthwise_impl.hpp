// boo: gpu:conv:depthwise — depthwise convolutions at memory speed.
#pragma once

#include "ops/gpu_implementation.hpp"

namespace boo::ops::conv {

/// Depthwise convolutions (one input channel per group, a channel multiplier
/// of at most 8), 1-D and 2-D, any stride, padding and dilation, filters of
/// up to 49 taps, regular or transposed, every dtype (fp32 accumulation), all
/// directions, bias and activation fused; tensors whose channels or width
/// are contiguous (NCHW- and NHWC-like layouts). Shared-memory tiles of the
/// input plane; the weight gradient sums deterministic per-block partials.
const GpuImplementation& depthwise_implementation();

/// The weight gradient alone (and db) of depthwise convs whose planes are
/// small (rows of up to 32 pixels, an image's planes within 48 KiB) and
/// contiguous (NCHW-like): a block per channel (and slice of the images) reads
/// whole planes with vector loads and sums every tap in registers; one launch
/// where the channels fill the GPU, else fp32 partials and a reduce.
/// Deterministic. Listed before gpu:conv:depthwise, which runs the rest.
const GpuImplementation& depthwise_planes_implementation();

/// The weight gradient alone (and db) of depthwise convs of multiplier 1 whose
/// channels are contiguous (NHWC-like): a block per group of adjacent channels
/// (and slice of the N x H x W pixels) reads 4- to 16-byte vectors across
/// channels and sums every tap in registers; the workers' sums in a fixed
/// order, the slices' fp32 partials by a reduce launch. Deterministic. Listed
/// before gpu:conv:depthwise, whose channels-last weight face it replaces.
const GpuImplementation& depthwise_channels_implementation();

}  // namespace boo::ops::conv
