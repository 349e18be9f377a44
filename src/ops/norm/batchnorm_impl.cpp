// boo: gpu:batchnorm:columns, :slabs and :resident — tiling, kernel source
// and launch plan of batch norm.
#include "ops/norm/batchnorm_impl.hpp"

#include <algorithm>
#include <bit>

#include "ops/common/generated_source.hpp"
#include "ops/norm/device/batch_norm_params.cuh"
#include "ops/norm/norm_implementation.hpp"

namespace boo::ops::norm {
namespace {

constexpr int kBlock = 256;  // threads of the sums and apply kernels
constexpr int kStatsBlock = 256;  // channels per block of the per-channel kernels
// Vectors each thread of the sums and apply kernels visits at least (fewer
// slices where rows are few), and blocks per SM they aim for.
constexpr int64_t kVectorsPerThread = 4;
constexpr int64_t kBlocksPerSm = 8;
// Slices at most: each channel's statistic adds this many partials serially.
constexpr int64_t kMaxSlices = 512;
constexpr int kSum2Bytes = 8;  // a Sum2: two floats
constexpr int64_t kMaxGridX = 2147483647;  // CUDA's limit on gridDim.x (gridDim.y: 65535)

const char* flag(bool v) { return v ? "true" : "false"; }

// How the sums and apply kernels cover x: vector width, block shape
// (channels last: kThreadsX channel vectors x kThreadsY rows; planes: one
// channel, kBlock threads), and the slices of the outer rows.
struct BatchNormConfig final : Config {
  int vec = 1;
  int threads_x = kBlock, threads_y = 1;
  int64_t channel_blocks = 1, slices = 1, rows_per_slice = 1;
  /// A kernel in launch order: on the (channel blocks, slices) grid, or one thread per channel.
  struct Kernel {
    KernelEntry entry;
    bool per_channel = false;
  };
  std::vector<Kernel> kernels;

  std::string text() const override {
    std::string record = "slices=" + std::to_string(slices) + ";rows_per_slice=" + std::to_string(rows_per_slice);
    for (const Kernel& k : kernels) record += ";" + k.entry.name + "=" + k.entry.call;
    return record;
  }
};

// The widest vector (up to 16 bytes of the widest element type a kernel
// moves) dividing what is contiguous per channel run: the channels (inner 1)
// or a plane.
int vector_width(const NormProblem& p) {
  const size_t widest = std::max({dtype_size_bytes(p.dtype), dtype_size_bytes(p.grad_dtype)});
  int vec = static_cast<int>(16 / widest);
  const int64_t run = p.inner == 1 ? p.channels : p.inner;
  while (vec > 1 && run % vec != 0) vec /= 2;
  return vec;
}

// Bytes of x, and in the backward of dy, per element: what the sums read.
int64_t read_bytes_per_element(const NormProblem& p) {
  return static_cast<int64_t>(dtype_size_bytes(p.dtype) +
                              (p.pass == BatchNormPass::kBackward ? dtype_size_bytes(p.grad_dtype) : 0));
}

// A channels-last step's tensors and sizes (gpu:batchnorm:slabs and :resident):
// the partials at `partials_offset` of the workspace.
void bind_slab_step(StepBuilder<BatchNormParams>& step, const TensorRoles& roles, const NormProblem& p,
                    int64_t rows_per_slice, uint64_t partials_offset) {
  BatchNormParams& params = step.params;
  auto bind = [&](unsigned long long& field, std::string_view role) {
    if (std::optional<TensorBinding> t = roles.find(role)) step.bind(field, *t);
  };
  bind(params.x, "x");
  bind(params.dy, "dy");
  bind(params.scale, "scale");
  bind(params.bias, "bias");
  bind(params.mean_in, "running_mean_in");
  bind(params.variance_in, "running_variance_in");
  bind(params.saved_mean, "saved_mean");
  bind(params.saved_inv_variance, "saved_inv_variance");
  bind(params.running_mean, "running_mean");
  bind(params.running_variance, "running_variance");
  bind(params.y, "y");
  bind(params.dx, "dx");
  bind(params.dscale, "dscale");
  bind(params.dbias, "dbias");
  step.bind(params.partials, TensorBinding::workspace(partials_offset));
  params.outer = p.outer;
  params.channels = p.channels;
  params.rows_per_slice = rows_per_slice;
  params.eps = static_cast<float>(p.eps);
  params.momentum = static_cast<float>(p.momentum);
}

class BatchNormColumns final : public Tier<NormProblem, BatchNormConfig> {
 public:
  explicit BatchNormColumns(std::string name) : name_(std::move(name)) {}
  std::string_view name() const override { return name_; }

