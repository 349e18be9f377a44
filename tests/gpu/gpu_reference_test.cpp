// boo tests (label gpu): the float64 reference on the GPU against the CPU
// reference, on every line of tests/gpu/reference_lines.txt (one test per
// line, named by it): every result whole and at sampled positions, bit for
// bit but for the transcendental activations (libdevice's exp, tanh, erf
// against the host's libm: a few ulps). And the seeded inputs generated on
// the GPU against the CPU's, byte for byte. Skipped when there is no GPU.
// Run them with `ctest -R GpuReference`.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "bench/backend.hpp"
#include "bench/numerics.hpp"
#include "bench/numerics_check.hpp"
#include "bench/reference.hpp"
#include "boo/conv.hpp"
#include "boo/registry.hpp"
#include "boo/runtime.hpp"
#include "gpu_availability.hpp"
#include "ops/op_registry.hpp"

namespace boo {
namespace {

std::vector<std::string> reference_lines() {
  std::vector<std::string> out;
  std::ifstream in(std::string(BOO_SOURCE_DIR) + "/tests/gpu/reference_lines.txt");
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != '#') out.push_back(line);
  return out;
}

// One runtime for the whole program (a context per test would cost seconds), with its own cache,
// released in the environment's TearDown (before the CUDA driver's own exit handlers run).
class GpuEnvironment final : public ::testing::Environment {
 public:
  static GpuEnvironment& get() { return *instance_; }
  Runtime* runtime() { return rt_.get(); }
  const Status& status() const { return status_; }

  void SetUp() override {
    cache_dir_ = ::testing::TempDir() + "/boo_gpu_reference_" + std::to_string(::getpid());
    RuntimeOptions o;
    o.cache_dir = cache_dir_;
    o.cache_enabled = true;
    Result<std::unique_ptr<Runtime>> rt = Runtime::create(o);
    if (rt.ok()) rt_ = std::move(*rt);
    else status_ = rt.status();
  }
  void TearDown() override {
    rt_.reset();
    std::filesystem::remove_all(cache_dir_);
  }

 private:
  static GpuEnvironment* instance_;
  std::string cache_dir_;
  std::unique_ptr<Runtime> rt_;
  Status status_;
};

// gtest owns the environment.
GpuEnvironment* GpuEnvironment::instance_ =
    static_cast<GpuEnvironment*>(::testing::AddGlobalTestEnvironment(new GpuEnvironment));

// The runtime, or a skip (no GPU) or failure (any other error) of the calling test.
#define BOO_GPU_OR_SKIP(rt)                                                                          \
  Runtime* rt = GpuEnvironment::get().runtime();                                                    \
  if (!rt && testing::skip_for_no_gpu(GpuEnvironment::get().status()))                              \
    GTEST_SKIP() << "no GPU: " << GpuEnvironment::get().status().to_string();                       \
  ASSERT_NE(rt, nullptr) << "Runtime::create failed: " << GpuEnvironment::get().status().to_string()

// Whether `sig`'s result `name` ends in a transcendental activation (a few ulps apart, not bit for bit).
bool transcendental(const OpSignature& sig, const std::string& name) {
  const auto* conv = dynamic_cast<const ConvSignature*>(&sig);
  if (!conv || name != "y") return false;
  using K = Activation::Kind;
  const K k = conv->activation.kind;
  return k == K::kSigmoid || k == K::kTanh || k == K::kSilu || k == K::kGelu || k == K::kGeluTanh;
}

// gpu equals cpu bit for bit (NaN where NaN), or within 4 ulps of 1.0-scaled
// values where `approximate`. Returns the first mismatch's description.
std::string mismatch(double gpu, double cpu, bool approximate) {
  if (std::isnan(gpu) && std::isnan(cpu)) return "";
  if (approximate ? std::abs(gpu - cpu) <= 4 * 0x1p-52 * std::max(1.0, std::abs(cpu))
                  : std::memcmp(&gpu, &cpu, sizeof gpu) == 0)
    return "";
  char buf[128];
  std::snprintf(buf, sizeof buf, "gpu %.17g, cpu %.17g", gpu, cpu);
  return buf;
}

class GpuReferenceLineTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuReferenceLineTest, MatchesTheCpuReference) {
  BOO_GPU_OR_SKIP(rt);
  const std::string& line = GetParam();
  SCOPED_TRACE(line);
  Result<ParsedCommand> p = parse_command(std::string_view(line));
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  const OpSignature& sig = *p->signature;
  const ops::OpDefinition* op = ops::find_op(sig.op_name());
  Result<std::vector<base::HostTensor>> args = op->make_arguments(sig, ops::InputOptions{3, {}});
  ASSERT_TRUE(args.ok()) << args.status().to_string();
  std::unique_ptr<bench::Reference> gpu = bench::make_gpu_reference(*rt);
  EXPECT_EQ(gpu->describe(sig).rfind("gpu:" + std::string(sig.op_name()) + ":reference on cuda:", 0), 0u)
      << gpu->describe(sig);

