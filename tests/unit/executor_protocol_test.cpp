// boo tests: the executor pipe protocol.
#include <gtest/gtest.h>

#include "bench/executor_protocol.hpp"

namespace boo::bench {
namespace {

TEST(ExecutorProtocolTest, RunLinesRoundTrip) {
  const std::vector<std::string> words{"conv -n 1 'a b'", "7", "conv", "-n", "1", "tab\there", "line\nbreak", ""};
  const std::string line = encode_run(42, words);
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line per command";
  auto decoded = decode_run(line);
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->first, 42);
  EXPECT_EQ(decoded->second, words);
  EXPECT_FALSE(decode_run("conv -n 1").has_value());
}

TEST(ExecutorProtocolTest, DoneRecordsAreDistinctFromOutput) {
  DoneRecord d{3, "failed", {"conv -n 1", "N.A.", "a, \"quoted\" error\nwith a newline"}};
  const std::string line = encode_done(d);
  auto back = decode_done(line);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->index, 3);
  EXPECT_EQ(back->outcome, "failed");
  EXPECT_EQ(back->row, d.row);
  EXPECT_FALSE(back->executor_exits);
  // Ordinary output, even output that mentions DONE, is not a record.
  EXPECT_FALSE(decode_done(">>> DONE 3 ok\n").has_value());
  EXPECT_FALSE(decode_done("DONE 3 ok x\n").has_value());
  EXPECT_FALSE(decode_done("\x1e" "DONE 3 ok maybe - x\n").has_value());
}

TEST(ExecutorProtocolTest, DoneRecordsCarryWhereTheTimeWent) {
  DoneRecord d{4, "ok", {"conv -n 1", "1.5"}, false, {{"compile", 0.25}, {"timing", 1.0 / 3}}};
  auto back = decode_done(encode_done(d));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->seconds.size(), 2u);
  EXPECT_EQ(back->seconds.at("compile"), 0.25);
  EXPECT_NEAR(back->seconds.at("timing"), 1.0 / 3, 1e-9);
  EXPECT_EQ(back->row, d.row);
  EXPECT_FALSE(decode_done("\x1e" "DONE 4 ok stay compile=fast x\n").has_value());
  EXPECT_FALSE(decode_done("\x1e" "DONE 4 ok stay compile x\n").has_value());
}

TEST(ExecutorProtocolTest, DoneRecordSaysWhenTheExecutorLeaves) {
  // After a sticky GPU fault the child reports its command, then exits: the
  // parent must know before it sends the next command, or that command
  // would be blamed for the exit.
  DoneRecord d{5, "failed", {"bootest_fault -n 4096", "illegal address"}, true};
  auto back = decode_done(encode_done(d));
  ASSERT_TRUE(back.has_value());
  EXPECT_TRUE(back->executor_exits);
  EXPECT_EQ(back->row, d.row);
  DoneRecord empty{6, "ok", {}, false};
  back = decode_done(encode_done(empty));
  ASSERT_TRUE(back.has_value());
  EXPECT_FALSE(back->executor_exits);
  EXPECT_TRUE(back->row.empty()) << "a command without a CSV row (op --help) sends none";
}

}  // namespace
}  // namespace boo::bench
