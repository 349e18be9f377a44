// boo: gpu:gemm:* — a GEMM as a 1x1 convolution, planned by a conv tier
// (the tiers' mainloops are the GEMM's: no second GEMM code base), with the
// copies and the epilogue the conv cannot express around it.
#include "ops/gemm/gemm_conv_impl.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "ops/conv/conv_direct_impl.hpp"
#include "ops/conv/conv_fp32_split_impl.hpp"
#include "ops/conv/conv_igemm_impl.hpp"
#include "ops/conv/conv_layout.hpp"
#include "ops/conv/conv_wgmma_impl.hpp"
#include "ops/gemm/gemm_copy_plan.hpp"

namespace boo::ops::gemm {
namespace {

enum class Role { kX, kW, kY };

// The GEMM view (batch, row, col strides) that conv strides `s` (outer,
// channel, h) of conv tensor `role` give, for each case of ConvMapping.
Strides3 view_of(Role role, const ConvMapping& c, const GemmDesc& d, const Strides3& s) {
  if (c.grouped) {  // x = B [1, G*k, n], w = A [G*m, k, 1], y = out [1, G*m, n]
    switch (role) {
      case Role::kX: return {d.k * s[1], s[1], s[2]};
      case Role::kW: return {d.m * s[0], s[0], s[1]};
      case Role::kY: return {d.m * s[1], s[1], s[2]};
    }
  }
  const bool batched = d.batch > 1;  // x = A [batch, k, m] (or [m, k, 1]), w = B^T [n, k, 1], y [batch, n, m]
  switch (role) {
    case Role::kX: return batched ? Strides3{s[0], s[2], s[1]} : Strides3{0, s[0], s[1]};
    case Role::kW: return {0, s[1], s[0]};
    case Role::kY: return batched ? Strides3{s[0], s[2], s[1]} : Strides3{0, s[0], s[1]};
  }
  return {};
}

// Whether views `a` and `b` of a [batch, rows, cols] matrix address the same
// elements: equal strides wherever the extent is above 1.
bool same_view(const Strides3& a, const Strides3& b, const std::array<int64_t, 3>& extents) {
  for (int i = 0; i < 3; ++i)
    if (extents[static_cast<size_t>(i)] > 1 && a[static_cast<size_t>(i)] != b[static_cast<size_t>(i)]) return false;
  return true;
}

// Conv layouts, channels-last (what every conv tier loads best) first.
constexpr const char* kLayouts[] = {"NHC", "NCH", "HNC", "HCN", "CNH", "CHN"};

// A 1-D 1x1 conv of `d`'s dtype and math, stride 1, no padding: every mapping's conv before its shapes.
ConvSignature pointwise_1d(const GemmDesc& d) {
  ConvSignature conv;
  conv.spatial_dims = 1;
  conv.dtype = d.dtype;
  conv.fp32_tf32 = d.fp32_tf32;
  conv.filter_size = {1};
  conv.stride = {1};
  conv.padding = {0};
  conv.dilation = {1};
  conv.output_padding = {0};
  return conv;
}

}  // namespace

ConvMapping map_to_conv(const GemmDesc& d, bool channels_last) {
  ConvMapping c;
  c.grouped = d.batch > 1 && d.b.strides[0] != 0;
  ConvSignature& conv = c.conv;
  conv = pointwise_1d(d);
  conv.directions = kConvForward;
  // Conv shapes [outer, channel, h] of x, w and y.
  std::array<int64_t, 3> xs, ws, ys;
  if (c.grouped) {
    conv.groups = d.batch;
    xs = {1, d.batch * d.k, d.n};
    ws = {d.batch * d.m, d.k, 1};
    ys = {1, d.batch * d.m, d.n};
    c.x = {d.b, d.k, d.n};
    c.w = {d.a, d.m, d.k};
  } else {
    xs = d.batch > 1 ? std::array<int64_t, 3>{d.batch, d.k, d.m} : std::array<int64_t, 3>{d.m, d.k, 1};
    ws = {d.n, d.k, 1};
    ys = d.batch > 1 ? std::array<int64_t, 3>{d.batch, d.n, d.m} : std::array<int64_t, 3>{d.m, d.n, 1};
    c.x = {d.a, d.m, d.k};
    c.w = {d.b, d.k, d.n};
  }
  c.y = {d.out, d.m, d.n};
  conv.n = xs[0];
  conv.c = xs[1];
  conv.input_size = {xs[2]};
  conv.k = ys[1];
  // Each operand: the first layout whose strides are its view's, else staged in the first layout.
  auto place = [&](Role role, ConvMapping::Operand& op, const std::array<int64_t, 3>& shape) {
    const std::array<int64_t, 3> extents{d.batch, op.rows, op.cols};
    const int candidates = channels_last ? 1 : static_cast<int>(std::size(kLayouts));
    for (int i = 0; i < candidates; ++i) {
      const std::vector<int64_t> s = permuted_strides({shape.begin(), shape.end()}, conv::layout_order(kLayouts[i]));
      if (same_view(view_of(role, c, d, {s[0], s[1], s[2]}), op.view.strides, extents)) return std::string(kLayouts[i]);
    }
    const std::vector<int64_t> s = permuted_strides({shape.begin(), shape.end()}, conv::layout_order(kLayouts[0]));
    op.staged = true;
    op.staged_view = {"", view_of(role, c, d, {s[0], s[1], s[2]})};
    return std::string(kLayouts[0]);
  };
  // The conv's epilogue is a bias per output channel: a GEMM column only when ungrouped.
  const bool fused = d.conv_epilogue() && !c.grouped;
  if (fused) {
    conv.bias = d.fused_bias().has_value();
    conv.activation = d.activation;
  }
  c.epilogue = !fused && (d.alpha != 1.0 || d.c || d.bias || d.activation.kind != Activation::Kind::kNone);
  conv.input_layout = place(Role::kX, c.x, xs);
  conv.filter_layout = place(Role::kW, c.w, ws);
  // With the epilogue the conv leaves fp32 sums, not y: y's layout is only its signature's.
  conv.output_layout = c.epilogue ? std::string(kLayouts[0]) : place(Role::kY, c.y, ys);
  // The sums (groups, M, N): M the conv's batch x pixels, N a group's output channels.
  if (c.grouped)  // groups = batch entries, M = the GEMM's columns, N = its rows
    c.sums = {d.m * d.n, 1, d.m};
  else  // one group; M = (batch, row), N = the GEMM's columns
    c.sums = {d.m * d.n, d.n, 1};
  return c;
}

std::optional<ConvMapping> map_in_place(const GemmDesc& d) {
  if (d.batch != 1 || d.alpha != 1.0 || d.c || d.bias || d.activation.kind != Activation::Kind::kNone)
    return std::nullopt;
  // Unit batch: only the row and column strides matter (same_view skips extents of 1).
  auto dense = [](const MatrixView& v, int64_t rows, int64_t cols, bool row_major) {
    const Strides3 s = row_major ? Strides3{0, cols, 1} : Strides3{0, 1, rows};
    return same_view(v.strides, s, {1, rows, cols});
  };
  if (!dense(d.out, d.m, d.n, true)) return std::nullopt;
  const bool a_transposed = dense(d.a, d.m, d.k, false), b_transposed = dense(d.b, d.k, d.n, false);
  if (!a_transposed && !dense(d.a, d.m, d.k, true)) return std::nullopt;
  if (!b_transposed && !dense(d.b, d.k, d.n, true)) return std::nullopt;
  ConvMapping c;
  ConvSignature& conv = c.conv;
  conv = pointwise_1d(d);
  conv.filter_layout = "NCH";  // KCRS: w[output channel, input channel]
  if (a_transposed && b_transposed) {
    // dx[m, n] = sum over k channels of w[k, m] * dy[n, k]: dx (out) planar, dy (B stored n x k)
    // channels-last, w (A stored k x m) the filter read transposed.
    conv.directions = kConvBackwardData;
    conv.n = 1, conv.c = d.m, conv.input_size = {d.n}, conv.k = d.k;
    conv.input_layout = "NCH";
    conv.output_layout = "NHC";
    c.x = {d.out, d.m, d.n};
    c.w = {d.a, d.m, d.k};
    c.y = {d.b, d.k, d.n};
    return c;
  }
  if (b_transposed) return std::nullopt;  // the forward face reads it in place
  if (a_transposed) {  // dw[m, n] = sum over k pixels of dy[p, m] * x[p, n]
    conv.directions = kConvBackwardWeight;
    conv.n = d.k, conv.c = d.n, conv.input_size = {1}, conv.k = d.m;
    conv.input_layout = conv.output_layout = "NHC";
  } else {  // y[m, n] = sum over k channels of w[m, c] * x[c, n]
    conv.directions = kConvForward;
    conv.n = 1, conv.c = d.k, conv.input_size = {d.n}, conv.k = d.m;
    conv.input_layout = conv.output_layout = "NCH";
  }
  c.x = {d.b, d.k, d.n};
  c.w = a_transposed ? ConvMapping::Operand{d.out, d.m, d.n} : ConvMapping::Operand{d.a, d.m, d.k};
  c.y = a_transposed ? ConvMapping::Operand{d.a, d.m, d.k} : ConvMapping::Operand{d.out, d.m, d.n};
  return c;
}

namespace {

// The index space of operand `op`'s copy: a batch-broadcast buffer is written once.
Extents3 copy_sizes(const ConvMapping::Operand& op, int64_t batch) {
  return {op.staged_view.strides[0] == 0 ? 1 : batch, op.rows, op.cols};
}

// Whether out is stored column-major: the conv tiers write an out row's
// elements contiguous, so such a product runs as its row-major transpose.
bool column_major_out(const GemmDesc& d) {
  return d.out.strides[1] == 1 && d.out.strides[2] != 1 && d.m > 1 && d.n > 1;
}

struct GemmViaConvConfig final : Config {
  GemmDesc desc;  ///< the problem's, or its transpose (orient)
  ConvMapping mapping;
  std::shared_ptr<const Config> conv;  // the conv tier's configuration of mapping.conv
  size_t staged_bytes = 0;             // the buffers, after the conv's workspace
  int64_t batch = 1;                   // the GEMM's

