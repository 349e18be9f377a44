// boo: the row-normalization kernels' host side — tiling, source, launch plan.
#include "ops/norm/norm_rows_impl.hpp"

#include <algorithm>
#include <bit>
#include <optional>

#include "ops/common/generated_source.hpp"
#include "ops/norm/device/row_norm_params.cuh"
#include "ops/norm/norm_implementation.hpp"

namespace boo::ops::norm {
namespace {

// How a row is spread over threads (see RowSplit in row_norm.cuh).
struct RowTiling {
  int vec = 1;              ///< elements per vector (16 bytes when the row length allows)
  int threads_per_row = 1;  ///< a power of two, <= 1024
  int per_thread = 1;       ///< vectors per thread
  int block = 128;          ///< threads per block
  bool prefetch = false;    ///< load the next row's share early (RowShare in row_norm.cuh)
  bool shared_partials = false;  ///< the backward's dweight/dbias sums in shared memory (PartialSums)
  bool two_per_sm = false;  ///< 512-thread rows bounded to 64 registers: two blocks (rows) in flight per SM
  bool db_registers = false;  ///< with shared_partials: dbias's sums stay in registers (PartialSums)
  int stages = 0;           ///< the backward's rows through a cp.async ring of this many stages (StagedRows)
  int tensors = 0;          ///< row tensors in each stage (x, x2, dy as the problem reads them)
  int dtype_bytes = 0;      ///< bytes of an element (the ring's size)
  int rows_per_block() const { return block / threads_per_row; }
};

// Elements of a row a thread keeps in registers, aimed at and at most: 16 and
// 32 for the forward (x) and a dx-only backward (x, dy); 8 and 16 for the
// fused backward, which also holds dweight/dbias partials; 8 and 32 for the
// fused backward whose partials live in shared memory (one vector per thread
// where the row allows, for the early load; rows as wide as the dx-only pass
// takes). Blocks of 1024 threads have 64 registers per thread, so at most
// half. The nvrtc tests compile every row class at these limits and fail on
// spills.
enum class Pass { kForward, kBackward, kBackwardSharedPartials, kBackwardDx };
int target_elements(Pass pass) { return pass == Pass::kBackward || pass == Pass::kBackwardSharedPartials ? 8 : 16; }
int max_elements(Pass pass) { return pass == Pass::kBackward ? 16 : 32; }
constexpr int kSmallBlock = 128;
// Threads an SM holds at most, and at 64 registers each (its 64K registers):
// the row kernels' occupancy bounds.
constexpr int kThreadsPerSm = 2048;
constexpr int kThreadsPerSmAt64Registers = 1024;
// Backward rows per row group at least, when there are that many (fewer partial
// rows for the finalize step to add); one-row blocks go below it where that
// gives every SM a block (backward_blocks).
constexpr int64_t kBackwardRowsPerGroup = 16;
// The column-parallel dweight/dbias kernel of a split backward: threads per
// block, rows per partial row at least, and blocks to aim for per SM.
constexpr int kParamBlock = 128;
constexpr int64_t kParamRowsPerSlot = 32;
constexpr int64_t kParamBlocksPerSm = 4;

// Widest vector (16 bytes down to one element) that divides the row.
int widest_vector(const NormProblem& p) {
  int vec = 16 / static_cast<int>(dtype_size_bytes(p.dtype));
  while (vec > 1 && p.cols % vec != 0) vec /= 2;
  return vec;
}

// `scale` multiplies the elements a thread aims at (1 but for boo tune's
// alternatives; the limit stays).
Result<RowTiling> choose_tiling(const NormProblem& p, Pass pass, double scale) {
  std::string why;
  // Narrower vectors spread a wide row over more threads when 16-byte ones
  // leave a thread more than it can hold.
  for (int vec = widest_vector(p); vec >= 1; vec /= 2) {
    RowTiling t;
    t.vec = vec;
    const int64_t vectors = p.cols / t.vec;
    const int64_t target = std::max<int64_t>(
        1, std::min<int64_t>(max_elements(pass), static_cast<int64_t>(target_elements(pass) * scale)) / t.vec);
    const int64_t want = (vectors + target - 1) / target;
    t.threads_per_row = static_cast<int>(std::min<int64_t>(std::bit_ceil(static_cast<uint64_t>(want)), 1024));
    // In int64 until it is known to fit (rows may have up to 2^48 elements).
    const int64_t per_thread = (vectors + t.threads_per_row - 1) / t.threads_per_row;
    int limit = max_elements(pass);
    if (t.threads_per_row == 1024) limit /= 2;
    t.block = t.threads_per_row >= 32 ? t.threads_per_row : kSmallBlock;
    if (per_thread * t.vec <= limit) {
      t.per_thread = static_cast<int>(per_thread);
      return t;
    }
    if (why.empty()) why = std::to_string(per_thread * t.vec) + " per thread > " + std::to_string(limit);
  }
  return unimplemented("rows of " + std::to_string(p.cols) + " elements do not fit in registers (" + why + ")");
}

// The row kernels' static shared memory: the row reduction's scratch
// (row_norm.cuh's Sum2 scratch[32]), beside the dynamic partial sums.
constexpr size_t kReductionScratchBytes = 32 * 2 * sizeof(float);

const char* flag(bool v) { return v ? "true" : "false"; }

// Dynamic shared memory of a backward tiling: its partial sums when they live
// there ([2][elements per thread][block] floats, [1] with dbias's in
// registers, see PartialSums), then its ring (StagedRows).
size_t partial_bytes(const RowTiling& t) {
  const size_t sums = t.shared_partials ? (t.db_registers ? 1 : 2) : 0;
  return sums * static_cast<size_t>(t.per_thread * t.vec * t.block) * sizeof(float);
}
// One stage of the ring: each thread's share of each row tensor.
size_t stage_bytes(const RowTiling& t) {
  return static_cast<size_t>(t.tensors) * t.per_thread * t.vec * t.dtype_bytes * t.block;
}
// [partial sums][ring]
size_t shared_bytes(const RowTiling& t) { return partial_bytes(t) + t.stages * stage_bytes(t); }

// How a problem runs: the forward's and the backward's tilings (defaults for
// passes the problem lacks), and whether the backward is split (rows too wide
// for the fused one: dx by row_norm_backward alone, dweight/dbias by
// row_norm_param_grads with vectors of param_vec elements).
struct Layout {
  RowTiling fwd, bwd;
  bool split = false;
  int param_vec = 1;
};

// Prefetching (the next row's share loaded before the current row is reduced)
// where a thread holds one vector of a row: a larger share leaves no room for a
// second one in 64 registers. RMS norm's backward (dx and dweight) gained
// 1.06x-1.20x from it on each bf16 shape it applies to
// (docs/perf/2026-11-22-norms-h200-prefetch.md). The fused backward that sums
// both dweight and dbias besides dx (layer norm's full backward) keeps those
// sums in shared memory: in registers they left no room for the early load
// (with both there it measured 0.84x at 65536x1024 on an H200). Not where a
// row group is narrower than a warp (rows of under 32 vectors): there a block
// visits few rows of many row groups, and the shared-memory sums measured
// 0.89x at 13440x32, so they keep the registers and the plain loop. In shared
// memory the sums also let the fused backward take rows as wide as the dx-only
// pass does; where the device lacks that much shared memory, such rows split.
//
// Rows that fill a block of 1024 threads exactly (WideRows::kFullBlock, the
// heuristic; kAsBefore keeps the earlier choice for boo tune's A/B):
// - one vector per thread (16-bit rows of 8192): the sums go back to
//   registers, with the early load (on sm_80+ the cp.async ring in its
//   place: staged_rows). That block is alone on its SM (its 64K
//   registers), so the shared-memory round trips of 16 sums per thread and row
//   sat on the SM's only path between two rows' loads; RMS norm's backward,
//   with that tiling and its dweight sums in registers, ran at 89% of copy
//   bandwidth where layer norm's ran at 67% (H100,
//   docs/perf/2026-11-25-norms-h100-e2b9496.md).
// - more than one 16-byte vector per thread (bf16 rows of 12288: 1536 vectors,
//   so half the threads idle on the second and no early load): 8-byte vectors
//   where a thread's share is then at most 12 elements (3 x 4 at 12288, every
//   thread busy), with the early load and the sums in shared memory.
// Only where the row fills the block exactly: without the per-vector bounds
// checks the kernel fits 64 registers; ptxas spills with them (6144, 10240), and
// for fp16 data at 12288 (its conversions). The nvrtc tests compile both.
enum class WideRows { kFullBlock, kAsBefore };
constexpr int kEarlyLoadElements = 12;  // a thread's share of a 1024-thread row, at most, for the early load

bool fills_full_block(const NormProblem& p, const RowTiling& t) {
  return t.threads_per_row == 1024 && (p.cols / t.vec) % 1024 == 0;
}

// The full block's narrower-vector tiling of a bf16 row (see above), if any.
std::optional<RowTiling> narrowed_for_early_load(const NormProblem& p, const RowTiling& t) {
  // Not add-layernorm's: x2's share besides spilled 136 bytes.
  if (p.dtype != DType::kBF16 || p.fused_add || !t.shared_partials || t.threads_per_row != 1024 ||
      t.per_thread == 1)
    return std::nullopt;
  for (RowTiling n = t; n.vec > 1;) {
    n.vec /= 2;
    n.per_thread = static_cast<int>(p.cols / n.vec / 1024);
    if (!fills_full_block(p, n)) return std::nullopt;
    if (n.per_thread * n.vec <= kEarlyLoadElements) {
      n.prefetch = true;
      return n;
    }
  }
  return std::nullopt;
}

// The forward of a row that takes a 1024-thread block with more than one
// vector a thread but leaves threads idle on the last one (bf16 rows of 12288:
// 1536 16-byte vectors, 512 threads idle on the second) runs on 512-thread
// blocks the row fills exactly (3 vectors a thread), bounded to 64 registers
// so that two blocks share an SM. A 1024-thread block of that row is alone on
// its SM (no early load: two vectors a thread leave no room for a second
// share), so each SM loaded one row, waited for it, reduced it and stored it
// before loading the next: the memory latency of every row exposed. With few
// rows (1024x12288 is under 8 rows an SM) nothing hid it: 56% of copy
// bandwidth (H100, docs/perf/2026-11-26-session5-h100x4.md). Two blocks an SM
// keep one row's loads in flight while the other is reduced and stored. Only
// where x's floats and the packed weight, bias and x2 (add-layernorm) a
// thread holds fit in kTwoPerSmRegisters (the nvrtc tests compile these at 64
// registers and fail on spills): 24 bf16 or fp16 elements with weight and
// bias; add-layernorm's (12 registers more: ptxas spilled 40 bytes) and fp32
// rows of 12288 (48 registers of weight and bias) keep the 1024-thread block.
constexpr int kTwoPerSmThreads = 512;
constexpr int kTwoPerSmRegisters = 48;

std::optional<RowTiling> two_per_sm_forward(const NormProblem& p, const RowTiling& t) {
  if (t.threads_per_row != 1024 || t.per_thread == 1 || fills_full_block(p, t)) return std::nullopt;
  const int64_t vectors = p.cols / t.vec;
  if (vectors % kTwoPerSmThreads != 0) return std::nullopt;
  RowTiling n = t;
  n.threads_per_row = n.block = kTwoPerSmThreads;
  n.per_thread = static_cast<int>(vectors / kTwoPerSmThreads);
  const int64_t elements = int64_t{n.per_thread} * n.vec;
  const int64_t packed_registers = elements * static_cast<int64_t>(dtype_size_bytes(p.dtype)) / 4;
  const int64_t held = elements + (p.weight + p.bias + p.fused_add) * packed_registers;
  if (elements > max_elements(Pass::kForward) || held > kTwoPerSmRegisters)
    return std::nullopt;
  n.two_per_sm = true;
  return n;
}

// Layer norm's full backward where a thread holds one 16-byte vector of a row
// that takes the whole block (16-bit rows of 1024 to 8192 on blocks of 128 to
// 1024 threads): the rows come through a ring of up to kRingStages stages in
// shared memory, filled by cp.async up to three rows ahead (StagedRows in
// row_norm.cuh), in place of the early load's one row in registers. The ring
// holds no registers (the early load's second share gives its 8 back) and
// keeps several rows' loads in flight per block. Measured before it (H100,
// docs/perf/2026-11-26-session5-h100x4.md): 70% of copy bandwidth at
// 4096x8192 (one 1024-thread block an SM, sums in registers: the early load
// was all that overlapped a row's loads with the reduction of the one
// before; RMS norm's backward, with half the register sums, ran at 89%), 74%
// at 65536x1024, 85% at 16384x4096. Only with at least kMinRingStages stages
// (two rows ahead), in the shared memory the device gives each of the blocks
// an SM holds at 64 registers a thread (kThreadsPerSmAt64Registers / block),
// so the ring costs no occupancy; sm_80+ (cp.async).
constexpr int kRingStages = 4;
constexpr int kMinRingStages = 3;
constexpr size_t kSharedReservedPerBlock = 1024;  // the driver's reserve per resident block (sm_80+)

std::optional<RowTiling> with_ring(const NormProblem& p, const ArchSpec& arch, const RowTiling& t) {
  if (arch.cc_major < 8 || t.threads_per_row != t.block) return std::nullopt;
  RowTiling n = t;
  n.prefetch = false;
  n.tensors = 1 + ((p.dx || p.dweight) ? 1 + (p.fused_add ? 1 : 0) : 0);
  n.dtype_bytes = static_cast<int>(dtype_size_bytes(p.dtype));
  if (n.vec * n.dtype_bytes != 16) return std::nullopt;
  const size_t blocks_per_sm = static_cast<size_t>(std::max(1, kThreadsPerSmAt64Registers / t.block));
  const size_t budget =
      std::min(static_cast<size_t>(arch.max_shared_bytes_per_block),
               static_cast<size_t>(arch.max_shared_bytes_per_sm) / blocks_per_sm - kSharedReservedPerBlock);
  const size_t fixed = partial_bytes(n) + kReductionScratchBytes;
  if (budget < fixed) return std::nullopt;
  n.stages = static_cast<int>(std::min<size_t>(kRingStages, (budget - fixed) / stage_bytes(n)));
  if (n.stages < kMinRingStages) return std::nullopt;
  return n;
}

std::optional<RowTiling> staged_rows(const NormProblem& p, const ArchSpec& arch, const RowTiling& t) {
  if (!t.prefetch || t.per_thread != 1) return std::nullopt;
  return with_ring(p, arch, t);
}

// The dx-only backward (no dweight/dbias, or a split backward's dx kernel) of
// rows of more than one 16-byte vector a thread that take a 1024-thread block
// (bf16 rows of 12288 to 16384: 2 vectors a thread, no early load, which has
// no room beside them): the ring too, three stages of 64 KiB, where each row
// was loaded only once the one before had been stored. Not with a weight on
// rows that leave threads idle on their last vector (layer norm's -m 1 at
// 12288: ptxas spilled 24 bytes in bf16, 28 in fp16; with its bounds checks
// the weight's share no longer fits).
std::optional<RowTiling> staged_dx(const NormProblem& p, const ArchSpec& arch, const RowTiling& t) {
  if (t.prefetch || t.per_thread == 1 || t.block != 1024) return std::nullopt;
  if (p.weight && !fills_full_block(p, t)) return std::nullopt;
  return with_ring(p, arch, t);
}

// The bf16 rows of 12288 of layer norm's full backward (narrowed_for_early_load:
// 8-byte vectors, three a thread, 1024 threads, sums in shared memory): the
// ring in the early load's place too, with dbias's sums back in registers
// (the early load's 12 registers) so that dweight's alone take shared memory
// (48 KiB) and the ring gets three stages of 48 KiB (two rows ahead, where
// the early load held one). Measured before it (H100): 51% of copy bandwidth
// at 1024x12288, 1.28x cuDNN's time. ptxas: 64 registers, no spills.
std::optional<RowTiling> staged_narrowed(const NormProblem& p, const ArchSpec& arch, const RowTiling& t) {
  if (arch.cc_major < 8 || !t.prefetch || !t.shared_partials || t.threads_per_row != t.block || t.per_thread == 1)
    return std::nullopt;
  RowTiling n = t;
  n.prefetch = false;
  n.db_registers = true;
  n.tensors = 1 + ((p.dx || p.dweight) ? 1 + (p.fused_add ? 1 : 0) : 0);
  n.dtype_bytes = static_cast<int>(dtype_size_bytes(p.dtype));
  const size_t budget = static_cast<size_t>(arch.max_shared_bytes_per_block);
  const size_t fixed = partial_bytes(n) + kReductionScratchBytes;
  if (budget < fixed) return std::nullopt;
  n.stages = static_cast<int>(std::min<size_t>(kRingStages, (budget - fixed) / stage_bytes(n)));
  if (n.stages < kMinRingStages) return std::nullopt;
  return n;
}

Result<Layout> layout(const NormProblem& p, const ArchSpec& arch, double scale, WideRows wide) {
  Layout l;
  if (p.forward) {
    BOO_ASSIGN_OR_RETURN(l.fwd, choose_tiling(p, Pass::kForward, scale));
    if (wide == WideRows::kFullBlock)
      if (std::optional<RowTiling> n = two_per_sm_forward(p, l.fwd)) l.fwd = *n;
    l.fwd.prefetch = l.fwd.per_thread == 1;
  }
  if (!p.backward()) return l;
  const bool both_partials = p.dweight && p.dbias;
  const Pass fused_pass = p.dx && both_partials ? Pass::kBackwardSharedPartials : Pass::kBackward;
  if (Result<RowTiling> fused = choose_tiling(p, fused_pass, scale); fused.ok()) {
    RowTiling t = *fused;
    const bool registers = wide == WideRows::kFullBlock && fused_pass == Pass::kBackwardSharedPartials &&
                           fills_full_block(p, t) && t.per_thread == 1;
    t.shared_partials = fused_pass == Pass::kBackwardSharedPartials && t.threads_per_row >= 32 && !registers;
    t.prefetch = t.per_thread == 1 && (!both_partials || t.shared_partials || registers);
    if (wide == WideRows::kFullBlock)
      if (std::optional<RowTiling> n = narrowed_for_early_load(p, t))
        t = staged_narrowed(p, arch, *n).value_or(*n);
    if (wide == WideRows::kFullBlock && fused_pass == Pass::kBackwardSharedPartials)
      if (std::optional<RowTiling> n = staged_rows(p, arch, t)) t = *n;
    if (shared_bytes(t) + kReductionScratchBytes <= static_cast<size_t>(arch.max_shared_bytes_per_block)) {
      l.bwd = t;
      return l;
    }
  }
  l.split = p.param_grads();
  l.param_vec = widest_vector(p);
  if (p.dx) {
    BOO_ASSIGN_OR_RETURN(l.bwd, choose_tiling(p, Pass::kBackwardDx, scale));
    l.bwd.prefetch = l.bwd.per_thread == 1;
    if (wide == WideRows::kFullBlock)
      if (std::optional<RowTiling> n = staged_dx(p, arch, l.bwd)) l.bwd = *n;
  }
  return l;
}

// Kernel entries of a problem, in launch order: the forward first (a backward
// in the same signature reads the rstd it writes), the finalize last.
struct Entry {
  std::string name, call;
  enum Kind { kForward, kBackward, kParamGrads, kFinalize } kind;
};

std::vector<Entry> entries(const NormProblem& p, const Layout& l) {
  const std::string t = device_type(p.dtype), cols = std::to_string(p.cols);
  auto split = [&](const RowTiling& r) {
    return cols + ", " + std::to_string(r.vec) + ", " + std::to_string(r.threads_per_row) + ", " +
           std::to_string(r.block) + ", " + flag(r.prefetch);
  };
  std::vector<Entry> out;
  if (p.forward)
    out.push_back({"boo_row_norm_forward",
                   "boo::row_norm_forward<" + t + ", " + split(l.fwd) + ", " + flag(p.rms()) + ", " + flag(p.weight) +
                       ", " + flag(p.bias) + ", " + flag(p.fused_add) + ">(p)",
                   Entry::kForward});
  const bool fused_partials = p.param_grads() && !l.split;
  if (p.dx || fused_partials)
    out.push_back({"boo_row_norm_backward",
                   "boo::row_norm_backward<" + t + ", " + split(l.bwd) + ", " + flag(l.bwd.shared_partials) + ", " +
                       std::to_string(l.bwd.stages) + ", " + flag(l.bwd.db_registers) + ", " + flag(p.rms()) + ", " + flag(p.weight) +
                       ", " + flag(p.dx) + ", " + flag(p.dweight && fused_partials) + ", " +
                       flag(p.dbias && fused_partials) + ", " + flag(p.fused_add) + ">(p)",
                   Entry::kBackward});
  if (l.split)
    out.push_back({"boo_row_norm_param_grads",
                   "boo::row_norm_param_grads<" + t + ", " + cols + ", " + std::to_string(l.param_vec) + ", " +
                       std::to_string(kParamBlock) + ", " + flag(p.rms()) + ", " + flag(p.dweight) + ", " +
                       flag(p.dbias) + ", " + flag(p.fused_add) + ">(p)",
                   Entry::kParamGrads});
  if (p.param_grads())
    out.push_back({"boo_row_norm_finalize",
                   "boo::row_norm_finalize<" + t + ", " + cols + ", " + flag(p.dweight) + ", " + flag(p.dbias) + ">(p)",
                   Entry::kFinalize});
  return out;
}

// Threads per block of each kernel (the finalize: 32 columns x 8 slot lanes).
int block_of(Entry::Kind kind, const Layout& l) {
  switch (kind) {
    case Entry::kForward: return l.fwd.block;
    case Entry::kBackward: return l.bwd.block;
    case Entry::kParamGrads: return kParamBlock;
    case Entry::kFinalize: break;
  }
  return 256;
}

// Dynamic shared memory of each kernel: the backward's partial sums when they live there, and its ring.
uint32_t shared_bytes_of(Entry::Kind kind, const Layout& l) {
  return kind == Entry::kBackward ? static_cast<uint32_t>(shared_bytes(l.bwd)) : 0;
}

// A prefetching row kernel holds a second row share: in blocks of 256
// threads or more, a few registers over 64 would halve the threads resident
// per SM, so those kernels are bounded to 1024 resident threads (64 registers
// each); so are the two-blocks-an-SM forwards (two_per_sm_forward) and the
// backwards whose ring took the early load's place (staged_rows). The nvrtc
// tests fail on any spill this bound causes.
int min_blocks_per_sm(Entry::Kind kind, const Layout& l) {
  const RowTiling* t = kind == Entry::kForward ? &l.fwd : kind == Entry::kBackward ? &l.bwd : nullptr;
  if (t == nullptr || !(t->prefetch || t->two_per_sm || t->stages > 0) || t->block < 256) return 0;
  return kThreadsPerSmAt64Registers / t->block;
}

// Blocks of each pass. The backward has few enough row groups that each
// visits kBackwardRowsPerGroup rows (fewer partial rows), and no more than fit
// on the GPU at once.
// A two-blocks-an-SM forward has no more blocks than are resident at once:
// each block loads its share of the weight and bias (24 KiB each at 12288)
// once, where a second wave of blocks would load them again.
uint32_t forward_blocks(const NormProblem& p, const RowTiling& t, const ArchSpec& arch) {
  const int64_t needed = (p.rows + t.rows_per_block() - 1) / t.rows_per_block();
  const int threads_per_sm = t.two_per_sm ? kThreadsPerSmAt64Registers : kThreadsPerSm;
  return static_cast<uint32_t>(std::clamp<int64_t>(needed, 1, int64_t{arch.sm_count} * (threads_per_sm / t.block)));
}

// The backward kernels hold 40-64 registers per thread: 1024 threads fit on an
// SM at once, and more blocks would only add a second wave and partial rows.
// A block of one row (rows of 32+ vectors) visits fewer rows where that gives
// every SM a block: few wide rows (1024x12288) otherwise left half of them
// idle. Narrower rows keep their rows per group: the finalize adds a narrow
// row's partial rows in few blocks.
uint32_t backward_blocks(const NormProblem& p, const RowTiling& t, const ArchSpec& arch) {
  const int64_t per_block = t.rows_per_block() * kBackwardRowsPerGroup;
  int64_t needed = (p.rows + per_block - 1) / per_block;
  if (t.rows_per_block() == 1) needed = std::max<int64_t>(needed, std::min<int64_t>(p.rows, arch.sm_count));
  return static_cast<uint32_t>(std::clamp<int64_t>(needed, 1, int64_t{arch.sm_count} * (kThreadsPerSmAt64Registers / t.block)));
}

// The split backward's column-parallel kernel: blocks across the row's
// vectors, and partial rows (gridDim.y) enough to fill the GPU with at least
// kParamRowsPerSlot rows each.
uint32_t param_column_blocks(const NormProblem& p, const Layout& l) {
  return static_cast<uint32_t>((p.cols / l.param_vec + kParamBlock - 1) / kParamBlock);
}

uint32_t param_slots(const NormProblem& p, const Layout& l, const ArchSpec& arch) {
  const int64_t fill = std::max<int64_t>(1, arch.sm_count * kParamBlocksPerSm / param_column_blocks(p, l));
  const int64_t most = std::max<int64_t>(1, p.rows / kParamRowsPerSlot);
  return static_cast<uint32_t>(std::min(fill, most));
}

// The configuration: how each pass spreads a row over threads, and the
// kernels that follow from it (their calls carry every compile-time choice).
struct RowNormConfig final : Config {
  Layout layout;
  std::vector<Entry> entries;

