// boo: planning one launch of the GEMM's copy and epilogue kernels.
#include "ops/gemm/gemm_copy_plan.hpp"

#include <algorithm>
#include <cstdlib>

#include "ops/common/generated_source.hpp"
#include "ops/gemm/device/gemm_copy_params.cuh"

namespace boo::ops::gemm {
namespace {

// The grid: the element-wise form's blocks take 16 rounds of 256 elements per
// SM before they loop; the tiled form launches one block per tile (the block
// scheduler then balances the SMs as blocks finish), looping only past the
// grid's limit.
constexpr long long kBlocksPerSm = 16;
constexpr long long kMaxGridX = 0x7fffffff;

Strides3 reordered(const Strides3& s, const std::array<int, 3>& order) {
  return {s[static_cast<size_t>(order[0])], s[static_cast<size_t>(order[1])], s[static_cast<size_t>(order[2])]};
}

}  // namespace

int fastest_dim(const Strides3& strides, const Extents3& sizes) {
  int best = -1;
  for (int i = 0; i < 3; ++i) {
    const int64_t s = std::llabs(strides[static_cast<size_t>(i)]);
    if (sizes[static_cast<size_t>(i)] <= 1 || s == 0) continue;
    if (best < 0 || s < std::llabs(strides[static_cast<size_t>(best)])) best = i;
  }
  return best;
}

CopyForm copy_form(const Extents3& sizes, const Strides3& src, const Strides3& dst) {
  const int from = fastest_dim(src, sizes), to = fastest_dim(dst, sizes);
  if (from >= 0 && to >= 0 && from != to) return {true, {3 - from - to, from, to}};
  // Element-wise: the kernel's columns (its threads' fastest index) are the dim both views share.
  const int inner = to >= 0 ? to : from;
  if (inner < 0) return {};
  const int outer = inner == 0 ? 1 : 0, middle = 3 - inner - outer;
  return {false, {outer, middle, inner}};
}

Result<LaunchStep> plan_copy(const CopySpec& spec, const ArchSpec& arch, base::KernelSource& source) {
  for (int64_t size : spec.sizes)
    if (size < 1) return internal_error("copy " + spec.entry + ": an index space of a size below 1");
  const CopyForm form = copy_form(spec.sizes, spec.src.strides, spec.dst.strides);
  const std::string include = "#include \"boo/gemm/gemm_copy.cuh\"\n";
  if (source.text.find(include) == std::string::npos) source.text += "\n// The GEMM's copies and epilogue.\n" + include;
  source.text += "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(kGemmCopyThreads) + ") " +
                 spec.entry + "(const boo::GemmCopyParams p) { boo::" + (form.tiled ? "gemm_copy_tiled<" : "gemm_copy<") +
                 device_type(spec.dtype) + ", " + (spec.src_fp32 ? "float" : device_type(spec.dtype)) + ", " +
                 (spec.addend ? "true" : "false") + ", " + (spec.bias ? "true" : "false") + ", " +
                 std::to_string(static_cast<int>(spec.activation.kind)) + ">(p); }\n";
  source.entries.push_back(spec.entry);

  const Extents3 sizes = reordered(spec.sizes, form.order);
  long long blocks;
  if (form.tiled) {
    const int64_t tiles = sizes[0] * ((sizes[1] + kGemmCopyTile - 1) / kGemmCopyTile) *
                            ((sizes[2] + kGemmCopyTile - 1) / kGemmCopyTile);
    blocks = std::min<long long>(tiles, kMaxGridX);
  } else {
    blocks = std::min<long long>((sizes[0] * sizes[1] * sizes[2] + kGemmCopyThreads - 1) / kGemmCopyThreads,
                      kBlocksPerSm * arch.sm_count);
  }
  BOO_ASSIGN_OR_RETURN(uint32_t grid, grid_extent(blocks, kMaxGridX, form.tiled ? "x (tiles)" : "x (elements)"));
  StepBuilder<GemmCopyParams> step(spec.entry, {grid, 1, 1}, {static_cast<uint32_t>(kGemmCopyThreads), 1, 1});
  auto set = [&](long long* dst, const Strides3& s) {
    const Strides3 r = reordered(s, form.order);
    std::copy(r.begin(), r.end(), dst);
  };
  set(step.params.sizes, spec.sizes);
  step.bind(step.params.src, spec.src.binding);
  set(step.params.src_strides, spec.src.strides);
  step.bind(step.params.dst, spec.dst.binding);
  set(step.params.dst_strides, spec.dst.strides);
  if (spec.addend) {
    step.bind(step.params.addend, spec.addend->binding);
    set(step.params.addend_strides, spec.addend->strides);
  }
  if (spec.bias) {
    step.bind(step.params.bias, spec.bias->binding);
    set(step.params.bias_strides, spec.bias->strides);
  }
  step.params.alpha = static_cast<float>(spec.alpha);
  step.params.beta = static_cast<float>(spec.beta);
  step.params.act_alpha = static_cast<float>(spec.activation.alpha);
  step.params.act_lo = static_cast<float>(spec.activation.lo);
  step.params.act_hi = static_cast<float>(spec.activation.hi);
  return std::move(step).finish();
}

}  // namespace boo::ops::gemm
