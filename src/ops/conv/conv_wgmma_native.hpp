// boo: gpu:conv:wgmma_sm90's native path for planar pointwise convs — which
// convs it takes (else the tier stages channels-last copies of them, saying
// why), the relation its GEMMs run and the constants its kernels read
// (device/conv_wgmma_nchw.cuh).
#pragma once

#include <string>

#include "boo/status.hpp"
#include "ops/conv/conv_problem.hpp"

namespace boo::ops::conv {

/// Whether a tensor of strides `s` (n, c, d, h, w) lies channels-last as a
/// plain matrix of pixel rows: its `channels` contiguous, its batch x `size`
/// pixels evenly spaced, rows 16-byte aligned and apart at least a row.
bool channels_last_pixels(const Strides5& s, long long batch, const Dims3& size, long long channels);

/// Whether the native GEMM's `in` (relation `native`'s A: the forward face's
/// x, the data face's dy) lies channels-last: read K-major by TMA
/// (conv_wgmma_nchw.cuh's kBKMajor), the GEMM of a transposed A by a
/// transposed B.
bool native_in_channels_last(const Relation& native);

/// Whether the relation is pointwise (1x1, stride 1, no padding) with an
/// activation whose channels are not contiguous (NCHW, NCDHW): the convs the
/// native path is meant for.
bool planar_pointwise(const Relation& r);

/// OK where the native path runs the problem's one task (a planar_pointwise
/// relation); otherwise UNIMPLEMENTED with what it lacks (the tier then
/// stages the operands): both activations planar (each channel's pixels
/// contiguous, channel and image strides multiples of 4 elements; the forward
/// and data faces' input may be channels_last_pixels instead), the pixels
/// a multiple of 4 (8-byte vectors along them), the filter's input channels
/// contiguous and a multiple of 8, not a GEMM epilogue's fp32 result.
Status native_nchw_pointwise(const ConvProblem& problem);

/// Elements per access along the planar tensors' pixels (the native
/// relation's): 8 (16 bytes) where the pixels per image and every planar
/// tensor's channel and image strides are multiples of 8, else 4 (8 bytes:
/// 14 x 14 images' 196 pixels), read by cp.async only (TMA maps need 16-byte
/// rows: tma_blocker).
int native_pixel_vector(const Relation& native);

/// The relation the native GEMM runs: the problem's, except for the data face,
/// whose A and B swap and whose filter is read transposed (outer stride: the
/// GEMM's rows, the input channels) so that every face reads out = W * in.
Relation native_relation(const ConvProblem& problem);

/// conv_wgmma_nchw.cuh's Cfg members beyond the tier's: kImages, kHW, kK,
/// XC, YC, WC and kAMnMajor (w's rows contiguous along M: the data face),
/// kBKMajor where `in` lies channels-last, and kPixelVector where
/// native_pixel_vector is not 8.
std::string native_constants(const Relation& r);

}  // namespace boo::ops::conv