  Result<std::vector<base::HostTensor>> cpu_all = op->reference(sig, *args);
  ASSERT_TRUE(cpu_all.ok()) << cpu_all.status().to_string();
  Result<std::vector<base::HostTensor>> gpu_all = gpu->compute(sig, *args);
  ASSERT_TRUE(gpu_all.ok()) << gpu_all.status().to_string();
  ASSERT_EQ(gpu_all->size(), cpu_all->size());
  for (size_t r = 0; r < cpu_all->size(); ++r) {
    const base::HostTensor &c = (*cpu_all)[r], &g = (*gpu_all)[r];
    ASSERT_EQ(g.spec(), c.spec());
    const bool approximate = transcendental(sig, c.spec().name);
    int64_t bad = 0;
    for (int64_t i = 0; i < c.spec().numel(); ++i) {
      const int64_t o = base::offset_of_linear(c.spec(), i);
      const std::string m = mismatch(g.load(o), c.load(o), approximate);
      if (!m.empty() && bad++ < 3) ADD_FAILURE() << c.spec().name << " at logical index " << i << ": " << m;
    }
    EXPECT_EQ(bad, 0) << c.spec().name << ": elements that differ, of " << c.spec().numel();

    // At sampled positions (the GPU's own sampled kernels where the op has them).
    const std::vector<int64_t> positions = bench::sample_positions(c.spec().shape, 300, 7);
    Result<std::vector<double>> cpu_sample = op->reference_sample(sig, *args, r, positions);
    Result<std::vector<double>> gpu_sample = gpu->sample(sig, *args, r, positions);
    ASSERT_TRUE(cpu_sample.ok()) << cpu_sample.status().to_string();
    ASSERT_TRUE(gpu_sample.ok()) << gpu_sample.status().to_string();
    ASSERT_EQ(gpu_sample->size(), positions.size());
    for (size_t i = 0; i < positions.size(); ++i) {
      const std::string m = mismatch((*gpu_sample)[i], (*cpu_sample)[i], approximate);
      EXPECT_TRUE(m.empty()) << c.spec().name << " sampled at " << positions[i] << ": " << m;
    }
  }
}

// gtest names: the command line with every other character as '_'.
std::string line_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = std::to_string(info.index) + "_";
  for (char ch : info.param) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(GpuReference, GpuReferenceLineTest, ::testing::ValuesIn(reference_lines()), line_name);

