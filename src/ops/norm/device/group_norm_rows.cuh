// boo device code: group norm with one block per (sample, group)
// (gpu:groupnorm:rows), for groups small enough that one block streams them
// twice (the second time from L2) faster than the groups tier's three to
// five launches take: the SD-UNet's group norms (0.3-5 MB at batch 2, 64
// groups of 5-80 KB) spent more time in launches than in memory traffic.
//
// A group is viewed as a [rows][cols] array whose cols are contiguous:
//   planes (NC(D)HW):     rows = the group's cpg channels, cols = the spatial
//                         elements, row r at (n * C + g * cpg + r) * spatial;
//   channels last:        rows = the spatial elements, cols = the group's cpg
//                         channels, row r at (n * spatial + r) * C + g * cpg.
// The block's kThreadsX x kThreadsY threads cover it as kVec-element vectors,
// x along cols (vector x + j * kThreadsX), y along rows (row y + i * kThreadsY).
// A pass adds each channel's terms (kernels/reduce/shifted_sums.cuh: the
// moments about the group's first element, or dy and dy * (x - mean)) into
// the float64 per-channel sums `sums` [cpg][2] in shared memory in a fixed
// order; the group's totals add them in channel order. Forward: the moments,
// the statistics, y. Backward: the gradient sums, dx's coefficients, dx, and
// with the affine parameters each (sample, channel)'s dbias and dweight terms
// in the workspace for group_norm_rows_param_grads, which adds them in sample
// order. The coefficients are the groups tier's (device/group_norm.cuh).
#pragma once

#include "boo/kernels/arch/sm90_cluster.cuh"
#include "boo/kernels/reduce/shifted_sums.cuh"
#include "boo/norm/group_norm_params.cuh"

