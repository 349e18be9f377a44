// boo: staged copies of conv tensors (see conv_staging.hpp).
#include "ops/conv/conv_staging.hpp"

#include <algorithm>

#include "boo/conv.hpp"
#include "ops/common/generated_source.hpp"
#include "ops/conv/device/conv_igemm_params.cuh"

namespace boo::ops::conv {
namespace {

// Whether the pixels (or taps) of a tensor form one run of stride 1, as in
// NCHW, NCDHW and KCRS: then a copy to channels-last is a tiled transpose.
bool pixels_contiguous(const Dims3& size, const Strides5& strides) {
  long long expected = 1;
  for (int d = 2; d >= 0; --d) {
    if (size[d] == 1) continue;
    if (strides[2 + d] != expected) return false;
    expected *= size[d];
  }
  return true;
}

// The transpose moves 16-bit elements in pairs where every offset it uses is even.
bool pairs_possible(const StagedCopy& c, long long elem_bytes) {
  return elem_bytes == 2 && c.size[0] * c.size[1] * c.size[2] % 2 == 0 && c.strides[0] % 2 == 0 &&
         c.strides[1] % 2 == 0 && c.padded % 2 == 0 && c.origin % 2 == 0;
}

}  // namespace

std::string StagedCopy::entry() const {
  return std::string(input ? "boo_conv_" : "boo_conv_un") + (flip ? "flip_" : padding ? "pad_" : "stage_") + tensor;
}

std::string StagedCopy::text() const {
  return entry() + "(" + std::to_string(channels) + "->" + std::to_string(padded) +
         (transpose ? (pairs ? " transpose pairs" : " transpose") : "") + ")";
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
  c.input = tensor == "x" || tensor == "w" || tensor == "dy";
  c.padding = padding;
  c.outer = outer;
  c.outer_rows = outer_rows;
  c.size = size;
  c.channels = channels;
  c.padded = padded;
  c.strides = signature_strides(problem, tensor);
  c.transpose = pixels_contiguous(size, c.strides) && c.strides[1] != 1;
  c.pairs = c.transpose && pairs_possible(c, problem.elem_bytes);
  return c;
}

std::optional<StagedCopy> flipped_filter_copy(const ConvProblem& problem, const std::string& tensor) {
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
  c.channels = c.padded = r.cb;
  // Tap t' of the copy is tap taps-1-t' of the tensor: a negative stride from the last tap.
  c.strides = {-w[4], w[0], 0, 0, w[1]};
  c.origin = (taps - 1) * w[4];
  c.transpose = w[1] == 1 && w[0] != 1;  // c contiguous (KRSC): a tiled transpose of kb and c per tap
  c.pairs = c.transpose && pairs_possible(c, problem.elem_bytes);
  return c;
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
  const std::string call = c.transpose ? std::string("conv_transpose_channels<") + device_type(dtype) + ", " +
                                             (c.input ? "true" : "false") + ", " + (c.pairs ? "true" : "false") + ">"
                                       : std::string("conv_copy_channels<") + device_type(dtype) + ", " +
                                             (c.input ? "true" : "false") + ">";
  source.text += "extern \"C\" __global__ void __launch_bounds__(256) " + entry +
                 "(const boo::ConvChannelPadParams p) { boo::" + call + "(p); }\n";
  source.entries.push_back(entry);
  Dim3 grid;
  if (c.transpose) {
    // Tiles of 64 (pairs) or 32 channels x pixels; a grid-stride loop over N (or K) beyond 65535.
    const long long pixels = c.size[0] * c.size[1] * c.size[2], tile = c.pairs ? 64 : 32;
    BOO_ASSIGN_OR_RETURN(grid.x, grid_extent(ceil_div(pixels, tile), 0x7fffffff, "x (pixel tiles)"));
    BOO_ASSIGN_OR_RETURN(grid.y, grid_extent(ceil_div(c.input ? c.padded : c.channels, tile), 65535, "y (channel tiles)"));
    grid.z = static_cast<uint32_t>(std::clamp<long long>(c.outer, 1, 65535));
  } else {
    // One thread per element written; grid-stride loops beyond 16 blocks per SM.
    const long long elements = c.outer * c.size[0] * c.size[1] * c.size[2] * (c.input ? c.padded : c.channels);
    BOO_ASSIGN_OR_RETURN(grid.x, grid_extent(std::clamp<long long>(ceil_div(elements, 256), 1, 16LL * arch.sm_count),
                                             0x7fffffff, "x"));
  }
  BOO_ASSIGN_OR_RETURN(TensorBinding tensor, c.input ? roles.argument(c.tensor) : roles.result(c.tensor));
  StepBuilder<ConvChannelPadParams> step(entry, grid, {256, 1, 1});
  step.bind(step.params.strided, tensor);
  step.bind(step.params.dense, TensorBinding::workspace(c.offset));
  for (int i = 0; i < 5; ++i) step.params.strides[i] = c.strides[i];
  step.params.origin = c.origin;
  step.params.sizes[0] = c.outer;
  for (int i = 0; i < 3; ++i) step.params.sizes[1 + i] = c.size[i];
  step.params.channels = c.channels;
  step.params.padded_channels = c.padded;
  return std::move(step).finish();
}

}  // namespace boo::ops::conv