  Status accepts_problem(const NormProblem& p, const ArchSpec&) const override {
    if (p.kind != NormKind::kBatch) return invalid_argument("not a batchnorm signature");
    return ok_status();
  }

  Result<BatchNormConfig> configure_problem(const NormProblem& p, const ArchSpec& arch) const override {
    return tiled(p, arch, kBlocksPerSm, kVectorsPerThread);
  }

  // boo tune's alternatives: nearby tilings (norm_implementation.hpp).
  std::vector<BatchNormConfig> alternatives(const NormProblem& p, const ArchSpec& arch, const BatchNormConfig&) const override {
    std::vector<BatchNormConfig> out;
    for (const auto& [blocks, vectors] : nearby_tilings(kBlocksPerSm, kVectorsPerThread))
      if (Result<BatchNormConfig> c = tiled(p, arch, blocks, vectors); c.ok()) out.push_back(std::move(*c));
    return out;
  }

  // Blocks enough for `blocks_per_sm` per SM, each thread visiting at least
  // `vectors_per_thread` vectors (kBlocksPerSm and kVectorsPerThread but for
  // boo tune's alternatives).
  Result<BatchNormConfig> tiled(const NormProblem& p, const ArchSpec& arch, int64_t blocks_per_sm,
                   int64_t vectors_per_thread) const {
    BatchNormConfig c;
    c.vec = vector_width(p);
    int64_t per_row = 0;  // vectors of a block's channels in one row
    if (p.inner == 1) {
      const int64_t vectors = p.channels / c.vec;
      c.threads_x = static_cast<int>(std::min<uint64_t>(32, std::bit_ceil(static_cast<uint64_t>(vectors))));
      c.threads_y = kBlock / c.threads_x;
      c.channel_blocks = (vectors + c.threads_x - 1) / c.threads_x;
      per_row = c.threads_x;
    } else {
      c.channel_blocks = p.channels;
      per_row = p.inner / c.vec;
    }
    // Slices: enough blocks to fill the GPU, each thread visiting at least
    // vectors_per_thread vectors.
    const int64_t min_rows = std::max<int64_t>(1, vectors_per_thread * kBlock / per_row);
    const int64_t most = std::max<int64_t>(1, (p.outer + min_rows - 1) / min_rows);
    const int64_t fill = std::max<int64_t>(1, arch.sm_count * blocks_per_sm / c.channel_blocks);
    c.slices = std::min({most, fill, kMaxSlices});
    c.rows_per_slice = (p.outer + c.slices - 1) / c.slices;
    c.slices = (p.outer + c.rows_per_slice - 1) / c.rows_per_slice;
    if (c.channel_blocks > kMaxGridX || c.slices > 65535)
      return unimplemented("a grid of " + std::to_string(c.channel_blocks) + " x " + std::to_string(c.slices) +
                           " blocks exceeds the device's limits");
    c.kernels = kernels(p, c);
    return c;
  }

