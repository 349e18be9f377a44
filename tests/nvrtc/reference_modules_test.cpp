// boo tests (label nvrtc, no GPU needed): the float64 GPU references and the
// GPU input generator plan valid launches and compile for sm_90a on every
// line of tests/gpu/reference_lines.txt, whole and sampled, and the
// references' sums are never fused into an fma (which would break their
// agreement with the CPU reference bit for bit).
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "boo/conv.hpp"
#include "boo/registry.hpp"
#include "jit/nvrtc_compiler.hpp"
#include "ops/input_generation_gpu.hpp"
#include "ops/op_registry.hpp"

namespace boo {
namespace {

const char* kArch = "sm_90a";

// The commands of a list file: one a line, '#' comments and blank lines skipped.
std::vector<std::string> read_lines(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') out.push_back(line);
  return out;
}

// Whether the result of `sig` planned by `request` goes through a libdevice
// transcendental (exp, tanh, erf: fma inside, by design) before it is stored.
bool transcendental_epilogue(const OpSignature& sig) {
  const auto* conv = dynamic_cast<const ConvSignature*>(&sig);
  if (!conv) return false;
  using K = Activation::Kind;
  const K k = conv->activation.kind;
  return k == K::kSigmoid || k == K::kTanh || k == K::kSilu || k == K::kGelu || k == K::kGeluTanh;
}

class ReferenceModulesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    lines_ = read_lines("tests/gpu/reference_lines.txt");
    ASSERT_GT(lines_.size(), 40u) << "run from the repository root";
  }

  // Compiles `plan` once per distinct source; no fma.rn.f64 unless `fma_allowed`.
  void compile(const ops::Plan& plan, bool fma_allowed) {
    if (!compiled_.insert(plan.source.text).second) return;
    Result<jit::CompiledKernel> k = jit::compile_kernel(plan.source, kArch, true);
    ASSERT_TRUE(k.ok()) << k.status().to_string();
    EXPECT_GT(k->cubin.size(), 0u);
    if (!fma_allowed) EXPECT_EQ(k->ptx.find("fma.rn.f64"), std::string::npos) << plan.source.text;
  }

  std::vector<std::string> lines_;
  std::set<std::string> compiled_;
};

TEST_F(ReferenceModulesTest, EveryLinePlansAndCompilesWholeAndSampled) {
  const ops::ArchSpec arch = ops::ArchSpec::of(*DeviceInfo::for_arch(kArch));
  std::set<std::string> references;
  for (const std::string& line : lines_) {
    SCOPED_TRACE(line);
    Result<ParsedCommand> p = parse_command(std::string_view(line));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    const OpSignature& sig = *p->signature;
    const ops::OpDefinition* op = ops::find_op(sig.op_name());
    const ops::GpuReference* gpu = op->gpu_reference();
    ASSERT_NE(gpu, nullptr);
    references.insert(std::string(gpu->name()));
    Result<std::unique_ptr<ops::OpProblem>> problem = op->make_problem(sig);
    ASSERT_TRUE(problem.ok());
    ASSERT_TRUE(gpu->accepts(**problem).ok());
    std::vector<ops::ReferenceRequest> requests{ops::ReferenceRequest{}};
    if (gpu->samples())
      for (size_t r = 0; r < sig.results().size(); ++r) requests.push_back(ops::ReferenceRequest{r, 100});
    for (const ops::ReferenceRequest& request : requests) {
      SCOPED_TRACE(request.text());
      Result<ops::Plan> plan = gpu->plan(**problem, request, arch);
      ASSERT_TRUE(plan.ok()) << plan.status().to_string();
      const Status valid = plan->validate(ops::reference_arguments(sig, request).size(),
                                          ops::reference_results(sig, request).size());
      ASSERT_TRUE(valid.ok()) << valid.to_string();
      // One step per result asked for (conv), or the norm's passes.
      EXPECT_GE(plan->steps.size(), request.sampled_result ? 1u : (gpu->samples() ? sig.results().size() : 2u));
      compile(*plan, transcendental_epilogue(sig));
    }
    Result<ops::Plan> inputs = ops::plan_gpu_inputs(sig, ops::InputOptions{10, {}}, arch);
    ASSERT_TRUE(inputs.ok()) << inputs.status().to_string();
    EXPECT_EQ(inputs->steps.size(), sig.arguments().size());
    ASSERT_TRUE(inputs->validate(0, sig.arguments().size()).ok());
    compile(*inputs, true);
  }
  EXPECT_EQ(references, (std::set<std::string>{"gpu:conv:reference", "gpu:layernorm:reference", "gpu:rmsnorm:reference",
                                               "gpu:groupnorm:reference", "gpu:addlayernorm:reference",
                                               "gpu:batchnorm:reference", "gpu:batchnorm_mixed:reference"}));
}