  std::string text() const override {
    std::string record;
    for (const Entry& e : entries) record += e.name + "=" + e.call + ";";
    return record;
  }
};

class RowNorm final : public NormTier<RowNormConfig> {
 public:
  using NormTier::NormTier;

  // The row kernels take contiguous inputs only (a permuted one runs on the
  // simple kernels); configure declines rows too wide for registers.
  Status accepts_problem(const NormProblem& p, const ArchSpec&) const override {
    BOO_RETURN_IF_ERROR(check_kind(p));
    if (!p.contiguous) return unimplemented("a permuted input (--input-permutation) is not contiguous");
    return ok_status();
  }

  Result<RowNormConfig> configure_problem(const NormProblem& p, const ArchSpec& arch) const override {
    return with_layout(p, arch, 1.0, WideRows::kFullBlock);
  }

  // The earlier choice for rows filling a 1024-thread block (WideRows; where
  // it is the same, candidates() drops it as a repeat); then rows spread over
  // fewer or more threads: each thread aiming at twice, three times, half or a quarter of
  // the heuristic's elements (no cost model: the nearest first).
  std::vector<RowNormConfig> alternatives(const NormProblem& p, const ArchSpec& arch,
                                          const RowNormConfig&) const override {
    std::vector<RowNormConfig> out;
    if (Result<RowNormConfig> c = with_layout(p, arch, 1.0, WideRows::kAsBefore); c.ok()) out.push_back(std::move(*c));
    // 3x: rows of 96 16-byte vectors (768 bf16 columns) as a warp of three vectors a thread, where the
    // heuristic's power-of-two row groups leave a quarter of 128 threads idle.
    for (double scale : {2.0, 3.0, 0.5, 0.25})
      if (Result<RowNormConfig> c = with_layout(p, arch, scale, WideRows::kFullBlock); c.ok())
        out.push_back(std::move(*c));
    return out;
  }

