// boo tests: vendor plans remembered in the cache folder.
#include <algorithm>
#include <gtest/gtest.h>

#include <filesystem>

#include "base/file_util.hpp"
#include "bench/vendor_plans.hpp"

namespace boo::bench {
namespace {

class VendorPlanStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("boo_vendor_plans_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

constexpr const char* kRecord = "cudnn 91300 | NVIDIA H100 sm_90 132 SMs | conv -n 1 -c 8 | forward | ieee 0";

TEST(EngineChoiceTest, TextRoundTrips) {
  const EngineChoice with_knobs{12, {{3, 1}, {18, 0}, {5, -1}}};
  EXPECT_EQ(with_knobs.to_text(), "engine 12 knobs 3=1,18=0,5=-1");
  Result<EngineChoice> back = EngineChoice::parse(with_knobs.to_text());
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(*back, with_knobs);
  const EngineChoice bare{0, {}};
  EXPECT_EQ(bare.to_text(), "engine 0 knobs -");
  back = EngineChoice::parse(bare.to_text());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, bare);
}

TEST(EngineChoiceTest, MalformedTextIsAnError) {
  for (const char* text : {"", "engine", "engine x knobs -", "engine -1 knobs -", "engine 3 knobs 1", "engine 3 knobs a=b",
                           "engine 3 knobs", "motor 3 knobs -"}) {
    Result<EngineChoice> c = EngineChoice::parse(text);
    EXPECT_FALSE(c.ok()) << text;
    if (!c.ok()) EXPECT_EQ(c.status().code(), StatusCode::kDataLoss) << text;
  }
}

TEST_F(VendorPlanStoreTest, StoresAndFindsByRecord) {
  const VendorPlanStore store(dir_.string(), "cudnn");
  EXPECT_EQ(store.find(kRecord).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(store.store(kRecord, "engine 12 knobs 3=1").ok());
  Result<std::string> plan = store.find(kRecord);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  EXPECT_EQ(*plan, "engine 12 knobs 3=1");
  // Another record (another device, version or signature) is another entry.
  EXPECT_EQ(store.find(std::string(kRecord) + " ").status().code(), StatusCode::kNotFound);
  // Stored again: replaced.
  ASSERT_TRUE(store.store(kRecord, "engine 7 knobs -").ok());
  EXPECT_EQ(*store.find(kRecord), "engine 7 knobs -");
  const std::string path = store.path_of(kRecord);
  EXPECT_EQ(path.rfind((dir_ / "vendor-plans" / "cudnn").string(), 0), 0u) << path;
}

// A serialized cuDNN plan (JSON, perhaps with newlines and backslashes) comes back byte for byte,
// while its file keeps one plan line.
TEST_F(VendorPlanStoreTest, AnyTextRoundTripsOnOnePlanLine) {
  const VendorPlanStore store(dir_.string(), "cudnn-serialized");
  const std::string json = "{\n  \"engine\": \"a\\\\b\\n\",\r\n  \"knobs\": [1, 2]\n}\\";
  ASSERT_TRUE(store.store(kRecord, json).ok());
  Result<std::string> back = store.find(kRecord);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(*back, json);
  Result<std::string> whole = base::read_file(store.path_of(kRecord));
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(std::count(whole->begin(), whole->end(), '\n'), 3) << *whole;
  // A backslash that escapes nothing is a damaged entry, not a plan.
  ASSERT_TRUE(base::write_file_atomic(store.path_of(kRecord),
                                      "boo vendor plan 1\nrecord: " + std::string(kRecord) + "\nplan: a\\qb\n")
                  .ok());
  EXPECT_EQ(store.find(kRecord).status().code(), StatusCode::kDataLoss);
  EXPECT_FALSE(store.store("two\nlines", "engine 1 knobs -").ok());
}

TEST_F(VendorPlanStoreTest, UnusableEntriesAreMissesThatStoringRepairs) {
  const VendorPlanStore store(dir_.string(), "cudnn");
  ASSERT_TRUE(store.store(kRecord, "engine 12 knobs 3=1").ok());
  const std::string path = store.path_of(kRecord);
  Result<std::string> whole = base::read_file(path);
  ASSERT_TRUE(whole.ok());
  // Truncated (the last newline lost, or a line), foreign, or holding another record.
  const std::vector<std::string> unusable{whole->substr(0, whole->size() - 1), whole->substr(0, whole->find("plan: ")),
                                          "cubin\n", "boo vendor plan 1\nrecord: something else\nplan: engine 1 knobs -\n"};
  for (const std::string& bad : unusable) {
    ASSERT_TRUE(base::write_file_atomic(path, bad).ok());
    EXPECT_EQ(store.find(kRecord).status().code(), StatusCode::kDataLoss) << bad;
  }
  ASSERT_TRUE(store.store(kRecord, "engine 12 knobs 3=1").ok());
  EXPECT_EQ(*store.find(kRecord), "engine 12 knobs 3=1");
}

TEST_F(VendorPlanStoreTest, NothingIsRememberedWithoutAFolder) {
  const VendorPlanStore store("", "cudnn");
  EXPECT_TRUE(store.store(kRecord, "engine 1 knobs -").ok());
  EXPECT_EQ(store.find(kRecord).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store.path_of(kRecord), "");
}

TEST_F(VendorPlanStoreTest, AnUnwritableFolderIsAnError) {
  std::filesystem::create_directories(dir_);
  const std::filesystem::path blocker = dir_ / "file";
  ASSERT_TRUE(base::write_file_atomic(blocker.string(), "not a folder").ok());
  const VendorPlanStore store(blocker.string(), "cudnn");  // a file where the folder should be
  EXPECT_FALSE(store.store(kRecord, "engine 1 knobs -").ok());
  EXPECT_FALSE(store.store(kRecord, "two\nlines").ok());
}

}  // namespace
}  // namespace boo::bench
