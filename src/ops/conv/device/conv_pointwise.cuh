// boo device code: gpu:conv:pointwise — pointwise convs (1x1, stride 1, no
// padding, groups 1) of planar (NCHW-like) tensors with few channels, at the
// speed of reading and writing the tensors.
//
// In that layout each channel's pixels are contiguous, so the conv is, per
// image, a GEMM whose N dimension is the pixels:
//
//   forward, data faces:  out[m][j] = sum_r W(m, r) in[r][j]   (M x L) = (M x R)(R x L)
//   weight face:          dW[m][n] = sum_j B[m][j] A[n][j]     (M x N), summed over L
//
// with j the pixel column over every image in a row (j = n * kHW + p: a tile
// of kTP columns may span images, so 7x7 and 14x14 images fill tiles too).
// Forward: in = A, out = B, W(m, r) = w[m][r]; data face: in = B, out = A,
// W(m, r) = w[r][m] (the transposed filter, read through its strides).
//
// Each CTA (256 threads) keeps the filter in shared memory and streams tiles
// of kTP columns: the R (or M + N) rows of a tile are copied with cp.async
// vectors along the pixels (16 bytes where the pixels per image and the
// strides allow) into one of two stages while the other is multiplied:
// mma.sync m16n8k16 (fp32 accumulation) for bf16/fp16, FFMA for fp32. The
// forward and data faces stage the product (bias, activation, rounded to T)
// in shared memory and write it as vectors along the pixels; the weight face
// sums its CTA's run of tiles into fp32 partials [split][M][N] that
// split_k.cuh's reduce adds in a fixed order (deterministic).
//
// Every size, stride and shared-memory offset is a constant of the generated
// Cfg (conv_pointwise_impl.cpp); shapes are in the comments as [rows][cols].
#pragma once

#include "boo/conv/conv_pointwise_index.cuh"
#include "boo/conv/conv_pointwise_params.cuh"
#include "boo/kernels/arch/sm80.cuh"
#include "boo/kernels/gemm/split_k.cuh"
#include "boo/kernels/types.cuh"

