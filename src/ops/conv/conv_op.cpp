// boo: the conv op — MIOpenDriver flag table, parsing and registration.
#include "ops/conv/conv_op.hpp"

#include <array>
#include <cmath>

#include "base/strings.hpp"
#include "boo/conv.hpp"
#include "ops/conv/conv_depthwise_impl.hpp"
#include "ops/conv/conv_direct_impl.hpp"
#include "ops/conv/conv_fp32_split_impl.hpp"
#include "ops/conv/conv_igemm_impl.hpp"
#include "ops/conv/conv_layout.hpp"
#include "ops/conv/conv_planar_tf32_impl.hpp"
#include "ops/conv/conv_pointwise_impl.hpp"
#include "ops/conv/conv_small_c_impl.hpp"
#include "ops/conv/conv_problem.hpp"
#include "ops/conv/conv_ref.hpp"
#include "ops/conv/conv_ref_gpu.hpp"
#include "ops/conv/conv_wgmma_impl.hpp"

namespace boo::ops::conv {
namespace {

constexpr OpToken kTokens[] = {
    {"conv", DType::kF32},
    {"convfp16", DType::kF16},
    {"convbfp16", DType::kBF16},
};

// MIOpenDriver's conv flags (driver/conv_driver.hpp), BOO's extensions and boo's own.
constexpr FlagSpec kConvFlags[] = {
    {"spatial_dim", '_', "2", "spatial dimensions: 1, 2 or 3 (also implied by 3- to 5-letter layouts)"},
    {"batchsize", 'n', "100", "batch size N"},
    {"in_channels", 'c', "3", "input channels C"},
    {"in_d", '!', "32", "input depth (3-D)"},
    {"in_h", 'H', "32", "input height"},
    {"in_w", 'W', "32", "input width"},
    {"out_channels", 'k', "32", "output channels K"},
    {"fil_d", '@', "3", "filter depth (3-D)"},
    {"fil_h", 'y', "3", "filter height"},
    {"fil_w", 'x', "3", "filter width"},
    {"conv_stride_d", '#', "1", "stride in depth (3-D)"},
    {"conv_stride_h", 'u', "1", "stride in height"},
    {"conv_stride_w", 'v', "1", "stride in width"},
    {"pad_d", '$', "0", "zero padding in depth (3-D)"},
    {"pad_h", 'p', "0", "zero padding in height"},
    {"pad_w", 'q', "0", "zero padding in width"},
    {"pad_val", 'r', "0", "declared but unused by MIOpenDriver", 1, true},
    {"dilation_d", '^', "1", "dilation in depth (3-D)"},
    {"dilation_h", 'l', "1", "dilation in height"},
    {"dilation_w", 'j', "1", "dilation in width"},
    {"trans_output_pad_d", '%', "0", "transposed-conv output padding in depth"},
    {"trans_output_pad_h", 'Y', "0", "transposed-conv output padding in height"},
    {"trans_output_pad_w", 'X', "0", "transposed-conv output padding in width"},
    {"group_count", 'g', "1", "groups (C and K divisible by it; depthwise: g = C)"},
    {"mode", 'm', "conv", "conv or trans (transposed convolution)"},
    {"pad_mode", 'z', "default", "default, same or valid (computed as MIOpenDriver does)"},
    {"forw", 'F', "0",
     "0 fwd+bwd+wrw, 1 fwd, 2 bwd data, 4 bwd weight, 3/5/6 combinations; BOO: 7 bias grad, 8 data+bias, "
     "9 weight+bias, 10 all backward"},
    {"in_layout", 'I', "", "input layout: any permutation of NCHW / NCDHW / NCH (default NCHW)"},
    {"fil_layout", 'f', "", "filter layout (N = output channels, C = input channels per group)"},
    {"out_layout", 'O', "", "output layout"},
    {"bias", 'b', "0", "1 = fused bias add in forward (and its gradient in backward)"},
    {"residual", 0, "0",
     "boo: 1 = fused residual add in forward (-F 1): y = act(conv(x, w) + bias + z), z an input of y's shape and "
     "layout"},
    {"activation", 0, "none",
     "boo: fused activation after the bias and the residual: none|relu|sigmoid|tanh|silu|gelu|gelu_tanh|leaky_relu[:alpha]|clamp:lo:hi"},
    {"fp32-math", 0, "ieee", "boo: fp32 arithmetic, ieee (full fp32) or tf32 (TF32 tensor cores)"},
    {"search", 's', "0", "MIOpen exhaustive search", 1, true},
    {"solution", 'S', "-1", "MIOpen solution id or name", 1, true},
    {"printconv", 'P', "1", "declared, unused by MIOpenDriver", 1, true},
    {"dump_output", 'o', "0", "MIOpen buffer dump (boo: --dump DIR)", 1, true},
    {"verification_cache", 'C', "", "MIOpen reference cache directory", 1, true},
    {"gpualloc", 'G', "0", "MIOpen device-side input generation", 1, true},
    {"gpubuffer_check", '~', "0", "MIOpen guard pages", 1, true},
    {"init_output_nan", 'N', "0", "MIOpen NaN-filled outputs", 1, true},
    {"tuning_policy", '&', "0", "MIOpen tuning policy", 1, true},
    {"math_type", 'M', "1", "MIOpen math type", 1, true},
    {"use_hip_graph", 'J', "0", "MIOpen HIP graphs", 1, true},
    {"in_data", 'd', "", "input file (not supported by boo)"},
    {"weights", 'e', "", "weights file (not supported by boo)"},
    {"dout_data", 'D', "", "output-gradient file (not supported by boo)"},
    {"in_bias", 'a', "", "bias file (not supported by boo)"},
    {"tensor_vect", 'Z', "0", "int8 vectorized layouts (not supported by boo)"},
    {"vector_length", 'L', "1", "int8 vector length (not supported by boo)"},
    {"in_cast_type", 'U', "-1", "fp8 input cast type (not supported by boo)"},
    {"out_cast_type", 'T', "-1", "fp8 output cast type (not supported by boo)"},
    {"wei_cast_type", 'R', "-1", "fp8 weight cast type (not supported by boo)"},
};

std::vector<FlagSpec> make_flag_table() {
  std::vector<FlagSpec> table(std::begin(kConvFlags), std::end(kConvFlags));
  for (const FlagSpec& f : common_run_flags()) table.push_back(f);
  return table;
}

// Reads one value per spatial dimension, in D, H, W order.
Result<std::vector<int64_t>> spatial_values(const ParsedFlags& flags, int spatial_dims, const char* d_flag,
                                            const char* h_flag, const char* w_flag) {
  std::vector<const char*> names;
  if (spatial_dims == 3) names.push_back(d_flag);
  names.push_back(h_flag);
  if (spatial_dims >= 2) names.push_back(w_flag);
  std::vector<int64_t> out;
  for (const char* name : names) {
    BOO_ASSIGN_OR_RETURN(int64_t v, flags.integer(name));
    out.push_back(v);
  }
  return out;
}

Status reject_unsupported_flags(const ParsedFlags& flags) {
  for (const char* file_flag : {"in_data", "weights", "dout_data", "in_bias"}) {
    if (!flags.text(file_flag).empty())
      return unimplemented(flags.display(file_flag) +
                           ": loading tensors from files is not supported; boo generates seeded inputs "
                           "(see --splat-input-value)");
  }
  struct Default {
    const char* flag;
    const char* value;
    const char* why;
  };
  for (Default d : {Default{"tensor_vect", "0", "int8 vectorized layouts are not supported"},
                    Default{"vector_length", "1", "int8 vectorized layouts are not supported"},
                    Default{"in_cast_type", "-1", "fp8 casts are not supported"},
                    Default{"out_cast_type", "-1", "fp8 casts are not supported"},
                    Default{"wei_cast_type", "-1", "fp8 casts are not supported"}}) {
    if (flags.text(d.flag) != d.value)
      return unimplemented(flags.display(d.flag) + " " + flags.text(d.flag) + ": " + d.why);
  }
  return ok_status();
}

// MIOpenDriver's -z same / -z valid padding, computed per dimension in the driver.
Status apply_pad_mode(const std::string& mode, ConvSignature& sig) {
  if (mode == "default") return ok_status();
  if (mode != "same" && mode != "valid")
    return invalid_argument("--pad_mode/-z '" + base::echo_word(mode) + "': accepted values are default, same, valid");
  bool unit_dilation = true, unit_filter = true;
  for (int i = 0; i < sig.spatial_dims; ++i) {
    unit_dilation &= sig.dilation[i] == 1;
    unit_filter &= sig.filter_size[i] == 1;
  }
  if (sig.transposed || !(unit_dilation || unit_filter))
    return invalid_argument("--pad_mode/-z " + mode +
                            " applies only to -m conv with all dilations 1 or all filter sizes 1 (as MIOpenDriver)");
  for (int i = 0; i < sig.spatial_dims; ++i) {
    // The padding below divides by the stride and subtracts sizes: those must be valid first.
    const int64_t values[] = {sig.input_size[i], sig.stride[i], sig.filter_size[i]};
    const char* names[] = {"input size", "stride", "filter size"};
    for (int v = 0; v < 3; ++v)
      if (values[v] < 1)
        return invalid_argument("--pad_mode/-z " + mode + " needs a positive " + names[v] + " in every dimension, got " +
                                std::to_string(values[v]));
    if (mode == "valid") {
      sig.padding[i] = 0;
    } else {
      const int64_t in = sig.input_size[i], s = sig.stride[i], f = sig.filter_size[i];
      sig.padding[i] = ((in % s == 0) ? std::max<int64_t>(f - s, 0) : std::max<int64_t>(f - in % s, 0)) / 2;
    }
  }
  return ok_status();
}

class ConvOp final : public OpDefinition {
 public:
  std::string_view name() const override { return "conv"; }
  std::span<const OpToken> tokens() const override { return kTokens; }
  std::span<const FlagSpec> flags() const override { return table_; }