namespace boo {
namespace group_rows {

/// The group's [rows][cols] view: element offsets of its first element and
/// its row stride, and its extents.
template <bool kChannelsLast>
struct GroupView {
  long long base, row_stride, rows, cols;
  __device__ __forceinline__ GroupView(const GroupNormParams& p, long long n, long long g) {
    const long long cpg = p.channels / p.groups;
    base = kChannelsLast ? n * p.spatial * p.channels + g * cpg : (n * p.channels + g * cpg) * p.spatial;
    row_stride = kChannelsLast ? p.channels : p.spatial;
    rows = kChannelsLast ? p.spatial : cpg;
    cols = kChannelsLast ? cpg : p.spatial;
  }
  /// Vector v (kVec elements) of row r, as an index of kVec-element vectors (the host makes base,
  /// row_stride and cols multiples of kVec).
  template <int kVec>
  __device__ __forceinline__ long long vector(long long r, long long v) const {
    return (base + r * row_stride) / kVec + v;
  }
};

/// Rows a channels-last thread loads before it adds or writes them (in row order): one row at a time,
/// a block streamed an SD-UNet group of 40 KB at about 10 GB/s (H100).
constexpr int kRowsInFlight = 4;

/// Channels last: calls visit(row, x, dy) for channel vector tx of rows ty, ty + kThreadsY, ... of the
/// group in row order, kRowsInFlight rows' x (and, kWithDy, dy) loaded before the first of them is visited.
template <typename T, int kVec, int kThreadsY, bool kWithDy, class Visit>
__device__ __forceinline__ void visit_rows(const GroupNormParams& p, const GroupView<true>& view, int tx, int ty,
                                           Visit visit) {
  for (long long r0 = ty; r0 < view.rows; r0 += kThreadsY * kRowsInFlight) {
    float x[kRowsInFlight][kVec], dy[kRowsInFlight][kVec];  // [row of the step][channel of the vector]
#pragma unroll
    for (int u = 0; u < kRowsInFlight; ++u) {
      const long long r = r0 + u * kThreadsY;
      load_vector<T, kVec>(p.x, view.template vector<kVec>(r, tx), r < view.rows, x[u]);
      if (kWithDy) load_vector<T, kVec>(p.dy, view.template vector<kVec>(r, tx), r < view.rows, dy[u]);
    }
#pragma unroll
    for (int u = 0; u < kRowsInFlight; ++u) {
      const long long r = r0 + u * kThreadsY;
      if (r >= view.rows) break;
      visit(r, x[u], dy[u]);
    }
  }
}

/// Per-channel sums of the group's terms into `sums` ([cpg][2] doubles, shared): the moments about
/// `centre` (kGradients false) or the gradient terms about the mean high + low (kGradients true).
/// Channels last: each thread keeps a channel vector (x < cols / kVec: the host's rule) over its rows,
/// kRowsInFlight rows' loads at once;
/// `scratch` ([kThreadsY][cols] Sum2) collects the threads' sums, added over y in order. Planes: each
/// row (a channel) is summed by its kThreadsX lanes and their shuffles. Ends with a barrier.
template <typename T, int kVec, int kThreadsX, int kThreadsY, bool kChannelsLast, bool kGradients>
__device__ __forceinline__ void channel_sums(const GroupNormParams& p, const GroupView<kChannelsLast>& view,
                                             float centre, float low, double* sums, Sum2* scratch) {
  const int tx = static_cast<int>(threadIdx.x) % kThreadsX, ty = static_cast<int>(threadIdx.x) / kThreadsX;
  const long long col_vectors = view.cols / kVec;
  if constexpr (kChannelsLast) {
    Sum2 acc[kVec];  // [channel of the thread's vector]
    float centres[kVec], lows[kVec];
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      acc[k] = Sum2{0.f, 0.f};
      centres[k] = centre;
      lows[k] = low;
    }
    if (tx < col_vectors)
      visit_rows<T, kVec, kThreadsY, kGradients>(p, view, tx, ty,
                                                 [&](long long, const float (&x)[kVec], const float (&dy)[kVec]) {
#pragma unroll
                                                   for (int k = 0; k < kVec; ++k)
                                                     add_shifted_terms<kGradients>(x[k], dy[k], centres[k], lows[k],
                                                                                   acc[k]);
                                                 });
    if (tx < col_vectors)
#pragma unroll
      for (int k = 0; k < kVec; ++k) scratch[ty * view.cols + tx * kVec + k] = acc[k];
    __syncthreads();
    for (long long c = threadIdx.x; c < view.cols; c += blockDim.x) {
      double a = 0, b = 0;
      for (int y = 0; y < kThreadsY; ++y) {
        a += scratch[y * view.cols + c].a;
        b += scratch[y * view.cols + c].b;
      }
      sums[2 * c] = a;
      sums[2 * c + 1] = b;
    }
  } else {
    // Every warp runs the same row rounds: the lanes of a row group shuffle together.
    for (long long r0 = 0; r0 < view.rows; r0 += kThreadsY) {
      const long long r = r0 + ty;
      Sum2 acc{0.f, 0.f};
      if (r < view.rows)
        for (long long v = tx; v < col_vectors; v += kThreadsX)
          add_shifted_vector<T, T, kVec, kGradients>(p.x, p.dy, view.template vector<kVec>(r, v), centre, low, acc);
      acc = lane_group_sum2<kThreadsX>(acc);
      if (tx == 0 && r < view.rows) {
        sums[2 * r] = acc.a;
        sums[2 * r + 1] = acc.b;
      }
    }
  }
  __syncthreads();
}

/// a = rstd * weight of channel c, rounded once (the groups tier's coefficient).
template <typename T, bool kAffine>
__device__ __forceinline__ float scale(const GroupNormParams& p, double rstd, long long c) {
  return kAffine ? static_cast<float>(rstd * static_cast<double>(load_as_float<T>(p.weight, c))) : static_cast<float>(rstd);
}

/// The elementwise pass over the group (channels [c_first, c_first + cpg)): y = (x - mean) * a + bias
/// (forward), or dx = a * dy + b * (x - mean) + c0 (kBackward), a = scale() of the element's channel, the
/// mean as high + low. A channels-last thread keeps its vector's channels' coefficients; a plane's row
/// group its row's.
template <typename T, int kVec, int kThreadsX, int kThreadsY, bool kChannelsLast, bool kBackward, bool kAffine>
__device__ __forceinline__ void apply(const GroupNormParams& p, const GroupView<kChannelsLast>& view, long long c_first,
                                      double rstd, float high, float low, float b, float c0) {
  const int tx = static_cast<int>(threadIdx.x) % kThreadsX, ty = static_cast<int>(threadIdx.x) / kThreadsX;
  const long long col_vectors = view.cols / kVec;
  // Writes y (dx) of vector `index` from its x (and dy).
  auto finish = [&](long long index, const float (&x)[kVec], const float (&dy)[kVec], const float (&a)[kVec],
                    const float (&bias)[kVec]) {
    float out[kVec];  // [element of the vector]
    if (kBackward) {
#pragma unroll
      for (int k = 0; k < kVec; ++k) out[k] = a[k] * dy[k] + b * ((x[k] - high) - low) + c0;
      store_vector<T, kVec>(p.dx, index, out);
    } else {
#pragma unroll
      for (int k = 0; k < kVec; ++k) out[k] = ((x[k] - high) - low) * a[k] + bias[k];
      store_vector<T, kVec>(p.y, index, out);
    }
  };
  float a[kVec], bias[kVec];  // [element of the vector]: its channel's
  if constexpr (kChannelsLast) {
    if (tx >= col_vectors) return;
#pragma unroll
    for (int k = 0; k < kVec; ++k) {
      a[k] = scale<T, kAffine>(p, rstd, c_first + tx * kVec + k);
      bias[k] = !kBackward && kAffine ? load_as_float<T>(p.bias, c_first + tx * kVec + k) : 0.f;
    }
    visit_rows<T, kVec, kThreadsY, kBackward>(p, view, tx, ty,
                                              [&](long long r, const float (&x)[kVec], const float (&dy)[kVec]) {
                                                finish(view.template vector<kVec>(r, tx), x, dy, a, bias);
                                              });
  } else {
    for (long long r = ty; r < view.rows; r += kThreadsY) {
      const float ar = scale<T, kAffine>(p, rstd, c_first + r);
      const float br = !kBackward && kAffine ? load_as_float<T>(p.bias, c_first + r) : 0.f;
#pragma unroll
      for (int k = 0; k < kVec; ++k) {
        a[k] = ar;
        bias[k] = br;
      }
      for (long long v = tx; v < col_vectors; v += kThreadsX) {
        float x[kVec], dy[kVec];  // [element of the vector]
        load_vector<T, kVec>(p.x, view.template vector<kVec>(r, v), true, x);
        if (kBackward) load_vector<T, kVec>(p.dy, view.template vector<kVec>(r, v), true, dy);
        finish(view.template vector<kVec>(r, v), x, dy, a, bias);
      }
    }
  }
}

}  // namespace group_rows