// A sampled conv reference binds the positions after the signature's
// arguments and its one result; a whole one every result in order.
TEST_F(ReferenceModulesTest, ConvReferenceBindings) {
  Result<ParsedCommand> p = parse_command(std::string_view("conv -n 2 -c 8 -H 6 -W 5 -k 12 -y 3 -x 3 -p 1 -q 1 -F 0 -b 1"));
  ASSERT_TRUE(p.ok());
  const OpSignature& sig = *p->signature;
  const ops::OpDefinition* op = ops::find_op("conv");
  auto problem = op->make_problem(sig);
  ASSERT_TRUE(problem.ok());
  const ops::ArchSpec arch = ops::ArchSpec::of(*DeviceInfo::for_arch(kArch));
  const std::vector<TensorSpec> results = sig.results();  // y, dx, dw, db
  ASSERT_EQ(results.size(), 4u);
  auto whole = op->gpu_reference()->plan(**problem, ops::ReferenceRequest{}, arch);
  ASSERT_TRUE(whole.ok()) << whole.status().to_string();
  ASSERT_EQ(whole->steps.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(whole->steps[i].entry, "boo_conv_reference_" + results[i].name);
    bool writes_result_i = false;
    for (const ops::LaunchStep::AddressSlot& slot : whole->steps[i].addresses)
      writes_result_i |= slot.tensor.source == ops::TensorBinding::Source::kResult && slot.tensor.index == i;
    EXPECT_TRUE(writes_result_i) << results[i].name;
  }
  const ops::ReferenceRequest dw{2, 77};
  auto sampled = op->gpu_reference()->plan(**problem, dw, arch);
  ASSERT_TRUE(sampled.ok());
  ASSERT_EQ(sampled->steps.size(), 1u);
  EXPECT_EQ(sampled->steps[0].entry, "boo_conv_reference_dw");
  std::set<std::pair<int, uint32_t>> bound;
  for (const ops::LaunchStep::AddressSlot& slot : sampled->steps[0].addresses)
    bound.insert({static_cast<int>(slot.tensor.source), slot.tensor.index});
  const uint32_t positions = static_cast<uint32_t>(sig.arguments().size());
  EXPECT_TRUE(bound.count({static_cast<int>(ops::TensorBinding::Source::kArgument), positions}));
  EXPECT_TRUE(bound.count({static_cast<int>(ops::TensorBinding::Source::kResult), 0u}));
  const std::vector<TensorSpec> args = ops::reference_arguments(sig, dw);
  EXPECT_EQ(args.back().name, "positions");
  EXPECT_EQ(args.back().shape, std::vector<int64_t>{77});
  EXPECT_EQ(ops::reference_results(sig, dw).at(0).name, "dw");
  EXPECT_EQ(ops::reference_results(sig, ops::ReferenceRequest{}).at(3).dtype, DType::kF64);
}

// The generator declines what its kernel does not index (the CPU makes those).
TEST(GpuInputsPlanTest, DeclinesFloat64AndHighRanks) {
  Result<ParsedCommand> p = parse_command(std::string_view("layernorm -X 2x2x2x2x2x2x2x2x2 -o 8 -F 1"));
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  const ops::ArchSpec arch = ops::ArchSpec::of(*DeviceInfo::for_arch(kArch));
  Result<ops::Plan> plan = ops::plan_gpu_inputs(*p->signature, ops::InputOptions{}, arch);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(plan.status().message().find("rank 9"), std::string::npos) << plan.status().to_string();
  // So does the norm's GPU reference: the CPU reference computes it.
  const ops::OpDefinition* op = ops::find_op(p->signature->op_name());
  auto problem = op->make_problem(*p->signature);
  ASSERT_TRUE(problem.ok());
  EXPECT_EQ(op->gpu_reference()->accepts(**problem).code(), StatusCode::kUnimplemented);
}

// The layer norm reference indexes y, dy and dx row-major: a channels-last
// --layout runs on the CPU reference instead of being compared at the wrong places.
TEST(NormReferencePlanTest, DeclinesChannelsLastResults) {
  for (const auto& [command, accepted] : {std::pair{"layernorm -N 2 -C 8 -H 4 -W 4 -F 0 --layout NCHW", true},
                                          std::pair{"layernorm -N 2 -C 8 -H 4 -W 4 -F 0 --layout NHWC", false}}) {
    SCOPED_TRACE(command);
    Result<ParsedCommand> p = parse_command(std::string_view(command));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    const ops::OpDefinition* op = ops::find_op(p->signature->op_name());
    auto problem = op->make_problem(*p->signature);
    ASSERT_TRUE(problem.ok());
    const Status s = op->gpu_reference()->accepts(**problem);
    EXPECT_EQ(s.ok(), accepted) << s.to_string();
  }
}

}  // namespace
}  // namespace boo