  Result<Plan> plan_problem(const NormProblem& p, const BatchNormConfig& c, const ArchSpec&) const override {
    Plan plan;
    std::vector<KernelEntry> entries;
    for (const BatchNormConfig::Kernel& k : c.kernels) entries.push_back(k.entry);
    plan.source = generated_source("batch_norm.cu", std::string(name()), "boo/norm/batch_norm.cuh",
                                   "boo::BatchNormParams", entries);
    plan.tensor_alignment = static_cast<uint32_t>(c.vec * std::max({dtype_size_bytes(p.dtype),
                                                                     dtype_size_bytes(p.grad_dtype)}));
    const uint64_t partial_bytes = static_cast<uint64_t>(c.slices * p.channels) * kSum2Bytes;
    plan.workspace_bytes = partial_bytes + static_cast<uint64_t>(kChannelCoefficients * p.channels) * sizeof(float);
    const TensorRoles roles(p.signature());
    for (const BatchNormConfig::Kernel& k : c.kernels) {
      const Dim3 grid = k.per_channel
                            ? Dim3{static_cast<uint32_t>((p.channels + kStatsBlock - 1) / kStatsBlock), 1, 1}
                            : Dim3{static_cast<uint32_t>(c.channel_blocks), static_cast<uint32_t>(c.slices), 1};
      StepBuilder<BatchNormParams> step(k.entry.name, grid, {static_cast<uint32_t>(k.entry.threads), 1, 1});
      BatchNormParams& params = step.params;
      auto bind = [&](unsigned long long& field, std::string_view role) {
        if (std::optional<TensorBinding> t = roles.find(role)) step.bind(field, *t);
      };
      bind(params.x, "x");
      bind(params.dy, "dy");
      bind(params.scale, "scale");
      bind(params.bias, "bias");
      bind(params.mean_in, p.pass == BatchNormPass::kInference ? "estimated_mean" : "running_mean_in");
      bind(params.variance_in, p.pass == BatchNormPass::kInference ? "estimated_variance" : "running_variance_in");
      bind(params.saved_mean, "saved_mean");
      bind(params.saved_inv_variance, "saved_inv_variance");
      bind(params.running_mean, "running_mean");
      bind(params.running_variance, "running_variance");
      bind(params.y, "y");
      bind(params.dx, "dx");
      bind(params.dscale, "dscale");
      bind(params.dbias, "dbias");
      step.bind(params.partials, TensorBinding::workspace(0));
      step.bind(params.coefficients, TensorBinding::workspace(partial_bytes));
      params.outer = p.outer;
      params.channels = p.channels;
      params.rows_per_slice = c.rows_per_slice;
      params.eps = static_cast<float>(p.eps);
      params.momentum = static_cast<float>(p.momentum);
      plan.steps.push_back(std::move(step).finish());
    }
    return plan;
  }

 private:
  // The kernels of a problem in launch order.
  static std::vector<BatchNormConfig::Kernel> kernels(const NormProblem& p, const BatchNormConfig& c) {
    const std::string t = device_type(p.dtype), g = device_type(p.grad_dtype), pt = device_type(p.param_dtype);
    const std::string grid_args = t + ", " + g + ", " + std::to_string(c.vec) + ", " + std::to_string(c.threads_x) +
                                  ", " + std::to_string(c.threads_y) + ", " + std::to_string(p.inner) + "LL, ";
    const std::string channel_args = "(p, " + std::to_string(p.inner) + "LL, " + std::to_string(c.slices) + "LL)";
    using Kernel = BatchNormConfig::Kernel;
    auto sums = [&](bool gradients) {
      return Kernel{KernelEntry{gradients ? "boo_batch_norm_gradient_sums" : "boo_batch_norm_moment_sums",
                                "boo::batch_norm_sums<" + grid_args + flag(gradients) + ">(p)", kBlock}};
    };
    auto statistics = [&](const char* source, bool forward, bool save, bool running) {
      return Kernel{KernelEntry{"boo_batch_norm_statistics",
                         "boo::batch_norm_statistics<" + t + ", " + pt + ", boo::" + source + ", " + flag(forward) +
                             ", " + flag(save) + ", " + flag(running) + ">" + channel_args,
                                kStatsBlock},
                    true};
    };
    auto apply = [&](bool backward) {
      return Kernel{KernelEntry{backward ? "boo_batch_norm_dx" : "boo_batch_norm_y",
                                "boo::batch_norm_apply<" + grid_args + flag(backward) + ">(p)", kBlock}};
    };
    std::vector<Kernel> out;
    switch (p.pass) {
      case BatchNormPass::kTraining:
        out = {sums(false), statistics("kStatsBatch", true, p.save, p.running), apply(false)};
        break;
      case BatchNormPass::kInference:
        if (p.running) out = {statistics("kStatsEstimated", true, false, false), apply(false)};
        else out = {sums(false), statistics("kStatsBatch", true, false, false), apply(false)};
        break;
      case BatchNormPass::kBackward:
        if (p.save) out = {statistics("kStatsSaved", false, false, false)};
        else out = {sums(false), statistics("kStatsBatch", false, false, false)};
        out.push_back(sums(true));
        out.push_back(
            Kernel{KernelEntry{"boo_batch_norm_gradients", "boo::batch_norm_gradients<" + pt + ">" + channel_args,
                               kStatsBlock},
                   true});
        out.push_back(apply(true));
        break;
    }
    return out;
  }

