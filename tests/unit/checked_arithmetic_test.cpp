// boo tests: hostile sizes (issue #22, defects 1-5). Each reproducer of the
// issue is named by its command line and must give its specific error: on
// 110543f these read out of bounds, divided by zero, returned wrong shapes,
// truncated values or threw std::bad_alloc.
#include <gtest/gtest.h>

#include <limits>

#include "base/checked_int.hpp"
#include "base/host_memory.hpp"
#include "base/host_tensor.hpp"
#include "base/json.hpp"
#include "base/strings.hpp"
#include "bench/backend.hpp"
#include "bench/memory_check.hpp"
#include "boo/conv.hpp"
#include "boo/registry.hpp"
#include "ops/op_registry.hpp"
#include "runtime/dispatch.hpp"

namespace boo {
namespace {

using base::CheckedInt;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST(CheckedIntTest, OverflowAndDivisionByZeroAreRemembered) {
  EXPECT_EQ((CheckedInt(6) * 7 + 1 - 3).value(), 40);
  EXPECT_TRUE((CheckedInt(6) * 7).ok());
  EXPECT_FALSE((CheckedInt(kMax) + 1).ok());
  EXPECT_FALSE((CheckedInt(kMin) - 1).ok());
  EXPECT_FALSE((CheckedInt(int64_t{1} << 32) * (int64_t{1} << 31)).ok());
  EXPECT_FALSE((CheckedInt(5) / 0).ok());
  EXPECT_FALSE((CheckedInt(kMin) / -1).ok());
  EXPECT_EQ((CheckedInt(-7) / 2).value(), -3);
  // An overflow anywhere in an expression stays: later operations cannot bring the value back.
  EXPECT_FALSE(((CheckedInt(kMax) + 1) - 1).ok());
  EXPECT_FALSE(((CheckedInt(kMax) * 2) / 4).ok());
  EXPECT_EQ((CheckedInt(kMax) + 1).value_or(-5), -5);
  const int64_t dims[] = {2305843009213693953, 8};
  EXPECT_FALSE(base::checked_product(dims).ok());
  const int64_t small[] = {2, 3, 4};
  EXPECT_EQ(base::checked_product(small).value(), 24);
}

TEST(CheckedIntTest, NarrowRefusesWhatDoesNotFit) {
  EXPECT_EQ(base::narrow<int>(7), 7);
  EXPECT_EQ(base::narrow<int>(-2147483648LL), std::numeric_limits<int>::min());
  EXPECT_FALSE(base::narrow<int>(4294967298LL));  // was read as 2
  EXPECT_FALSE(base::narrow<int>(-2147483649LL));
}

TEST(CheckedIntTest, TensorSizesSaturateInsteadOfWrapping) {
  const TensorSpec huge{"x", {1, 2305843009213693953, 1, 8}, contiguous_strides({1, 2305843009213693953, 1, 8}),
                        DType::kF32, ""};
  EXPECT_EQ(huge.numel(), kMax);
  EXPECT_EQ(huge.strides[0], kMax);
  EXPECT_EQ(huge.storage_bytes(), static_cast<size_t>(kMax));
  EXPECT_EQ(permuted_strides({4, kMax, 2}, {0, 2, 1}), (std::vector<int64_t>{kMax, 1, kMax}));
  const TensorSpec fine{"x", {2, 3, 4}, contiguous_strides({2, 3, 4}), DType::kBF16, ""};
  EXPECT_EQ(fine.numel(), 24);
  EXPECT_EQ(fine.storage_bytes(), 48u);
}

// The reproducers and their neighbours, by command line.
TEST(HostileSizesTest, EachReproducerGetsItsSpecificMessage) {
  struct Bad {
    const char* command;
    const char* fragment;
  };
  const Bad bad[] = {
      // 1. int64 overflow in shape products (an out-of-bounds read in the reference).
      {"conv -n 1 -c 2305843009213693953 -H 1 -W 8 -k 8 -y 1 -x 1 -F 1 --iter 1",
       "x would hold more than 2^48 (281474976710656) elements, boo's limit per tensor: -n = 1, "
       "-c = 2305843009213693953, in_h (-H) = 1, in_w (-W) = 8"},
      {"layernorm -X 2305843009213693953x8 -o 1",
       "layernorm --input/-X 2305843009213693953x8 would hold more than 2^48 (281474976710656) elements"},
      {"t5layernorm -X 4294967296x4294967296", "would hold more than 2^48 (281474976710656) elements"},
      // The ops added after the issue: one check of every tensor for every op (check_tensor_limits).
      {"gemm --a_w 3000000000 --a_h 3000000000 --b_w 3000000000",
       "gemm: tensor 'a' of shape [3000000000, 3000000000] would span more than 2^48"},
      {"bnorm -n 3000000000 -c 3000000000 -H 3000000 -W 1 -m 1", "batchnorm: tensor 'x' of shape"},
      {"groupnorm -n 3000000000 -c 3000000000 -D 0 -H 3000000 -W 1 -g 1", "groupnorm: tensor 'x' of shape"},
      {"conv -n 1 -c 1 -H 1 -W 1 -k 8 -y 4294967296 -x 4294967296 -p 4294967296 -q 4294967296 -F 1",
       "the filter w would hold more than 2^48 (281474976710656) elements, boo's limit per tensor: -k = 8, -c/-g = 1, "
       "fil_h (-y) = 4294967296, fil_w (-x) = 4294967296"},
      {"conv -n 65537 -c 1 -H 65536 -W 65536 -k 1 -y 1 -x 1 -F 1", "x would hold more than 2^48"},
      {"conv -n 4096 -c 1 -H 1 -W 1 -k 4096 -y 1 -x 1 -p 4096 -q 4096 -F 1",
       "y would hold more than 2^48 (281474976710656) elements, boo's limit per tensor: -n = 4096, -k = 4096, "
       "output h = 8193, output w = 8193"},
      // 2. Division by zero of -z same with a zero stride (before validate()).
      {"conv -z same -u 0", "--pad_mode/-z same needs a positive stride in every dimension, got 0"},
      {"conv -z same -x 0", "--pad_mode/-z same needs a positive filter size in every dimension, got 0"},
      // 3. Overflowing geometry accepted with a wrong shape.
      {"conv -n 1 -c 3 -H 8 -W 8 -k 4 -y 3 -x 3 -j 9223372036854775807 -F 1",
       "dilation_w (-j) 9223372036854775807 is over boo's limit of 2^48 (281474976710656)"},
      {"conv -n 1 -c 3 -H 8 -W 8 -k 4 -y 3 -x 3 -p 9223372036854775807 -F 1",
       "pad_h (-p) 9223372036854775807 is over boo's limit"},
      {"conv --spatial_dim 3 -n 1 -c 1 --in_d 2 -H 2 -W 2 -k 1 --conv_stride_d 281474976710657 -F 1",
       "--conv_stride_d 281474976710657 is over boo's limit"},
      {"conv -n 1 -c 1 -H 1048576 -W 1 -k 1 -y 1 -x 1 -u 281474976710656 -m trans -F 1",
       "the output size in h does not fit int64 with in_h (-H) = 1048576, fil_h (-y) = 1, "
       "conv_stride_h (-u) = 281474976710656, pad_h (-p) = 0, dilation_h (-l) = 1"},
      {"conv -n 1 -c 1 -H 8 -W 8 -k 1 -y 281474976710656 -x 1 -l 281474976710656 -F 1",
       "the output size in h does not fit int64"},
      // 4. Values silently truncated to int.
      {"layernorm -X 2x3x4 -o 4294967298", "--normalized_dim/-o 4294967298 is not an axis of the input"},
      {"t5layernorm -X 2x3x4 -o -4294967295", "--normalized_dim/-o -4294967295 is not an axis of the input"},
      {"layernorm -X 2x3x4 -o 1 --input-permutation 0 4294967298 1",
       "--input-permutation: 4294967298 is not an axis of the input"},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.command);
    Result<ParsedCommand> p = parse_command(std::string_view(b.command));
    ASSERT_FALSE(p.ok()) << "accepted: " << p->signature->command();
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(p.status().message().find(b.fragment), std::string::npos)
        << "got:      " << p.status().message() << "\nexpected: " << b.fragment;
  }
}

// Sizes just inside the limits still parse, and keep their exact values.
TEST(HostileSizesTest, LargestAcceptedSizesParse) {
  for (const char* command : {"conv -n 1 -c 1 -H 16777216 -W 16777216 -k 1 -y 1 -x 1 -F 1",
                              "conv -n 1 -c 3 -H 8 -W 8 -k 4 -y 1 -x 1 -u 281474976710656 -v 1 -F 1",
                              "layernormbfp16 -X 16777216x16777216 -o 1"}) {
    SCOPED_TRACE(command);
    Result<ParsedCommand> p = parse_command(std::string_view(command));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    EXPECT_EQ(parse_command(p->signature->command())->signature->command(), p->signature->command());
  }
  Result<ParsedCommand> strided =
      parse_command(std::string_view("conv -n 1 -c 3 -H 8 -W 8 -k 4 -y 1 -x 1 -u 281474976710656 -v 1 -F 1"));
  ASSERT_TRUE(strided.ok());
  const ConvSignature& conv = dynamic_cast<const ConvSignature&>(*strided->signature);
  EXPECT_EQ(conv.output_size(), (std::vector<int64_t>{1, 8}));
}

// A signature built in C++ (or from Python's typed constructors) is validated the same way.
TEST(HostileSizesTest, DirectConstructionIsChecked) {
  ConvSignature s;
  s.n = 1;
  s.c = 1;
  s.k = 1;
  s.input_size = {8, 8};
  s.filter_size = {2, 2};
  s.dilation = {kMax / 2, 1};
  EXPECT_NE(s.validate().message().find("dilation_h (-l) 4611686018427387903 is over boo's limit"), std::string::npos);
  s.dilation = {1, 1};
  s.transposed = true;
  s.stride = {base::kMaxTensorElements, 1};
  s.input_size = {1 << 20, 1};
  EXPECT_NE(s.validate().message().find("the output size in h does not fit int64"), std::string::npos);
  // output_size() of such a signature reads 0 (invalid), never a wrapped value.
  EXPECT_EQ(s.output_size(), (std::vector<int64_t>{0, 0}));
}

// 5. A valid signature too large for the host: refused before allocating, with the sizes.
TEST(HostileSizesTest, HugeValidShapesAreRefusedWithTheirSize) {
  const char* command = "conv -n 100000 -c 1000 -H 1000 -W 1000 -k 1000 -y 1 -x 1 -F 1";
  Result<ParsedCommand> p = parse_command(std::string_view(command));
  ASSERT_TRUE(p.ok()) << p.status().to_string();  // a valid signature, only too large for this host
  const OpSignature& sig = *p->signature;
  // x and y: 1e14 float32 elements each; their float64 copies twice that.
  EXPECT_EQ(bench::host_bytes_needed(sig, 1, false), 800000004000000ull);
  EXPECT_EQ(bench::host_bytes_needed(sig, 1, true), 2400000012000000ull);
  Status host = bench::check_host_memory(sig, 1, true);
  EXPECT_EQ(host.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(host.message().find("needs 2.1 PiB (2400000012000000 bytes) of host memory; this host has"),
            std::string::npos)
      << host.message();

  Result<base::HostTensor> x = base::HostTensor::allocate(sig.arguments()[0]);
  ASSERT_FALSE(x.ok());
  EXPECT_EQ(x.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(x.status().message().find("tensor x [100000, 1000, 1000, 1000] (float32) needs 363.8 TiB"),
            std::string::npos)
      << x.status().message();

  // The input generator says the same instead of throwing std::bad_alloc.
  const ops::OpDefinition* op = ops::find_op("conv");
  Result<std::vector<base::HostTensor>> args = op->make_arguments(sig, ops::InputOptions{1, {}});
  ASSERT_FALSE(args.ok());
  EXPECT_EQ(args.status().code(), StatusCode::kResourceExhausted);

  // And the CPU backend, given placeholder inputs, refuses before running the reference.
  std::unique_ptr<bench::Backend> cpu = bench::make_cpu_backend(1);
  Result<bench::BackendRun> ran = cpu->run(sig, {}, RunOptions{});
  ASSERT_FALSE(ran.ok());
  EXPECT_EQ(ran.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(ran.status().message().find("float64 CPU reference"), std::string::npos) << ran.status().message();

  DeviceInfo device;
  device.name = "a 80 GiB GPU";
  device.total_memory_bytes = int64_t{80} << 30;
  Status on_device = bench::check_device_memory(sig, device);
  EXPECT_EQ(on_device.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(on_device.message().find("need 727.6 TiB (800000004000000 bytes) of device memory; a 80 GiB GPU has "
                                     "80.0 GiB (85899345920 bytes)"),
            std::string::npos)
      << on_device.message();
  Result<ParsedCommand> small = parse_command(std::string_view("conv -n 1 -c 8 -H 8 -W 8 -k 8 -F 1"));
  EXPECT_TRUE(bench::check_device_memory(*small->signature, device).ok());
  EXPECT_TRUE(bench::check_host_memory(*small->signature, 2, true).ok());
}

TEST(HostileSizesTest, HostBytesFormat) {
  EXPECT_EQ(base::format_bytes(512), "512 bytes");
  EXPECT_EQ(base::format_bytes(uint64_t{3} << 29), "1.5 GiB (1610612736 bytes)");
  EXPECT_TRUE(base::check_host_bytes(1024, "a small tensor").ok());
  Status st = base::check_host_bytes(std::numeric_limits<uint64_t>::max(), "everything");
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(st.message().find("everything needs 16.0 EiB"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace boo

namespace boo {
namespace {

// Issue #22, defect 12: messages echo user input escaped and capped.
TEST(EchoWordTest, ControlBytesAreEscapedAndHugeWordsCut) {
  EXPECT_EQ(base::escape_control("a\x1b[31mb\x7f\n"), "a\\x1b[31mb\\x7f\\x0a");
  EXPECT_EQ(base::echo_word("NHWC"), "NHWC");
  EXPECT_EQ(base::echo_word(std::string(1000, 'x')), std::string(64, 'x') + "... (1000 bytes)");
  // Cut at a character boundary: 21 three-byte characters are 63 bytes, the 22nd would end at byte 66.
  std::string wide;
  for (int i = 0; i < 30; ++i) wide += "\xef\xbc\xae";  // U+FF2E FULLWIDTH LATIN CAPITAL LETTER N
  EXPECT_EQ(base::echo_word(wide), wide.substr(0, 63) + "... (90 bytes)");
  Result<int64_t> v = base::parse_int(std::string(3000, '9'));
  ASSERT_FALSE(v.ok());
  EXPECT_LT(v.status().message().size(), 120u) << v.status().message();
}

}  // namespace
}  // namespace boo

namespace boo {
namespace {

// What the command-parse fuzzer found past the parser, planned as `boo explain --arch sm_90a` plans.
TEST(FuzzFindingsTest, HugeValidSignaturesPlanOrDeclineWithTrueNumbers) {
  const DeviceInfo device = *DeviceInfo::for_arch("sm_90a");
  // A transposed conv with stride 2814749767: the implicit GEMM made one kernel per stride phase (2.8e9);
  // now it declines (its grid cannot hold the tiles) and the direct tier plans it.
  Result<ParsedCommand> conv = parse_command(std::string_view("conv -n 1 -c 1 -x 1 -u 2814749767 -m trans -F 1"));
  ASSERT_TRUE(conv.ok()) << conv.status().to_string();
  Result<runtime::Dispatch> igemm = runtime::choose_gpu_implementation(*conv->signature, device, "gpu:conv:implicit_gemm");
  ASSERT_TRUE(igemm.ok()) << igemm.status().to_string();
  EXPECT_NE(igemm->failure().to_string().find("the GEMM has 21814310695 tiles, more than the grid's 2147483647 blocks"),
            std::string::npos)
      << igemm->failure().to_string();
  Result<runtime::Dispatch> d = runtime::choose_gpu_implementation(*conv->signature, device, "");
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_TRUE(runtime::plan_chosen(*d).ok());
  // Strides of 100x100 (10^4 phases) fit the grid: one GEMM over every tap, not 10^4 kernels.
  Result<ParsedCommand> strided =
      parse_command(std::string_view("conv -n 1 -c 8 -H 2 -W 2 -k 8 -y 1 -x 1 -u 100 -v 100 -m trans -F 1"));
  ASSERT_TRUE(strided.ok()) << strided.status().to_string();
  Result<runtime::Dispatch> s = runtime::choose_gpu_implementation(*strided->signature, device, "gpu:conv:implicit_gemm");
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  Result<ops::Plan> plan = runtime::plan_chosen(*s);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  EXPECT_LE(plan->steps.size(), 4u);
  // Rows of 2^45 elements: the row kernels' per-thread count was truncated to int (negative).
  Result<ParsedCommand> norm = parse_command(std::string_view("layernorm -X 1x35184372088832 -o 1"));
  ASSERT_TRUE(norm.ok()) << norm.status().to_string();
  Result<runtime::Dispatch> rows = runtime::choose_gpu_implementation(*norm->signature, device, "gpu:layernorm:rows");
  ASSERT_TRUE(rows.ok()) << rows.status().to_string();
  EXPECT_NE(rows->failure().to_string().find("rows of 35184372088832 elements do not fit in registers (34359738368 "
                                           "per thread > "),
            std::string::npos)
      << rows->failure().to_string();
}

}  // namespace
}  // namespace boo

namespace boo {
namespace {

// The cache-record fuzzer's finding: a \u escape without four hex digits threw std::invalid_argument.
TEST(FuzzFindingsTest, JsonEscapesAreCheckedNotThrown) {
  Result<base::JsonObject> bad = base::JsonObject::parse("{\"key_record\": \"sche=f1anm\\uzz=record\"}");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "bad \\u escape in JSON");
  EXPECT_FALSE(base::JsonObject::parse("{\"a\": \"\\u+1a2\"}").ok());
  Result<base::JsonObject> good = base::JsonObject::parse("{\"a\": \"x\\u0001\\u00e9\\u20ac\"}");
  ASSERT_TRUE(good.ok()) << good.status().to_string();
  EXPECT_EQ(*good->get("a"), "x\x01\xc3\xa9\xe2\x82\xac");
}

}  // namespace
}  // namespace boo