namespace group_rows {

/// The value at `local`'s offset in the shared memory of the cluster's CTA `rank` (this CTA's own included).
__device__ __forceinline__ double load_cluster_shared(const double* local, unsigned rank) {
  double v;
  asm volatile(
      "{\n.reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %1, %2;\n"
      "ld.shared::cluster.f64 %0, [remote];\n}\n"
      : "=d"(v)
      : "r"(sm90::shared_address(local)), "r"(rank)
      : "memory");
  return v;
}

/// The cluster's per-channel sums: totals[i] = the sum over the cluster's CTAs, in rank order, of their sums[i]
/// ([count] doubles, shared), the same in every CTA. The first cluster barrier waits for every CTA's sums
/// (written before its block's last barrier), the second for every CTA's reads of them (the next pass
/// overwrites them; a CTA must not exit while another reads its shared memory).
template <int kCluster>
__device__ __forceinline__ void cluster_totals(const double* sums, double* totals, long long count) {
  sm90::cluster_sync();
  for (long long i = threadIdx.x; i < count; i += blockDim.x) {
    double t = 0;
#pragma unroll
    for (unsigned r = 0; r < kCluster; ++r) t += load_cluster_shared(sums + i, r);
    totals[i] = t;
  }
  sm90::cluster_sync();
}

/// The part of a group's view that CTA `rank` of a cluster of kCluster covers: a run of
/// `per_part` spatial elements (channels last: rows; planes: columns, per_part a multiple of kVec),
/// the last parts shorter or empty.
template <int kCluster, bool kChannelsLast>
__device__ __forceinline__ GroupView<kChannelsLast> cluster_part(GroupView<kChannelsLast> view, long long spatial,
                                                                 long long per_part, unsigned rank) {
  const long long first = min(spatial, rank * per_part), count = min(spatial - first, per_part);
  if (kChannelsLast) {
    view.base += first * view.row_stride;
    view.rows = count;
  } else {
    view.base += first;
    view.cols = count;
  }
  return view;
}

/// Group norm of (sample, group) `row` over `part`, this CTA's part of the group's view `whole` (all of it
/// without a cluster): group_norm_rows' passes, each pass's per-channel sums added over the cluster's CTAs.
/// Only rank 0 writes what is per group (mean, rstd, the dweight and dbias terms).
template <typename T, int kVec, int kThreadsX, int kThreadsY, bool kChannelsLast, bool kForward, bool kDx,
          bool kAffine, bool kParamGrads, int kCluster>
__device__ __forceinline__ void one_group(const GroupNormParams& p, long long row, const GroupView<kChannelsLast>& whole,
                                          const GroupView<kChannelsLast>& part, unsigned rank, double* sums,
                                          double* totals, Sum2* scratch, double* statistics) {
  const long long n = row / p.groups, g = row % p.groups, cpg = p.channels / p.groups;
  const double count = static_cast<double>(cpg) * static_cast<double>(p.spatial);
  double mean = 0, rstd = 0;
  if constexpr (kForward) {
    const float centre = load_as_float<T>(p.x, whole.base);  // the group's first element: no cancellation
    channel_sums<T, kVec, kThreadsX, kThreadsY, kChannelsLast, false>(p, part, centre, 0.f, sums, scratch);
    if constexpr (kCluster > 1) cluster_totals<kCluster>(sums, totals, 2 * cpg);
    if (threadIdx.x == 0) {
      double s1 = 0, s2 = 0;
      for (long long c = 0; c < cpg; ++c) {
        s1 += totals[2 * c];
        s2 += totals[2 * c + 1];
      }
      const double shift = s1 / count;
      double var = s2 / count - shift * shift;
      var = var > 0 ? var : 0;
      statistics[0] = static_cast<double>(load_as_float<T>(p.x, whole.base)) + shift;  // centre, read again
      statistics[1] = 1.0 / sqrt(var + static_cast<double>(p.eps));
      if (rank == 0) {
        reinterpret_cast<float*>(p.mean)[row] = static_cast<float>(statistics[0]);
        reinterpret_cast<float*>(p.rstd)[row] = static_cast<float>(statistics[1]);
      }
    }
    __syncthreads();
    mean = statistics[0];
    rstd = statistics[1];
    const float high = static_cast<float>(mean), low = static_cast<float>(mean - static_cast<double>(high));
    apply<T, kVec, kThreadsX, kThreadsY, kChannelsLast, false, kAffine>(p, part, g * cpg, rstd, high, low, 0.f, 0.f);
  } else {
    mean = reinterpret_cast<const float*>(p.mean)[row];
    rstd = reinterpret_cast<const float*>(p.rstd)[row];
  }
  if constexpr (kDx) {
    // The groups tier's coefficients: mean_g and mean_gx of g = dy * weight over the group, then
    // dx = a * dy + b * (x - mean) + c with a = rstd * weight, b = -rstd^2 * mean_gx, c = -rstd * mean_g.
    const float high = static_cast<float>(mean), low = static_cast<float>(mean - static_cast<double>(high));
    channel_sums<T, kVec, kThreadsX, kThreadsY, kChannelsLast, true>(p, part, high, low, sums, scratch);
    if constexpr (kCluster > 1) cluster_totals<kCluster>(sums, totals, 2 * cpg);
    if (threadIdx.x == 0) {
      double sum_g = 0, sum_gx = 0;
      for (long long c = 0; c < cpg; ++c) {
        const double w = kAffine ? static_cast<double>(load_as_float<T>(p.weight, g * cpg + c)) : 1.0;
        sum_g += w * totals[2 * c];
        sum_gx += w * totals[2 * c + 1];
      }
      const double mean_g = sum_g / count, mean_gx = rstd * sum_gx / count;
      statistics[2] = -rstd * rstd * mean_gx;
      statistics[3] = -rstd * mean_g;
    }
    if constexpr (kParamGrads) {
      double* terms = reinterpret_cast<double*>(p.partials);  // [N][C][2]: sum(dy), rstd * sum(dy * (x - mean))
      if (rank == 0)
        for (long long c = threadIdx.x; c < cpg; c += blockDim.x) {
          terms[2 * (n * p.channels + g * cpg + c)] = totals[2 * c];
          terms[2 * (n * p.channels + g * cpg + c) + 1] = rstd * totals[2 * c + 1];
        }
    }
    __syncthreads();
    const float b = static_cast<float>(statistics[2]), c0 = static_cast<float>(statistics[3]);
    apply<T, kVec, kThreadsX, kThreadsY, kChannelsLast, true, kAffine>(p, part, g * cpg, rstd, high, low, b, c0);
  }
}

}  // namespace group_rows

