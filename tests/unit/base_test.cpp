// boo tests: the base layer (Status, strings, float conversions, npy, CSV, statistics).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "base/file_util.hpp"
#include "base/float_convert.hpp"
#include "base/host_tensor.hpp"
#include "base/npy.hpp"
#include "base/parallel.hpp"
#include "base/strings.hpp"
#include "bench/csv_writer.hpp"
#include "bench/statistics.hpp"
#include "boo/device.hpp"
#include "boo/status.hpp"
#include "jit/nvrtc_compiler.hpp"

namespace boo {
namespace {

Status fails_with_context() {
  BOO_RETURN_IF_ERROR_CTX(invalid_argument("bad -n"), "parsing line 3");
  return ok_status();
}

Result<int> doubled(Result<int> in) {
  BOO_ASSIGN_OR_RETURN(int v, std::move(in));
  return 2 * v;
}

TEST(StatusTest, CarriesCodeMessageAndAnnotations) {
  Status ok;
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.to_string(), "OK");
  Status st = fails_with_context();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.to_string(), "INVALID_ARGUMENT: bad -n; parsing line 3");
  EXPECT_NE(st.to_string_with_location().find("base_test.cpp"), std::string::npos);
  Status copy = st;
  Status moved = std::move(st);
  EXPECT_EQ(copy.to_string(), moved.to_string());
  EXPECT_EQ(doubled(21).value(), 42);
  EXPECT_EQ(doubled(not_found("x")).status().code(), StatusCode::kNotFound);
}

TEST(StringsTest, ShellSplitLikeShlex) {
  auto words = base::shell_split("aten::mm \"[[1, 2]]\" '[a b]'  x\\ y \"q\\\"t\"");
  ASSERT_TRUE(words.ok());
  EXPECT_EQ(*words, (std::vector<std::string>{"aten::mm", "[[1, 2]]", "[a b]", "x y", "q\"t"}));
  EXPECT_FALSE(base::shell_split("conv 'unterminated").ok());
  EXPECT_EQ(base::shell_join({"conv", "-n", "1", "a b"}), "conv -n 1 'a b'");
}

TEST(StringsTest, StrictNumbers) {
  EXPECT_EQ(base::parse_int("42").value(), 42);
  EXPECT_EQ(base::parse_int("-3").value(), -3);
  EXPECT_FALSE(base::parse_int("4x").ok());
  EXPECT_FALSE(base::parse_int("").ok());
  EXPECT_FALSE(base::parse_int("1.5").ok());
  EXPECT_DOUBLE_EQ(base::parse_double("1e-5").value(), 1e-5);
  EXPECT_FALSE(base::parse_double("nan").ok());
  EXPECT_EQ(base::format_double(1e-5), "1e-05");
  EXPECT_EQ(base::format_double(0.2), "0.2");
}

TEST(FloatConvertTest, RoundToNearestEven) {
  EXPECT_EQ(base::float_to_bf16_bits(1.0f), 0x3f80);
  // 1 + 2^-8 is exactly halfway between two bf16 values: ties to even (1.0).
  EXPECT_EQ(base::float_to_bf16_bits(1.00390625f), 0x3f80);
  EXPECT_EQ(base::float_to_bf16_bits(1.01171875f), 0x3f82);  // 1 + 3*2^-8 ties up to even
  EXPECT_FLOAT_EQ(base::bf16_bits_to_float(0x4049), 3.140625f);
  EXPECT_EQ(base::float_to_half_bits(1.0f), 0x3c00);
  EXPECT_EQ(base::float_to_half_bits(65504.0f), 0x7bff);
  EXPECT_EQ(base::float_to_half_bits(70000.0f), 0x7c00);
  EXPECT_EQ(base::float_to_half_bits(5.9604645e-8f), 0x0001);  // smallest subnormal
  EXPECT_FLOAT_EQ(base::half_bits_to_float(0x0001), 5.9604645e-8f);
  EXPECT_TRUE(std::isnan(base::half_bits_to_float(base::float_to_half_bits(NAN))));
  // Every half value survives a round trip through float.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const uint16_t bits = static_cast<uint16_t>(h);
    const float f = base::half_bits_to_float(bits);
    if (std::isnan(f)) continue;
    ASSERT_EQ(base::float_to_half_bits(f), bits) << h;
  }
}