  std::string name_;
};

// gpu:batchnorm:slabs: blocks per SM of the sums and apply kernels (the
// launch bound's minimum, so the registers allow them), rows in flight per
// thread, the most slices (the coefficients kernel adds each channel's in
// float64), and the coefficients kernel's block: 32 channels x 32 slice
// groups, a few loads in each thread's chain.
constexpr int kSlabBlocksPerSm = 2;
constexpr int kSlabUnroll = 4;
constexpr int64_t kSlabMaxSlices = 4096;
constexpr int kSlabCoefficientThreads = 1024;
constexpr int kSlabCoefficientChannels = 32;  // a warp's lanes (batch_norm_slab_coefficients)

// How gpu:batchnorm:slabs covers channels-last x: blocks of threads_x channel
// vectors (a slab of threads_x * vec channels) x threads_y row lanes, on a
// grid of slabs x slices of the rows; the coefficients kernel between the
// sums and the apply kernel takes 32 channels a block.
struct BatchNormSlabsConfig final : Config {
  int vec = 1, threads_x = 1, threads_y = kBlock;
  int unroll = kSlabUnroll;  ///< rows' loads in flight per thread
  int64_t slabs = 1, slices = 1, rows_per_slice = 1;
  KernelEntry sums, coefficients, apply;

  int64_t slab_channels() const { return static_cast<int64_t>(threads_x) * vec; }
  std::string text() const override {
    return "vec=" + std::to_string(vec) + ";slab=" + std::to_string(slab_channels()) +
           ";slabs=" + std::to_string(slabs) + ";slices=" + std::to_string(slices) +
           ";rows_per_slice=" + std::to_string(rows_per_slice) + ";" + sums.name + "=" + sums.call + ";" +
           coefficients.name + "=" + coefficients.call + ";" + apply.name + "=" + apply.call;
  }
};

/// Three launches (sums; each channel's coefficients; the elementwise pass)
/// for channels-last batch norm: training, inference from the batch, backward
/// from saved statistics (device/batch_norm_slabs.cuh). Planes (NCHW),
/// inference from running statistics and a backward that recomputes the
/// statistics stay on gpu:batchnorm:columns.
class BatchNormSlabs final : public Tier<NormProblem, BatchNormSlabsConfig> {
 public:
  explicit BatchNormSlabs(std::string name) : name_(std::move(name)) {}
  std::string_view name() const override { return name_; }

  Status accepts_problem(const NormProblem& p, const ArchSpec&) const override {
    if (p.kind != NormKind::kBatch) return invalid_argument("not a batchnorm signature");
    if (p.inner != 1) return unimplemented("channel planes (NC(D)HW spatial): only channels-last x");
    if (p.pass == BatchNormPass::kInference && p.running)
      return unimplemented("inference from running statistics: no reduction to fuse");
    if (p.pass == BatchNormPass::kBackward && !p.save)
      return unimplemented("a backward without saved statistics (-s 0): only -s 1");
    return ok_status();
  }

  Result<BatchNormSlabsConfig> configure_problem(const NormProblem& p, const ArchSpec& arch) const override {
    return slabbed(p, arch, kSlabBlocksPerSm, 32, kSlabUnroll);
  }

  // boo tune's alternatives: half the blocks per SM in the grid, slabs half as wide, half the rows in
  // flight, twice as many at one block per SM, and x alone (training, inference) twice as many at two (two
  // blocks' registers hold the backward's x and dy of four rows, x alone of eight; four blocks' spill).
  // Eight rows of x at two blocks per SM measured the same as four on an H200's ResNet-50 forwards.
  std::vector<BatchNormSlabsConfig> alternatives(const NormProblem& p, const ArchSpec& arch,
                                                 const BatchNormSlabsConfig& chosen) const override {
    struct Variant {
      int blocks, widest, unroll;
    };
    std::vector<Variant> variants = {Variant{kSlabBlocksPerSm / 2, 32, chosen.unroll},
                                     Variant{kSlabBlocksPerSm, chosen.threads_x / 2, chosen.unroll},
                                     Variant{kSlabBlocksPerSm, 32, chosen.unroll / 2},
                                     Variant{kSlabBlocksPerSm / 2, 32, chosen.unroll * 2}};
    if (p.pass != BatchNormPass::kBackward) variants.push_back(Variant{kSlabBlocksPerSm, 32, chosen.unroll * 2});
    std::vector<BatchNormSlabsConfig> out;
    for (const Variant& v : variants)
      if (v.widest >= 1)
        if (Result<BatchNormSlabsConfig> c = slabbed(p, arch, v.blocks, v.widest, v.unroll); c.ok())
          out.push_back(std::move(*c));
    return out;
  }

