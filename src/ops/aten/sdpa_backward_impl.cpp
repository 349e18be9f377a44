// boo: gpu:aten:sdpa_flash_backward — attention backward on mma.sync tensor
// cores (device/sdpa_backward.cuh): three launches, D and lse * log2(e) per
// query row into the workspace, then dQ (a CTA per 64 queries) and dK, dV (a
// CTA per 64 keys of a kv head). bf16/fp16, head dims 64 and 128 (E == Ev),
// rows dense and 16-byte aligned, causal or not, grouped heads.
#include <cmath>

#include "ops/aten/device/sdpa_backward_params.cuh"
#include "ops/aten/sdpa.hpp"
#include "ops/common/generated_source.hpp"

namespace boo::ops::aten {
namespace {

constexpr int kRows = 64;            // device/sdpa_backward.cuh's kSdpaBackwardRows (queries or keys per CTA)
constexpr int kThreads = 128;        // kSdpaBackwardThreads
constexpr int kDeltaWarps = 8;       // query rows per block of the delta kernel
constexpr int64_t kMaxGridY = 65535;
constexpr int64_t kMaxInt = 0x7fffffff;

int block_q(int head_dim) { return head_dim == 128 ? 32 : 64; }  // sdpa_dkdv_block_q
int dq_shared_bytes(int head_dim) { return 2 * head_dim * (2 * kRows + 4 * 64); }
int dkdv_shared_bytes(int head_dim) { return 2 * head_dim * (2 * kRows + 4 * block_q(head_dim)); }

struct SdpaBackwardConfig final : Config {
  DType dtype = DType::kBF16;
  int head_dim = 64;
  bool causal = false;
  std::string text() const override {
    return "dtype=" + std::string(dtype_name(dtype)) + ";head_dim=" + std::to_string(head_dim) +
           ";block_m=" + std::to_string(kRows) + ";block_n=" + std::to_string(kRows) +
           ";block_q=" + std::to_string(block_q(head_dim)) + ";causal=" + (causal ? "1" : "0");
  }
};

class SdpaBackwardTier final : public Tier<SdpaBackwardProblem, SdpaBackwardConfig> {
 public:
  std::string_view name() const override { return "gpu:aten:sdpa_flash_backward"; }

  Status accepts_problem(const SdpaBackwardProblem& p, const ArchSpec& arch) const override {
    using S = SdpaBackwardSignature;
    const S& sig = p.typed();
    const SdpaDesc& d = sig.desc();
    const DType dtype = sig.arg(S::kQuery).dtype;
    if (dtype == DType::kF64) return unimplemented("float64 runs on the CPU reference only (--backend cpu)");
    if (dtype != DType::kBF16 && dtype != DType::kF16)
      return unimplemented("float32 attention has no GPU kernel yet (this tier runs bf16/fp16 on tensor cores); "
                           "--backend cpu runs its reference");
    if (d.head_dim != d.value_dim)
      return unimplemented("head dim " + std::to_string(d.head_dim) + " of query/key differs from value's " +
                           std::to_string(d.value_dim) + "; this tier takes E == Ev");
    if (d.head_dim != 64 && d.head_dim != 128)
      return unimplemented("head dim " + std::to_string(d.head_dim) + "; this tier takes 64 or 128");
    for (size_t i : {S::kGradOut, S::kQuery, S::kKey, S::kValue, S::kOut})
      BOO_RETURN_IF_ERROR(sdpa_detail::check_rows(sig.arg(i)));
    if (d.batch * d.heads > kMaxInt || d.queries > kMaxInt || d.keys > kMaxInt ||
        d.batch * d.heads * d.queries > kMaxInt)
      return unimplemented("batch * heads * queries, and keys, must each be below 2^31 (32-bit indices)");
    if ((d.queries + kRows - 1) / kRows > kMaxGridY || (d.keys + kRows - 1) / kRows > kMaxGridY)
      return unimplemented("queries and keys must each fit " + std::to_string(kMaxGridY) + " blocks of " +
                           std::to_string(kRows) + " (grid y)");
    const int shared = std::max(dq_shared_bytes(static_cast<int>(d.head_dim)),
                                dkdv_shared_bytes(static_cast<int>(d.head_dim)));
    if (shared > arch.max_shared_bytes_per_block)
      return unimplemented("the tiles need " + std::to_string(shared) + " bytes of shared memory, more than the "
                           "device's " + std::to_string(arch.max_shared_bytes_per_block) + " per block");
    const float scale_log2 = static_cast<float>(d.scale * M_LOG2E);
    if (!std::isfinite(scale_log2)) return unimplemented("scale " + std::to_string(d.scale) + " overflows float");
    return ok_status();
  }

  Result<SdpaBackwardConfig> configure_problem(const SdpaBackwardProblem& p, const ArchSpec&) const override {
    using S = SdpaBackwardSignature;
    SdpaBackwardConfig c;
    c.dtype = p.typed().arg(S::kQuery).dtype;
    c.head_dim = static_cast<int>(p.typed().desc().head_dim);
    c.causal = p.typed().desc().causal;
    return c;
  }

