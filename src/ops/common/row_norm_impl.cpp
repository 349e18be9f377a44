// boo: the row-normalization kernels' host side — tiling, source, launch plan.
#include "ops/common/row_norm_impl.hpp"

#include <algorithm>
#include <bit>

#include "ops/common/device/row_norm_params.cuh"
#include "ops/common/generated_source.hpp"

namespace boo::ops {
namespace {

// How a row is spread over threads (see RowSplit in row_norm.cuh).
struct RowTiling {
  int vec = 1;              ///< elements per vector (16 bytes when the row length allows)
  int threads_per_row = 1;  ///< a power of two, <= 1024
  int per_thread = 1;       ///< vectors per thread
  int block = 128;          ///< threads per block
  int rows_per_block() const { return block / threads_per_row; }
};

// Elements a thread keeps in registers: about 16 per tensor it caches (forward
// caches x; backward x and dy plus the dweight/dbias partials). Blocks of 1024
// threads have 64 registers per thread, so they cache half as much.
constexpr int kTargetElements = 16;
constexpr int kMaxElements = 32;
constexpr int kSmallBlock = 128;
// Backward rows per row group at least (when there are that many): fewer
// partial rows for the finalize step to add.
constexpr int64_t kBackwardRowsPerGroup = 16;

Result<RowTiling> choose_tiling(const RowNormProblem& p, bool backward) {
  RowTiling t;
  t.vec = 16 / static_cast<int>(dtype_size_bytes(p.dtype));
  while (t.vec > 1 && p.cols % t.vec != 0) t.vec /= 2;
  const int64_t vectors = p.cols / t.vec;
  const int64_t target = std::max<int64_t>(1, (backward ? kTargetElements / 2 : kTargetElements) / t.vec);
  const int64_t want = (vectors + target - 1) / target;
  t.threads_per_row = static_cast<int>(std::min<int64_t>(std::bit_ceil(static_cast<uint64_t>(want)), 1024));
  t.per_thread = static_cast<int>((vectors + t.threads_per_row - 1) / t.threads_per_row);
  int limit = backward ? kMaxElements / 2 : kMaxElements;
  if (t.threads_per_row == 1024) limit /= 2;
  if (t.per_thread * t.vec > limit)
    return unimplemented("rows of " + std::to_string(p.cols) + " elements do not fit in registers (" +
                         std::to_string(t.per_thread * t.vec) + " per thread > " + std::to_string(limit) + ")");
  t.block = t.threads_per_row >= 32 ? t.threads_per_row : kSmallBlock;
  return t;
}

const char* flag(bool v) { return v ? "true" : "false"; }

bool backward(const RowNormProblem& p) { return p.dx || p.dweight || p.dbias; }
bool partial_sums(const RowNormProblem& p) { return p.dweight || p.dbias; }

// Kernel entries of a problem, in launch order: the forward first (a backward
// in the same signature reads the rstd it writes), the finalize last.
struct Entry {
  std::string name, call;
  enum Kind { kForward, kBackward, kFinalize } kind;
};

std::vector<Entry> entries(const RowNormProblem& p, const RowTiling& fwd, const RowTiling& bwd) {
  const std::string t = device_type(p.dtype), cols = std::to_string(p.cols);
  auto split = [&](const RowTiling& r) {
    return cols + ", " + std::to_string(r.vec) + ", " + std::to_string(r.threads_per_row) + ", " +
           std::to_string(r.block);
  };
  std::vector<Entry> out;
  if (p.forward)
    out.push_back({"boo_row_norm_forward",
                   "boo::row_norm_forward<" + t + ", " + split(fwd) + ", " + flag(p.rms) + ", " + flag(p.weight) +
                       ", " + flag(p.bias) + ">(p)",
                   Entry::kForward});
  if (backward(p))
    out.push_back({"boo_row_norm_backward",
                   "boo::row_norm_backward<" + t + ", " + split(bwd) + ", " + flag(p.rms) + ", " + flag(p.weight) +
                       ", " + flag(p.dx) + ", " + flag(p.dweight) + ", " + flag(p.dbias) + ">(p)",
                   Entry::kBackward});
  if (partial_sums(p))
    out.push_back({"boo_row_norm_finalize",
                   "boo::row_norm_finalize<" + t + ", " + cols + ", " + flag(p.dweight) + ", " + flag(p.dbias) + ">(p)",
                   Entry::kFinalize});
  return out;
}

// The forward and backward tilings (default ones for passes the problem lacks).
Result<std::pair<RowTiling, RowTiling>> tilings(const RowNormProblem& p) {
  std::pair<RowTiling, RowTiling> t;
  if (p.forward) {
    BOO_ASSIGN_OR_RETURN(t.first, choose_tiling(p, false));
  }
  if (backward(p)) {
    BOO_ASSIGN_OR_RETURN(t.second, choose_tiling(p, true));
  }
  return t;
}

int sm_count(const DeviceInfo& device) { return device.sm_count > 0 ? device.sm_count : 132; }

// Blocks of each pass. The backward has few enough row groups that each
// visits kBackwardRowsPerGroup rows (fewer partial rows), and no more than fit
// on the GPU at once.
uint32_t forward_blocks(const RowNormProblem& p, const RowTiling& t, const DeviceInfo& device) {
  const int64_t needed = (p.rows + t.rows_per_block() - 1) / t.rows_per_block();
  return static_cast<uint32_t>(std::clamp<int64_t>(needed, 1, int64_t{sm_count(device)} * (2048 / t.block)));
}

uint32_t backward_blocks(const RowNormProblem& p, const RowTiling& t, const DeviceInfo& device) {
  const int64_t per_block = t.rows_per_block() * kBackwardRowsPerGroup;
  const int64_t needed = (p.rows + per_block - 1) / per_block;
  return static_cast<uint32_t>(std::clamp<int64_t>(needed, 1, int64_t{sm_count(device)} * (2048 / t.block)));
}

class RowNormImplementation final : public GpuImplementation {
 public:
  RowNormImplementation(std::string name, RowNormProblemOf problem_of)
      : name_(std::move(name)), problem_of_(std::move(problem_of)) {}