namespace boo::pointwise {

template <class T, int kBytes>
struct Bits;  // a vector of kBytes as one integer type
template <class T>
struct Bits<T, 2> {
  using type = unsigned short;
};
template <class T>
struct Bits<T, 4> {
  using type = unsigned;
};
template <class T>
struct Bits<T, 8> {
  using type = uint2;
};
template <class T>
struct Bits<T, 16> {
  using type = uint4;
};

/// Copies channel rows [0, kRows) and pixel columns [j0, j0 + kTP) of a planar
/// tensor (image stride kSN, channel stride kSC) into `tile` [kRows][kPitch]
/// of T; columns past kL are zeros. kVec elements per copy: kVec divides kHW,
/// kSN, kSC and kTP (the plan checks), so no vector straddles two images.
/// Narrower than 4 bytes (16-bit elements of odd pixel counts) the copy goes
/// through registers, since cp.async moves 4 bytes at least.
template <class C, int kRows, int kPitch, long long kSN, long long kSC>
__device__ __forceinline__ void load_tile(typename C::T* tile, unsigned long long base, long long j0) {
  using T = typename C::T;
  using I = Index<C>;
  constexpr int kVec = C::kInVec, kBytes = kVec * static_cast<int>(sizeof(T)), kVecs = C::kTP / kVec;
  const T* src = reinterpret_cast<const T*>(base);
  for (int l = threadIdx.x; l < kRows * kVecs; l += C::kThreads) {
    const int row = l / kVecs, col = l % kVecs * kVec;
    const bool valid = j0 + col < C::kL;
    const I j = valid ? static_cast<I>(j0 + col) : I(0);
    const T* from = src + planar_offset<I, C::kHW>(j, static_cast<I>(row), static_cast<I>(kSN), static_cast<I>(kSC));
    T* to = tile + row * kPitch + col;
    if constexpr (kBytes >= 4) {
      cp_async_vector<kBytes>(to, from, valid);
    } else {
      *to = valid ? *from : from_float<T>(0.f);
    }
  }
}

/// Zeros rows [kFrom, kTo) of `tile` [..][kPitch] (the reduction's padding to
/// 16 channels, which the copies never write: 0 * garbage could be NaN).
template <class C, int kFrom, int kTo, int kPitch>
__device__ __forceinline__ void zero_rows(typename C::T* tile) {
  for (int l = threadIdx.x; l < (kTo - kFrom) * kPitch; l += C::kThreads)
    tile[kFrom * kPitch + l] = from_float<typename C::T>(0.f);
}

template <class T>
struct IsBf16 {
  static constexpr bool value = false;
};
template <>
struct IsBf16<bf16> {
  static constexpr bool value = true;
};

/// D(16x8) += A(16x16) * B(16x8) in T (bf16 or f16), fp32 accumulation.
template <class T>
__device__ __forceinline__ void mma_16816(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  if constexpr (IsBf16<T>::value) {
    mma_bf16_16816(d, a, b);
  } else {
    mma_f16_16816(d, a, b);
  }
}

/// The forward or data face's epilogue of element (m, column) of the tile.
template <class C>
__device__ __forceinline__ float epilogue(float v, const ConvPointwiseParams& p, int m) {
  if constexpr (C::kBias) v += load_as_float<typename C::T>(p.bias, m);
  return activate<C::kAct>(v, p.act_alpha, p.act_lo, p.act_hi);
}

/// Writes rows [0, kM) of the finished tile `out_s` [kMPad][kOutPitch] of T
/// to pixel columns [j0, j0 + kTP) of the output, kOutVec elements a store.
template <class C>
__device__ __forceinline__ void store_tile(const typename C::T* out_s, unsigned long long out, long long j0) {
  using T = typename C::T;
  using I = Index<C>;
  using V = typename Bits<T, C::kOutVec * static_cast<int>(sizeof(T))>::type;
  constexpr int kVecs = C::kTP / C::kOutVec;
  T* dst = reinterpret_cast<T*>(out);
  for (int l = threadIdx.x; l < C::kM * kVecs; l += C::kThreads) {
    const int row = l / kVecs, col = l % kVecs * C::kOutVec;
    if (j0 + col >= C::kL) continue;
    const I off = planar_offset<I, C::kHW>(static_cast<I>(j0 + col), static_cast<I>(row), static_cast<I>(C::OUT_N),
                                           static_cast<I>(C::OUT_C));
    *reinterpret_cast<V*>(dst + off) = *reinterpret_cast<const V*>(out_s + row * C::kOutPitch + col);
  }
}

/// The filter as W(m, r) (element m * FM + r * FR of w) into `w_s` [kMPad][kFPitch]
/// of T, zero in the padding rows and columns. Every CTA reads it before its
/// first product, so it is on the critical path of small grids (one or two
/// tiles a CTA): the reads are coalesced along whichever of m and r is
/// contiguous in w, and each thread issues kBatch of them before it stores any
/// (independent loads in flight, not one L2 round trip per element).
///   FR == 1 (forward: KCRS's w[k][c]): consecutive threads read consecutive r.
///   FM == 1 (data face: w[r][m], the transpose): consecutive threads read
///   consecutive m; on tensor cores each thread gathers 8 consecutive r of its
///   m and stores them as one 16-byte vector (kFPitch is 8 x an odd number of
///   elements: the 8 threads of a quarter warp hit distinct banks); in fp32
///   one element a store (kFPitch odd: distinct banks).
template <class C>
__device__ __forceinline__ void load_filter(typename C::T* w_s, unsigned long long w) {
  using T = typename C::T;
  const T* src = reinterpret_cast<const T*>(w);
  constexpr bool kMFast = C::FM == 1 && C::FR != 1;
  constexpr int kRun = kMFast && C::kTensorCores ? 16 / static_cast<int>(sizeof(T)) : 1;  // r per thread
  static_assert(C::kFPitch % kRun == 0, "whole runs per filter row");
  constexpr int kRuns = C::kMPad * (C::kFPitch / kRun), kBatch = kRun == 1 ? 8 : 1;
  struct alignas(kRun * sizeof(T)) Run {
    T v[kRun];
  };
  for (int l0 = 0; l0 < kRuns; l0 += C::kThreads * kBatch) {
    Run run[kBatch];  // [kBatch][kRun]
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int l = l0 + b * C::kThreads + static_cast<int>(threadIdx.x);
      const int m = kMFast ? l % C::kMPad : l / C::kFPitch, r0 = kMFast ? l / C::kMPad * kRun : l % C::kFPitch;
#pragma unroll
      for (int i = 0; i < kRun; ++i)
        run[b].v[i] = l < kRuns && m < C::kM && r0 + i < C::kR ? src[m * C::FM + (r0 + i) * C::FR] : from_float<T>(0.f);
    }
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const int l = l0 + b * C::kThreads + static_cast<int>(threadIdx.x);
      const int m = kMFast ? l % C::kMPad : l / C::kFPitch, r0 = kMFast ? l / C::kMPad * kRun : l % C::kFPitch;
      if (l < kRuns) *reinterpret_cast<Run*>(w_s + m * C::kFPitch + r0) = run[b];
    }
  }
}