  Result<Plan> plan_problem(const SdpaBackwardProblem& p, const SdpaBackwardConfig& c, const ArchSpec&) const override {
    using S = SdpaBackwardSignature;
    const S& sig = p.typed();
    const SdpaDesc& d = sig.desc();
    const std::string type = device_type(c.dtype), dim = std::to_string(c.head_dim),
                      causal = c.causal ? "true" : "false";
    Plan plan;
    plan.source = generated_source(
        "sdpa_backward.cu", std::string(name()), "boo/aten/sdpa_backward.cuh", "boo::SdpaBackwardParams",
        {{"boo_sdpa_backward_delta", "boo::sdpa_backward_delta<" + type + ", " + dim + ">(p)", kDeltaWarps * 32},
         {"boo_sdpa_backward_dq", "boo::sdpa_backward_dq<" + type + ", " + dim + ", " + causal + ">(p)", kThreads},
         {"boo_sdpa_backward_dkdv", "boo::sdpa_backward_dkdv<" + type + ", " + dim + ", " + causal + ">(p)",
          kThreads}});
    plan.tensor_alignment = 16;  // 16-byte cp.async of every row
    // Workspace: delta, then lse2, float [B * H * L] each (the second at a 256-byte boundary).
    const int64_t rows = d.batch * d.heads * d.queries;
    const uint64_t lse2_offset = (static_cast<uint64_t>(rows) * 4 + 255) / 256 * 256;
    plan.workspace_bytes = static_cast<size_t>(lse2_offset + static_cast<uint64_t>(rows) * 4);

    SdpaBackwardParams params{};
    const size_t args[6] = {S::kGradOut, S::kQuery, S::kKey, S::kValue, S::kOut, S::kLogsumexp};
    long long* strides[6] = {params.dout_strides, params.q_strides, params.k_strides,
                             params.v_strides,    params.out_strides, params.lse_strides};
    for (int t = 0; t < 6; ++t)
      for (int dim_index = 0; dim_index < 3; ++dim_index)
        strides[t][dim_index] = sig.arg(args[t]).strides[static_cast<size_t>(dim_index)];
    params.batch = static_cast<int>(d.batch);
    params.heads = static_cast<int>(d.heads);
    params.kv_heads = static_cast<int>(d.kv_heads);
    params.group = static_cast<int>(d.group());
    params.queries = static_cast<int>(d.queries);
    params.keys = static_cast<int>(d.keys);
    params.scale_log2 = static_cast<float>(d.scale * M_LOG2E);
    params.scale = static_cast<float>(d.scale);

    const TensorRoles roles(sig);
    struct Slot {
      unsigned long long SdpaBackwardParams::*field;
      TensorBinding binding;
    };
    std::vector<Slot> slots;
    const std::pair<unsigned long long SdpaBackwardParams::*, const char*> arguments[] = {
        {&SdpaBackwardParams::dout, "grad_out"}, {&SdpaBackwardParams::q, "query"}, {&SdpaBackwardParams::k, "key"},
        {&SdpaBackwardParams::v, "value"},       {&SdpaBackwardParams::out, "out"},
        {&SdpaBackwardParams::lse, "logsumexp"}};
    for (const auto& [field, role] : arguments) {
      BOO_ASSIGN_OR_RETURN(TensorBinding b, roles.argument(role));
      slots.push_back({field, b});
    }
    const std::pair<unsigned long long SdpaBackwardParams::*, const char*> results[] = {
        {&SdpaBackwardParams::dq, "grad_query"}, {&SdpaBackwardParams::dk, "grad_key"},
        {&SdpaBackwardParams::dv, "grad_value"}};
    for (const auto& [field, role] : results) {
      BOO_ASSIGN_OR_RETURN(TensorBinding b, roles.result(role));
      slots.push_back({field, b});
    }
    slots.push_back({&SdpaBackwardParams::delta, TensorBinding::workspace(0)});
    slots.push_back({&SdpaBackwardParams::lse2, TensorBinding::workspace(lse2_offset)});
    // Every step gets the whole block: each reads the fields its kernel uses.
    auto step_of = [&](std::string entry, Dim3 grid, uint32_t threads, uint32_t shared) {
      StepBuilder<SdpaBackwardParams> step(std::move(entry), grid, {threads, 1, 1}, shared);
      step.params = params;
      for (const Slot& s : slots) step.bind(step.params.*(s.field), s.binding);
      return std::move(step).finish();
    };
    BOO_ASSIGN_OR_RETURN(uint32_t delta_blocks, grid_extent((rows + kDeltaWarps - 1) / kDeltaWarps, kMaxInt,
                                                            "x (query rows / 8)"));
    BOO_ASSIGN_OR_RETURN(uint32_t heads, grid_extent(d.batch * d.heads, kMaxInt, "x (batch * heads)"));
    BOO_ASSIGN_OR_RETURN(uint32_t kv_heads, grid_extent(d.batch * d.kv_heads, kMaxInt, "x (batch * kv heads)"));
    BOO_ASSIGN_OR_RETURN(uint32_t query_blocks, grid_extent((d.queries + kRows - 1) / kRows, kMaxGridY,
                                                            "y (query blocks)"));
    BOO_ASSIGN_OR_RETURN(uint32_t key_blocks, grid_extent((d.keys + kRows - 1) / kRows, kMaxGridY, "y (key blocks)"));
    plan.steps.push_back(step_of("boo_sdpa_backward_delta", {delta_blocks, 1, 1}, kDeltaWarps * 32, 0));
    plan.steps.push_back(step_of("boo_sdpa_backward_dq", {heads, query_blocks, 1}, kThreads,
                                 static_cast<uint32_t>(dq_shared_bytes(c.head_dim))));
    plan.steps.push_back(step_of("boo_sdpa_backward_dkdv", {kv_heads, key_blocks, 1}, kThreads,
                                 static_cast<uint32_t>(dkdv_shared_bytes(c.head_dim))));
    return plan;
  }
};

}  // namespace

std::span<const GpuImplementation* const> sdpa_backward_implementations() {
  static const SdpaBackwardTier tier;
  static const GpuImplementation* const kImpls[] = {&tier};
  return kImpls;
}

}  // namespace boo::ops::aten
