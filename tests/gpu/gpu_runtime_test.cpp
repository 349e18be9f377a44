// boo tests (label gpu): the runtime on a real GPU — a kernel compiles, is
// cached, loads from the cache in a fresh runtime, runs, and matches the CPU
// float64 reference; launches validate their tensors.
#include <gtest/gtest.h>

#include <filesystem>

#include "bench/numerics.hpp"
#include "gpu_availability.hpp"
#include "boo/registry.hpp"
#include "boo/runtime.hpp"
#include "ops/op_registry.hpp"

namespace boo {
namespace {

Result<std::unique_ptr<Runtime>> make_runtime(const std::string& cache_dir) {
  RuntimeOptions o;
  o.cache_dir = cache_dir;
  o.cache_enabled = true;
  return Runtime::create(o);
}

// Runs `command` through `rt` and compares every result with the reference.
void run_and_check(Runtime& rt, const std::string& command) {
  SCOPED_TRACE(command);
  Result<ParsedCommand> parsed = parse_command(std::string_view(command));
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  const OpSignature& sig = *parsed->signature;
  const ops::OpDefinition* op = ops::find_op(sig.op_name());
  auto args = op->make_arguments(sig, ops::InputOptions{3, {}});
  ASSERT_TRUE(args.ok());
  Result<std::shared_ptr<Launchable>> launchable = rt.get_launchable(sig);
  ASSERT_TRUE(launchable.ok()) << launchable.status().to_string();
  std::vector<DeviceBuffer> buffers;
  std::vector<TensorRef> arg_refs, result_refs;
  for (const base::HostTensor& t : *args) {
    auto buf = rt.allocate(t.size_bytes());
    ASSERT_TRUE(buf.ok());
    ASSERT_TRUE(rt.copy_to_device(*buf, t.data(), t.size_bytes()).ok());
    arg_refs.push_back(TensorRef{buf->data(), t.spec().shape, t.spec().strides, t.spec().dtype});
    buffers.push_back(std::move(*buf));
  }
  std::vector<base::HostTensor> results;
  for (const TensorSpec& spec : sig.results()) {
    auto buf = rt.allocate(spec.storage_bytes());
    ASSERT_TRUE(buf.ok());
    ASSERT_TRUE(rt.fill_bytes(*buf, 0xff).ok());  // NaN: unwritten elements fail the comparison
    result_refs.push_back(TensorRef{buf->data(), spec.shape, spec.strides, spec.dtype});
    buffers.push_back(std::move(*buf));
    results.emplace_back(spec);
  }
  Status launched = (*launchable)->launch(arg_refs, result_refs, nullptr);
  ASSERT_TRUE(launched.ok()) << launched.to_string();
  for (size_t i = 0; i < results.size(); ++i)
    ASSERT_TRUE(rt.copy_to_host(results[i].data(), buffers[args->size() + i], results[i].size_bytes()).ok());
  auto reference = op->reference(sig, *args);
  ASSERT_TRUE(reference.ok());
  auto comparisons = bench::compare_results(sig, *args, results, *reference);
  ASSERT_TRUE(comparisons.ok()) << comparisons.status().to_string();
  for (const bench::Comparison& c : *comparisons) EXPECT_TRUE(c.pass()) << c.summary();
}

class GpuRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_dir_ = ::testing::TempDir() + "/boo_gpu_runtime_" + std::to_string(::getpid());
    std::filesystem::remove_all(cache_dir_);
    Result<std::unique_ptr<Runtime>> rt = make_runtime(cache_dir_);
    if (!rt.ok() && testing::skip_for_no_gpu(rt.status())) GTEST_SKIP() << "no GPU: " << rt.status().to_string();
    ASSERT_TRUE(rt.ok()) << "Runtime::create failed: " << rt.status().to_string();
    rt_ = std::move(*rt);
  }
  void TearDown() override { std::filesystem::remove_all(cache_dir_); }
  std::string cache_dir_;
  std::unique_ptr<Runtime> rt_;
};

