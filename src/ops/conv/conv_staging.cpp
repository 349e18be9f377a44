// boo: staged copies of conv tensors (see conv_staging.hpp).
#include "ops/conv/conv_staging.hpp"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <string_view>

#include "boo/conv.hpp"
#include "ops/common/generated_source.hpp"
#include "ops/conv/device/conv_igemm_params.cuh"

namespace boo::ops::conv {
namespace {


// Shared memory per conv_stage_tiles tile, and the pixels from which (with
// 16-bit channels a multiple of 64) conv_transpose_channels is kept.
constexpr long long kTileBytes = 16384;
constexpr long long kTransposeMinPixels = 4096;

// The largest power of two that divides `v` (0: any), at most `limit`.
long long pow2_dividing(long long v, long long limit) {
  long long p = 1;
  while (p < limit && v % (2 * p) == 0) p *= 2;
  return p;
}

// The 64 x 64 transpose moves 16-bit elements in pairs: every offset it uses must be even.
bool pairs_possible(const StagedCopy& c, long long elem_bytes) {
  return elem_bytes == 2 && c.size[0] * c.size[1] * c.size[2] % 2 == 0 && c.strides[0] % 2 == 0 &&
         c.strides[1] % 2 == 0 && c.padded % 2 == 0 && c.origin % 2 == 0;
}

// conv_stage_tiles' tiles (stage::View, stage::Tile): few pixels whose
// channels' runs are adjacent take whole runs (the tile one run of memory),
// as many channels as fit (a multiple of a 32-byte sector's) or, where one
// outer index's channels fit, several outer indices (where those are
// adjacent too); else tiles of up to 64 channels x as many pixels as fit.
void plan_tiles(StagedCopy& c, long long elem_bytes) {
  const long long budget = kTileBytes / elem_bytes, sector = 32 / elem_bytes, widest = 16 / elem_bytes;
  const long long pixels = c.size[0] * c.size[1] * c.size[2];
  const long long outer = c.flip_runs ? 1 : c.outer, run = c.flip_runs ? c.outer * pixels : pixels;
  const long long origin = c.flip_runs ? c.origin + (c.outer - 1) * c.strides[0] : c.origin;
  const long long moved = c.input ? c.padded : c.channels;
  c.walk = CopyWalk::kTiles;
  c.run = !c.flip_runs && c.strides[1] == run && run * sector <= budget;
  if (c.run) {
    if (c.channels * run <= budget) {
      c.tile[1] = moved;
      c.tile[0] = c.strides[0] == c.channels * run ? std::min(outer, budget / (c.channels * run)) : 1;
    } else {
      c.tile[1] = budget / run / sector * sector;
      c.tile[0] = 1;
    }
    c.tile[2] = c.tile[3] = run;
    // Every tile starts at origin + b0 * strides[0] + c0 * run and is a whole number of
    // gcd(channels, tile channels) channel runs long.
    c.vec_pixels = static_cast<int>(pow2_dividing(
        std::gcd(std::gcd(origin, outer > 1 ? c.strides[0] : 0), run * std::gcd(c.channels, c.tile[1])), widest));
  } else {
    c.tile[0] = 1;
    c.tile[1] = std::min<long long>(moved, 64);
    c.tile[2] = std::min(run, std::max<long long>(budget / c.tile[1] / 32 * 32, 32));
    c.tile[3] = c.tile[2] + 4 / elem_bytes;  // rows a 4-byte word apart from a multiple of 32 banks
    // Runs start at origin + b * strides[0] + c * strides[1] + q0 + a multiple of the access.
    c.vec_pixels = static_cast<int>(pow2_dividing(
        std::gcd(std::gcd(std::gcd(origin, outer > 1 ? c.strides[0] : 0), c.channels > 1 ? c.strides[1] : 0),
                 std::gcd(run, c.tile[2])),
        widest));
  }
  // Dense accesses start at a pixel's row (padded apart) plus a multiple of the tile's channels.
  c.vec_channels = static_cast<int>(pow2_dividing(std::gcd(c.padded, c.tile[1] < moved ? c.tile[1] : 0), widest));
}

// conv_transpose_blocks (stage::block_unit): blocks of e = 16 / elem_bytes channels x one access of pixels
// through each thread's registers, where the dense channels are whole 16-byte vectors and the tensor's offsets
// allow accesses of 8 bytes or more along its pixels (every run starts at origin + o * strides[0] + c *
// strides[1], and its pixels are a multiple of the access: 196 pixels take 4 16-bit elements an access, 49 none). A warp
// spans 4 channel vectors where there are as many (2, 1 where fewer: a 3-channel x padded to 8 fills its lanes
// with pixel blocks). Measured faster than conv_stage_tiles and the pair transpose on the lines both took
// (docs/perf/2026-11-28-session20.md); BOO_STAGE_BLOCKS=0 plans those instead, for A/B runs. Declines where the
// device's int indices (units, outer indices' pixel blocks, a thread's unit plus the grid's stride) could pass
// 2^31: copies of more than 2^30 blocks (tensors of tens of GB).
constexpr long long kMaxBlockUnits = 1LL << 30;
long long block_units(const StagedCopy& c) {
  const long long pixels = c.size[0] * c.size[1] * c.size[2];
  return ceil_div(c.outer * (pixels / c.vec_pixels), 32 / c.lanes_c) *
         ceil_div(c.input ? c.padded : c.channels, c.vec_channels * c.lanes_c) * 32;
}

bool plan_blocks(StagedCopy& c, long long elem_bytes) {
  const char* off = std::getenv("BOO_STAGE_BLOCKS");
  if ((off != nullptr && std::string_view(off) == "0") || (elem_bytes != 2 && elem_bytes != 4)) return false;
  const long long e = 16 / elem_bytes, pixels = c.size[0] * c.size[1] * c.size[2];
  if (c.padded % e != 0) return false;
  const long long vec = pow2_dividing(
      std::gcd(std::gcd(c.origin, c.outer > 1 ? c.strides[0] : 0), std::gcd(c.channels > 1 ? c.strides[1] : 0, pixels)),
      e);
  if (vec * elem_bytes < 8) return false;
  const long long vectors = ceil_div(c.input ? c.padded : c.channels, e);
  StagedCopy planned = c;
  planned.walk = CopyWalk::kBlocks;
  planned.vec_pixels = static_cast<int>(vec);
  planned.vec_channels = static_cast<int>(e);
  planned.lanes_c = vectors >= 4 ? 4 : vectors >= 2 ? 2 : 1;
  if (block_units(planned) > kMaxBlockUnits) return false;
  c = planned;
  return true;
}

// conv_copy_pixels' rows: the dense pixels' (outer, z, y, x) without the
// dimensions of one, each merged into the next slower where that is
// contiguous with it (NHWC's four are one, of stride C).
void plan_pixels(StagedCopy& c, long long elem_bytes) {
  c.walk = CopyWalk::kPixels;
  const long long moved = c.input ? c.padded : c.channels;
  c.vec_channels = static_cast<int>(pow2_dividing(c.padded, 16 / elem_bytes));
  long long sizes[4] = {c.outer, c.size[0], c.size[1], c.size[2]};
  long long strides[4] = {c.strides[0], c.strides[2], c.strides[3], c.strides[4]};
  int dims = 0;  // merged dimensions, in c.row_sizes[4 - dims ..] once placed
  long long merged_sizes[4], merged_strides[4];
  for (int d = 0; d < 4; ++d) {
    if (sizes[d] == 1) continue;
    if (dims > 0 && merged_strides[dims - 1] == sizes[d] * strides[d]) {
      merged_sizes[dims - 1] *= sizes[d];
      merged_strides[dims - 1] = strides[d];
    } else {
      merged_sizes[dims] = sizes[d];
      merged_strides[dims++] = strides[d];
    }
  }
  if (dims == 0) {  // a single pixel of a single outer index
    merged_sizes[0] = 1;
    merged_strides[0] = 0;
    dims = 1;
  }
  c.row_dims = dims;
  for (int d = 0; d < 4; ++d) {
    const int from = d - (4 - dims);
    c.row_sizes[d] = from >= 0 ? merged_sizes[from] : 1;
    c.row_strides[d] = from >= 0 ? merged_strides[from] : 0;
  }
  // The farthest element either side reaches, and the units.
  long long reach = std::abs(c.origin) + (c.channels - 1) * std::abs(c.strides[1]);
  for (int d = 0; d < dims; ++d) reach += (merged_sizes[d] - 1) * std::abs(merged_strides[d]);
  const long long rows = c.outer * c.size[0] * c.size[1] * c.size[2];
  const long long units = rows * ((moved + c.vec_channels - 1) / c.vec_channels);
  c.index32 = std::max({reach, rows * c.padded, units}) <= 0x7fffffffLL;
}

}  // namespace

std::string StagedCopy::entry() const {
  return std::string(input ? "boo_conv_" : "boo_conv_un") + (flip ? "flip_" : padding ? "pad_" : "stage_") + tensor;
}

long long StagedCopy::shared_bytes(long long elem_bytes) const {
  return walk == CopyWalk::kTiles ? tile[0] * std::min(tile[1], channels) * tile[3] * elem_bytes : 0;
}

std::string StagedCopy::text() const {
  std::string walk_text;
  switch (walk) {
    case CopyWalk::kPixels:
      walk_text = "pixels v" + std::to_string(vec_channels) + " rows " + std::to_string(row_dims) +
                  (index32 ? " i32" : " i64");
      break;
    case CopyWalk::kTranspose:
      walk_text = "transpose pairs";
      break;
    case CopyWalk::kBlocks:
      walk_text = "blocks " + std::to_string(32 / lanes_c) + "x" + std::to_string(lanes_c) + " v" +
                  std::to_string(vec_pixels) + "/" + std::to_string(vec_channels);
      break;
    case CopyWalk::kTiles:
      walk_text = "tiles " + std::to_string(tile[0]) + "x" + std::to_string(tile[1]) + "x" + std::to_string(tile[2]) +
                  (run ? " run" : "") + (flip_runs ? " taps" : "") + " v" + std::to_string(vec_pixels) + "/" +
                  std::to_string(vec_channels);
      break;
  }
  return entry() + "(" + std::to_string(channels) + "->" + std::to_string(padded) + " " + walk_text + ")";
}

Strides5 signature_strides(const ConvProblem& problem, const std::string& tensor) {
  const ConvSignature& sig = problem.conv();
  for (const TensorSpec& t : sig.arguments())
    if (t.name == tensor) return strides5(t);
  for (const TensorSpec& t : sig.results())
    if (t.name == tensor) return strides5(t);
  return Strides5{};
}

bool channels_contiguous(const Strides5& strides, long long channels) { return channels == 1 || strides[1] == 1; }

StagedCopy layout_copy(const ConvProblem& problem, const std::string& tensor, long long outer, long long outer_rows,
                       const Dims3& size, long long channels, long long padded, bool padding) {
  StagedCopy c;
  c.tensor = tensor;
  c.input = tensor == "x" || tensor == "w" || tensor == "dy" || tensor == "z";
  c.padding = padding;
  c.outer = outer;
  c.outer_rows = outer_rows;
  c.size = size;
  c.channels = channels;
  c.padded = padded;
  c.strides = signature_strides(problem, tensor);
  plan_walk(c, problem.elem_bytes);
  return c;
}

std::optional<StagedCopy> flipped_filter_copy(const ConvProblem& problem, const std::string& tensor, long long padded) {
  const Relation& r = problem.relation;
  const Strides5 w = signature_strides(problem, tensor);  // (kb, c, z, r, s)
  const long long taps = r.taps();
  if (r.f_size[0] != 1 || (r.f_size[1] > 1 && w[3] != r.f_size[2] * w[4])) return std::nullopt;
  StagedCopy c;
  c.tensor = tensor;
  c.input = true;
  c.flip = true;
  c.outer = c.outer_rows = taps;
  c.size = {1, 1, r.ag()};  // a group's input channels: w is [kb][c < C / groups][taps]
  c.channels = r.cb;
  c.padded = std::max(padded, r.cb);
  c.padding = c.padded > c.channels;
  // Tap t' of the copy is tap taps-1-t' of the tensor: a negative stride from the last tap.
  c.strides = {-w[4], w[0], 0, 0, w[1]};
  c.origin = (taps - 1) * w[4];
  plan_walk(c, problem.elem_bytes);
  return c;
}

void plan_walk(StagedCopy& c, long long elem_bytes) {
  const long long pixels = c.size[0] * c.size[1] * c.size[2], moved = c.input ? c.padded : c.channels;
  // A flipped KCRS filter: its taps (the copy's outer index, reversed) and pixels (c) are one run.
  c.flip_runs = c.flip && c.outer > 1 && c.strides[0] == -1 && c.strides[4] == c.outer && c.strides[1] != 1;
  if (!c.flip_runs && (c.strides[1] == 1 || !pixels_contiguous(c.strides, c.size))) {
    plan_pixels(c, elem_bytes);
    return;
  }
  if (!c.flip && plan_blocks(c, elem_bytes)) return;
  if (!c.flip_runs && pixels >= kTransposeMinPixels && moved % 64 == 0 && pairs_possible(c, elem_bytes))
    c.walk = CopyWalk::kTranspose;
  else
    plan_tiles(c, elem_bytes);
}

int add_copy(std::vector<StagedCopy>& copies, const StagedCopy& copy) {
  for (size_t i = 0; i < copies.size(); ++i)
    if (copies[i].tensor == copy.tensor && copies[i].padded == copy.padded &&
        copies[i].outer_rows == copy.outer_rows && copies[i].flip == copy.flip)
      return static_cast<int>(i);
  copies.push_back(copy);
  return static_cast<int>(copies.size() - 1);
}

size_t place_copies(std::vector<StagedCopy>& copies, size_t first, long long elem_bytes) {
  auto align = [](size_t bytes) { return (bytes + 255) / 256 * 256; };
  size_t offset = align(first);
  for (StagedCopy& c : copies) {
    c.offset = offset;
    offset += align(static_cast<size_t>(c.elements() * elem_bytes));
  }
  return offset;
}

Result<LaunchStep> staged_copy_step(const StagedCopy& c, DType dtype, const TensorRoles& roles, const ArchSpec& arch,
                                    base::KernelSource& source) {
  const std::string header = "#include \"boo/conv/conv_channel_pad.cuh\"\n";
  if (source.text.find(header) == std::string::npos) source.text += header;
  const std::string entry = c.entry();
  const std::string type = device_type(dtype), in = c.input ? "true" : "false";
  std::string call;
  Dim3 grid;
  if (c.walk == CopyWalk::kTiles) {
    call = "conv_stage_tiles<" + type + ", " + in + ", " + (c.run ? "true" : "false") + ", " +
           (c.flip_runs ? "true" : "false") + ", " + std::to_string(c.vec_pixels) + ", " +
           std::to_string(c.vec_channels) + ">";
    // A block per tile (grid-stride beyond 2^31 - 1 tiles).
    const long long pixels = c.size[0] * c.size[1] * c.size[2];
    const long long batches = c.flip_runs ? 1 : c.outer, run = c.flip_runs ? c.outer * pixels : pixels;
    const long long tiles = ceil_div(batches, c.tile[0]) * ceil_div(c.input ? c.padded : c.channels, c.tile[1]) *
                            ceil_div(run, c.tile[2]);
    grid.x = static_cast<uint32_t>(std::clamp<long long>(tiles, 1, 0x7fffffff));
  } else if (c.walk == CopyWalk::kBlocks) {
    call = "conv_transpose_blocks<" + type + ", " + in + ", " + std::to_string(c.vec_pixels) + ", " +
           std::to_string(c.lanes_c) + ">";
    // A thread per block (whole warps); grid-stride loops beyond 16 blocks of 256 per SM.
    grid.x = static_cast<uint32_t>(std::clamp<long long>(ceil_div(block_units(c), 256), 1, 16LL * arch.sm_count));
  } else if (c.walk == CopyWalk::kTranspose) {
    call = "conv_transpose_channels<" + type + ", " + in + ">";
    // Tiles of 64 channels x 64 pixels; a grid-stride loop over N (or K) beyond 65535.
    const long long pixels = c.size[0] * c.size[1] * c.size[2];
    BOO_ASSIGN_OR_RETURN(grid.x, grid_extent(ceil_div(pixels, 64), 0x7fffffff, "x (pixel tiles)"));
    BOO_ASSIGN_OR_RETURN(grid.y, grid_extent(ceil_div(c.input ? c.padded : c.channels, 64), 65535, "y (channel tiles)"));
    grid.z = static_cast<uint32_t>(std::clamp<long long>(c.outer, 1, 65535));
  } else {
    call = "conv_copy_pixels<" + type + ", " + in + ", " + (c.index32 ? "int" : "long long") + ", " +
           std::to_string(c.row_dims) + ", " + std::to_string(c.vec_channels) + ">";
    // A thread per unit; grid-stride loops beyond 16 blocks per SM.
    const long long rows = c.outer * c.size[0] * c.size[1] * c.size[2];
    const long long units = rows * ceil_div(c.input ? c.padded : c.channels, c.vec_channels);
    grid.x = static_cast<uint32_t>(std::clamp<long long>(ceil_div(units, 256), 1, 16LL * arch.sm_count));
  }
  source.text += "extern \"C\" __global__ void __launch_bounds__(256) " + entry +
                 "(const boo::ConvChannelPadParams p) { boo::" + call + "(p); }\n";
  source.entries.push_back(entry);
  BOO_ASSIGN_OR_RETURN(TensorBinding tensor, c.input ? roles.argument(c.tensor) : roles.result(c.tensor));
  StepBuilder<ConvChannelPadParams> step(entry, grid, {256, 1, 1},
                                          static_cast<uint32_t>(c.shared_bytes(static_cast<long long>(dtype_size_bytes(dtype)))));
  step.bind(step.params.strided, tensor);
  step.bind(step.params.dense, TensorBinding::workspace(c.offset));
  for (int i = 0; i < 5; ++i) step.params.strides[i] = c.strides[i];
  step.params.origin = c.origin;
  step.params.sizes[0] = c.outer;
  for (int i = 0; i < 3; ++i) step.params.sizes[1 + i] = c.size[i];
  step.params.channels = c.channels;
  step.params.padded_channels = c.padded;
  for (int i = 0; i < 4; ++i) {
    step.params.tile[i] = c.tile[i];
    step.params.row_sizes[i] = c.row_sizes[i];
    step.params.row_strides[i] = c.row_strides[i];
  }
  return std::move(step).finish();
}

}  // namespace boo::ops::conv