// The seeded inputs made on the GPU are the CPU's, byte for byte: random and
// splat, two seeds, every dtype and layout of the list; so are the whole
// arguments the driver makes (the GPU's defaults, then the op's derived ones:
// saved statistics, drawn variances).
TEST(GpuReferenceInputsTest, GeneratedInputsMatchTheCpuByteForByte) {
  BOO_GPU_OR_SKIP(rt);
  int checked = 0;
  for (const std::string& line : reference_lines()) {
    SCOPED_TRACE(line);
    Result<ParsedCommand> p = parse_command(std::string_view(line));
    ASSERT_TRUE(p.ok());
    const OpSignature& sig = *p->signature;
    const ops::OpDefinition* op = ops::find_op(sig.op_name());
    for (const ops::InputOptions& options :
         {ops::InputOptions{10, {}}, ops::InputOptions{12345, {}}, ops::InputOptions{10, 0.1}}) {
      Result<std::vector<base::HostTensor>> cpu = op->make_default_arguments(sig, options);
      Result<std::vector<base::HostTensor>> gpu = bench::make_arguments_on_gpu(*rt, sig, options);
      ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();
      ASSERT_TRUE(gpu.ok()) << gpu.status().to_string();
      ASSERT_EQ(gpu->size(), cpu->size());
      for (size_t i = 0; i < cpu->size(); ++i) {
        ASSERT_EQ((*gpu)[i].spec(), (*cpu)[i].spec());
        ASSERT_EQ((*gpu)[i].size_bytes(), (*cpu)[i].size_bytes());
        EXPECT_EQ(std::memcmp((*gpu)[i].data(), (*cpu)[i].data(), (*cpu)[i].size_bytes()), 0)
            << (*cpu)[i].spec().name << " (seed " << options.seed << (options.splat ? ", splat" : "") << ")";
      }
      Result<std::vector<base::HostTensor>> cpu_whole = op->make_arguments(sig, options);
      Result<std::vector<base::HostTensor>> gpu_whole = bench::make_arguments(rt, *op, sig, options);
      ASSERT_TRUE(cpu_whole.ok()) << cpu_whole.status().to_string();
      ASSERT_TRUE(gpu_whole.ok()) << gpu_whole.status().to_string();
      ASSERT_EQ(gpu_whole->size(), cpu_whole->size());
      for (size_t i = 0; i < cpu_whole->size(); ++i)
        EXPECT_EQ(std::memcmp((*gpu_whole)[i].data(), (*cpu_whole)[i].data(), (*cpu_whole)[i].size_bytes()), 0)
            << (*cpu_whole)[i].spec().name << " derived (seed " << options.seed << ")";
      ++checked;
    }
  }
  EXPECT_GT(checked, 100);
}

// --verify-numerics with the GPU reference: the CPU backend (the CPU reference's own values) passes, and
// the verdict names the GPU reference; above the full-reference threshold it names its sample.
TEST(GpuReferenceNumericsTest, VerdictNamesTheGpuReference) {
  BOO_GPU_OR_SKIP(rt);
  std::unique_ptr<bench::Reference> gpu = bench::make_gpu_reference(*rt);
  std::unique_ptr<bench::Backend> cpu = bench::make_cpu_backend(1);
  for (const char* line : {"convbfp16 -n 2 -c 8 -H 6 -W 5 -k 8 -y 3 -x 3 -p 1 -F 1",
                           "conv -n 10 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 4",
                           "t5layernormbfp16 -X 64x300 -m 5 -F 0"}) {
    SCOPED_TRACE(line);
    Result<ParsedCommand> p = parse_command(std::string_view(line));
    ASSERT_TRUE(p.ok());
    const bench::NumericsVerdict v =
        bench::check_numerics(*p->signature, *cpu, nullptr, bench::NumericsOptions{}, 10, gpu.get());
    EXPECT_TRUE(v.pass()) << v.failure_reasons() << " " << v.error;
    EXPECT_EQ(v.reference.rfind("gpu:", 0), 0u) << v.reference;
    const bool sampled = p->signature->flop_count() > bench::VerifyOptions{}.full_reference_flops;
    EXPECT_EQ(v.reference.find("(whole results)") == std::string::npos, sampled) << v.reference;
  }
}

}  // namespace
}  // namespace boo
