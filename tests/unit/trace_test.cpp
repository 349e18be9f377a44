// boo tests: trace part files and their merge into a Chrome/Perfetto trace.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "base/file_util.hpp"
#include "bench/trace.hpp"

namespace boo::bench {
namespace {

namespace fs = std::filesystem;

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

class TraceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("boo_trace_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(TraceTest, MergesPartsIntoOneTrackPerStreamWithCommandSpans) {
  // Two executors (GPUs 0 and 1); command 1 launches two kernels per launch.
  {
    Result<TracePart> part = TracePart::open(path("t.json.part0"));
    ASSERT_TRUE(part.ok()) << part.status().to_string();
    const std::string cmd = "conv -n 1 -c 8 -H 4 -W 4 -k 8 -y 1 -x 1 --in_layout \"NHWC\"";
    ASSERT_TRUE(part->add(1, cmd, "boo",
                          {{"splitk_gemm", 1'000'000, 1'002'000, 0, 7, 0},
                           {"splitk_reduce", 1'002'100, 1'002'600, 0, 7, 0},
                           {"splitk_gemm", 1'003'000, 1'005'000, 0, 7, 1},
                           {"splitk_reduce", 1'005'100, 1'005'600, 0, 7, 1}})
                    .ok());
    ASSERT_TRUE(part->add(1, cmd, "cudnn", {{"sm90_xmma_fprop", 1'010'000, 1'011'000, 0, 13, 0}}).ok());
  }
  {
    Result<TracePart> part = TracePart::open(path("t.json.part1"));
    ASSERT_TRUE(part.ok());
    ASSERT_TRUE(part->add(2, "conv\twith a tab", "boo", {{"igemm", 1'000'500, 1'001'500, 1, 7, 0}}).ok());
  }
  Result<TraceSummary> summary =
      write_trace({path("t.json.part0"), path("t.json.part1"), path("missing.part")}, path("t.json"));
  ASSERT_TRUE(summary.ok()) << summary.status().to_string();
  EXPECT_EQ(summary->kernels, 6);
  EXPECT_EQ(summary->commands, 3);  // (GPU 0, #1, boo), (GPU 0, #1, cudnn), (GPU 1, #2, boo)

  Result<std::string> text = base::read_file(path("t.json"));
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(count(*text, "\"cat\":\"kernel\""), 6u);
  EXPECT_EQ(count(*text, "\"cat\":\"command\""), 3u);
  EXPECT_EQ(count(*text, "\"name\":\"process_name\""), 2u);  // GPU 0 and GPU 1
  // Tracks: stream 7 and 13 on GPU 0, stream 7 on GPU 1, plus a commands track per GPU.
  EXPECT_EQ(count(*text, "\"name\":\"thread_name\""), 5u);
  // Times are relative to the first kernel, in microseconds with nanosecond digits.
  EXPECT_NE(text->find("\"name\":\"splitk_gemm\",\"cat\":\"kernel\",\"ph\":\"X\",\"ts\":0.000,\"dur\":2.000"),
            std::string::npos);
  // The boo span of command 1 covers both launches: 1'000'000 .. 1'005'600 ns.
  EXPECT_NE(text->find("\"ts\":0.000,\"dur\":5.600,\"pid\":0,\"tid\":0"), std::string::npos);
  // Kernels name their launch and command; strings are JSON-escaped.
  EXPECT_NE(text->find("\"launch\":1,\"invocation\":\"conv -n 1 -c 8 -H 4 -W 4 -k 8 -y 1 -x 1 --in_layout "
                       "\\\"NHWC\\\"\""),
            std::string::npos);
  EXPECT_NE(text->find("conv\\twith a tab"), std::string::npos);
  // It is valid JSON (python3 is part of the test environment).
  const std::string check =
      "python3 -c \"import json,sys; t=json.load(open(sys.argv[1])); assert len(t['traceEvents']) == 6+3+2*3+3\" " +
      path("t.json");
  EXPECT_EQ(std::system(check.c_str()), 0);
}

TEST_F(TraceTest, RejectsACorruptPart) {
  ASSERT_TRUE(base::write_file_atomic(path("bad.part"), "not a record\n").ok());
  Result<TraceSummary> summary = write_trace({path("bad.part")}, path("bad.json"));
  ASSERT_FALSE(summary.ok());
  EXPECT_NE(summary.status().to_string().find("bad.part line 1"), std::string::npos) << summary.status().to_string();
}

TEST_F(TraceTest, EmptyRunWritesAnEmptyTrace) {
  Result<TraceSummary> summary = write_trace({path("none.part")}, path("empty.json"));
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->kernels, 0);
  Result<std::string> text = base::read_file(path("empty.json"));
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("\"traceEvents\":["), std::string::npos);
}

}  // namespace
}  // namespace boo::bench
