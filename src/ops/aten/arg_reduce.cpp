// boo: aten_arg_reduce — argmax/argmin's signature, problem, float64-compared
// reference and GPU tier (gpu:aten:arg_reduce, one block per output).
#include "ops/aten/arg_reduce.hpp"

#include <algorithm>
#include <cmath>

#include "base/parallel.hpp"
#include "ops/aten/device/arg_reduce_params.cuh"
#include "ops/common/generated_source.hpp"

namespace boo::ops::aten {
namespace {

constexpr int kMaxRank = 8;               // ArgReduceParams' arrays
constexpr int64_t kMaxThreads = 256;      // per block (one output each)
constexpr int64_t kBlocksPerSm = 32;      // blocks stride over the outputs beyond this many

std::vector<int64_t> out_shape(const TensorSpec& self, std::optional<int> dim, bool keepdim) {
  std::vector<int64_t> shape;
  for (int d = 0; d < self.rank(); ++d) {
    const bool reduced = !dim || *dim == d;
    if (!reduced) shape.push_back(self.shape[static_cast<size_t>(d)]);
    else if (keepdim) shape.push_back(1);
  }
  return shape;
}

// Whether (v, i) beats (best, best_i): the device rule (arg_reduce.cuh's arg_beats) in double.
bool beats(bool is_max, double v, int64_t i, double best, int64_t best_i) {
  const bool v_nan = std::isnan(v), best_nan = std::isnan(best);
  if (v_nan || best_nan) return v_nan && (!best_nan || i < best_i);
  if (v == best) return i < best_i;
  return is_max ? v > best : v < best;
}

int64_t offset_of(int64_t linear, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  int64_t offset = 0;
  for (size_t d = sizes.size(); d-- > 0;) {
    offset += (linear % sizes[d]) * strides[d];
    linear /= sizes[d];
  }
  return offset;
}

struct ArgReduceConfig final : Config {
  DType dtype = DType::kF32;
  bool is_max = true;
  uint32_t threads = 32;
  std::string text() const override {
    return "dtype=" + std::string(dtype_name(dtype)) + ";" + (is_max ? "argmax" : "argmin") +
           ";threads=" + std::to_string(threads);
  }
};

class ArgReduceTier final : public Tier<ArgReduceProblem, ArgReduceConfig> {
 public:
  std::string_view name() const override { return "gpu:aten:arg_reduce"; }

  Status accepts_problem(const ArgReduceProblem& p, const ArchSpec&) const override {
    const TensorSpec& x = p.typed().self();
    if (x.dtype == DType::kF64) return unimplemented("float64 runs on the CPU reference only (--backend cpu)");
    if (x.rank() > kMaxRank)
      return unimplemented("rank " + std::to_string(x.rank()) + " > " + std::to_string(kMaxRank) + " (ArgReduceParams)");
    return ok_status();
  }

  Result<ArgReduceConfig> configure_problem(const ArgReduceProblem& p, const ArchSpec&) const override {
    ArgReduceConfig c;
    c.dtype = p.typed().self().dtype;
    c.is_max = p.typed().is_max();
    // Whole warps, no more threads than elements to scan (up to kMaxThreads).
    c.threads = static_cast<uint32_t>(std::clamp<int64_t>((p.length + 31) / 32 * 32, 32, kMaxThreads));
    return c;
  }

  Result<Plan> plan_problem(const ArgReduceProblem& p, const ArgReduceConfig& c, const ArchSpec& arch) const override {
    Plan plan;
    const std::string entry = std::string("boo_") + (c.is_max ? "argmax" : "argmin");
    plan.source = generated_source("arg_reduce.cu", std::string(name()), "boo/aten/arg_reduce.cuh",
                                   "boo::ArgReduceParams",
                                   {{entry,
                                     "boo::arg_reduce<" + std::string(device_type(c.dtype)) + ", " +
                                         (c.is_max ? "true" : "false") + ">(p)",
                                     static_cast<int>(c.threads)}});
    plan.tensor_alignment = static_cast<uint32_t>(dtype_size_bytes(DType::kI64));
    BOO_ASSIGN_OR_RETURN(uint32_t grid,
                         grid_extent(std::clamp<long long>(p.outputs, 1, kBlocksPerSm * arch.sm_count), 0x7fffffff,
                                     "x (outputs)"));
    StepBuilder<ArgReduceParams> step(entry, {grid, 1, 1}, {c.threads, 1, 1});
    const TensorRoles roles(p.signature());
    BOO_ASSIGN_OR_RETURN(TensorBinding x, roles.argument("self"));
    BOO_ASSIGN_OR_RETURN(TensorBinding out, roles.result("out"));
    step.bind(step.params.x, x);
    step.bind(step.params.out, out);
    ArgReduceParams& params = step.params;
    params.outputs = p.outputs;
    params.length = p.length;
    params.outer_rank = static_cast<int>(p.outer_sizes.size());
    params.reduced_rank = static_cast<int>(p.reduced_sizes.size());
    for (size_t d = 0; d < p.outer_sizes.size(); ++d) {
      params.outer_sizes[d] = p.outer_sizes[d];
      params.outer_strides[d] = p.outer_strides[d];
    }
    for (size_t d = 0; d < p.reduced_sizes.size(); ++d) {
      params.reduced_sizes[d] = p.reduced_sizes[d];
      params.reduced_strides[d] = p.reduced_strides[d];
    }
    plan.steps.push_back(std::move(step).finish());
    return plan;
  }
};

class ArgReduceOp final : public OpDefinition {
 public:
  std::string_view name() const override { return "aten_arg_reduce"; }
  // ATen lines are read by parse_aten_command, not by tokens and flags.
  std::span<const OpToken> tokens() const override { return {}; }
  std::span<const FlagSpec> flags() const override { return {}; }
  Result<std::unique_ptr<OpSignature>> make_signature(DType, const ParsedFlags&) const override {
    return internal_error("aten_arg_reduce signatures come from ATen lines (aten::argmax, aten::argmin), not flags");
  }