  Result<Plan> plan_problem(const NormProblem& p, const RowNormConfig& config, const ArchSpec& arch) const override {
    const Layout& lay = config.layout;
    Plan plan;
    std::vector<KernelEntry> kernels;
    for (const Entry& e : config.entries)
      kernels.push_back({e.name, e.call, block_of(e.kind, lay), min_blocks_per_sm(e.kind, lay)});
    plan.source = generated_source("row_norm.cu", std::string(name()), "boo/norm/row_norm.cuh", "boo::RowNormParams",
                                   kernels);
    plan.tensor_alignment = 16;  // rows are read and written in 16-byte vectors
    plan.workspace_bytes =
        p.param_grads() ? 2 * slots(p, lay, arch) * static_cast<size_t>(p.cols) * sizeof(float) : 0;
    const TensorRoles roles(p.signature());
    for (const Entry& e : config.entries) {
      StepBuilder<RowNormParams> step(e.name, grid_of(e.kind, p, lay, arch),
                                      {static_cast<uint32_t>(block_of(e.kind, lay)), 1, 1}, shared_bytes_of(e.kind, lay));
      bind_tensors(step, roles);
      step.bind(step.params.partials, TensorBinding::workspace(0));
      step.params.rows = p.rows;
      step.params.slots = p.backward() ? static_cast<long long>(slots(p, lay, arch)) : 0;
      step.params.eps = static_cast<float>(p.eps);
      plan.steps.push_back(std::move(step).finish());
    }
    return plan;
  }