  std::string text() const override {
    // ", tiled": the copy transposes, through shared memory (gemm_copy_plan.hpp).
    auto form = [](const Extents3& sizes, const Strides3& src, const Strides3& dst) {
      return copy_form(sizes, src, dst).tiled ? std::string(", tiled") : std::string();
    };
    std::string s = "conv " + mapping.conv.command() + (mapping.grouped ? " (grouped by batch)" : "");
    for (const auto& [name, op] : {std::pair{"x", &mapping.x}, {"w", &mapping.w}, {"y", &mapping.y}}) {
      if (!op->staged) continue;
      const bool input = op != &mapping.y;
      s += "; stage " + std::string(name) + " (" + op->view.tensor +
           (input ? form(copy_sizes(*op, batch), op->view.strides, op->staged_view.strides)
                  : form({batch, op->rows, op->cols}, op->staged_view.strides, op->view.strides)) +
           ")";
    }
    if (mapping.epilogue)
      s += "; fp32 sums, epilogue kernel" + form({batch, mapping.y.rows, mapping.y.cols}, mapping.sums, mapping.y.view.strides);
    return s + "; " + conv->text();
  }
};

class GemmViaConv final : public Tier<GemmProblem, GemmViaConvConfig> {
 public:
  GemmViaConv(std::string name, const GpuImplementation& conv_tier, bool channels_last)
      : name_(std::move(name)), conv_tier_(conv_tier), channels_last_(channels_last) {}