TEST(NpyTest, RoundTripsEveryDtypeInLogicalOrder) {
  const std::string dir = ::testing::TempDir() + "/boo_npy";
  ASSERT_TRUE(base::make_directories(dir).ok());
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64}) {
    // A 2x3 tensor stored column-major.
    TensorSpec spec{"t", {2, 3}, {1, 2}, dtype, ""};
    base::HostTensor t(spec);
    for (int64_t i = 0; i < 6; ++i) t.store(base::offset_of_linear(spec, i), 0.5 * static_cast<double>(i) - 1);
    const std::string path = dir + "/t.npy";
    ASSERT_TRUE(base::write_npy(path, t).ok());
    auto back = base::read_npy(path);
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    EXPECT_EQ(back->spec().shape, (std::vector<int64_t>{2, 3}));
    for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(back->load(i), 0.5 * static_cast<double>(i) - 1);
  }
  EXPECT_FALSE(base::read_npy(dir + "/missing.npy").ok());
}

TEST(CsvTest, QuotesLikePythonCsv) {
  EXPECT_EQ(bench::csv_row({"a", "b,c", "say \"hi\""}), "a,\"b,c\",\"say \"\"hi\"\"\"\r\n");
}

TEST(StatisticsTest, BesselStddev) {
  bench::SampleStats s = bench::summarize({1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_NEAR(s.stddev, 1.2909944487358056, 1e-12);
  EXPECT_EQ(bench::summarize({5}).stddev, 0);
}

TEST(StatisticsTest, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(bench::median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(bench::median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(bench::median({7}), 7);
  EXPECT_DOUBLE_EQ(bench::median({}), 0);
}

// boo tune's re-timing in turn: one fast outlier among the pick's timings does not make a lead, a
// consistent one beyond the margin does, and one within it does not.
TEST(StatisticsTest, BeatsByMarginOnMedians) {
  const std::vector<double> heuristic = {10.0, 10.1, 9.9};
  EXPECT_FALSE(bench::beats_by_margin({9.0, 10.0, 10.1}, heuristic, 0.03));
  EXPECT_TRUE(bench::beats_by_margin({9.5, 9.6, 9.4}, heuristic, 0.03));
  EXPECT_FALSE(bench::beats_by_margin({9.8, 9.8, 9.8}, heuristic, 0.03));
  EXPECT_FALSE(bench::beats_by_margin({}, heuristic, 0.03));
}

TEST(ParallelTest, CoversEveryIndexOnce) {
  std::vector<int> hits(1000, 0);
  base::parallel_for(1000, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) ++hits[static_cast<size_t>(i)];
  });
  for (int h : hits) EXPECT_EQ(h, 1);
}


// The stepped walk visits exactly offset_of_linear's offsets, in order, from any start to any end:
// row-major, channels-last (NHWC strides on an NCHW shape), padded strides, extents of 1.
TEST(HostTensorTest, SteppedOffsetsMatchDividedOnes) {
  const std::vector<TensorSpec> specs = {
      TensorSpec{"a", {2, 3, 4, 5}, {60, 20, 5, 1}, DType::kF32, ""},
      TensorSpec{"b", {2, 3, 4, 5}, {60, 1, 15, 3}, DType::kBF16, "NHWC"},
      TensorSpec{"c", {3, 1, 7}, {16, 9, 2}, DType::kF16, ""},
      TensorSpec{"d", {5}, {1}, DType::kF64, ""},
      TensorSpec{"e", {1, 1, 1}, {1, 1, 1}, DType::kF32, ""},
  };
  for (const TensorSpec& spec : specs) {
    const int64_t n = spec.numel();
    for (int64_t begin = 0; begin <= n; ++begin)
      for (int64_t end : {begin, begin + 1, (begin + n) / 2 + 1, n}) {
        if (end > n || end < begin) continue;
        int64_t expected = begin;
        base::for_each_offset_in(spec, begin, end, [&](int64_t linear, int64_t offset) {
          EXPECT_EQ(linear, expected) << spec.name;
          EXPECT_EQ(offset, base::offset_of_linear(spec, linear)) << spec.name << " at " << linear;
          ++expected;
        });
        EXPECT_EQ(expected, end) << spec.name << " [" << begin << ", " << end << ")";
        // Alongside the row-major walk of the same shape.
        const TensorSpec dense{"dense", spec.shape, contiguous_strides(spec.shape), spec.dtype, ""};
        base::for_each_offset_pair_in(dense, spec, begin, end, [&](int64_t linear, int64_t a, int64_t b) {
          EXPECT_EQ(a, linear);
          EXPECT_EQ(b, base::offset_of_linear(spec, linear)) << spec.name << " at " << linear;
        });
      }
  }
}

// The typed element access reads and writes the bytes load() and store() do, in every dtype.
TEST(HostTensorTest, TypedElementsMatchLoadAndStore) {
  for (DType dtype : {DType::kF32, DType::kF64, DType::kI64, DType::kF16, DType::kBF16}) {
    base::HostTensor a(TensorSpec{"a", {7}, {1}, dtype, ""}), b(a.spec());
    const double values[] = {0.0, -1.5, 3.14159, 1e-7, 65519.0, -2.0, 42.0};
    for (int64_t i = 0; i < 7; ++i) {
      a.store(i, values[i]);
      base::visit_dtype(dtype, [&](auto d) { base::store_element<decltype(d)::value>(b.data(), i, values[i]); });
      const double typed = base::visit_dtype(dtype, [&](auto d) { return base::load_element<decltype(d)::value>(a.data(), i); });
      EXPECT_EQ(typed, a.load(i));
    }
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size_bytes()), 0) << dtype_name(dtype);
  }
}