  // A grid of about `blocks_per_sm` blocks per SM, slabs at most `widest_threads_x` vectors wide, `unroll`
  // rows' loads in flight per thread (kSlabBlocksPerSm, 32 and kSlabUnroll but for boo tune's alternatives).
  Result<BatchNormSlabsConfig> slabbed(const NormProblem& p, const ArchSpec& arch, int blocks_per_sm,
                                       int widest_threads_x, int unroll) const {
    BatchNormSlabsConfig c;
    c.vec = vector_width(p);
    c.unroll = unroll;
    const int64_t vectors = p.channels / c.vec;
    const int64_t target = static_cast<int64_t>(arch.sm_count) * blocks_per_sm;
    // The widest slab: a warp reads whole 128-byte lines of a row where the
    // channels allow (slabs of 32-64 bytes of a row took 1.13-1.25x the time
    // on an H200's ResNet-50 lines, docs/perf/2026-11-28-session23.md).
    c.threads_x = static_cast<int>(std::min<uint64_t>(widest_threads_x, std::bit_ceil(static_cast<uint64_t>(vectors))));
    c.threads_y = kBlock / c.threads_x;
    c.slabs = (vectors + c.threads_x - 1) / c.threads_x;
    const int64_t most = std::max<int64_t>(1, (p.outer + c.threads_y - 1) / c.threads_y);
    c.slices = std::clamp<int64_t>(target / c.slabs, 1, std::min(most, kSlabMaxSlices));
    c.rows_per_slice = (p.outer + c.slices - 1) / c.slices;
    c.slices = (p.outer + c.rows_per_slice - 1) / c.rows_per_slice;
    if (c.slabs > kMaxGridX || c.slices > 65535)
      return unimplemented("a grid of " + std::to_string(c.slabs) + " x " + std::to_string(c.slices) +
                           " blocks exceeds the device's limits");
    const std::string t = device_type(p.dtype), g = device_type(p.grad_dtype), pt = device_type(p.param_dtype);
    const std::string tiling = std::to_string(c.vec) + ", " + std::to_string(c.threads_x) + ", " +
                               std::to_string(c.threads_y) + ", " + std::to_string(c.unroll) + ", ";
    const bool backward = p.pass == BatchNormPass::kBackward;
    const bool training = p.pass == BatchNormPass::kTraining;
    c.sums = KernelEntry{backward ? "boo_batch_norm_slab_gradient_sums" : "boo_batch_norm_slab_moment_sums",
                         "boo::batch_norm_slab_sums<" + t + ", " + g + ", " + tiling + flag(backward) + ">(p)", kBlock,
                         blocks_per_sm};
    c.coefficients = KernelEntry{
        backward ? "boo_batch_norm_slab_gradient_coefficients" : "boo_batch_norm_slab_coefficients",
        "boo::batch_norm_slab_coefficients<" + t + ", " + pt + ", " + std::to_string(c.slab_channels()) + ", " +
            std::to_string(kSlabCoefficientThreads) + ", " + flag(backward) + ", " + flag(training && p.save) + ", " +
            flag(training && p.running) + ">(p)",
        kSlabCoefficientThreads};
    c.apply = KernelEntry{backward ? "boo_batch_norm_slab_dx" : "boo_batch_norm_slab_y",
                          "boo::batch_norm_slab_apply<" + t + ", " + g + ", " + tiling + flag(backward) + ">(p)",
                          kBlock, blocks_per_sm};
    return c;
  }

  Result<Plan> plan_problem(const NormProblem& p, const BatchNormSlabsConfig& c, const ArchSpec&) const override {
    Plan plan;
    plan.source = generated_source("batch_norm_slabs.cu", std::string(name()), "boo/norm/batch_norm_slabs.cuh",
                                   "boo::BatchNormParams", {c.sums, c.coefficients, c.apply});
    plan.tensor_alignment = static_cast<uint32_t>(c.vec * std::max({dtype_size_bytes(p.dtype),
                                                                     dtype_size_bytes(p.grad_dtype)}));
    // The partials, then (256-byte aligned) the coefficient arrays.
    const uint64_t partial_bytes =
        (static_cast<uint64_t>(c.slabs * c.slices * c.slab_channels()) * kSum2Bytes + 255) / 256 * 256;
    plan.workspace_bytes = partial_bytes + static_cast<uint64_t>(kChannelCoefficients * p.channels) * sizeof(float);
    const TensorRoles roles(p.signature());
    const Dim3 slab_grid{static_cast<uint32_t>(c.slabs), static_cast<uint32_t>(c.slices), 1};
    const Dim3 channel_grid{
        static_cast<uint32_t>((p.channels + kSlabCoefficientChannels - 1) / kSlabCoefficientChannels), 1, 1};
    for (const auto& [k, grid] : {std::pair{&c.sums, slab_grid}, std::pair{&c.coefficients, channel_grid},
                                  std::pair{&c.apply, slab_grid}}) {
      StepBuilder<BatchNormParams> step(k->name, grid, {static_cast<uint32_t>(k->threads), 1, 1});
      bind_slab_step(step, roles, p, c.rows_per_slice, 0);
      step.bind(step.params.coefficients, TensorBinding::workspace(partial_bytes));
      plan.steps.push_back(std::move(step).finish());
    }
    return plan;
  }