  std::string_view name() const override { return name_; }

  // The conv that runs `d`. On the channels-last tier, where the forward
  // would stage an operand, the face that reads every operand in place, if the
  // conv tier takes both: a GEMM the forward's size gate sends elsewhere stays
  // there (the in-place faces were measured only where the forward runs).
  // (--fp32-math tf32 runs TF32 wgmma there, which reads K-major operands only: the in-place faces' planar and M/N-major
  // operands would be staged inside the conv, two copies where the forward's mapping stages one.)
  ConvMapping mapping_of(const GemmDesc& d, const ArchSpec& arch) const {
    ConvMapping forward = map_to_conv(d, channels_last_);
    if (!channels_last_ || !(forward.x.staged || forward.w.staged || forward.y.staged)) return forward;
    if (d.fp32_tf32) return forward;
    const std::optional<ConvMapping> in_place = map_in_place(d);
    auto taken = [&](const ConvMapping& m) {
      return m.conv.validate().ok() && conv_tier_.accepts(conv::ConvProblem(m.conv, m.epilogue), arch).ok();
    };
    if (in_place && taken(*in_place) && taken(forward)) return *in_place;
    return forward;
  }

  // Whether the conv tier takes `m`'s conv: the reason if not.
  Status verdict(const ConvMapping& m, const ArchSpec& arch) const {
    if (Status s = m.conv.validate(); !s.ok())
      return internal_error("the GEMM's conv (" + m.conv.command() + ") is invalid: " + s.message());
    const conv::ConvProblem conv(m.conv, m.epilogue);  // fp32 sums for the epilogue kernel
    if (Status s = conv_tier_.accepts(conv, arch); !s.ok())
      return unimplemented("as the conv " + m.conv.command() + ": " + s.message());
    return ok_status();
  }