  std::string_view name() const override { return name_; }

  Status accepts(const OpSignature& sig, const DeviceInfo&) const override {
    BOO_ASSIGN_OR_RETURN(RowNormProblem p, problem_of_(sig));
    return tilings(p).status();
  }

  std::string compile_params(const OpSignature& sig, const DeviceInfo&) const override {
    Result<RowNormProblem> p = problem_of_(sig);
    if (!p.ok()) return "declined";
    Result<std::pair<RowTiling, RowTiling>> t = tilings(*p);
    if (!t.ok()) return "declined";
    std::string record;  // the calls carry every compile-time choice
    for (const Entry& e : entries(*p, t->first, t->second)) record += e.name + "=" + e.call + ";";
    return record;
  }

  Result<base::KernelSource> source(const OpSignature& sig, const DeviceInfo&) const override {
    BOO_ASSIGN_OR_RETURN(RowNormProblem p, problem_of_(sig));
    BOO_ASSIGN_OR_RETURN(auto tiling, tilings(p));
    const auto& [fwd, bwd] = tiling;
    std::vector<KernelEntry> kernels;
    for (const Entry& e : entries(p, fwd, bwd))
      kernels.push_back({e.name, e.call, e.kind == Entry::kForward ? fwd.block : e.kind == Entry::kBackward ? bwd.block : 256});
    return generated_source("row_norm.cu", name_, "boo/common/row_norm.cuh", "boo::RowNormParams", kernels);
  }

  size_t workspace_bytes(const OpSignature& sig, const DeviceInfo& device) const override {
    Result<RowNormProblem> p = problem_of_(sig);
    if (!p.ok() || !partial_sums(*p)) return 0;
    Result<RowTiling> t = choose_tiling(*p, true);
    if (!t.ok()) return 0;
    return 2 * slots(*p, *t, device) * static_cast<size_t>(p->cols) * sizeof(float);
  }

  Result<std::vector<KernelLaunch>> plan(const OpSignature& sig, const DeviceInfo& device,
                                         std::span<const DeviceTensor> args, std::span<const DeviceTensor> results,
                                         uint64_t workspace) const override {
    BOO_ASSIGN_OR_RETURN(RowNormProblem p, problem_of_(sig));
    BOO_ASSIGN_OR_RETURN(auto tiling, tilings(p));
    const auto& [fwd, bwd] = tiling;
    auto address = [&](std::string_view name) { return tensor_address(args, results, name); };
    RowNormParams params{};
    params.x = address("x");
    params.weight = address("weight");
    params.bias = address("bias");
    params.y = address("y");
    params.mean = address("mean");
    params.rstd = address("rstd");  // a result with the forward, an argument without
    params.dy = address("dy");
    params.dx = address("dx");
    params.dweight = address("dweight");
    params.dbias = address("dbias");
    params.partials = workspace;
    params.rows = p.rows;
    params.slots = backward(p) ? static_cast<long long>(slots(p, bwd, device)) : 0;
    params.eps = static_cast<float>(p.eps);
    for (std::span<const DeviceTensor> list : {args, results})
      for (const DeviceTensor& t : list)
        if (t.address % 16 != 0)
          return invalid_argument(name_ + " needs 16-byte aligned tensors; '" + t.spec.name + "' is not");
    std::vector<KernelLaunch> launches;
    const std::vector<Entry> es = entries(p, fwd, bwd);
    for (size_t i = 0; i < es.size(); ++i) {
      KernelLaunch l;
      l.entry = i;
      switch (es[i].kind) {
        case Entry::kForward:
          l.grid[0] = forward_blocks(p, fwd, device);
          l.block[0] = static_cast<uint32_t>(fwd.block);
          break;
        case Entry::kBackward:
          l.grid[0] = backward_blocks(p, bwd, device);
          l.block[0] = static_cast<uint32_t>(bwd.block);
          break;
        case Entry::kFinalize:
          l.grid[0] = static_cast<uint32_t>((p.cols + 31) / 32);  // 32 columns x 8 slot lanes per block
          l.block[0] = 256;
          break;
      }
      l.set_params(params);
      launches.push_back(std::move(l));
    }
    return launches;
  }

 private:
  static size_t slots(const RowNormProblem& p, const RowTiling& bwd, const DeviceInfo& device) {
    return static_cast<size_t>(backward_blocks(p, bwd, device)) * static_cast<size_t>(bwd.rows_per_block());
  }

  std::string name_;
  RowNormProblemOf problem_of_;
};

}  // namespace

std::unique_ptr<GpuImplementation> make_row_norm_implementation(std::string name, RowNormProblemOf problem_of) {
  return std::make_unique<RowNormImplementation>(std::move(name), std::move(problem_of));
}

}  // namespace boo::ops