 private:
  std::string name_;
};

// gpu:batchnorm:resident: threads of its one block per SM (enough 16-byte
// loads in flight per SM without a second block), rows in flight per thread
// (x alone in the forward; x and dy in the backward), and where the partials
// start in the workspace (after the barrier's counter, on its own 256 bytes).
constexpr int kResidentThreads = 512;
constexpr int kResidentUnrollForward = 8;
constexpr int kResidentUnrollBackward = 4;
constexpr uint64_t kResidentPartialsOffset = 256;
// The most partial bytes one resident block adds after the grid barrier (its
// latency before the first store: 24 KB is 12 loads of 8 bytes per thread),
// and up to four times that to keep a slab as wide as a 128-byte line of x's
// row: on an H200, slabs of 64 bytes took 1.15-1.32x the time of 128-byte ones
// with 34-68 KB of partials (ResNet-50's 64- and 128-channel lines), and
// 256-byte slabs with 135 KB 1.02-1.06x.
constexpr int64_t kResidentPartialBytes = 24 * 1024;
constexpr int64_t kResidentLineBytes = 128;
constexpr int64_t kResidentLinePartialBytes = 4 * kResidentPartialBytes;
constexpr uint32_t kBarrierBytes = 4;

// How gpu:batchnorm:resident covers channels-last x: slabs and slices as
// gpu:batchnorm:slabs but at most one block per SM, and the rows of each slice
// its block keeps in shared memory between the sums and the apply pass.
struct BatchNormResidentConfig final : Config {
  int vec = 1, threads_x = 1, threads_y = kResidentThreads, unroll = kResidentUnrollForward;
  int64_t slabs = 1, slices = 1, rows_per_slice = 1, resident_rows = 0;
  uint32_t shared_bytes = 0;  ///< the resident rows (dynamic shared memory)
  KernelEntry kernel;

  int64_t slab_channels() const { return static_cast<int64_t>(threads_x) * vec; }
  std::string text() const override {
    return "vec=" + std::to_string(vec) + ";slab=" + std::to_string(slab_channels()) +
           ";slabs=" + std::to_string(slabs) + ";slices=" + std::to_string(slices) +
           ";rows_per_slice=" + std::to_string(rows_per_slice) + ";resident_rows=" + std::to_string(resident_rows) +
           ";" + kernel.name + "=" + kernel.call;
  }
};

/// One cooperative launch for channels-last batch norm (training, inference
/// from the batch, backward from saved statistics): x (and dy) stay in the
/// SMs' shared memory between the sums and the apply pass where they fit,
/// and the rest is re-read while still in L2 (device/batch_norm_resident.cuh).
/// It takes the lines whose x (and dy) fit the SMs' shared memory and L2
/// together, where reading them once pays: on an H100 it took 0.77-1.02x the
/// slabs tier's time on ResNet-50's batch norms of at most 51 MB, and
/// 0.88-1.28x on those of 103-411 MB (docs/perf/2026-11-28-session17.md).
class BatchNormResident final : public Tier<NormProblem, BatchNormResidentConfig> {
 public:
  explicit BatchNormResident(std::string name) : name_(std::move(name)) {}
  std::string_view name() const override { return name_; }