  // The orientation `d` runs in and its mapping: a column-major out as the
  // row-major transpose, unless the tier declines that and takes `d` as it is
  // (out staged); a row-major out as it is. The first one's reason if neither.
  Result<std::pair<GemmDesc, ConvMapping>> orient(const GemmDesc& d, const ArchSpec& arch) const {
    std::vector<GemmDesc> orders{d};
    if (column_major_out(d)) orders.insert(orders.begin(), transposed(d));
    Status first = ok_status();
    for (const GemmDesc& o : orders) {
      ConvMapping m = mapping_of(o, arch);
      Status s = verdict(m, arch);
      if (s.ok()) return std::pair{o, std::move(m)};
      if (first.ok()) first = s;
    }
    return first;
  }

  Status accepts_problem(const GemmProblem& problem, const ArchSpec& arch) const override {
    if (problem.desc.dtype == DType::kF64)
      return unimplemented("float64 runs on the CPU reference only (--backend cpu)");
    return orient(problem.desc, arch).status();
  }

  Result<GemmViaConvConfig> configure_problem(const GemmProblem& problem, const ArchSpec& arch) const override {
    GemmViaConvConfig config;
    BOO_ASSIGN_OR_RETURN(std::tie(config.desc, config.mapping), orient(problem.desc, arch));
    config.batch = problem.desc.batch;
    const conv::ConvProblem conv(config.mapping.conv, config.mapping.epilogue);
    BOO_ASSIGN_OR_RETURN(std::unique_ptr<const Config> inner, conv_tier_.configure(conv, arch));
    config.conv = std::move(inner);
    const size_t elem = dtype_size_bytes(problem.desc.dtype);
    for (ConvMapping::Operand* op : {&config.mapping.x, &config.mapping.w, &config.mapping.y}) {
      if (!op->staged) continue;
      op->offset = config.staged_bytes;
      const Strides3& s = op->staged_view.strides;  // dense: the largest stride times its extent
      const int64_t extents[3] = {problem.desc.batch, op->rows, op->cols};
      int64_t elems = 1;
      for (int i = 0; i < 3; ++i) elems = std::max(elems, s[static_cast<size_t>(i)] * extents[i]);
      config.staged_bytes += (static_cast<size_t>(elems) * elem + 255) / 256 * 256;
    }
    return config;
  }

  // The conv tier's alternatives for the mapped conv, in its order.
  std::vector<GemmViaConvConfig> alternatives(const GemmProblem&, const ArchSpec& arch,
                                              const GemmViaConvConfig& chosen) const override {
    const conv::ConvProblem conv(chosen.mapping.conv, chosen.mapping.epilogue);
    Result<ConfigList> inner = conv_tier_.candidates(conv, arch);
    std::vector<GemmViaConvConfig> out;
    if (!inner.ok()) return out;
    for (size_t i = 1; i < inner->size(); ++i) {
      GemmViaConvConfig c = chosen;
      c.conv = std::move((*inner)[i]);
      out.push_back(std::move(c));
    }
    return out;
  }