 private:
  static Result<RowNormConfig> with_layout(const NormProblem& p, const ArchSpec& arch, double scale, WideRows wide) {
    RowNormConfig config;
    BOO_ASSIGN_OR_RETURN(config.layout, layout(p, arch, scale, wide));
    config.entries = entries(p, config.layout);
    return config;
  }

  static Dim3 grid_of(Entry::Kind kind, const NormProblem& p, const Layout& lay, const ArchSpec& arch) {
    switch (kind) {
      case Entry::kForward: return {forward_blocks(p, lay.fwd, arch), 1, 1};
      case Entry::kBackward: return {backward_blocks(p, lay.bwd, arch), 1, 1};
      case Entry::kParamGrads: return {param_column_blocks(p, lay), param_slots(p, lay, arch), 1};
      case Entry::kFinalize: break;
    }
    return {static_cast<uint32_t>((p.cols + 31) / 32), 1, 1};  // 32 columns per block
  }

  // Partial rows of dweight/dbias: one per row group of the fused backward, or
  // the split backward's gridDim.y.
  static size_t slots(const NormProblem& p, const Layout& l, const ArchSpec& arch) {
    if (l.split) return param_slots(p, l, arch);
    return static_cast<size_t>(backward_blocks(p, l.bwd, arch)) * static_cast<size_t>(l.bwd.rows_per_block());
  }
};

}  // namespace

std::unique_ptr<GpuImplementation> make_rows_implementation(NormKind kind, std::string name) {
  return std::make_unique<RowNorm>(kind, std::move(name));
}

}  // namespace boo::ops::norm