  Status accepts_problem(const NormProblem& p, const ArchSpec& arch) const override {
    if (p.kind != NormKind::kBatch) return invalid_argument("not a batchnorm signature");
    if (p.inner != 1) return unimplemented("channel planes (NC(D)HW spatial): only channels-last x");
    if (p.pass == BatchNormPass::kInference && p.running)
      return unimplemented("inference from running statistics: no reduction to fuse");
    if (p.pass == BatchNormPass::kBackward && !p.save)
      return unimplemented("a backward without saved statistics (-s 0): only -s 1");
    const bool backward = p.pass == BatchNormPass::kBackward;
    // outer x channels is one validated tensor's element count (at most 2^48): times 16 bytes it fits.
    const uint64_t read_bytes = static_cast<uint64_t>(p.outer) * static_cast<uint64_t>(p.channels) *
                                static_cast<uint64_t>(read_bytes_per_element(p));
    const uint64_t on_chip = static_cast<uint64_t>(arch.sm_count) * static_cast<uint64_t>(arch.max_shared_bytes_per_sm) +
                             static_cast<uint64_t>(arch.l2_bytes);
    if (read_bytes > on_chip)
      return unimplemented("x" + std::string(backward ? " and dy" : "") + " (" + std::to_string(read_bytes >> 20) +
                           " MiB) exceed the SMs' shared memory and L2 (" + std::to_string(on_chip >> 20) +
                           " MiB): the re-read rest costs what the slabs tier's second pass does");
    return ok_status();
  }

  Result<BatchNormResidentConfig> configure_problem(const NormProblem& p, const ArchSpec& arch) const override {
    return resident(p, arch, 32, p.pass == BatchNormPass::kBackward ? kResidentUnrollBackward : kResidentUnrollForward,
                    false, kResidentPartialBytes);
  }

  // boo tune's alternatives: half the rows in flight, slabs half as wide, and both (twice the rows spill:
  // the apply pass holds kUnroll x kVec floats of x and dy); the kept rows by cp.async, all in flight at
  // once (device/batch_norm_resident.cuh: kAsyncKept); and wider slabs, a block adding 4 or 16 times the
  // partials (where they differ from the heuristic's config).
  std::vector<BatchNormResidentConfig> alternatives(const NormProblem& p, const ArchSpec& arch,
                                                    const BatchNormResidentConfig& chosen) const override {
    struct Variant {
      int widest, unroll;
      bool async_kept;
      int64_t partial_bytes = kResidentPartialBytes;
    };
    // cp.async moves 4, 8 or 16 bytes: vectors of x (and dy) of at least 4.
    const bool backward = p.pass == BatchNormPass::kBackward;
    const bool async_fits = chosen.vec * dtype_size_bytes(p.dtype) >= 4 &&
                            (!backward || chosen.vec * dtype_size_bytes(p.grad_dtype) >= 4);
    std::vector<BatchNormResidentConfig> out;
    for (const Variant& v : {Variant{32, chosen.unroll / 2, false}, Variant{chosen.threads_x / 2, chosen.unroll, false},
                             Variant{chosen.threads_x / 2, chosen.unroll / 2, false},
                             Variant{32, chosen.unroll, true},
                             Variant{32, chosen.unroll, false, kResidentPartialBytes * 4},
                             Variant{32, chosen.unroll, false, kResidentPartialBytes * 16}})
      if (v.widest >= 1 && v.unroll >= 1 && (!v.async_kept || async_fits))
        if (Result<BatchNormResidentConfig> c = resident(p, arch, v.widest, v.unroll, v.async_kept, v.partial_bytes);
            c.ok() && c->text() != chosen.text())
          out.push_back(std::move(*c));
    return out;
  }