  // An index is exact: nothing is summed.
  int64_t reduction_length(const OpSignature&, size_t) const override { return 1; }

  Result<std::unique_ptr<OpProblem>> make_problem(const OpSignature& sig) const override {
    const auto* arg = dynamic_cast<const ArgReduceSignature*>(&sig);
    if (!arg) return internal_error("aten_arg_reduce was given another op's signature");
    return std::unique_ptr<OpProblem>(std::make_unique<ArgReduceProblem>(*arg));
  }

  std::span<const GpuImplementation* const> gpu_implementations() const override {
    static const ArgReduceTier tier;
    static const GpuImplementation* const kImpls[] = {&tier};
    return kImpls;
  }

  Result<std::vector<base::HostTensor>> reference(const OpSignature& sig,
                                                  const std::vector<base::HostTensor>& args) const override {
    const auto* arg = dynamic_cast<const ArgReduceSignature*>(&sig);
    if (!arg || args.size() != 1) return internal_error("aten_arg_reduce reference: expected its signature and one argument");
    const ArgReduceProblem p(*arg);
    const base::HostTensor& x = args[0];
    std::vector<base::HostTensor> out = make_f64_results(sig);
    base::HostTensor& result = out[0];
    base::parallel_for(p.outputs, [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const int64_t base = offset_of(o, p.outer_sizes, p.outer_strides);
        double best = 0;
        int64_t best_i = -1;
        for (int64_t r = 0; r < p.length; ++r) {
          const double v = x.load(base + offset_of(r, p.reduced_sizes, p.reduced_strides));
          if (best_i < 0 || beats(p.typed().is_max(), v, r, best, best_i)) {
            best = v;
            best_i = r;
          }
        }
        result.store(o, static_cast<double>(best_i));  // the result is contiguous: offset o
      }
    });
    return out;
  }
};

}  // namespace

ArgReduceSignature::ArgReduceSignature(AtenCall call, bool is_max, TensorSpec self, std::optional<int> dim,
                                       bool keepdim)
    : AtenSignature(std::move(call)), is_max_(is_max), self_(std::move(self)), dim_(dim) {
  const std::vector<int64_t> shape = out_shape(self_, dim_, keepdim);
  out_ = TensorSpec{"out", shape, contiguous_strides(shape), DType::kI64, ""};
}

Status ArgReduceSignature::validate() const {
  if (dim_ && (*dim_ < 0 || *dim_ >= self_.rank()))
    return internal_error(call().op + ": dim " + std::to_string(*dim_) + " was not wrapped into the rank");
  const int64_t length = dim_ ? self_.shape[static_cast<size_t>(*dim_)] : self_.numel();
  if (length == 0)
    return invalid_argument(call().op + ": the reduction over " + (dim_ ? "dim " + std::to_string(*dim_) : "self") +
                            " of shape " + format_dims(self_.shape) + " is empty (ATen raises here too)");
  return ok_status();
}

ArgReduceProblem::ArgReduceProblem(const ArgReduceSignature& sig) : OpProblem(sig) {
  const TensorSpec& x = sig.self();
  for (int d = 0; d < x.rank(); ++d) {
    const bool reduced = !sig.dim() || *sig.dim() == d;
    (reduced ? reduced_sizes : outer_sizes).push_back(x.shape[static_cast<size_t>(d)]);
    (reduced ? reduced_strides : outer_strides).push_back(x.strides[static_cast<size_t>(d)]);
  }
  for (int64_t s : outer_sizes) outputs *= s;
  for (int64_t s : reduced_sizes) length *= s;
}

Result<std::unique_ptr<OpSignature>> make_arg_reduce(const AtenCall& call, bool is_max, std::string_view schema) {
  BOO_RETURN_IF_ERROR(call.expect_arity(1, 3, schema));
  BOO_ASSIGN_OR_RETURN(TensorSpec self, call.tensor(0, "self"));
  std::optional<int> dim;
  if (!call.is_none(1) && self.rank() > 0) {  // a 0-d tensor's dim (0 or -1) reduces its one element
    BOO_ASSIGN_OR_RETURN(int64_t d, call.integer(1));
    if (d < -self.rank() || d >= self.rank())
      return invalid_argument(call.where(1) + ": dim " + std::to_string(d) + " is out of range for a " +
                              std::to_string(self.rank()) + "-D tensor (expected -" + std::to_string(self.rank()) +
                              " to " + std::to_string(self.rank() - 1) + ")");
    dim = static_cast<int>(d < 0 ? d + self.rank() : d);
  }
  bool keepdim = false;
  if (call.args.size() > 2) {
    BOO_ASSIGN_OR_RETURN(keepdim, call.boolean(2));
  }
  auto sig = std::make_unique<ArgReduceSignature>(call, is_max, std::move(self), dim, keepdim);
  BOO_RETURN_IF_ERROR(sig->validate());
  return std::unique_ptr<OpSignature>(std::move(sig));
}

const OpDefinition& arg_reduce_definition() {
  static const ArgReduceOp op;
  return op;
}

}  // namespace boo::ops::aten