  Result<Plan> plan_problem(const GemmProblem& problem, const GemmViaConvConfig& config,
                            const ArchSpec& arch) const override {
    const GemmDesc& d = config.desc;
    const ConvMapping& m = config.mapping;
    const conv::ConvProblem conv(m.conv, m.epilogue);
    BOO_ASSIGN_OR_RETURN(Plan inner, conv_tier_.plan(conv, *config.conv, arch));
    const size_t base = (inner.workspace_bytes + 255) / 256 * 256;
    const TensorRoles roles(problem.signature());
    auto staged = [&](const ConvMapping::Operand& op) { return TensorBinding::workspace(base + op.offset); };
    auto operand = [&](const ConvMapping::Operand& op, bool result) -> Result<TensorBinding> {
      if (op.staged) return staged(op);
      return result ? roles.result(op.view.tensor) : roles.argument(op.view.tensor);
    };
    // The conv plan's tensors, by its signature's positions, as the GEMM's.
    std::vector<TensorBinding> conv_args, conv_results;
    for (const TensorSpec& t : m.conv.arguments()) {
      const ConvMapping::Operand* op = m.argument(t.name);
      Result<TensorBinding> binding = op ? operand(*op, false) : roles.argument(d.fused_bias()->tensor);
      if (!binding.ok()) return binding.status();
      conv_args.push_back(*binding);
    }
    BOO_ASSIGN_OR_RETURN(TensorBinding result, operand(m.result(), true));
    conv_results.push_back(result);

    Plan plan;
    plan.source = inner.source;
    plan.workspace_bytes = base + config.staged_bytes;
    plan.tensor_alignment = std::max<uint32_t>(inner.tensor_alignment, static_cast<uint32_t>(dtype_size_bytes(d.dtype)));
    // Inputs into their buffers.
    for (const auto& [name, op] : {std::pair{"x", &m.x}, {"w", &m.w}}) {
      if (!op->staged) continue;
      CopySpec copy{.entry = "boo_gemm_stage_" + std::string(name), .dtype = d.dtype};
      copy.sizes = copy_sizes(*op, d.batch);
      BOO_ASSIGN_OR_RETURN(copy.src.binding, roles.argument(op->view.tensor));
      copy.src.strides = op->view.strides;
      copy.dst = {staged(*op), op->staged_view.strides};
      BOO_ASSIGN_OR_RETURN(LaunchStep step, plan_copy(copy, arch, plan.source));
      plan.steps.push_back(std::move(step));
    }
    // The conv's steps with the GEMM's tensors.
    for (LaunchStep step : inner.steps) {
      step.rebind_tensors([&](TensorBinding& t) {
        if (t.source == TensorBinding::Source::kArgument) t = conv_args.at(t.index);
        else if (t.source == TensorBinding::Source::kResult) t = conv_results.at(t.index);
      });
      plan.steps.push_back(std::move(step));
    }
    // The result: the epilogue on the conv's fp32 sums (at its workspace's start), or copied out of its buffer.
    if (m.y.staged || m.epilogue) {
      CopySpec copy{.entry = m.epilogue ? "boo_gemm_epilogue" : "boo_gemm_unstage_y", .dtype = d.dtype};
      copy.sizes = {d.batch, m.y.rows, m.y.cols};
      copy.src = m.epilogue ? CopyOperand{TensorBinding::workspace(0), m.sums} : CopyOperand{staged(m.y), m.y.staged_view.strides};
      copy.src_fp32 = m.epilogue;
      BOO_ASSIGN_OR_RETURN(copy.dst.binding, roles.result(d.out.tensor));
      copy.dst.strides = d.out.strides;
      if (m.epilogue) {
        copy.alpha = d.alpha;
        copy.beta = d.beta;
        copy.activation = d.activation;
        if (d.c) {
          BOO_ASSIGN_OR_RETURN(TensorBinding c, roles.argument(d.c->tensor));
          copy.addend = CopyOperand{c, d.c->strides};
        }
        if (d.bias) {
          BOO_ASSIGN_OR_RETURN(TensorBinding b, roles.argument(d.bias->tensor));
          copy.bias = CopyOperand{b, d.bias->strides};
        }
      }
      BOO_ASSIGN_OR_RETURN(LaunchStep step, plan_copy(copy, arch, plan.source));
      plan.steps.push_back(std::move(step));
    }
    return plan;
  }

 private:
  std::string name_;
  const GpuImplementation& conv_tier_;
  bool channels_last_;
};

}  // namespace

const GpuImplementation& gemm_via_conv_wgmma() {
  static const GemmViaConv impl("gpu:gemm:wgmma_sm90", conv::wgmma_sm90_implementation(), true);
  return impl;
}

// The conv tier splits the fp32 operands itself, from any layout: no channels-last staging.
const GpuImplementation& gemm_via_conv_fp32_bf16x6() {
  static const GemmViaConv impl("gpu:gemm:fp32_bf16x6", conv::fp32_bf16x6_implementation(), false);
  return impl;
}

const GpuImplementation& gemm_via_conv_implicit_gemm() {
  static const GemmViaConv impl("gpu:gemm:implicit_gemm", conv::implicit_gemm_implementation(), false);
  return impl;
}

const GpuImplementation& gemm_via_conv_direct() {
  static const GemmViaConv impl("gpu:gemm:direct", conv::direct_implementation(), false);
  return impl;
}

}  // namespace boo::ops::gemm