  // Slabs at most `widest_threads_x` vectors wide, `unroll` rows' loads in
  // flight per thread, the kept rows by cp.async or not (32, the pass's
  // default and false but for boo tune's alternatives).
  Result<BatchNormResidentConfig> resident(const NormProblem& p, const ArchSpec& arch, int widest_threads_x,
                                           int unroll, bool async_kept, int64_t partial_bytes) const {
    BatchNormResidentConfig c;
    c.vec = vector_width(p);
    c.unroll = unroll;
    const int64_t vectors = p.channels / c.vec;
    // The widest slab whose blocks each add at most `partial_bytes` of
    // partials (or four times that for a slab of one 128-byte line of x's
    // row), on at most one block per SM.
    for (int tx = static_cast<int>(std::min<uint64_t>(widest_threads_x, std::bit_ceil(static_cast<uint64_t>(vectors))));
         tx >= 1; tx /= 2) {
      c.threads_x = tx;
      c.threads_y = kResidentThreads / tx;
      c.slabs = (vectors + tx - 1) / tx;
      const int64_t most = std::max<int64_t>(1, (p.outer + c.threads_y - 1) / c.threads_y);
      c.slices = std::clamp<int64_t>(arch.sm_count / c.slabs, 1, most);
      const int64_t partials = c.slices * c.slab_channels() * kSum2Bytes;
      if (partials <= partial_bytes) break;
      const int64_t slab_bytes = c.slab_channels() * static_cast<int64_t>(dtype_size_bytes(p.dtype));
      const int64_t line_partial_bytes = partial_bytes * (kResidentLinePartialBytes / kResidentPartialBytes);
      if (slab_bytes <= kResidentLineBytes && partials <= line_partial_bytes) break;
    }
    if (c.slabs > arch.sm_count)
      return unimplemented(std::to_string(p.channels) + " channels make " + std::to_string(c.slabs) +
                           " slabs, more than the " + std::to_string(arch.sm_count) +
                           " blocks one cooperative launch of one block per SM holds");
    c.rows_per_slice = (p.outer + c.slices - 1) / c.slices;
    c.slices = (p.outer + c.rows_per_slice - 1) / c.rows_per_slice;
    // The rest of the block's shared memory holds the first rows of its slice.
    const bool backward = p.pass == BatchNormPass::kBackward;
    const int64_t row_bytes = c.slab_channels() * read_bytes_per_element(p);
    const int64_t room = arch.max_shared_bytes_per_block - resident_static_shared_bytes(c.slab_channels(), kResidentThreads);
    c.resident_rows = std::clamp<int64_t>(room / row_bytes, 0, c.rows_per_slice);
    c.shared_bytes = static_cast<uint32_t>(c.resident_rows * row_bytes);
    const std::string t = device_type(p.dtype), g = device_type(p.grad_dtype), pt = device_type(p.param_dtype);
    const bool training = p.pass == BatchNormPass::kTraining;
    c.kernel = KernelEntry{backward ? "boo_batch_norm_resident_dx" : "boo_batch_norm_resident_y",
                           "boo::batch_norm_resident<" + t + ", " + g + ", " + pt + ", " + std::to_string(c.vec) +
                               ", " + std::to_string(c.threads_x) + ", " + std::to_string(c.threads_y) + ", " +
                               std::to_string(c.unroll) + ", " + flag(backward) + ", " + flag(training && p.save) +
                               ", " + flag(training && p.running) + ", " + flag(async_kept) + ">(p)",
                           kResidentThreads, 1};
    return c;
  }

  Result<Plan> plan_problem(const NormProblem& p, const BatchNormResidentConfig& c, const ArchSpec&) const override {
    Plan plan;
    plan.source = generated_source("batch_norm_resident.cu", std::string(name()), "boo/norm/batch_norm_resident.cuh",
                                   "boo::BatchNormParams", {c.kernel});
    plan.tensor_alignment = static_cast<uint32_t>(c.vec * std::max({dtype_size_bytes(p.dtype),
                                                                     dtype_size_bytes(p.grad_dtype)}));
    plan.workspace_bytes =
        kResidentPartialsOffset + static_cast<uint64_t>(c.slabs * c.slices * c.slab_channels()) * kSum2Bytes;
    StepBuilder<BatchNormParams> step(
        c.kernel.name, Dim3{static_cast<uint32_t>(c.slabs), static_cast<uint32_t>(c.slices), 1},
        {static_cast<uint32_t>(kResidentThreads), 1, 1}, c.shared_bytes);
    bind_slab_step(step, TensorRoles(p.signature()), p, c.rows_per_slice, kResidentPartialsOffset);
    step.params.resident_rows = c.resident_rows;
    step.bind(step.params.barrier, TensorBinding::workspace(0));
    LaunchStep launch = std::move(step).finish();
    launch.cooperative = true;
    launch.cleared_workspace_bytes = kBarrierBytes;
    plan.steps.push_back(std::move(launch));
    return plan;
  }

 private:
  std::string name_;
};

}  // namespace

std::unique_ptr<GpuImplementation> make_batch_norm_implementation(std::string name) {
  return std::make_unique<BatchNormColumns>(std::move(name));
}

std::unique_ptr<GpuImplementation> make_batch_norm_slabs_implementation(std::string name) {
  return std::make_unique<BatchNormSlabs>(std::move(name));
}

std::unique_ptr<GpuImplementation> make_batch_norm_resident_implementation(std::string name) {
  return std::make_unique<BatchNormResident>(std::move(name));
}

}  // namespace boo::ops::norm