/// One tile of the forward or data face on tensor cores: `in_s` [kRPad][kInPitch]
/// times the filter `w_s` [kMPad][kFPitch] into `out_s` [kMPad][kOutPitch].
/// Warp (wm, wn) owns rows [wm * kWarpRows, +kWarpRows) and columns
/// [wn * kWarpCols, +kWarpCols): its A fragments come from the filter with
/// ldmatrix, its B fragments from the pixel-contiguous tile with ldmatrix.trans.
template <class C>
__device__ __forceinline__ void product_mma(const typename C::T* in_s, const typename C::T* w_s,
                                            typename C::T* out_s, const ConvPointwiseParams& p) {
  using T = typename C::T;
  constexpr int kWarpRows = C::kMPad / C::kWarpsM, kWarpCols = C::kTP / C::kWarpsN;
  constexpr int kMi = kWarpRows / 16, kNj = kWarpCols / 8;
  static_assert(kWarpRows % 16 == 0 && kWarpCols % 16 == 0, "whole m16 blocks and n8 pairs per warp");
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row0 = warp / C::kWarpsN * kWarpRows, col0 = warp % C::kWarpsN * kWarpCols;
  float acc[kMi][kNj][4];
#pragma unroll
  for (int i = 0; i < kMi; ++i)
#pragma unroll
    for (int j = 0; j < kNj; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.f;
  int ar, ac, br, bc;
  ldmatrix_source<kMatrixA>(lane, ar, ac);
  ldmatrix_source<kPairKN>(lane, br, bc);
#pragma unroll 2
  for (int k0 = 0; k0 < C::kRPad; k0 += 16) {
    unsigned a[kMi][4];
#pragma unroll
    for (int i = 0; i < kMi; ++i) ldmatrix_x4(a[i], w_s + (row0 + i * 16 + ar) * C::kFPitch + k0 + ac);
#pragma unroll
    for (int j = 0; j < kNj; j += 2) {
      unsigned b[4];
      ldmatrix_x4_trans(b, in_s + (k0 + br) * C::kInPitch + col0 + j * 8 + bc);
      const unsigned b0[2] = {b[0], b[1]}, b1[2] = {b[2], b[3]};
#pragma unroll
      for (int i = 0; i < kMi; ++i) {
        mma_16816<T>(acc[i][j], a[i], b0);
        mma_16816<T>(acc[i][j + 1], a[i], b1);
      }
    }
  }
#pragma unroll
  for (int i = 0; i < kMi; ++i)
#pragma unroll
    for (int j = 0; j < kNj; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        int r, c;
        accumulator_place(lane, q, r, c);
        const int m = row0 + i * 16 + r;
        if (m < C::kM) out_s[m * C::kOutPitch + col0 + j * 8 + c] = from_float<T>(epilogue<C>(acc[i][j][q], p, m));
      }
}

/// The same in fp32 on FFMA (full precision): thread (rg, cg) owns rows
/// [rg * kTM, +kTM) and the 4 columns [cg * 4, +4); a warp's threads share
/// rg (kTP >= 128) so the filter reads are broadcasts.
template <class C>
__device__ __forceinline__ void product_ffma(const float* in_s, const float* w_s, float* out_s,
                                             const ConvPointwiseParams& p) {
  constexpr int kGroups = C::kTP / 4;
  const int cg = threadIdx.x % kGroups, rg = threadIdx.x / kGroups;
  float acc[C::kTM][4];
#pragma unroll
  for (int i = 0; i < C::kTM; ++i)
#pragma unroll
    for (int v = 0; v < 4; ++v) acc[i][v] = 0.f;
#pragma unroll 4
  for (int r = 0; r < C::kR; ++r) {
    const float4 x = *reinterpret_cast<const float4*>(in_s + r * C::kInPitch + cg * 4);
#pragma unroll
    for (int i = 0; i < C::kTM; ++i) {
      const float wv = w_s[(rg * C::kTM + i) * C::kFPitch + r];
      acc[i][0] = fmaf(wv, x.x, acc[i][0]);
      acc[i][1] = fmaf(wv, x.y, acc[i][1]);
      acc[i][2] = fmaf(wv, x.z, acc[i][2]);
      acc[i][3] = fmaf(wv, x.w, acc[i][3]);
    }
  }
#pragma unroll
  for (int i = 0; i < C::kTM; ++i) {
    const int m = rg * C::kTM + i;
    if (m >= C::kM) continue;
#pragma unroll
    for (int v = 0; v < 4; ++v) out_s[m * C::kOutPitch + cg * 4 + v] = epilogue<C>(acc[i][v], p, m);
  }
}

/// The forward and data faces: CTA b takes tiles b, b + gridDim.x, ... of
/// kTP pixel columns in two stages: its first two tiles' copies are issued
/// before the filter is read (their device-memory latency overlaps the
/// filter's), and the copy of the tile two ahead is issued as soon as a
/// product has freed its stage, so it flies while the output tile is stored.
template <class C>
__device__ void forward(const ConvPointwiseParams& p) {
  using T = typename C::T;
  extern __shared__ __align__(16) unsigned char smem[];
  T* w_s = reinterpret_cast<T*>(smem + C::kFilterAt);   // [kMPad][kFPitch]
  T* out_s = reinterpret_cast<T*>(smem + C::kOutAt);    // [kMPad][kOutPitch]
  auto stage = [&](int s) { return reinterpret_cast<T*>(smem + C::kStageAt + s * C::kStageBytes); };  // [kRPad][kInPitch]
  auto load = [&](int s, long long tile) {
    if (tile < C::kTiles) load_tile<C, C::kR, C::kInPitch, C::IN_N, C::IN_C>(stage(s), p.a, tile * C::kTP);
    cp_async_commit();  // one group per tile, empty past the last: the waits count tiles
  };
  long long tile = blockIdx.x;
  load(0, tile);
  load(1, tile + gridDim.x);
  load_filter<C>(w_s, p.w);
  zero_rows<C, C::kR, C::kRPad, C::kInPitch>(stage(0));
  zero_rows<C, C::kR, C::kRPad, C::kInPitch>(stage(1));
  for (int s = 0; tile < C::kTiles; tile += gridDim.x, s ^= 1) {
    cp_async_wait<1>();  // this tile's copies are done (the next one's may still fly)
    __syncthreads();
    if constexpr (C::kTensorCores) {
      product_mma<C>(stage(s), w_s, out_s, p);
    } else {
      product_ffma<C>(stage(s), w_s, out_s, p);
    }
    __syncthreads();  // out_s is whole; stage s is free
    load(s, tile + 2 * gridDim.x);
    store_tile<C>(out_s, p.out, tile * C::kTP);
    __syncthreads();  // out_s is read before the next product overwrites it
  }
  cp_async_wait<0>();
}

/// The weight face on tensor cores, one tile: B's rows `b_s` [kMPad][kInPitch]
/// (the GEMM's A, K-contiguous) times A's rows `a_s` [kNPad][kInPitch] (the
/// GEMM's B stored [n][k]). Warp w sums output blocks of 16 x 16, g = w %
/// kOutGroups, g + kOutGroups, ..., over the k16 steps w / kOutGroups,
/// + kPixSplits, ... of the tile.
template <class C>
__device__ __forceinline__ void weight_mma(const typename C::T* a_s, const typename C::T* b_s,
                                           float (&acc)[C::kBlocksPerWarp][2][4]) {
  using T = typename C::T;
  constexpr int kBlocksN = C::kNPad / 16, kBlocks = C::kMPad / 16 * kBlocksN;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = warp % C::kOutGroups, split = warp / C::kOutGroups;
  int ar, ac, br, bc;
  ldmatrix_source<kMatrixA>(lane, ar, ac);
  ldmatrix_source<kPairNK>(lane, br, bc);
  for (int k0 = split * 16; k0 < C::kTP; k0 += 16 * C::kPixSplits) {
#pragma unroll
    for (int bi = 0; bi < C::kBlocksPerWarp; ++bi) {
      const int blk = g + bi * C::kOutGroups;
      if (blk >= kBlocks) continue;
      const int bm = blk / kBlocksN, bn = blk % kBlocksN;
      unsigned a[4], b[4];
      ldmatrix_x4(a, b_s + (bm * 16 + ar) * C::kInPitch + k0 + ac);
      ldmatrix_x4(b, a_s + (bn * 16 + br) * C::kInPitch + k0 + bc);
      const unsigned b0[2] = {b[0], b[1]}, b1[2] = {b[2], b[3]};
      mma_16816<T>(acc[bi][0], a, b0);
      mma_16816<T>(acc[bi][1], a, b1);
    }
  }
}

/// The weight face in fp32 on FFMA, one tile: thread t sums micro-tiles of 4 x 4
/// outputs u = t % kOutThreads, + kOutThreads, ... over the column quads
/// t / kOutThreads, + kPixSplits, ...; micro-tile (mi, ni) holds rows
/// mi + i * kMPad / 4 and columns ni + j * kNPad / 4 (consecutive threads read
/// consecutive rows: no bank conflicts at a row pitch of kTP + 4). The tile's
/// sums are kept apart and added to `acc` after it (two-level sums:
/// docs/tolerances.md, "fp32 weight gradients").
template <class C>
__device__ __forceinline__ void weight_ffma(const float* a_s, const float* b_s,
                                            float (&acc)[C::kBlocksPerWarp][4][4]) {
  constexpr int kMq = C::kMPad / 4, kNq = C::kNPad / 4, kMicro = kMq * kNq;
  const int u0 = threadIdx.x % C::kOutThreads, split = threadIdx.x / C::kOutThreads;
#pragma unroll
  for (int bi = 0; bi < C::kBlocksPerWarp; ++bi) {
    const int u = u0 + bi * C::kOutThreads;
    if (u >= kMicro) continue;
    const int mi = u / kNq, ni = u % kNq;
    float part[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) part[i][j] = 0.f;
    for (int c4 = split * 4; c4 < C::kTP; c4 += 4 * C::kPixSplits) {
      float4 bv[4], av[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) bv[i] = *reinterpret_cast<const float4*>(b_s + (mi + i * kMq) * C::kInPitch + c4);
#pragma unroll
      for (int j = 0; j < 4; ++j) av[j] = *reinterpret_cast<const float4*>(a_s + (ni + j * kNq) * C::kInPitch + c4);
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
          part[i][j] += bv[i].x * av[j].x + bv[i].y * av[j].y + bv[i].z * av[j].z + bv[i].w * av[j].w;
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[bi][i][j] += part[i][j];
  }
}

/// The weight face, first pass: CTA s sums tiles [first(s), first(s + 1)) of
/// the L pixel columns, adds its warps' (threads') pixel splits in a fixed
/// order in shared memory and stores the CTA's sums as fp32 partials
/// [s][kM][kN] (split_k_reduce's layout, kGroups = 1).
template <class C>
__device__ void weight(const ConvPointwiseParams& p) {
  using T = typename C::T;
  extern __shared__ __align__(16) unsigned char smem[];
  auto a_stage = [&](int s) { return reinterpret_cast<T*>(smem + C::kStageAt + s * C::kStageBytes); };  // [kNPad][kInPitch]
  auto b_stage = [&](int s) { return reinterpret_cast<T*>(smem + C::kStageAt + s * C::kStageBytes + C::kBAt); };  // [kMPad][kInPitch]
  constexpr int kAccRows = C::kTensorCores ? 2 : 4, kAccCols = 4;
  float acc[C::kBlocksPerWarp][kAccRows][kAccCols];
#pragma unroll
  for (int bi = 0; bi < C::kBlocksPerWarp; ++bi)
#pragma unroll
    for (int i = 0; i < kAccRows; ++i)
#pragma unroll
      for (int j = 0; j < kAccCols; ++j) acc[bi][i][j] = 0.f;
#pragma unroll
  for (int s = 0; s < 2; ++s) {
    zero_rows<C, C::kN, C::kNPad, C::kInPitch>(a_stage(s));
    zero_rows<C, C::kM, C::kMPad, C::kInPitch>(b_stage(s));
  }
  const long long first = split_first_tile<C::kTiles, C::kSplits>(blockIdx.x);
  const long long last = split_first_tile<C::kTiles, C::kSplits>(blockIdx.x + 1);
  auto load = [&](int s, long long tile) {
    load_tile<C, C::kN, C::kInPitch, C::A_N, C::A_C>(a_stage(s), p.a, tile * C::kTP);
    load_tile<C, C::kM, C::kInPitch, C::B_N, C::B_C>(b_stage(s), p.b, tile * C::kTP);
  };
  if (first < last) load(0, first);
  cp_async_commit();
  int s = 0;
  for (long long tile = first; tile < last; ++tile, s ^= 1) {
    if (tile + 1 < last) load(s ^ 1, tile + 1);
    cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();
    if constexpr (C::kTensorCores) {
      weight_mma<C>(a_stage(s), b_stage(s), acc);
    } else {
      weight_ffma<C>(reinterpret_cast<const float*>(a_stage(s)), reinterpret_cast<const float*>(b_stage(s)), acc);
    }
    __syncthreads();  // stage s is free for the tile after next
  }
  cp_async_wait<0>();
  __syncthreads();
  // The splits' sums [kPixSplits][kMPad][kNPad] over the stages (the plan sizes them to fit).
  float* red = reinterpret_cast<float*>(smem + C::kStageAt);
  if constexpr (C::kTensorCores) {
    constexpr int kBlocksN = C::kNPad / 16, kBlocks = C::kMPad / 16 * kBlocksN;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = warp % C::kOutGroups, split = warp / C::kOutGroups;
#pragma unroll
    for (int bi = 0; bi < C::kBlocksPerWarp; ++bi) {
      const int blk = g + bi * C::kOutGroups;
      if (blk >= kBlocks) continue;
      const int bm = blk / kBlocksN, bn = blk % kBlocksN;
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          int r, c;
          accumulator_place(lane, q, r, c);
          red[(split * C::kMPad + bm * 16 + r) * C::kNPad + bn * 16 + h * 8 + c] = acc[bi][h][q];
        }
    }
  } else {
    constexpr int kMq = C::kMPad / 4, kNq = C::kNPad / 4, kMicro = kMq * kNq;
    const int u0 = threadIdx.x % C::kOutThreads, split = threadIdx.x / C::kOutThreads;
#pragma unroll
    for (int bi = 0; bi < C::kBlocksPerWarp; ++bi) {
      const int u = u0 + bi * C::kOutThreads;
      if (u >= kMicro) continue;
      const int mi = u / kNq, ni = u % kNq;
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) red[(split * C::kMPad + mi + i * kMq) * C::kNPad + ni + j * kNq] = acc[bi][i][j];
    }
  }
  __syncthreads();
  float* partials = reinterpret_cast<float*>(p.workspace) + static_cast<long long>(blockIdx.x) * C::kM * C::kN;
  for (int e = threadIdx.x; e < C::kM * C::kN; e += C::kThreads) {
    const int m = e / C::kN, n = e % C::kN;
    float sum = 0.f;
#pragma unroll
    for (int sp = 0; sp < C::kPixSplits; ++sp) sum += red[(sp * C::kMPad + m) * C::kNPad + n];
    partials[e] = sum;
  }
}

/// dW's place for split_k_reduce: element (m, n) of the M x N gradient at
/// m * FM + n * FN of the filter (no bias: the weight face has none).
template <class C>
struct WeightMap {
  __device__ static Index<C> out_offset(Index<C> m, Index<C> n, Index<C>, Index<C>& channel) {
    channel = m;
    return m * static_cast<Index<C>>(C::FM) + n * static_cast<Index<C>>(C::FN);
  }
};

/// The weight face, second pass: the splits' partials summed in a fixed order (float64) into dW.
template <class C>
__device__ void weight_reduce(const ConvPointwiseParams& p) {
  gemm::split_k_reduce<C, WeightMap<C>>(p);
}

}  // namespace boo::pointwise
