// boo: gpu:aten:sdpa_flash — attention forward on mma.sync tensor cores
// (device/sdpa_flash.cuh): bf16/fp16, head dims 64 and 128 (E == Ev), any
// strides whose rows are dense and 16-byte aligned, causal or not, grouped heads.
#include <cmath>

#include "ops/aten/device/sdpa_params.cuh"
#include "ops/aten/sdpa.hpp"
#include "ops/common/generated_source.hpp"

namespace boo::ops::aten {
namespace {

constexpr int kBlockN = 64;  // device/sdpa_flash.cuh's kSdpaBlockN
constexpr int64_t kMaxGridY = 65535;
constexpr int64_t kMaxInt = 0x7fffffff;

int shared_bytes(int head_dim, int block_m) { return 2 * head_dim * (block_m + 4 * kBlockN); }

struct SdpaFlashConfig final : Config {
  DType dtype = DType::kBF16;
  int head_dim = 64;
  int block_m = 64;  ///< queries per CTA (16 per warp)
  bool causal = false;
  std::string text() const override {
    return "dtype=" + std::string(dtype_name(dtype)) + ";head_dim=" + std::to_string(head_dim) +
           ";block_m=" + std::to_string(block_m) + ";block_n=" + std::to_string(kBlockN) +
           ";causal=" + (causal ? "1" : "0");
  }
};

class SdpaFlashTier final : public Tier<SdpaProblem, SdpaFlashConfig> {
 public:
  std::string_view name() const override { return "gpu:aten:sdpa_flash"; }

  Status accepts_problem(const SdpaProblem& p, const ArchSpec& arch) const override {
    const SdpaSignature& sig = p.typed();
    const SdpaDesc& d = sig.desc();
    const DType dtype = sig.query().dtype;
    if (dtype == DType::kF64) return unimplemented("float64 runs on the CPU reference only (--backend cpu)");
    if (dtype != DType::kBF16 && dtype != DType::kF16)
      return unimplemented("float32 attention has no GPU kernel yet (this tier runs bf16/fp16 on tensor cores); "
                           "--backend cpu runs its reference");
    if (d.head_dim != d.value_dim)
      return unimplemented("head dim " + std::to_string(d.head_dim) + " of query/key differs from value's " +
                           std::to_string(d.value_dim) + "; this tier takes E == Ev");
    if (d.head_dim != 64 && d.head_dim != 128)
      return unimplemented("head dim " + std::to_string(d.head_dim) + "; this tier takes 64 or 128");
    for (const TensorSpec* t : {&sig.query(), &sig.key(), &sig.value()}) BOO_RETURN_IF_ERROR(sdpa_detail::check_rows(*t));
    if (d.batch * d.heads > kMaxInt || d.queries > kMaxInt || d.keys > kMaxInt)
      return unimplemented("batch * heads, queries and keys must each be below 2^31 (32-bit indices)");
    if ((d.queries + 63) / 64 > kMaxGridY)
      return unimplemented(std::to_string(d.queries) + " queries need more than " + std::to_string(kMaxGridY) +
                           " blocks of 64 (grid y)");
    if (shared_bytes(static_cast<int>(d.head_dim), 64) > arch.max_shared_bytes_per_block)
      return unimplemented("the tiles need " + std::to_string(shared_bytes(static_cast<int>(d.head_dim), 64)) +
                           " bytes of shared memory, more than the device's " +
                           std::to_string(arch.max_shared_bytes_per_block) + " per block");
    const float scale_log2 = static_cast<float>(d.scale * M_LOG2E);
    if (!std::isfinite(scale_log2)) return unimplemented("scale " + std::to_string(d.scale) + " overflows float");
    return ok_status();
  }

  Result<SdpaFlashConfig> configure_problem(const SdpaProblem& p, const ArchSpec& arch) const override {
    const SdpaDesc& d = p.typed().desc();
    SdpaFlashConfig c;
    c.dtype = p.typed().query().dtype;
    c.head_dim = static_cast<int>(d.head_dim);
    c.causal = d.causal;
    // 128 queries per CTA halve the K/V traffic per query; take them while
    // they still give every SM a CTA and their tiles fit.
    const int64_t ctas128 = d.batch * d.heads * ((d.queries + 127) / 128);
    c.block_m = ctas128 >= arch.sm_count && shared_bytes(c.head_dim, 128) <= arch.max_shared_bytes_per_block ? 128 : 64;
    return c;
  }

