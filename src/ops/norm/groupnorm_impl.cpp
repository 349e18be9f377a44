// boo: gpu:groupnorm:groups, :rows and :fused — tiling, kernel source and launch plan of group norm.
#include "ops/norm/groupnorm_impl.hpp"

#include <algorithm>
#include <bit>

#include "ops/common/generated_source.hpp"
#include "ops/common/unverified_kernels.hpp"
#include "ops/norm/device/group_norm_params.cuh"
#include "ops/norm/norm_implementation.hpp"
#include "ops/norm/norm_problem.hpp"

namespace boo::ops::norm {
namespace {

constexpr int kBlock = 256;       // threads of the sums and apply kernels
constexpr int kStatsBlock = 128;  // threads of the per-group and per-channel kernels: a warp per group (or channel)
// Vectors each thread of the sums and apply kernels visits at least, and
// blocks per SM they aim for (as batch norm's).
constexpr int64_t kVectorsPerThread = 4;
constexpr int64_t kBlocksPerSm = 8;
constexpr int kSum2Bytes = 8;  // a Sum2: two floats
constexpr int64_t kMaxGridX = 2147483647, kMaxGridY = 65535;  // CUDA's limits

const char* flag(bool v) { return v ? "true" : "false"; }

// The largest divisor of n that is at most `limit` (at least 1), and the
// smallest that is at least `limit` (at most n).
int64_t divisor_at_most(int64_t n, int64_t limit) {
  for (int64_t d = std::clamp<int64_t>(limit, 1, n); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}
int64_t divisor_at_least(int64_t n, int64_t limit) {
  for (int64_t d = std::clamp<int64_t>(limit, 1, n); d < n; ++d)
    if (n % d == 0) return d;
  return n;
}

// How the sums and apply kernels cover x: vector width and block shape
// (channels last: threads_x channel vectors x threads_y spatial rows; planes:
// one piece of a plane, kBlock threads), the pieces of a plane or the slices
// of a sample's rows, and the kernels in launch order.
struct GroupNormConfig final : Config {
  int vec = 1;
  int threads_x = kBlock, threads_y = 1;
  int64_t blocks_x = 1, blocks_y = 1;
  int64_t pieces = 1;                                 ///< planes: runs per plane
  int64_t slices_per_sample = 1, rows_per_slice = 1;  ///< channels last
  /// A kernel in launch order: on the (blocks_x, blocks_y) grid, or one thread per group or channel.
  struct Kernel {
    KernelEntry entry;
    enum Grid { kElements, kPerGroup, kPerChannel } grid = kElements;
  };
  std::vector<Kernel> kernels;

  std::string text() const override {
    std::string record = "pieces=" + std::to_string(pieces) + ";slices_per_sample=" +
                         std::to_string(slices_per_sample) + ";rows_per_slice=" + std::to_string(rows_per_slice);
    for (const Kernel& k : kernels) record += ";" + k.entry.name + "=" + k.entry.call;
    return record;
  }
};

// The widest vector (up to 16 bytes) dividing what is contiguous per
// (sample, channel) run: the channels (channels last) or a plane.
int vector_width(const NormProblem& p) {
  int vec = static_cast<int>(16 / dtype_size_bytes(p.dtype));
  const int64_t run = p.channels_last ? p.channels : p.inner;
  while (vec > 1 && run % vec != 0) vec /= 2;
  return vec;
}

// Lanes of a channels-last block along a pixel's `vectors` channel vectors:
// all of them up to 8; above, of 32, 16 and 8 lanes the most that leave no
// more lanes idle in the last block than the others. 320 channels of 16
// bits, 40 vectors: 8 lanes in 5 blocks, none idle (32 lanes left 24 of 64
// idle, a quarter of the SD-UNet's channels-last threads).
int channel_lanes(int64_t vectors) {
  if (vectors <= 8) return static_cast<int>(std::bit_ceil(static_cast<uint64_t>(std::max<int64_t>(1, vectors))));
  int best = 32;
  for (int lanes : {32, 16, 8})
    if ((lanes - vectors % lanes) % lanes < (best - vectors % best) % best) best = lanes;
  return best;
}

// A step's tensors (by role) and sizes, as every group norm kernel takes them.
void bind_tensors(StepBuilder<GroupNormParams>& step, const TensorRoles& roles, const NormProblem& p) {
  GroupNormParams& params = step.params;
  auto bind = [&](unsigned long long& field, std::string_view role) {
    if (std::optional<TensorBinding> t = roles.find(role)) step.bind(field, *t);
  };
  bind(params.x, "x");
  bind(params.dy, "dy");
  bind(params.weight, "weight");
  bind(params.bias, "bias");
  bind(params.y, "y");
  bind(params.mean, "mean");
  bind(params.rstd, "rstd");
  bind(params.dx, "dx");
  bind(params.dweight, "dweight");
  bind(params.dbias, "dbias");
  params.samples = p.outer;
  params.channels = p.channels;
  params.groups = p.groups;
  params.spatial = p.inner;
  params.eps = static_cast<float>(p.eps);
}

class GroupNormGroups final : public Tier<NormProblem, GroupNormConfig> {
 public:
  explicit GroupNormGroups(std::string name) : name_(std::move(name)) {}
  std::string_view name() const override { return name_; }

  Status accepts_problem(const NormProblem& p, const ArchSpec&) const override {
    if (p.kind != NormKind::kGroup) return invalid_argument("not a groupnorm signature");
    return ok_status();
  }

  Result<GroupNormConfig> configure_problem(const NormProblem& p, const ArchSpec& arch) const override {
    return tiled(p, arch, kBlocksPerSm, kVectorsPerThread);
  }

  // boo tune's alternatives: nearby tilings (norm_implementation.hpp).
  std::vector<GroupNormConfig> alternatives(const NormProblem& p, const ArchSpec& arch, const GroupNormConfig&) const override {
    std::vector<GroupNormConfig> out;
    for (const auto& [blocks, vectors] : nearby_tilings(kBlocksPerSm, kVectorsPerThread))
      if (Result<GroupNormConfig> c = tiled(p, arch, blocks, vectors); c.ok()) out.push_back(std::move(*c));
    return out;
  }

  // Blocks enough for `blocks_per_sm` per SM, each thread visiting at least
  // `vectors_per_thread` vectors (kBlocksPerSm and kVectorsPerThread but for
  // boo tune's alternatives).
  Result<GroupNormConfig> tiled(const NormProblem& p, const ArchSpec& arch, int64_t blocks_per_sm,
                   int64_t vectors_per_thread) const {
    GroupNormConfig c;
    c.vec = vector_width(p);
    // Blocks enough to fill the GPU, each thread visiting at least vectors_per_thread vectors.
    const int64_t target_blocks = int64_t{arch.sm_count} * blocks_per_sm;
    if (p.channels_last) {
      const int64_t vectors = p.channels / c.vec;
      c.threads_x = channel_lanes(vectors);
      c.threads_y = kBlock / c.threads_x;
      c.blocks_x = (vectors + c.threads_x - 1) / c.threads_x;
      // Slices of a sample's spatial rows: a divisor of them, so no slice crosses samples.
      const int64_t min_rows = std::max<int64_t>(1, vectors_per_thread * c.threads_y);
      const int64_t want = std::max<int64_t>(1, target_blocks / (c.blocks_x * p.outer));
      const int64_t most = std::max<int64_t>(1, p.inner / min_rows);
      const int64_t slices = std::min(want, most);
      c.rows_per_slice = divisor_at_least(p.inner, (p.inner + slices - 1) / slices);
      c.slices_per_sample = p.inner / c.rows_per_slice;
      c.blocks_y = p.outer * c.slices_per_sample;
    } else {
      const int64_t plane_vectors = p.inner / c.vec;
      const int64_t planes = p.outer * p.channels;
      const int64_t want = std::max<int64_t>(1, (target_blocks + planes - 1) / planes);
      const int64_t most = std::max<int64_t>(1, plane_vectors / (vectors_per_thread * kBlock));
      c.pieces = divisor_at_most(plane_vectors, std::min(want, most));
      c.blocks_x = planes * c.pieces;
    }
    if (c.blocks_x > kMaxGridX || c.blocks_y > kMaxGridY)
      return unimplemented("a grid of " + std::to_string(c.blocks_x) + " x " + std::to_string(c.blocks_y) +
                           " blocks exceeds the device's limits");
    c.kernels = kernels(p, c);
    return c;
  }

  Result<Plan> plan_problem(const NormProblem& p, const GroupNormConfig& c, const ArchSpec&) const override {
    Plan plan;
    std::vector<KernelEntry> entries;
    for (const GroupNormConfig::Kernel& k : c.kernels) entries.push_back(k.entry);
    plan.source = generated_source("group_norm.cu", std::string(name()), "boo/norm/group_norm.cuh",
                                   "boo::GroupNormParams", entries);
    plan.tensor_alignment = static_cast<uint32_t>(c.vec * dtype_size_bytes(p.dtype));
    plan.workspace_bytes = workspace_bytes(p, c, 0);
    const TensorRoles roles(p.signature());
    for (const GroupNormConfig::Kernel& k : c.kernels) {
      const int64_t warps = k.grid == GroupNormConfig::Kernel::kPerGroup ? p.rows : p.channels;
      const Dim3 grid = k.grid == GroupNormConfig::Kernel::kElements
                            ? Dim3{static_cast<uint32_t>(c.blocks_x), static_cast<uint32_t>(c.blocks_y), 1}
                            : Dim3{static_cast<uint32_t>((warps * 32 + kStatsBlock - 1) / kStatsBlock), 1, 1};
      StepBuilder<GroupNormParams> step(k.entry.name, grid, {static_cast<uint32_t>(k.entry.threads), 1, 1});
      bind_step(step, roles, p, c, 0);
      plan.steps.push_back(std::move(step).finish());
    }
    return plan;
  }

  // The workspace from byte `base` on: the partials, the coefficients.
  static uint64_t workspace_bytes(const NormProblem& p, const GroupNormConfig& c, uint64_t base) {
    const uint64_t per_channel = static_cast<uint64_t>(p.outer * p.channels);  // (sample, channel) pairs
    const uint64_t parts = static_cast<uint64_t>(p.channels_last ? c.slices_per_sample : c.pieces);
    return base + per_channel * parts * kSum2Bytes + kGroupCoefficients * per_channel * sizeof(float);
  }

  // A step's tensors, workspace (from byte `base`) and sizes.
  static void bind_step(StepBuilder<GroupNormParams>& step, const TensorRoles& roles, const NormProblem& p,
                        const GroupNormConfig& c, uint64_t base) {
    const uint64_t per_channel = static_cast<uint64_t>(p.outer * p.channels);
    const uint64_t parts = static_cast<uint64_t>(p.channels_last ? c.slices_per_sample : c.pieces);
    const uint64_t partial_bytes = per_channel * parts * kSum2Bytes;
    bind_tensors(step, roles, p);
    GroupNormParams& params = step.params;
    step.bind(params.partials, TensorBinding::workspace(base));
    step.bind(params.coefficients, TensorBinding::workspace(base + partial_bytes));
    params.pieces = c.pieces;
    params.slices_per_sample = c.slices_per_sample;
    params.rows_per_slice = c.rows_per_slice;
  }

 private:
  // The kernels of a problem in launch order: the forward's, then the backward's.
  static std::vector<GroupNormConfig::Kernel> kernels(const NormProblem& p, const GroupNormConfig& c) {
    const std::string t = device_type(p.dtype), layout = flag(p.channels_last);
    const int64_t piece = p.channels_last ? 1 : p.inner / c.pieces;
    const std::string grid_args = t + ", " + std::to_string(c.vec) + ", " + std::to_string(c.threads_x) + ", " +
                                  std::to_string(c.threads_y) + ", " + layout + ", " + std::to_string(piece) + "LL, ";
    using Kernel = GroupNormConfig::Kernel;
    auto sums = [&](bool gradients) {
      return Kernel{KernelEntry{gradients ? "boo_group_norm_gradient_sums" : "boo_group_norm_moment_sums",
                                "boo::group_norm_sums<" + grid_args + flag(gradients) + ">(p)", kBlock}};
    };
    auto apply = [&](bool backward) {
      return Kernel{KernelEntry{backward ? "boo_group_norm_dx" : "boo_group_norm_y",
                                "boo::group_norm_apply<" + grid_args + flag(backward) + ">(p)", kBlock}};
    };
    auto statistics = [&](const char* source, bool forward) {
      return Kernel{KernelEntry{"boo_group_norm_statistics",
                                "boo::group_norm_statistics<" + t + ", " + layout + ", boo::" + source + ", " +
                                    flag(forward) + ", " + flag(p.weight) + ">(p)",
                                kStatsBlock},
                    Kernel::kPerGroup};
    };
    std::vector<Kernel> out;
    if (p.forward) out = {sums(false), statistics("kGroupStatsBatch", true), apply(false)};
    if (!p.dx) return out;
    if (!p.forward) out.push_back(statistics("kGroupStatsSaved", false));
    out.push_back(sums(true));
    out.push_back(Kernel{KernelEntry{"boo_group_norm_gradients",
                                     "boo::group_norm_gradients<" + t + ", " + layout + ", " + flag(p.weight) + ">(p)",
                                     kStatsBlock},
                         Kernel::kPerGroup});
    if (p.param_grads())
      out.push_back(Kernel{
          KernelEntry{"boo_group_norm_param_grads", "boo::group_norm_param_grads<" + t + ", " + layout + ">(p)",
                      kStatsBlock},
          Kernel::kPerChannel});
    out.push_back(apply(true));
    return out;
  }

  std::string name_;
};

// gpu:groupnorm:fused: blocks per SM of its cooperative launch (the launch
// bound's minimum, so registers allow them all at once), and where the groups
// tier's workspace starts (after the barrier's counter, on its own 256 bytes).
constexpr int kFusedBlocksPerSm = 2;
constexpr uint64_t kFusedWorkspaceBase = 256;
constexpr uint32_t kBarrierBytes = 4;

// gpu:groupnorm:fused's launch: the groups tier's tiling (whose grid its
// blocks visit in turn) and the cooperative grid.
struct GroupNormFusedConfig final : Config {
  GroupNormConfig tiling;
  int64_t grid = 1;
  KernelEntry kernel;

  std::string text() const override {
    return "pieces=" + std::to_string(tiling.pieces) + ";slices_per_sample=" + std::to_string(tiling.slices_per_sample) +
           ";rows_per_slice=" + std::to_string(tiling.rows_per_slice) + ";places=" + std::to_string(tiling.blocks_x) +
           "x" + std::to_string(tiling.blocks_y) + ";grid=" + std::to_string(grid) + ";" + kernel.name + "=" +
           kernel.call;
  }
};

/// Group norm in one cooperative launch (device/group_norm_fused.cuh): the
/// groups tier's phases and sums, grid barriers for its launches. Gated
/// (ops/common/unverified_kernels.hpp) until its numerics run on a GPU.
class GroupNormFused final : public Tier<NormProblem, GroupNormFusedConfig> {
 public:
  explicit GroupNormFused(std::string name) : name_(std::move(name)), groups_("gpu:groupnorm:groups") {}
  std::string_view name() const override { return name_; }

  Status accepts_problem(const NormProblem& p, const ArchSpec&) const override {
    if (p.kind != NormKind::kGroup) return invalid_argument("not a groupnorm signature");
    if (!unverified_kernels_enabled()) return unimplemented(unverified_kernel_reason(name_));
    return ok_status();
  }

  Result<GroupNormFusedConfig> configure_problem(const NormProblem& p, const ArchSpec& arch) const override {
    return fused(p, arch, kBlocksPerSm, kVectorsPerThread, kFusedBlocksPerSm);
  }

  // boo tune's alternatives: the groups tier's nearby tilings, and half the blocks per SM.
  std::vector<GroupNormFusedConfig> alternatives(const NormProblem& p, const ArchSpec& arch,
                                                 const GroupNormFusedConfig&) const override {
    std::vector<GroupNormFusedConfig> out;
    for (const auto& [blocks, vectors] : nearby_tilings(kBlocksPerSm, kVectorsPerThread))
      if (Result<GroupNormFusedConfig> c = fused(p, arch, blocks, vectors, kFusedBlocksPerSm); c.ok())
        out.push_back(std::move(*c));
    if (Result<GroupNormFusedConfig> c = fused(p, arch, kBlocksPerSm, kVectorsPerThread, kFusedBlocksPerSm / 2); c.ok())
      out.push_back(std::move(*c));
    return out;
  }

  // The groups tier's tiling for `blocks_per_sm` and `vectors_per_thread`,
  // on a cooperative grid of at most `resident_per_sm` blocks per SM.
  Result<GroupNormFusedConfig> fused(const NormProblem& p, const ArchSpec& arch, int64_t blocks_per_sm,
                                     int64_t vectors_per_thread, int resident_per_sm) const {
    GroupNormFusedConfig c;
    BOO_ASSIGN_OR_RETURN(c.tiling, groups_.tiled(p, arch, blocks_per_sm, vectors_per_thread));
    c.grid = std::min<int64_t>(c.tiling.blocks_x * c.tiling.blocks_y, int64_t{arch.sm_count} * resident_per_sm);
    const std::string t = device_type(p.dtype);
    const int64_t piece = p.channels_last ? 1 : p.inner / c.tiling.pieces;
    const bool forward = p.forward, dx = p.dx;
    c.kernel = KernelEntry{
        forward && dx ? "boo_group_norm_fused" : forward ? "boo_group_norm_fused_y" : "boo_group_norm_fused_dx",
        "boo::group_norm_fused<" + t + ", " + std::to_string(c.tiling.vec) + ", " + std::to_string(c.tiling.threads_x) +
            ", " + std::to_string(c.tiling.threads_y) + ", " + flag(p.channels_last) + ", " + std::to_string(piece) +
            "LL, " + flag(forward) + ", " + flag(dx) + ", " + flag(p.weight) + ", " + flag(p.param_grads()) + ">(p, " +
            std::to_string(c.tiling.blocks_y) + "LL)",
        kBlock, resident_per_sm};
    return c;
  }

  Result<Plan> plan_problem(const NormProblem& p, const GroupNormFusedConfig& c, const ArchSpec&) const override {
    Plan plan;
    plan.source = generated_source("group_norm_fused.cu", std::string(name()), "boo/norm/group_norm_fused.cuh",
                                   "boo::GroupNormParams", {c.kernel});
    plan.tensor_alignment = static_cast<uint32_t>(c.tiling.vec * dtype_size_bytes(p.dtype));
    plan.workspace_bytes = GroupNormGroups::workspace_bytes(p, c.tiling, kFusedWorkspaceBase);
    StepBuilder<GroupNormParams> step(c.kernel.name, Dim3{static_cast<uint32_t>(c.grid), 1, 1},
                                      {static_cast<uint32_t>(kBlock), 1, 1});
    GroupNormGroups::bind_step(step, TensorRoles(p.signature()), p, c.tiling, kFusedWorkspaceBase);
    step.params.blocks_x = c.tiling.blocks_x;
    step.bind(step.params.barrier, TensorBinding::workspace(0));
    LaunchStep launch = std::move(step).finish();
    launch.cooperative = true;
    launch.cleared_workspace_bytes = kBarrierBytes;
    plan.steps.push_back(std::move(launch));
    return plan;
  }

 private:
  std::string name_;
  GroupNormGroups groups_;
};

// gpu:groupnorm:rows: a block per (sample, group) streaming it twice, where
// the groups each SM streams (waves x a group's bytes) are at most
// kRowsMaxBytesPerSm: measured on the SD-UNet's group norms (H100,
// 2026-11-26, docs/perf/2026-11-26-session4-h100x4.md), groups of 5-40 KB
// ran in 0.3-0.85x the groups tier's time, groups of 80 KB in 0.9-1.8x (a
// block streams 5-25 KB/us). On sm_90 a cluster of blocks may share each
// group, each block streaming a run of its spatial elements
// (device/group_norm_rows.cuh): where a group is too large for one block, or
// the groups are so few (at most an eighth of the SMs) that most SMs would
// idle. Elsewhere a cluster cost more than it saved: 0.9-1.4 us more on the
// SD-UNet's 5-40 KB groups, with clusters of 2-4 (H100, 2026-11-27,
// docs/perf/2026-11-27-session16.md); boo tune tries clusters of 1, 2, 4 and
// 8 everywhere. A cluster's blocks aim at about kRowsClusterBlocksPerSm per SM,
// each streaming at most kRowsMaxBytesPerSm. Its shared memory: the
// per-channel float64 sums (twice with a cluster) and, channels last, the
// threads' per-channel partials, within the default 48 KiB of a block.
constexpr int64_t kRowsMaxBytesPerSm = 48 * 1024;
constexpr int64_t kRowsMaxSharedBytes = 48 * 1024;
constexpr int kRowsClusterMax = 8;  // the portable cluster size
constexpr int64_t kRowsClusterBlocksPerSm = 2;
constexpr int64_t kRowsFewGroupsPerSm = 8;  // groups are few below one per kRowsFewGroupsPerSm SMs
// The launch bound's blocks per SM: without one, ptxas capped the fp32 planes' kernel at 40 registers
// and spilled; a group's block needs no more than two at once to stream it.
constexpr int kRowsBlocksPerSm = 2;
// A cluster's kernel leaves registers for 3 blocks an SM (4 spilled): at 2 (120-128 registers, channels last) a grid of
// 2 blocks an SM did not fit at once in clusters, and the persistent grid ran the remaining groups a second time.
constexpr int kRowsClusterMinBlocks = 3;

// How gpu:groupnorm:rows covers a group's [rows][cols] view (device/group_norm_rows.cuh):
// vectors of vec elements, threads_x along cols x threads_y along rows.
struct GroupNormRowsConfig final : Config {
  int vec = 1, threads_x = 1, threads_y = kBlock;  ///< threads_x x threads_y threads a block
  int cluster = 1;                                 ///< blocks per (sample, group)
  uint32_t shared_bytes = 0;
  std::vector<KernelEntry> kernels;  ///< the block per group, then (dweight, dbias) the channels' sums

  std::string text() const override {
    std::string record = "vec=" + std::to_string(vec) + ";threads=" + std::to_string(threads_x) + "x" +
                         std::to_string(threads_y) + ";shared=" + std::to_string(shared_bytes) +
                         (cluster > 1 ? ";cluster=" + std::to_string(cluster) : std::string());
    for (const KernelEntry& k : kernels) record += ";" + k.name + "=" + k.call;
    return record;
  }
};

/// Group norm with one block per (sample, group) (device/group_norm_rows.cuh):
/// one launch (two with dweight and dbias) where the groups tier makes three
/// to five, for groups small enough that each SM streams at most kRowsMaxBytesPerSm.
class GroupNormRows final : public Tier<NormProblem, GroupNormRowsConfig> {
 public:
  explicit GroupNormRows(std::string name) : name_(std::move(name)) {}
  std::string_view name() const override { return name_; }

  Status accepts_problem(const NormProblem& p, const ArchSpec& arch) const override {
    if (p.kind != NormKind::kGroup) return invalid_argument("not a groupnorm signature");
    return configure_problem(p, arch).status();
  }

  Result<GroupNormRowsConfig> configure_problem(const NormProblem& p, const ArchSpec& arch) const override {
    BOO_ASSIGN_OR_RETURN(GroupNormRowsConfig c, shaped(p, arch, kBlock, cluster_size(p, arch)));
    // A large channels-last group whose channels make narrow vectors (10 channels: 4 bytes) ran at 0.84-0.91x
    // the groups tier's time in clusters (H100, 2026-11-27), whose vectors span a pixel's channels.
    if (c.cluster > 1 && !few_groups(p, arch) && p.channels_last && c.vec * static_cast<int64_t>(dtype_size_bytes(p.dtype)) < 16)
      return unimplemented("channels last, groups too large for a block and their channels in vectors of " +
                           std::to_string(c.vec * dtype_size_bytes(p.dtype)) +
                           " bytes (gpu:groupnorm:groups is faster there)");
    return c;
  }

  // boo tune's alternatives: blocks of half and twice the threads; on sm_90, clusters of 1, 2, 4 and 8 blocks
  // other than the heuristic's.
  std::vector<GroupNormRowsConfig> alternatives(const NormProblem& p, const ArchSpec& arch,
                                                const GroupNormRowsConfig&) const override {
    std::vector<GroupNormRowsConfig> out;
    const int cluster = cluster_size(p, arch);
    for (int block : {kBlock / 2, kBlock * 2})
      if (Result<GroupNormRowsConfig> c = shaped(p, arch, block, cluster); c.ok()) out.push_back(std::move(*c));
    if (arch.cc_major >= 9)
      for (int other = 1; other <= kRowsClusterMax; other *= 2)
        if (other != cluster)
          if (Result<GroupNormRowsConfig> c = shaped(p, arch, kBlock, other); c.ok()) out.push_back(std::move(*c));
    return out;
  }

  // At most one (sample, group) per kRowsFewGroupsPerSm SMs: most SMs would idle at a block a group.
  static bool few_groups(const NormProblem& p, const ArchSpec& arch) {
    return p.rows * kRowsFewGroupsPerSm <= arch.sm_count;
  }

  // Blocks per (sample, group). One, unless on sm_90 (clusters) a group is
  // too large for one block or the groups are few; then a power of two (at
  // most kRowsClusterMax) that brings the blocks to about
  // kRowsClusterBlocksPerSm per SM.
  int cluster_size(const NormProblem& p, const ArchSpec& arch) const {
    if (arch.cc_major < 9 || p.rows < 1) return 1;
    if (!few_groups(p, arch) && shaped(p, arch, kBlock, 1).ok()) return 1;
    const int64_t want = int64_t{arch.sm_count} * kRowsClusterBlocksPerSm / p.rows;
    return static_cast<int>(std::bit_floor(static_cast<uint64_t>(std::clamp<int64_t>(want, 1, kRowsClusterMax))));
  }

  // The config with `block` threads a block and `cluster` blocks a group
  // (kBlock and cluster_size() but for boo tune's alternatives).
  Result<GroupNormRowsConfig> shaped(const NormProblem& p, const ArchSpec& arch, int block, int cluster) const {
    GroupNormRowsConfig c;
    c.cluster = cluster;
    const int64_t cpg = p.channels / p.groups;
    // The widest vector (16 bytes at most) dividing the contiguous run of a group's rows.
    const int64_t run = p.channels_last ? cpg : p.inner;
    c.vec = static_cast<int>(16 / dtype_size_bytes(p.dtype));
    while (c.vec > 1 && run % c.vec != 0) c.vec /= 2;
    // A block's columns: the group's channels (channels last) or its part of a plane.
    const int64_t cols = p.channels_last ? cpg : (p.inner + cluster - 1) / cluster;
    const uint64_t col_vectors = static_cast<uint64_t>((cols + c.vec - 1) / c.vec);
    if (p.channels_last && col_vectors > 32)
      return unimplemented("channels last, at most 32 vectors of a group's channels per pixel, not " +
                           std::to_string(col_vectors));
    c.threads_x = static_cast<int>(std::min<uint64_t>(32, std::bit_ceil(std::max<uint64_t>(1, col_vectors))));
    c.threads_y = block / c.threads_x;
    const int64_t sums_bytes = cpg * 16 * (cluster > 1 ? 2 : 1);
    const int64_t shared = sums_bytes + (p.channels_last ? int64_t{c.threads_y} * cpg * kSum2Bytes : 0);
    if (shared > kRowsMaxSharedBytes)
      return unimplemented(std::to_string(cpg) + " channels a group need " + std::to_string(shared) +
                           " bytes of shared memory, more than " + std::to_string(kRowsMaxSharedBytes));
    c.shared_bytes = static_cast<uint32_t>(shared);
    if (p.rows > kMaxGridX / cluster) return unimplemented("more than 2^31 - 1 blocks");
    const int64_t block_bytes = cpg * p.inner * static_cast<int64_t>(dtype_size_bytes(p.dtype)) / cluster;
    const int64_t waves = (p.rows + arch.sm_count - 1) / arch.sm_count;
    if (cluster == 1 && waves * block_bytes > kRowsMaxBytesPerSm)
      return unimplemented("groups each SM streams of at most " + std::to_string(kRowsMaxBytesPerSm) + " bytes, not " +
                           std::to_string(waves) + " x " + std::to_string(block_bytes) +
                           " (gpu:groupnorm:groups is faster there)");
    if (cluster > 1 && block_bytes > kRowsMaxBytesPerSm)
      return unimplemented("a group's part each block of a cluster of " + std::to_string(cluster) +
                           " streams of at most " + std::to_string(kRowsMaxBytesPerSm) + " bytes, not " +
                           std::to_string(block_bytes) + " (gpu:groupnorm:groups is faster there)");
    const std::string t = device_type(p.dtype);
    KernelEntry groups{
        p.forward && p.dx ? "boo_group_norm_rows" : p.forward ? "boo_group_norm_rows_y" : "boo_group_norm_rows_dx",
        "boo::group_norm_rows<" + t + ", " + std::to_string(c.vec) + ", " + std::to_string(c.threads_x) + ", " +
            std::to_string(c.threads_y) + ", " + flag(p.channels_last) + ", " + flag(p.forward) + ", " +
            flag(p.dx) + ", " + flag(p.weight) + ", " + flag(p.param_grads()) +
            (cluster > 1 ? ", " + std::to_string(cluster) : std::string()) + ">(p)",
        block, cluster > 1 ? kRowsClusterMinBlocks : kRowsBlocksPerSm};
    groups.cluster = cluster;
    c.kernels.push_back(std::move(groups));
    if (p.param_grads())
      c.kernels.push_back(KernelEntry{"boo_group_norm_rows_param_grads",
                                      "boo::group_norm_rows_param_grads<" + t + ">(p)", kBlock});
    return c;
  }

  Result<Plan> plan_problem(const NormProblem& p, const GroupNormRowsConfig& c, const ArchSpec&) const override {
    Plan plan;
    plan.source = generated_source("group_norm_rows.cu", std::string(name()), "boo/norm/group_norm_rows.cuh",
                                   "boo::GroupNormParams", c.kernels);
    plan.tensor_alignment = static_cast<uint32_t>(c.vec * dtype_size_bytes(p.dtype));
    // dbias and dweight terms per (sample, channel): two doubles each.
    plan.workspace_bytes = p.param_grads() ? static_cast<uint64_t>(p.outer * p.channels) * 2 * sizeof(double) : 0;
    const TensorRoles roles(p.signature());
    for (size_t i = 0; i < c.kernels.size(); ++i) {
      const bool groups = i == 0;
      const Dim3 grid{static_cast<uint32_t>(groups ? p.rows * c.cluster : (p.channels + kBlock - 1) / kBlock), 1, 1};
      StepBuilder<GroupNormParams> step(c.kernels[i].name, grid, {static_cast<uint32_t>(c.kernels[i].threads), 1, 1},
                                        groups ? c.shared_bytes : 0);
      bind_tensors(step, roles, p);
      if (p.param_grads()) step.bind(step.params.partials, TensorBinding::workspace(0));
      LaunchStep launch = std::move(step).finish();
      launch.cluster_x = static_cast<uint32_t>(c.kernels[i].cluster);  // a persistent grid of clusters
      plan.steps.push_back(std::move(launch));
    }
    return plan;
  }

 private:
  std::string name_;
};

}  // namespace

std::unique_ptr<GpuImplementation> make_group_norm_implementation(std::string name) {
  return std::make_unique<GroupNormGroups>(std::move(name));
}

std::unique_ptr<GpuImplementation> make_group_norm_rows_implementation(std::string name) {
  return std::make_unique<GroupNormRows>(std::move(name));
}

std::unique_ptr<GpuImplementation> make_group_norm_fused_implementation(std::string name) {
  return std::make_unique<GroupNormFused>(std::move(name));
}

}  // namespace boo::ops::norm