  Result<std::unique_ptr<OpSignature>> make_signature(DType dtype, const ParsedFlags& flags) const override {
    BOO_RETURN_IF_ERROR(reject_unsupported_flags(flags));
    auto sig = std::make_unique<ConvSignature>();
    sig->dtype = dtype;

    // The rank: --spatial_dim, or implied by the layouts (BOO), which must agree.
    BOO_ASSIGN_OR_RETURN(int64_t spatial, flags.integer("spatial_dim"));
    std::string rank_source = flags.given("spatial_dim") ? "--spatial_dim " + std::to_string(spatial) : "";
    std::array<std::string, 3> layouts;
    const char* layout_flags[] = {"in_layout", "fil_layout", "out_layout"};
    for (int i = 0; i < 3; ++i) {
      layouts[i] = base::to_upper(flags.text(layout_flags[i]));
      if (layouts[i].empty()) continue;
      // Only a word of 3 to 5 letters can be a layout; anything else implies no rank.
      if (layouts[i].size() < 3 || layouts[i].size() > 5 ||
          layouts[i].find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") != std::string::npos)
        return invalid_argument(flags.display(layout_flags[i]) + " '" + base::echo_word(flags.text(layout_flags[i])) +
                                "' is not a conv layout: expected a permutation of NCH, NCHW or NCDHW "
                                "(e.g. NHWC, NDHWC, CHWN)");
      const int64_t implied = static_cast<int64_t>(layouts[i].size()) - 2;
      const std::string source = flags.display(layout_flags[i]) + " " + layouts[i];
      if (!rank_source.empty() && implied != spatial)
        return invalid_argument(source + " implies a " + std::to_string(implied) + "-D convolution but " +
                                rank_source + " says " + std::to_string(spatial) + "-D (rank mismatch)");
      spatial = implied;
      rank_source = source;
    }
    if (spatial < 1 || spatial > 3)
      return invalid_argument("--spatial_dim " + std::to_string(spatial) + " is not supported: use 1, 2 or 3");
    const int s = static_cast<int>(spatial);
    sig->spatial_dims = s;
    const std::string def = default_conv_layout(s);
    sig->input_layout = layouts[0].empty() ? def : layouts[0];
    sig->filter_layout = layouts[1].empty() ? def : layouts[1];
    sig->output_layout = layouts[2].empty() ? def : layouts[2];

    BOO_ASSIGN_OR_RETURN(sig->n, flags.integer("batchsize"));
    BOO_ASSIGN_OR_RETURN(sig->c, flags.integer("in_channels"));
    BOO_ASSIGN_OR_RETURN(sig->k, flags.integer("out_channels"));
    BOO_ASSIGN_OR_RETURN(sig->groups, flags.integer("group_count"));
    BOO_ASSIGN_OR_RETURN(sig->input_size, spatial_values(flags, s, "in_d", "in_h", "in_w"));
    BOO_ASSIGN_OR_RETURN(sig->filter_size, spatial_values(flags, s, "fil_d", "fil_h", "fil_w"));
    BOO_ASSIGN_OR_RETURN(sig->stride, spatial_values(flags, s, "conv_stride_d", "conv_stride_h", "conv_stride_w"));
    BOO_ASSIGN_OR_RETURN(sig->padding, spatial_values(flags, s, "pad_d", "pad_h", "pad_w"));
    BOO_ASSIGN_OR_RETURN(sig->dilation, spatial_values(flags, s, "dilation_d", "dilation_h", "dilation_w"));
    BOO_ASSIGN_OR_RETURN(sig->output_padding,
                         spatial_values(flags, s, "trans_output_pad_d", "trans_output_pad_h", "trans_output_pad_w"));

    const std::string mode = base::to_lower(flags.text("mode"));
    if (mode != "conv" && mode != "trans")
      return invalid_argument("--mode/-m '" + base::echo_word(flags.text("mode")) + "': accepted values are conv and trans");
    sig->transposed = mode == "trans";
    if (!sig->transposed) {
      // MIOpenDriver ignores output padding in conv mode; keep the signature canonical.
      for (int64_t& p : sig->output_padding) p = 0;
    }
    BOO_RETURN_IF_ERROR(apply_pad_mode(base::to_lower(flags.text("pad_mode")), *sig));

    BOO_ASSIGN_OR_RETURN(int64_t forw, flags.integer("forw"));
    sig->directions = directions_of_code(forw);
    if (sig->directions == 0)
      return invalid_argument("--forw/-F " + std::to_string(forw) +
                              " is not a conv direction: use 0 (fwd+bwd+wrw), 1 (fwd), 2 (bwd data), 3 (fwd+bwd), "
                              "4 (bwd weight), 5 (fwd+wrw), 6 (bwd+wrw), 7 (bias grad), 8 (bwd+bias), "
                              "9 (wrw+bias), 10 (bwd+wrw+bias)");
    BOO_ASSIGN_OR_RETURN(int64_t bias, flags.integer("bias"));
    if (bias != 0 && bias != 1) return invalid_argument("--bias/-b must be 0 or 1, got " + std::to_string(bias));
    if (bias) {
      // MIOpenDriver's -b 1 adds the forward bias and, with backward
      // directions, the backward-bias pass.
      if (sig->directions & kConvForward) sig->bias = true;
      if (sig->directions & (kConvBackwardData | kConvBackwardWeight)) sig->directions |= kConvBackwardBias;
    }
    BOO_ASSIGN_OR_RETURN(int64_t residual, flags.integer("residual"));
    if (residual != 0 && residual != 1)
      return invalid_argument("--residual must be 0 or 1, got " + std::to_string(residual));
    sig->residual = residual == 1;
    BOO_ASSIGN_OR_RETURN(sig->activation, Activation::parse(flags.text("activation")));
    const std::string math = base::to_lower(flags.text("fp32-math"));
    if (math != "ieee" && math != "tf32")
      return invalid_argument("--fp32-math '" + base::echo_word(flags.text("fp32-math")) + "': accepted values are ieee and tf32");
    sig->fp32_tf32 = math == "tf32";
    BOO_RETURN_IF_ERROR(sig->validate());
    return std::unique_ptr<OpSignature>(std::move(sig));
  }

  bool tf32_operands(const OpSignature& sig) const override {
    return dynamic_cast<const ConvSignature&>(sig).fp32_tf32;
  }

  // TF32 operands under a saturating activation (tanh, sigmoid, clamp): rounding each product's operands to
  // TF32 moves the pre-activation sum by a part of sqrt(sum of its squared products), which the output's own
  // size (the default, rtol * rms(y)) no longer bounds where the activation is steep: a tanh output of 0.07 carries
  // the error of a sum of 576 products of size 1 (docs/tolerances.md, "TF32 and saturating activations"). Each
  // element of y may then err by rtol x the activation's steepest slope x that scale, estimated for independent
  // operands as sqrt(reduction x mean(x^2) x mean(w^2)). cuDNN's TF32 errors on those lines are boo's to the digit.
  Result<std::vector<double>> element_allowances(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                                                 size_t result_index, double rtol,
                                                 const std::vector<int64_t>* linear) const override {
    const auto& conv = dynamic_cast<const ConvSignature&>(sig);
    const Activation::Kind act = conv.activation.kind;
    const bool saturating = act == Activation::Kind::kTanh || act == Activation::Kind::kSigmoid ||
                            act == Activation::Kind::kClamp;
    if (!conv.fp32_tf32 || !saturating || sig.results().at(result_index).name != "y") return std::vector<double>{};
    const std::vector<TensorSpec> specs = sig.arguments();
    auto mean_square = [&](const std::string& name) -> Result<double> {
      for (size_t i = 0; i < specs.size() && i < args.size(); ++i) {
        if (specs[i].name != name) continue;
        const int64_t n = args[i].spec().numel();
        double sum = 0;
        for (int64_t e = 0; e < n; ++e) {
          const double v = args[i].load(base::offset_of_linear(args[i].spec(), e));
          sum += v * v;
        }
        return n > 0 ? sum / static_cast<double>(n) : 0.0;
      }
      return internal_error("conv allowances: no argument '" + name + "'");
    };
    BOO_ASSIGN_OR_RETURN(const double xx, mean_square("x"));
    BOO_ASSIGN_OR_RETURN(const double ww, mean_square("w"));
    const double slope = act == Activation::Kind::kSigmoid ? 0.25 : 1.0;
    const double scale = std::sqrt(static_cast<double>(reduction_length(sig, result_index)) * xx * ww);
    const int64_t count = linear ? static_cast<int64_t>(linear->size()) : sig.results().at(result_index).numel();
    return std::vector<double>(static_cast<size_t>(count), rtol * slope * scale);
  }

  int64_t reduction_length(const OpSignature& sig, size_t result_index) const override {
    const auto& conv = dynamic_cast<const ConvSignature&>(sig);
    const std::string name = sig.results().at(result_index).name;
    int64_t taps = 1, y_positions = 1, x_positions = 1;
    const std::vector<int64_t> out = conv.output_size();
    for (int i = 0; i < conv.spatial_dims; ++i) {
      taps *= conv.filter_size[i];
      y_positions *= out[i];
      x_positions *= conv.input_size[i];
    }
    // Channels summed by the forward face (those of A) and the data face (those of B).
    const int64_t a_per_group = (conv.transposed ? conv.k : conv.c) / conv.groups;
    const int64_t b_per_group = (conv.transposed ? conv.c : conv.k) / conv.groups;
    if (name == "y") return (conv.transposed ? b_per_group : a_per_group) * taps;
    if (name == "dx") return (conv.transposed ? a_per_group : b_per_group) * taps;
    if (name == "dw") return conv.n * (conv.transposed ? x_positions : y_positions);
    return conv.n * y_positions;  // db
  }

  Result<std::unique_ptr<OpProblem>> make_problem(const OpSignature& sig) const override {
    const auto* conv = dynamic_cast<const ConvSignature*>(&sig);
    if (!conv) return internal_error("conv was given another op's signature");
    return std::unique_ptr<OpProblem>(std::make_unique<ConvProblem>(*conv));
  }
  // A 3-D conv whose extra dim changes nothing runs as the 2-D conv of the same memory (fewer_spatial_dims),
  // on the tiers that take 2-D convs only (the 413's patchify and one-tap-depth convs: 1.35x, H100).
  std::unique_ptr<OpSignature> simpler_signature(const OpSignature& sig) const override {
    const auto* conv = dynamic_cast<const ConvSignature*>(&sig);
    if (!conv) return nullptr;
    std::optional<ConvSignature> folded = fewer_spatial_dims(*conv);
    return folded ? folded->clone() : nullptr;
  }
  std::span<const GpuImplementation* const> gpu_implementations() const override {
    // gpu:conv:pointwise first: it takes only memory-bound pointwise convs, which it runs at copy bandwidth;
    // gpu:conv:planar_tf32 the other fp32 1x1 forwards of planar tensors (any stride), on TF32 tensor cores;
    // gpu:conv:fp32_bf16x6 before gpu:conv:implicit_gemm: it takes the strict fp32 convs its model puts
    // ahead of FFMA; gpu:conv:small_c_data too: it takes fp32 data faces of at most 4 channels, which
    // would be a GEMM's N; and gpu:conv:small_c_forward: fp32 forward faces from at most 4 channels, whose
    // GEMM's reduction would be their few taps, read once and written once in NCHW.
    static const GpuImplementation* const kImpls[] = {&pointwise_implementation(), &planar_tf32_implementation(),
                                                      &wgmma_sm90_implementation(),
                                                      &fp32_bf16x6_implementation(), &small_c_data_implementation(),
                                                      &small_c_forward_implementation(), &implicit_gemm_implementation(),
                                                      &depthwise_planes_implementation(),
                                                      &depthwise_channels_implementation(), &depthwise_implementation(),
                                                      &direct_implementation()};
    return kImpls;
  }

  const GpuReference* gpu_reference() const override { return &conv::gpu_reference(); }

  Result<std::vector<double>> reference_sample(const OpSignature& sig, const std::vector<base::HostTensor>& args,
                                               size_t result_index, const std::vector<int64_t>& linear) const override {
    return conv_reference_sample(dynamic_cast<const ConvSignature&>(sig), args, result_index, linear);
  }

  Result<std::vector<base::HostTensor>> reference(const OpSignature& sig,
                                                  const std::vector<base::HostTensor>& args) const override {
    const auto* conv = dynamic_cast<const ConvSignature*>(&sig);
    if (!conv) return internal_error("conv reference called with a " + std::string(sig.op_name()) + " signature");
    return conv_reference(*conv, args);
  }

 private:
  std::vector<FlagSpec> table_ = make_flag_table();
};

}  // namespace

const OpDefinition& definition() {
  static const ConvOp op;
  return op;
}

}  // namespace boo::ops::conv
