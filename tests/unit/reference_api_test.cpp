// boo tests: run_reference (boo/reference.hpp), the CPU reference through the
// public API on the caller's host tensors: values, rounding to the results'
// dtypes, and the checks that name a tensor that does not fit the signature.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "bench/backend.hpp"
#include "boo/reference.hpp"
#include "ops/op_registry.hpp"
#include "test_util.hpp"

namespace boo {
namespace {

using testing::must_parse;

TensorRef ref_of(void* data, const TensorSpec& spec) { return {data, spec.shape, spec.strides, spec.dtype}; }

TEST(RunReferenceTest, HandComputedConv) {
  // 3x3 input 1..9, 2x2 filter of ones: each output sums a 2x2 window.
  ParsedCommand p = must_parse("conv -n 1 -c 1 -H 3 -W 3 -k 1 -y 2 -x 2 -F 1");
  std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w(4, 1.0f), y(4, -1.0f);
  const std::vector<TensorSpec> a = p.signature->arguments(), r = p.signature->results();
  const std::vector<TensorRef> args = {ref_of(x.data(), a[0]), ref_of(w.data(), a[1])};
  const std::vector<TensorRef> results = {ref_of(y.data(), r[0])};
  ASSERT_TRUE(run_reference(*p.signature, args, results).ok());
  EXPECT_EQ(y, (std::vector<float>{12, 16, 24, 28}));
}

// Every result, in its dtype and layout, is byte for byte what the driver's cpu backend returns.
TEST(RunReferenceTest, SameBytesAsTheCpuBackend) {
  for (const char* command : {"convbfp16 -n 2 -c 8 -H 6 -W 5 -k 4 -y 3 -x 3 -p 1 -q 1 -F 1 -b 1 --in_layout NHWC "
                              "--fil_layout NHWC --out_layout NHWC --activation relu",
                              "layernormfp16 -X 6x33 -o 1 -m 1 -F 14"}) {
    SCOPED_TRACE(command);
    ParsedCommand p = must_parse(command);
    const OpSignature& sig = *p.signature;
    std::vector<base::HostTensor> inputs = *ops::find_op(sig.op_name())->make_arguments(sig, {});
    Result<bench::BackendRun> cpu = bench::make_cpu_backend(1)->run(sig, inputs, RunOptions{1, false});
    ASSERT_TRUE(cpu.ok()) << cpu.status().to_string();

    std::vector<TensorRef> args, results;
    for (base::HostTensor& t : inputs) args.push_back(ref_of(t.data(), t.spec()));
    std::vector<std::vector<std::byte>> storage;
    for (const TensorSpec& spec : sig.results()) storage.emplace_back(spec.storage_bytes(), std::byte{0x7f});
    for (size_t i = 0; i < storage.size(); ++i) results.push_back(ref_of(storage[i].data(), sig.results()[i]));
    ASSERT_TRUE(run_reference(sig, args, results).ok());
    ASSERT_EQ(storage.size(), cpu->results.size());
    for (size_t i = 0; i < storage.size(); ++i) {
      ASSERT_EQ(storage[i].size(), cpu->results[i].size_bytes());
      EXPECT_EQ(std::memcmp(storage[i].data(), cpu->results[i].data(), storage[i].size()), 0)
          << "result " << sig.results()[i].name;
    }
  }
}

TEST(RunReferenceTest, TensorsThatDoNotFitAreNamed) {
  ParsedCommand p = must_parse("conv -n 1 -c 2 -H 3 -W 3 -k 1 -y 1 -x 1 -F 1");
  const std::vector<TensorSpec> a = p.signature->arguments(), r = p.signature->results();
  std::vector<float> x(18, 1.0f), w(2, 1.0f), y(9);
  const std::vector<TensorRef> args = {ref_of(x.data(), a[0]), ref_of(w.data(), a[1])};
  const std::vector<TensorRef> results = {ref_of(y.data(), r[0])};
  auto expect_invalid = [&](std::vector<TensorRef> bad_args, std::vector<TensorRef> bad_results,
                            const std::string& message) {
    Status st = run_reference(*p.signature, bad_args, bad_results);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.to_string();
    EXPECT_EQ(st.message(), message);
  };
  expect_invalid({args[0]}, results, "expected 2 arguments, got 1");
  std::vector<TensorRef> bad = args;
  bad[0].shape = {1, 2, 3, 4};
  expect_invalid(bad, results, "argument 'x' has shape [1, 2, 3, 4], the signature needs [1, 2, 3, 3]");
  bad = args;
  bad[1].dtype = DType::kF16;
  expect_invalid(bad, results, "argument 'w' is float16, the signature needs float32");
  bad = args;
  bad[0].strides = {18, 1, 6, 2};  // channels last
  expect_invalid(bad, results,
                 "argument 'x' has strides [18, 1, 6, 2], the signature's layout needs [18, 9, 3, 1]");
  std::vector<TensorRef> bad_results = results;
  bad_results[0].data = nullptr;
  expect_invalid(args, bad_results, "result 'y' is null");
  // The stride of a size-1 dimension is free.
  std::vector<TensorRef> free_stride = args;
  free_stride[0].strides[0] = 12345;
  EXPECT_TRUE(run_reference(*p.signature, free_stride, results).ok());
  EXPECT_EQ(y, std::vector<float>(9, 2.0f));
}

}  // namespace
}  // namespace boo