TEST_F(GpuRuntimeTest, CachedKernelLoadsRunsAndMatchesTheReference) {
  const std::string command = "convbfp16 -n 2 -c 8 -H 9 -W 7 -k 12 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 --activation relu "
                              "--in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  run_and_check(*rt_, command);
  EXPECT_EQ(rt_->stats().compiled, 1);
  run_and_check(*rt_, command);  // the same signature again: the in-process tier
  EXPECT_EQ(rt_->stats().memory_hits, 1);
  // A fresh runtime (as a new process would) loads the cubin from disk.
  Result<std::unique_ptr<Runtime>> second = make_runtime(cache_dir_);
  ASSERT_TRUE(second.ok()) << second.status().to_string();
  run_and_check(**second, command);
  EXPECT_EQ((*second)->stats().compiled, 0);
  EXPECT_EQ((*second)->stats().disk_hits, 1);
  std::cout << "cached module load: " << (*second)->stats().load_ms << " ms\n";
}

TEST_F(GpuRuntimeTest, EveryDirectionAndLayerNormMode) {
  for (const char* command :
       {"conv -n 2 -c 6 -H 7 -W 5 -k 4 -y 3 -x 2 -p 1 -q 0 -u 2 -v 1 -l 1 -j 2 -g 2 -F 0 -b 1",
        "convfp16 -m trans -n 2 -c 4 -H 5 -W 4 -k 6 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -Y 1 -g 2 -F 0 -b 1 "
        "--in_layout NHWC --out_layout NHWC",
        "convbfp16 -_ 3 -n 1 -c 4 --in_d 4 -H 5 -W 6 -k 4 --fil_d 3 -y 3 -x 1 --pad_d 1 -p 1 -g 4 -F 6 "
        "--in_layout NDHWC --fil_layout NDHWC --out_layout NDHWC",
        "conv --spatial_dim 1 -n 3 -c 5 -H 17 -k 3 -y 4 -p 2 -u 3 -F 10",
        "layernormbfp16 -X 4x33x40 -o 2 -m 1 -F 1 --input-permutation 1 0 2",
        "layernorm -X 5x7x9 -o 1 -m 1 -F 14", "layernormfp16 -X 64x1000 -o 1 -F 2"}) {
    run_and_check(*rt_, command);
  }
}

TEST_F(GpuRuntimeTest, LaunchRejectsMismatchedTensors) {
  Result<ParsedCommand> parsed = parse_command(std::string_view("conv -n 1 -c 2 -H 4 -W 4 -k 2 -y 1 -x 1 -F 1"));
  ASSERT_TRUE(parsed.ok());
  auto launchable = rt_->get_launchable(*parsed->signature);
  ASSERT_TRUE(launchable.ok());
  auto buf = rt_->allocate(1024);
  ASSERT_TRUE(buf.ok());
  TensorRef x{buf->data(), {1, 2, 4, 5}, {40, 20, 5, 1}, DType::kF32};  // wrong W
  TensorRef w{buf->data(), {2, 2, 1, 1}, {2, 1, 1, 1}, DType::kF32};
  TensorRef y{buf->data(), {1, 2, 4, 4}, {32, 16, 4, 1}, DType::kF32};
  Status st = (*launchable)->launch(std::vector<TensorRef>{x, w}, std::vector<TensorRef>{y}, nullptr);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("argument 'x' has shape [1, 2, 4, 5]"), std::string::npos) << st.to_string();
  TensorRef x_half{buf->data(), {1, 2, 4, 4}, {32, 16, 4, 1}, DType::kF16};
  st = (*launchable)->launch(std::vector<TensorRef>{x_half, w}, std::vector<TensorRef>{y}, nullptr);
  EXPECT_NE(st.message().find("is float16, the signature needs float32"), std::string::npos) << st.to_string();
}

TEST(GpuRuntimeOptionsTest, BadDeviceOrdinalIsAClearError) {
  RuntimeOptions o;
  o.device = 99;
  Result<std::unique_ptr<Runtime>> rt = Runtime::create(o);
  if (!rt.ok() && testing::skip_for_no_gpu(rt.status())) GTEST_SKIP() << "no GPU: " << rt.status().to_string();
  ASSERT_FALSE(rt.ok());
  EXPECT_NE(rt.status().message().find("GPU 99 does not exist"), std::string::npos) << rt.status().to_string();
}

}  // namespace
}  // namespace boo