/// One block per (sample, group) `blockIdx.x` (n * groups + g), or with
/// kCluster > 1 (sm_90) a cluster of kCluster blocks per (sample, group),
/// each covering a run of the spatial elements and the clusters striding
/// the groups (a persistent grid; the runtime trims it to the clusters that
/// run at once): the forward (kForward: y, mean and rstd) and/or the
/// backward (kDx: dx from the forward's statistics or the saved ones; with
/// kParamGrads each channel's dbias and dweight terms of this sample in
/// p.partials as [N][C] pairs of doubles). A cluster lets the few groups of
/// a small batch (64 at an SD-UNet's batch 2) spread over every SM. Dynamic
/// shared memory: [cpg][2] doubles, with a cluster [cpg][2] doubles more
/// (the cluster's totals), then (channels last) [kThreadsY][cpg] Sum2.
template <typename T, int kVec, int kThreadsX, int kThreadsY, bool kChannelsLast, bool kForward, bool kDx,
          bool kAffine, bool kParamGrads, int kCluster = 1>
__device__ void group_norm_rows(const GroupNormParams& p) {
  using View = group_rows::GroupView<kChannelsLast>;
  extern __shared__ double group_shared[];
  const long long cpg = p.channels / p.groups;
  double* sums = group_shared;                                      // [cpg][2]: this CTA's
  double* totals = kCluster > 1 ? sums + 2 * cpg : sums;            // [cpg][2]: the cluster's
  Sum2* scratch = reinterpret_cast<Sum2*>(totals + 2 * cpg);  // channels last: [kThreadsY][cpg]
  __shared__ double statistics[4];                                  // mean, rstd; the backward's b and c
  if constexpr (kCluster == 1) {
    const View view(p, blockIdx.x / p.groups, blockIdx.x % p.groups);
    group_rows::one_group<T, kVec, kThreadsX, kThreadsY, kChannelsLast, kForward, kDx, kAffine, kParamGrads, 1>(
        p, blockIdx.x, view, view, 0, sums, totals, scratch, statistics);
  } else {
    const unsigned rank = sm90::cluster_rank();
    // Spatial elements per CTA: a whole number of vectors (planes' columns are vectors).
    const long long per_part = ((p.spatial + kCluster - 1) / kCluster + kVec - 1) / kVec * kVec;
    for (long long row = blockIdx.x / kCluster; row < p.samples * p.groups; row += gridDim.x / kCluster) {
      const View whole(p, row / p.groups, row % p.groups);
      const View part = group_rows::cluster_part<kCluster, kChannelsLast>(whole, p.spatial, per_part, rank);
      group_rows::one_group<T, kVec, kThreadsX, kThreadsY, kChannelsLast, kForward, kDx, kAffine, kParamGrads,
                            kCluster>(p, row, whole, part, rank, sums, totals, scratch, statistics);
    }
  }
}

/// One thread per channel, after group_norm_rows' backward: dbias and dweight
/// as the sums over the samples, in sample order, of its terms.
template <typename T>
__device__ void group_norm_rows_param_grads(const GroupNormParams& p) {
  const long long c = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= p.channels) return;
  const double* terms = reinterpret_cast<const double*>(p.partials);  // [N][C][2]
  double db = 0, dw = 0;
  for (long long n = 0; n < p.samples; ++n) {
    db += terms[2 * (n * p.channels + c)];
    dw += terms[2 * (n * p.channels + c) + 1];
  }
  store_from_float<T>(p.dweight, c, static_cast<float>(dw));
  store_from_float<T>(p.dbias, c, static_cast<float>(db));
}

}  // namespace boo