TEST(DeviceInfoTest, ForArchParsesNvrtcTargets) {
  Result<DeviceInfo> hopper = DeviceInfo::for_arch("sm_90a");
  ASSERT_TRUE(hopper.ok()) << hopper.status().to_string();
  EXPECT_EQ(hopper->cc_major, 9);
  EXPECT_EQ(hopper->cc_minor, 0);
  Result<DeviceInfo> ampere = DeviceInfo::for_arch("sm_86");
  ASSERT_TRUE(ampere.ok()) << ampere.status().to_string();
  EXPECT_EQ(ampere->cc_minor, 6);
  for (const char* bad : {"sm_9", "sm_", "sm90a", "sm_x0", "sm_90b", "compute_90", ""})
    EXPECT_EQ(DeviceInfo::for_arch(bad).status().code(), StatusCode::kInvalidArgument) << bad;
  EXPECT_FALSE(DeviceInfo::for_arch("sm_90").ok()) << "Hopper compiles for sm_90a";
  EXPECT_FALSE(DeviceInfo::for_arch("sm_61").ok()) << "below compute capability 7.0";
}

TEST(PtxasReportTest, MaxOverEntryPoints) {
  jit::CompiledKernel k;
  k.log =
      "ptxas info    : Compiling entry function 'a' for 'sm_90a'\n"
      "ptxas info    : Function properties for a\n"
      "    16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 168 registers, used 1 barriers, 400 bytes cmem[0]\n"
      "ptxas info    : Function properties for b\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 40 registers, used 0 barriers, 380 bytes cmem[0]\n";
  jit::parse_ptxas_report(k);
  EXPECT_EQ(k.registers, 168);
  EXPECT_EQ(k.stack_bytes, 16);
  EXPECT_EQ(k.spill_bytes, 12);
  jit::CompiledKernel silent;
  silent.log = "no report";
  jit::parse_ptxas_report(silent);
  EXPECT_EQ(silent.registers, -1);
  EXPECT_EQ(silent.spill_bytes, -1);
}

}  // namespace
}  // namespace boo