  std::vector<SdpaFlashConfig> alternatives(const SdpaProblem&, const ArchSpec& arch,
                                            const SdpaFlashConfig& chosen) const override {
    SdpaFlashConfig other = chosen;
    other.block_m = chosen.block_m == 128 ? 64 : 128;
    if (shared_bytes(other.head_dim, other.block_m) > arch.max_shared_bytes_per_block) return {};
    return {other};
  }

  Result<Plan> plan_problem(const SdpaProblem& p, const SdpaFlashConfig& c, const ArchSpec&) const override {
    const SdpaSignature& sig = p.typed();
    const SdpaDesc& d = sig.desc();
    Plan plan;
    const std::string entry = "boo_sdpa_flash_forward";
    const int threads = c.block_m / 16 * 32;
    plan.source = generated_source(
        "sdpa_flash.cu", std::string(name()), "boo/aten/sdpa_flash.cuh", "boo::SdpaParams",
        {{entry,
          "boo::sdpa_flash_forward<" + std::string(device_type(c.dtype)) + ", " + std::to_string(c.head_dim) + ", " +
              std::to_string(c.block_m) + ", " + (c.causal ? "true" : "false") + ">(p)",
          threads}});
    plan.tensor_alignment = 16;  // 16-byte cp.async of every row
    BOO_ASSIGN_OR_RETURN(uint32_t grid_x, grid_extent(d.batch * d.heads, kMaxInt, "x (batch * heads)"));
    BOO_ASSIGN_OR_RETURN(uint32_t grid_y, grid_extent((d.queries + c.block_m - 1) / c.block_m, kMaxGridY,
                                                      "y (query blocks)"));
    StepBuilder<SdpaParams> step(entry, {grid_x, grid_y, 1}, {static_cast<uint32_t>(threads), 1, 1},
                                 static_cast<uint32_t>(shared_bytes(c.head_dim, c.block_m)));
    const TensorRoles roles(sig);
    BOO_ASSIGN_OR_RETURN(TensorBinding q, roles.argument("query"));
    BOO_ASSIGN_OR_RETURN(TensorBinding k, roles.argument("key"));
    BOO_ASSIGN_OR_RETURN(TensorBinding v, roles.argument("value"));
    BOO_ASSIGN_OR_RETURN(TensorBinding out, roles.result("out"));
    step.bind(step.params.q, q);
    step.bind(step.params.k, k);
    step.bind(step.params.v, v);
    step.bind(step.params.out, out);
    SdpaParams& params = step.params;
    const TensorSpec* specs[3] = {&sig.query(), &sig.key(), &sig.value()};
    long long* strides[3] = {params.q_strides, params.k_strides, params.v_strides};
    for (int t = 0; t < 3; ++t)
      for (int dim = 0; dim < 3; ++dim) strides[t][dim] = specs[t]->strides[static_cast<size_t>(dim)];
    params.heads = static_cast<int>(d.heads);
    params.group = static_cast<int>(d.group());
    params.queries = static_cast<int>(d.queries);
    params.keys = static_cast<int>(d.keys);
    params.scale_log2 = static_cast<float>(d.scale * M_LOG2E);
    plan.steps.push_back(std::move(step).finish());
    return plan;
  }
};

}  // namespace

Status sdpa_detail::check_rows(const TensorSpec& t) {
  if (t.strides[3] != 1)
    return unimplemented(t.name + " has strides " + format_dims(t.strides) +
                         ": the head dim must be dense (stride 1) for 16-byte copies");
  for (int d = 0; d < 3; ++d) {
    if (t.shape[static_cast<size_t>(d)] > 1 && t.strides[static_cast<size_t>(d)] % 8 != 0)
      return unimplemented(t.name + " has strides " + format_dims(t.strides) +
                           ": batch, head and row strides must be multiples of 8 elements (16-byte rows)");
  }
  return ok_status();
}

std::span<const GpuImplementation* const> sdpa_implementations() {
  static const SdpaFlashTier tier;
  static const GpuImplementation* const kImpls[] = {&tier};
  return kImpls;
}

}  // namespace boo::ops::aten
