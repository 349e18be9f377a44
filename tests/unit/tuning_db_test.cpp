// boo tests: the tuning database (rows, versions, damaged rows, concurrent
// writers, JSON), dispatch reading it, and every tier's candidate configs
// read back from their text; the shipped tunings after the database.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "base/file_util.hpp"
#include "base/json.hpp"
#include "boo/runtime.hpp"
#include "boo/version.hpp"
#include "cache/shipped_tunings.hpp"
#include "cache/tuning_db.hpp"
#include "jit/embedded_sources.hpp"
#include "runtime/dispatch.hpp"
#include "test_util.hpp"

namespace boo::cache {
namespace {

// A fresh folder for one test's database.
std::string fresh_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/boo_tuning_" + name + "_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TuningRow row_of(const std::string& problem, const std::string& config, const std::string& version = "v1") {
  TuningRow r;
  r.key = {"gpu:conv:implicit_gemm", problem, "sm_90a", "NVIDIA H100 80GB HBM3", version};
  r.config = config;
  r.time_us = 12.5;
  r.heuristic_us = 15.25;
  r.tuned_at = 1764000000;
  return r;
}

void expect_same(const TuningRow& a, const TuningRow& b) {
  EXPECT_EQ(a.key.implementation, b.key.implementation);
  EXPECT_EQ(a.key.problem, b.key.problem);
  EXPECT_EQ(a.key.arch, b.key.arch);
  EXPECT_EQ(a.key.device, b.key.device);
  EXPECT_EQ(a.key.version, b.key.version);
  EXPECT_EQ(a.config, b.config);
  EXPECT_EQ(a.time_us, b.time_us);
  EXPECT_EQ(a.heuristic_us, b.heuristic_us);
  EXPECT_EQ(a.tuned_at, b.tuned_at);
}

// Runs `sql` on the file directly, as a hand edit or a damaged write would.
void raw_sql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

TEST(TuningDbTest, RowsRoundTripAndReplaceTheirKey) {
  const std::string path = fresh_dir("round_trip") + "/tuning.sqlite";
  EXPECT_EQ(TuningDb::open(path, false).status().code(), StatusCode::kNotFound);
  Result<std::unique_ptr<TuningDb>> db = TuningDb::open(path, true);
  ASSERT_TRUE(db.ok()) << db.status().to_string();
  const TuningRow a = row_of("conv -n 1 -c 64 -F 1", "tile 64x64x32"), b = row_of("conv -n 2 -c 64 -F 1", "tile 128x64x32");
  ASSERT_TRUE((*db)->put(a).ok());
  ASSERT_TRUE((*db)->put(b).ok());
  TuningRow a2 = a;
  a2.config = "tile 128x128x64";
  a2.time_us = 11;
  ASSERT_TRUE((*db)->put(a2).ok());  // the same key: replaced
  Result<std::unique_ptr<TuningDb>> reader = TuningDb::open(path, false);
  ASSERT_TRUE(reader.ok()) << reader.status().to_string();
  Result<TuningLookup> found = (*reader)->find(a.key);
  ASSERT_TRUE(found.ok());
  ASSERT_TRUE(found->row.has_value());
  expect_same(*found->row, a2);
  EXPECT_TRUE(found->ignored.empty());
  Result<std::vector<TuningRow>> all = (*reader)->rows();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  TuningKey other = a.key;
  other.device = "NVIDIA H200";
  EXPECT_FALSE((*reader)->find(other)->row.has_value());
  // A row without a config or with a non-positive time is refused.
  TuningRow bad = a;
  bad.time_us = 0;
  EXPECT_EQ((*db)->put(bad).code(), StatusCode::kInvalidArgument);
}

TEST(TuningDbTest, AnotherVersionsRowAndADamagedRowAreIgnoredWithTheReason) {
  const std::string path = fresh_dir("foreign") + "/tuning.sqlite";
  {
    Result<std::unique_ptr<TuningDb>> db = TuningDb::open(path, true);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->put(row_of("conv -F 1", "tile 64x64x32", "0.0.1+00000000deadbeef")).ok());
  }
  raw_sql(path, "INSERT INTO tunings VALUES('gpu:conv:implicit_gemm', 'conv -F 1', 'sm_90a', "
                "'NVIDIA H100 80GB HBM3', 'v1', 'tile 64x64x32', 'fast', 1.0, 0)");
  Result<std::unique_ptr<TuningDb>> db = TuningDb::open(path, false);
  ASSERT_TRUE(db.ok());
  Result<TuningLookup> found = (*db)->find(row_of("conv -F 1", "", "v1").key);
  ASSERT_TRUE(found.ok()) << found.status().to_string();
  EXPECT_FALSE(found->row.has_value());
  ASSERT_EQ(found->ignored.size(), 2u);
  std::string reasons = found->ignored[0] + " | " + found->ignored[1];
  EXPECT_NE(reasons.find("version 0.0.1+00000000deadbeef"), std::string::npos) << reasons;
  EXPECT_NE(reasons.find("time_us is not a number"), std::string::npos) << reasons;
}

TEST(TuningDbTest, FilesThatAreNotBooTuningDatabasesAreRefused) {
  const std::string dir = fresh_dir("foreign_files");
  std::ofstream(dir + "/text.sqlite") << "not a database, just text that is long enough to have a header......";
  EXPECT_EQ(TuningDb::open(dir + "/text.sqlite", false).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(TuningDb::open(dir + "/text.sqlite", true).status().code(), StatusCode::kDataLoss);
  raw_sql(dir + "/other.sqlite", "CREATE TABLE t(x)");
  EXPECT_EQ(TuningDb::open(dir + "/other.sqlite", true).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(TuningDb::open(dir + "/other.sqlite", false).status().code(), StatusCode::kDataLoss);
  std::filesystem::create_directory(dir + "/folder.sqlite");
  EXPECT_EQ(TuningDb::open(dir + "/folder.sqlite", true).status().code(), StatusCode::kInvalidArgument);
  std::filesystem::create_symlink(dir + "/other.sqlite", dir + "/link.sqlite");
  EXPECT_EQ(TuningDb::open(dir + "/link.sqlite", true).status().code(), StatusCode::kInvalidArgument);
}

TEST(TuningDbTest, ConcurrentWritersInThreadsAndProcessesLoseNoRow) {
  const std::string path = fresh_dir("concurrent") + "/tuning.sqlite";
  ASSERT_TRUE(TuningDb::open(path, true).ok());
  constexpr int kRows = 150;
  auto write = [&](const std::string& who) {
    Result<std::unique_ptr<TuningDb>> db = TuningDb::open(path, true);
    if (!db.ok()) return false;
    for (int i = 0; i < kRows; ++i)
      if (!(*db)->put(row_of("conv -n " + std::to_string(i) + " " + who, "tile " + who)).ok()) return false;
    return true;
  };
  std::vector<pid_t> children;
  for (const char* who : {"process_a", "process_b"}) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) ::_exit(write(who) ? 0 : 1);
    children.push_back(pid);
  }
  bool thread_ok = false;
  std::thread thread([&] { thread_ok = write("thread"); });
  const bool main_ok = write("main");
  thread.join();
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer process failed";
  }
  EXPECT_TRUE(thread_ok && main_ok);
  Result<std::unique_ptr<TuningDb>> db = TuningDb::open(path, false);
  ASSERT_TRUE(db.ok());
  Result<std::vector<TuningRow>> all = (*db)->rows();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 4u * kRows);
}

// Tuners started together on a database none of them has made yet (four on an H100: one found
// "another schema"): every process and thread opens it, the schema made once.
TEST(TuningDbTest, TunersStartedTogetherAllCreateOrOpenTheNewDatabase) {
  for (int round = 0; round < 8; ++round) {
    const std::string path = fresh_dir("create" + std::to_string(round)) + "/tuning.sqlite";
    auto open_and_put = [&](const std::string& who) {
      Result<std::unique_ptr<TuningDb>> db = TuningDb::open(path, true);
      if (!db.ok()) std::fprintf(stderr, "%s: %s\n", who.c_str(), db.status().to_string().c_str());
      if (!db.ok()) return false;
      const Status put = (*db)->put(row_of("conv -n 1 " + who, "tile " + who));
      if (!put.ok()) std::fprintf(stderr, "%s: %s\n", who.c_str(), put.to_string().c_str());
      return put.ok();
    };
    std::vector<pid_t> children;
    for (int i = 0; i < 4; ++i) {
      const pid_t pid = ::fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) ::_exit(open_and_put("process" + std::to_string(i)) ? 0 : 1);
      children.push_back(pid);
    }
    bool thread_ok = false;
    std::thread thread([&] { thread_ok = open_and_put("thread"); });
    const bool main_ok = open_and_put("main");
    thread.join();
    for (pid_t pid : children) {
      int status = 0;
      ASSERT_EQ(::waitpid(pid, &status, 0), pid);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "round " << round << ": a process failed";
    }
    EXPECT_TRUE(thread_ok && main_ok) << "round " << round;
    Result<std::unique_ptr<TuningDb>> db = TuningDb::open(path, false);
    ASSERT_TRUE(db.ok());
    Result<std::vector<TuningRow>> all = (*db)->rows();
    ASSERT_TRUE(all.ok());
    EXPECT_EQ(all->size(), 6u) << "round " << round;
  }
}

// A tuner killed (SIGKILL) in the middle of its writes leaves a database that
// opens, passes SQLite's integrity check and holds whole rows only.
TEST(TuningDbTest, AKilledWriterLeavesWholeRows) {
  const std::string path = fresh_dir("killed") + "/tuning.sqlite";
  ASSERT_TRUE(TuningDb::open(path, true).ok());
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    Result<std::unique_ptr<TuningDb>> db = TuningDb::open(path, true);
    for (int i = 0; db.ok(); ++i) (*db)->put(row_of("conv -n " + std::to_string(i), "tile " + std::to_string(i)));
    ::_exit(1);
  }
  // Kill it once it has written some rows.
  for (int tries = 0; tries < 500; ++tries) {
    Result<std::unique_ptr<TuningDb>> db = TuningDb::open(path, false);
    if (db.ok() && (*db)->rows().ok() && (*db)->rows()->size() >= 20) break;
    ::usleep(10000);
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  Result<std::unique_ptr<TuningDb>> db = TuningDb::open(path, true);
  ASSERT_TRUE(db.ok()) << db.status().to_string();
  Result<std::vector<TuningRow>> all = (*db)->rows();
  ASSERT_TRUE(all.ok()) << all.status().to_string();
  EXPECT_GE(all->size(), 20u);
  for (const TuningRow& r : *all) EXPECT_EQ("tile " + r.key.problem.substr(std::string("conv -n ").size()), r.config);
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* check = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw, "PRAGMA integrity_check", -1, &check, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(check), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(check, 0)), "ok");
  sqlite3_finalize(check);
  sqlite3_close(raw);
}

TEST(TuningDbTest, JsonExportImportsBackToTheSameRows) {
  const std::string dir = fresh_dir("json");
  Result<std::unique_ptr<TuningDb>> from = TuningDb::open(dir + "/a.sqlite", true);
  ASSERT_TRUE(from.ok());
  TuningRow odd = row_of("conv -n 1 --in_layout NHWC \"quoted\"\\", "copies x: [n][h][w][c]; y: face 0\ttab\nline");
  odd.key.version = "0.1.0+0123456789abcdef";
  ASSERT_TRUE((*from)->put(odd).ok());
  ASSERT_TRUE((*from)->put(row_of("layernorm -X 8x1024 -F 1", "boo_row_norm_forward=boo::row_norm_forward<>(p);")).ok());
  Result<std::string> json = (*from)->export_json();
  ASSERT_TRUE(json.ok());
  Result<std::unique_ptr<TuningDb>> to = TuningDb::open(dir + "/b.sqlite", true);
  ASSERT_TRUE(to.ok());
  Result<int64_t> imported = (*to)->import_json(*json);
  ASSERT_TRUE(imported.ok()) << imported.status().to_string();
  EXPECT_EQ(*imported, 2);
  Result<std::vector<TuningRow>> a = (*from)->rows(), b = (*to)->rows();
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->size(), b->size());
  for (size_t i = 0; i < a->size(); ++i) expect_same((*a)[i], (*b)[i]);
  EXPECT_EQ(*(*to)->export_json(), *json);
  // A malformed file imports nothing: one bad row fails the whole import.
  std::string broken = *json;
  broken.replace(broken.find("\"time_us\": 12.5"), 15, "\"time_us\": \"x\"");
  Result<std::unique_ptr<TuningDb>> empty = TuningDb::open(dir + "/c.sqlite", true);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ((*empty)->import_json(broken).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ((*empty)->import_json("{\"not\": \"an array\"}").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ((*empty)->import_json("[{}] trailing").status().code(), StatusCode::kDataLoss);
  EXPECT_TRUE((*empty)->rows()->empty());
}

TEST(TuningDbTest, DefaultPathFollowsTheEnvironment) {
  ::unsetenv("BOO_TUNING_DB");
  ::unsetenv("BOO_TUNING_SPEC_PATH");
  EXPECT_EQ(TuningDb::default_path("/c"), "/c/tuning.sqlite");
  ::setenv("BOO_TUNING_SPEC_PATH", "/spec.sqlite", 1);
  EXPECT_EQ(TuningDb::default_path("/c"), "/spec.sqlite");
  ::setenv("BOO_TUNING_DB", "/db.sqlite", 1);
  EXPECT_EQ(TuningDb::default_path("/c"), "/db.sqlite");
  ::unsetenv("BOO_TUNING_DB");
  ::unsetenv("BOO_TUNING_SPEC_PATH");
}

}  // namespace
}  // namespace boo::cache

namespace boo::runtime {
namespace {

using cache::TuningDb;
using cache::TuningRow;

constexpr const char* kConv = "convbfp16 -n 8 -c 64 -H 56 -W 56 -k 128 -y 3 -x 3 -p 1 -q 1 -F 1";

struct DispatchFixture {
  std::unique_ptr<OpSignature> sig;
  DeviceInfo device;
};

DispatchFixture fixture(const std::string& command, const std::string& arch = "sm_90a") {
  DispatchFixture f;
  f.sig = testing::must_parse(command).signature;
  f.device = *DeviceInfo::for_arch(arch);
  return f;
}

// The database key of the fixture's problem on `implementation`, as dispatch and boo tune make it.
cache::TuningKey key_of(const DispatchFixture& f, const std::string& implementation) {
  Result<Dispatch> d = choose_gpu_implementation(*f.sig, f.device, implementation);
  EXPECT_TRUE(d.ok() && d->chosen) << implementation;
  Result<cache::TuningKey> key = tuning_key(*d, f.device);
  EXPECT_TRUE(key.ok()) << key.status().to_string();
  return *key;
}

TEST(TuningVersionTest, EachTierHasTheVersionOfTheDeviceSourcesItsCandidatesInclude) {
  DispatchFixture f = fixture(kConv);
  const cache::TuningKey igemm = key_of(f, "gpu:conv:implicit_gemm");
  const cache::TuningKey wgmma = key_of(f, "gpu:conv:wgmma_sm90");
  const std::string prefix = std::string(library_version()) + "+";
  EXPECT_EQ(igemm.version.rfind(prefix, 0), 0u) << igemm.version;
  EXPECT_EQ(igemm.version.size(), prefix.size() + 16) << igemm.version;
  // The tiers' kernels include different headers: an edit to one's retires its rows only.
  EXPECT_NE(igemm.version, wgmma.version);
  // Another problem whose candidates include the same headers has the same version: it is the sources'.
  EXPECT_EQ(key_of(fixture("convbfp16 -n 4 -c 32 -H 28 -W 28 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1"), "gpu:conv:implicit_gemm").version,
            igemm.version);
  EXPECT_EQ(key_of(f, "gpu:conv:implicit_gemm").version, igemm.version);
}

TEST(TuningDispatchTest, DispatchTakesTheDatabasesCandidateAndSaysSo) {
  DispatchFixture f = fixture(kConv);
  Result<Dispatch> heuristic = choose_gpu_implementation(*f.sig, f.device, "gpu:conv:implicit_gemm");
  ASSERT_TRUE(heuristic.ok() && heuristic->chosen);
  EXPECT_EQ(heuristic->config_origin, "heuristic");
  Result<ops::ConfigList> list = heuristic->chosen->candidates(*heuristic->problem, heuristic->arch);
  ASSERT_TRUE(list.ok());
  ASSERT_GE(list->size(), 3u);
  const std::string tuned = (*list)[2]->text();
  ASSERT_NE(tuned, heuristic->config->text());

  const std::string path = ::testing::TempDir() + "/boo_tuning_dispatch_" + std::to_string(::getpid()) + ".sqlite";
  std::remove(path.c_str());
  {
    Result<std::unique_ptr<TuningDb>> db = TuningDb::open(path, true);
    ASSERT_TRUE(db.ok());
    TuningRow row;
    row.key = key_of(f, "gpu:conv:implicit_gemm");
    row.config = tuned;
    row.time_us = 10;
    row.heuristic_us = 20;
    ASSERT_TRUE((*db)->put(row).ok());
  }
  std::unique_ptr<TuningDb> db = open_tuning_db(path);
  ASSERT_TRUE(db);
  Result<Dispatch> d = choose_gpu_implementation(*f.sig, f.device, "gpu:conv:implicit_gemm", db.get());
  ASSERT_TRUE(d.ok() && d->chosen);
  EXPECT_EQ(d->config->text(), tuned);
  EXPECT_EQ(d->config_origin.rfind("tuning database " + path, 0), 0u) << d->config_origin;
  Result<ops::Plan> plan = plan_chosen(*d);
  EXPECT_TRUE(plan.ok()) << plan.status().to_string();
  // Another device's rows are not this one's.
  DispatchFixture ampere = fixture(kConv, "sm_80");
  Result<Dispatch> other = choose_gpu_implementation(*ampere.sig, ampere.device, "gpu:conv:implicit_gemm", db.get());
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->config_origin, "heuristic (no tuning database row)");
  std::remove(path.c_str());
}

TEST(TuningDispatchTest, AnUnparsableOrForeignRowIsIgnoredWithALogLine) {
  DispatchFixture f = fixture(kConv);
  const std::string path = ::testing::TempDir() + "/boo_tuning_corrupt_" + std::to_string(::getpid()) + ".sqlite";
  std::remove(path.c_str());
  Result<std::unique_ptr<TuningDb>> writer = TuningDb::open(path, true);
  ASSERT_TRUE(writer.ok());
  TuningRow row;
  row.key = key_of(f, "gpu:conv:wgmma_sm90");
  row.config = "tile 128x512x64 stages 9";  // no candidate of the tier has this text
  row.time_us = 1;
  row.heuristic_us = 2;
  ASSERT_TRUE((*writer)->put(row).ok());
  std::unique_ptr<TuningDb> db = open_tuning_db(path);
  ASSERT_TRUE(db);
  Result<Dispatch> plain = choose_gpu_implementation(*f.sig, f.device);
  ASSERT_TRUE(plain.ok() && plain->chosen);
  ASSERT_EQ(plain->chosen->name(), "gpu:conv:wgmma_sm90");

  ::testing::internal::CaptureStderr();
  Result<Dispatch> d = choose_gpu_implementation(*f.sig, f.device, "", db.get());
  std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(d.ok() && d->chosen);
  EXPECT_EQ(d->config->text(), plain->config->text());
  EXPECT_NE(d->config_origin.find("heuristic (ignored a database row"), std::string::npos) << d->config_origin;
  EXPECT_NE(log.find("ignored the row of gpu:conv:wgmma_sm90"), std::string::npos) << log;

  // The same config text under another version: ignored, and said so.
  ASSERT_TRUE((*writer)->put([&] {
    TuningRow r = row;
    r.key.version = "0.0.0+ffffffffffffffff";
    r.config = plain->config->text();
    return r;
  }()).ok());
  {
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(raw, ("DELETE FROM tunings WHERE version='" + row.key.version + "'").c_str(), nullptr,
                           nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(raw);
  }
  ::testing::internal::CaptureStderr();
  d = choose_gpu_implementation(*f.sig, f.device, "", db.get());
  log = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(d.ok() && d->chosen);
  EXPECT_EQ(d->config->text(), plain->config->text());
  EXPECT_NE(d->config_origin.find("ignored a row of version 0.0.0+ffffffffffffffff"), std::string::npos)
      << d->config_origin;
  EXPECT_NE(log.find("ignored a row of version 0.0.0+ffffffffffffffff"), std::string::npos) << log;
  std::remove(path.c_str());
}

// Every implementation that accepts a line lists candidates (configure's
// first, distinct, at most kMaxCandidates), each read back from its text and
// planned; the conv and norm tiers with alternatives offer more than one.
TEST(TuningCandidatesTest, EveryTiersCandidatesReadBackFromTheirTextAndPlan) {
  std::map<std::string, size_t> most;  // implementation -> the most candidates a line had
  for (const char* path : {"tests/gpu/focus.txt", "tests/gpu/norm_matrix.txt"}) {
    std::ifstream in(path);
    ASSERT_TRUE(in.good()) << path << " (the test runs from the repository root)";
    int line_number = 0, taken = 0;
    for (std::string line; std::getline(in, line);) {
      // Every 7th line of the long norm matrix, every line of the focus list.
      if (line.empty() || line[0] == '#' || (++line_number % (std::string(path).find("norm") != std::string::npos ? 7 : 1)) != 0) continue;
      Result<ParsedCommand> parsed = parse_command(line);
      if (!parsed.ok()) continue;  // ops boo does not implement
      ++taken;
      for (const char* arch : {"sm_90a", "sm_80"}) {
        const DeviceInfo device = *DeviceInfo::for_arch(arch);
        const ops::OpDefinition* op = ops::find_op(parsed->signature->op_name());
        ASSERT_TRUE(op);
        Result<std::unique_ptr<ops::OpProblem>> problem = op->make_problem(*parsed->signature);
        ASSERT_TRUE(problem.ok());
        const ops::ArchSpec spec = ops::ArchSpec::of(device);
        for (const ops::GpuImplementation* impl : op->gpu_implementations()) {
          if (!impl->accepts(**problem, spec).ok()) continue;
          Result<std::unique_ptr<const ops::Config>> chosen = impl->configure(**problem, spec);
          if (!chosen.ok()) continue;
          SCOPED_TRACE(line + " on " + std::string(impl->name()) + " " + arch);
          Result<ops::ConfigList> list = impl->candidates(**problem, spec);
          ASSERT_TRUE(list.ok()) << list.status().to_string();
          ASSERT_FALSE(list->empty());
          EXPECT_LE(list->size(), ops::kMaxCandidates);
          EXPECT_EQ((*list)[0]->text(), (*chosen)->text());
          std::set<std::string> texts;
          for (const std::unique_ptr<const ops::Config>& c : *list) {
            EXPECT_TRUE(texts.insert(c->text()).second) << "repeated: " << c->text();
            Result<std::unique_ptr<const ops::Config>> back = impl->config_from_text(**problem, spec, c->text());
            ASSERT_TRUE(back.ok()) << back.status().to_string();
            EXPECT_EQ((*back)->text(), c->text());
            Result<ops::Plan> plan = impl->plan(**problem, **back, spec);
            ASSERT_TRUE(plan.ok()) << c->text() << ": " << plan.status().to_string();
            EXPECT_TRUE(plan->validate(parsed->signature->arguments().size(), parsed->signature->results().size()).ok());
          }
          EXPECT_EQ(impl->config_from_text(**problem, spec, (*chosen)->text() + " ").status().code(),
                    StatusCode::kInvalidArgument);
          size_t& m = most[std::string(impl->name())];
          m = std::max(m, list->size());
        }
      }
    }
    EXPECT_GT(taken, 20) << path;
  }
  for (const char* tier : {"gpu:conv:implicit_gemm", "gpu:conv:wgmma_sm90", "gpu:conv:depthwise", "gpu:layernorm:rows",
                           "gpu:batchnorm:columns", "gpu:groupnorm:groups"})
    EXPECT_GT(most[tier], 1u) << tier << " offered no alternative on any line";
  EXPECT_EQ(most["gpu:conv:direct"], 1u);
}

}  // namespace
}  // namespace boo::runtime

namespace boo::runtime {
namespace {

using cache::ShippedTunings;
using cache::TuningDb;
using cache::TuningRow;

// A fresh folder for one test's shipped tunings and user database.
std::string shipped_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/boo_shipped_" + name + "_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/tuning");
  return dir;
}

// A database at `path` holding `config` for the implicit GEMM tier's row of the fixture's problem (under
// `version`, else the tier's own).
void put_config(const std::string& path, const DispatchFixture& f, const std::string& config,
                const std::string& version = "") {
  Result<std::unique_ptr<TuningDb>> db = TuningDb::open(path, true);
  ASSERT_TRUE(db.ok()) << db.status().to_string();
  TuningRow row;
  row.key = key_of(f, "gpu:conv:implicit_gemm");
  if (!version.empty()) row.key.version = version;
  row.config = config;
  row.time_us = 10;
  row.heuristic_us = 20;
  ASSERT_TRUE((*db)->put(row).ok());
}

// The shipped file of the fixture's device, made as a release makes it: `boo tune --export` of a tuned database.
std::string export_shipped(const std::string& dir, const DispatchFixture& f, const std::string& config,
                           const std::string& version = "") {
  const std::string tuned = dir + "/tuned.sqlite";
  std::remove(tuned.c_str());
  put_config(tuned, f, config, version);
  Result<std::unique_ptr<TuningDb>> db = TuningDb::open(tuned, false);
  EXPECT_TRUE(db.ok());
  Result<std::string> json = (*db)->export_json();
  EXPECT_TRUE(json.ok());
  const std::string file = dir + "/tuning/" + ShippedTunings::file_name(f.device.name);
  std::ofstream(file) << *json;
  return file;
}

// The implicit GEMM tier's heuristic config and two other candidates of the fixture's problem.
std::vector<std::string> three_configs(const DispatchFixture& f) {
  Result<Dispatch> d = choose_gpu_implementation(*f.sig, f.device, "gpu:conv:implicit_gemm");
  EXPECT_TRUE(d.ok() && d->chosen);
  Result<ops::ConfigList> list = d->chosen->candidates(*d->problem, d->arch);
  EXPECT_TRUE(list.ok() && list->size() >= 3);
  EXPECT_NE((*list)[1]->text(), d->config->text());
  EXPECT_NE((*list)[2]->text(), d->config->text());
  return {d->config->text(), (*list)[1]->text(), (*list)[2]->text()};
}

TEST(ShippedTuningTest, FileNamesFollowTheDeviceName) {
  EXPECT_EQ(ShippedTunings::file_name("NVIDIA H100 80GB HBM3"), "NVIDIA_H100_80GB_HBM3.json");
  EXPECT_EQ(ShippedTunings::file_name("NVIDIA H200"), "NVIDIA_H200.json");
  EXPECT_EQ(ShippedTunings::file_name("a/../b"), "a_.._b.json");
}

TEST(ShippedTuningTest, UsedWhereTheUserDatabaseHasNoRowAndLosesToItsRow) {
  DispatchFixture f = fixture(kConv);
  const std::vector<std::string> configs = three_configs(f);
  const std::string dir = shipped_dir("used");
  const std::string file = export_shipped(dir, f, configs[2]);
  ShippedTunings shipped(dir + "/tuning");
  EXPECT_EQ(shipped.path_of(f.device.name), file);
  EXPECT_EQ(shipped.describe(f.device.name), file + ": 1 rows");

  // No user database, then one without the row: the shipped row's config.
  const std::string user_path = dir + "/user.sqlite";
  put_config(user_path, fixture(kConv, "sm_80"), configs[1]);  // another device's row only
  std::unique_ptr<TuningDb> user = open_tuning_db(user_path);
  ASSERT_TRUE(user);
  for (const TuningDb* db : std::vector<const TuningDb*>{nullptr, user.get()}) {
    Result<Dispatch> d = choose_gpu_implementation(*f.sig, f.device, "gpu:conv:implicit_gemm", db, &shipped);
    ASSERT_TRUE(d.ok() && d->chosen);
    EXPECT_EQ(d->config->text(), configs[2]);
    EXPECT_EQ(d->config_origin, "shipped tuning " + file + " (10 us against the heuristic's 20 us)");
    EXPECT_TRUE(plan_chosen(*d).ok());
  }
  // The user's row wins.
  put_config(user_path, f, configs[1]);
  Result<Dispatch> d = choose_gpu_implementation(*f.sig, f.device, "gpu:conv:implicit_gemm", user.get(), &shipped);
  ASSERT_TRUE(d.ok() && d->chosen);
  EXPECT_EQ(d->config->text(), configs[1]);
  EXPECT_EQ(d->config_origin.rfind("tuning database " + user_path, 0), 0u) << d->config_origin;
  // A user row the tier does not offer is ignored (logged), and the shipped row is taken.
  put_config(user_path, f, "tile 1x1x1");
  ::testing::internal::CaptureStderr();
  d = choose_gpu_implementation(*f.sig, f.device, "gpu:conv:implicit_gemm", user.get(), &shipped);
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(d.ok() && d->chosen);
  EXPECT_EQ(d->config->text(), configs[2]);
  EXPECT_EQ(d->config_origin.rfind("shipped tuning " + file, 0), 0u) << d->config_origin;
  EXPECT_NE(log.find("ignored the row of gpu:conv:implicit_gemm"), std::string::npos) << log;
  // Another device's lookups read another file, which is not there.
  DispatchFixture ampere = fixture(kConv, "sm_80");
  d = choose_gpu_implementation(*ampere.sig, ampere.device, "gpu:conv:implicit_gemm", nullptr, &shipped);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->config_origin, "heuristic (no shipped tuning row)");
  EXPECT_EQ(shipped.describe(ampere.device.name).rfind("no file for this device", 0), 0u);
  std::filesystem::remove_all(dir);
}

TEST(ShippedTuningTest, TheEnvironmentPointsAtAFolderOrTurnsThemOff) {
  const std::string dir = shipped_dir("env");
  ::setenv("BOO_SHIPPED_TUNING", (dir + "/tuning").c_str(), 1);
  EXPECT_EQ(ShippedTunings::default_folder(), dir + "/tuning");
  EXPECT_EQ(RuntimeOptions::from_environment().shipped_tuning, dir + "/tuning");
  // One instance per folder and process: a file is parsed once.
  EXPECT_EQ(ShippedTunings::shared(dir + "/tuning"), ShippedTunings::shared(dir + "/tuning"));
  ::setenv("BOO_SHIPPED_TUNING", "0", 1);
  EXPECT_EQ(ShippedTunings::default_folder(), "");
  EXPECT_EQ(RuntimeOptions::from_environment().shipped_tuning, "");
  EXPECT_EQ(ShippedTunings::shared(""), nullptr);
  // Unset: the package's folder beside the code (this test's executable: <build>/share/boo/tuning), a folder.
  ::unsetenv("BOO_SHIPPED_TUNING");
  const std::string found = ShippedTunings::default_folder();
  EXPECT_TRUE(found.empty() || std::filesystem::is_directory(found)) << found;
  std::filesystem::remove_all(dir);
}

TEST(ShippedTuningTest, ACorruptFileIsReportedOnceAndIgnored) {
  DispatchFixture f = fixture(kConv);
  const std::vector<std::string> configs = three_configs(f);
  const std::string dir = shipped_dir("corrupt");
  const std::string file = export_shipped(dir, f, configs[2]);
  std::ofstream(file) << "[{\"implementation\": \"gpu:conv:implicit_gemm\", ";  // cut short
  ShippedTunings shipped(dir + "/tuning");
  ::testing::internal::CaptureStderr();
  Result<Dispatch> d = choose_gpu_implementation(*f.sig, f.device, "gpu:conv:implicit_gemm", nullptr, &shipped);
  std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(d.ok() && d->chosen);
  EXPECT_EQ(d->config->text(), configs[0]);
  EXPECT_NE(d->config_origin.find("heuristic (the shipped tuning could not be read"), std::string::npos)
      << d->config_origin;
  EXPECT_NE(log.find("the shipped tuning " + file + " is not used"), std::string::npos) << log;
  // Parsed once: the next lookup says nothing new about the file itself.
  ::testing::internal::CaptureStderr();
  d = choose_gpu_implementation(*f.sig, f.device, "gpu:conv:implicit_gemm", nullptr, &shipped);
  log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(log.find("is not used"), std::string::npos) << log;
  std::filesystem::remove_all(dir);
}

TEST(ShippedTuningTest, ForeignMalformedAndStaleRowsAreIgnoredTheRestUsed) {
  DispatchFixture f = fixture(kConv);
  const std::vector<std::string> configs = three_configs(f);
  const std::string dir = shipped_dir("rows");
  const std::string file = export_shipped(dir, f, configs[2]);
  Result<std::string> text = base::read_file(file);
  ASSERT_TRUE(text.ok());
  Result<std::vector<base::JsonObject>> rows = base::JsonObject::parse_array(*text);
  ASSERT_TRUE(rows.ok() && rows->size() == 1);
  base::JsonObject foreign = (*rows)[0], malformed = (*rows)[0];
  foreign.set("device", "NVIDIA A100-SXM4-80GB");
  foreign.set("config", configs[1]);
  malformed.set("time_us", "soon");
  std::ofstream(file) << base::JsonObject::dump_array({foreign, malformed, (*rows)[0]});
  ShippedTunings shipped(dir + "/tuning");
  ::testing::internal::CaptureStderr();
  Result<Dispatch> d = choose_gpu_implementation(*f.sig, f.device, "gpu:conv:implicit_gemm", nullptr, &shipped);
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(d.ok() && d->chosen);
  EXPECT_EQ(d->config->text(), configs[2]);
  EXPECT_NE(log.find("ignored row 0: it is a row of"), std::string::npos) << log;
  EXPECT_NE(log.find("ignored row 1:"), std::string::npos) << log;
  EXPECT_EQ(shipped.describe(f.device.name), file + ": 1 rows (2 ignored)");

  // A file measured on other device sources: its row is not used, and explain says why.
  export_shipped(dir, f, configs[2], "0.0.0+ffffffffffffffff");
  ShippedTunings stale(dir + "/tuning");
  d = choose_gpu_implementation(*f.sig, f.device, "gpu:conv:implicit_gemm", nullptr, &stale);
  ASSERT_TRUE(d.ok() && d->chosen);
  EXPECT_EQ(d->config->text(), configs[0]);
  EXPECT_NE(d->config_origin.find("heuristic (ignored a row of version 0.0.0+ffffffffffffffff"), std::string::npos)
      << d->config_origin;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace boo::runtime

// The measurements of every timed candidate (schema 2): migration from schema 1, JSON round trip.
namespace boo::cache {
namespace {

MeasurementRow measurement_of(const std::string& problem, const std::string& config, bool heuristic) {
  MeasurementRow m;
  m.key = {"gpu:conv:implicit_gemm", problem, "sm_90a", "NVIDIA H100 80GB HBM3", "v1"};
  m.config = config;
  m.predicted_us = 21.5;
  m.measured_us = heuristic ? 30.25 : 18.75;
  m.heuristic = heuristic;
  m.terms = {{"compute_mma_sync", 1.95e-05}, {"splitk_memory", 1.25e-07}, {"launch", 2e-06}};
  m.measured_at = 1764000001;
  return m;
}

void expect_same(const MeasurementRow& a, const MeasurementRow& b) {
  EXPECT_EQ(a.key.implementation, b.key.implementation);
  EXPECT_EQ(a.key.problem, b.key.problem);
  EXPECT_EQ(a.key.version, b.key.version);
  EXPECT_EQ(a.config, b.config);
  EXPECT_EQ(a.predicted_us, b.predicted_us);
  EXPECT_EQ(a.measured_us, b.measured_us);
  EXPECT_EQ(a.heuristic, b.heuristic);
  EXPECT_EQ(a.terms, b.terms);
  EXPECT_EQ(a.measured_at, b.measured_at);
}

int user_version(const std::string& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, nullptr);
  const int v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0) : -1;
  sqlite3_finalize(s);
  sqlite3_close(db);
  return v;
}

TEST(TuningDbTest, ASchemaOneDatabaseIsReadAsItIsAndMigratedWhenWritten) {
  const std::string dir = fresh_dir("schema1");
  const std::string path = dir + "/old.sqlite";
  // The schema-1 file of the first boo tune, as it made it.
  raw_sql(path,
          "CREATE TABLE tunings(implementation TEXT NOT NULL, problem TEXT NOT NULL, arch TEXT NOT NULL,"
          " device TEXT NOT NULL, version TEXT NOT NULL, config TEXT NOT NULL, time_us REAL NOT NULL,"
          " heuristic_us REAL NOT NULL, tuned_at INTEGER NOT NULL,"
          " PRIMARY KEY(implementation, problem, arch, device, version));"
          "INSERT INTO tunings VALUES('gpu:conv:implicit_gemm', 'conv -n 1', 'sm_90a', 'NVIDIA H100 80GB HBM3', 'v1',"
          " 'tiles 1', 12.5, 15.25, 1764000000);"
          "PRAGMA user_version=1;");
  {
    Result<std::unique_ptr<TuningDb>> reader = TuningDb::open(path, false);
    ASSERT_TRUE(reader.ok()) << reader.status().to_string();
    Result<TuningLookup> found = (*reader)->find(row_of("conv -n 1", "").key);
    ASSERT_TRUE(found.ok() && found->row);
    EXPECT_EQ(found->row->config, "tiles 1");
    Result<std::vector<MeasurementRow>> none = (*reader)->measurements();
    ASSERT_TRUE(none.ok());
    EXPECT_TRUE(none->empty());
    EXPECT_EQ((*reader)->put_measurements({measurement_of("conv -n 1", "tiles 1", true)}).code(),
              StatusCode::kFailedPrecondition);
  }
  EXPECT_EQ(user_version(path), 1);  // reading changed nothing
  {
    Result<std::unique_ptr<TuningDb>> writer = TuningDb::open(path, true);
    ASSERT_TRUE(writer.ok()) << writer.status().to_string();
    ASSERT_TRUE((*writer)->put_measurements({measurement_of("conv -n 1", "tiles 1", true),
                                             measurement_of("conv -n 1", "tiles 2", false)})
                    .ok());
  }
  EXPECT_EQ(user_version(path), 2);
  Result<std::unique_ptr<TuningDb>> again = TuningDb::open(path, false);
  ASSERT_TRUE(again.ok());
  Result<std::vector<TuningRow>> rows = (*again)->rows();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].config, "tiles 1");
  Result<std::vector<MeasurementRow>> timed = (*again)->measurements();
  ASSERT_TRUE(timed.ok());
  ASSERT_EQ(timed->size(), 2u);
  expect_same((*timed)[0], measurement_of("conv -n 1", "tiles 1", true));
  expect_same((*timed)[1], measurement_of("conv -n 1", "tiles 2", false));
  // A schema boo does not know (a newer one) is refused, not guessed at.
  raw_sql(dir + "/newer.sqlite", "CREATE TABLE tunings(x); PRAGMA user_version=3;");
  EXPECT_EQ(TuningDb::open(dir + "/newer.sqlite", true).status().code(), StatusCode::kDataLoss);
  std::filesystem::remove_all(dir);
}

TEST(TuningDbTest, MeasurementsRoundTripThroughTheExportAndDamagedOnesAreRefused) {
  const std::string dir = fresh_dir("measurements");
  Result<std::unique_ptr<TuningDb>> from = TuningDb::open(dir + "/a.sqlite", true);
  ASSERT_TRUE(from.ok());
  ASSERT_TRUE((*from)->put(row_of("conv -n 2", "tiles 2")).ok());
  MeasurementRow odd = measurement_of("conv -n 2 \"quoted\"", "tiles 2\ttab", false);
  odd.terms.clear();  // a tier without a cost model of its configs
  odd.predicted_us = 0;
  const std::vector<MeasurementRow> timed = {measurement_of("conv -n 2", "tiles 1", true),
                                             measurement_of("conv -n 2", "tiles 2", false), odd};
  ASSERT_TRUE((*from)->put_measurements(timed).ok());
  Result<std::string> json = (*from)->export_json();
  ASSERT_TRUE(json.ok());
  EXPECT_NE(json->find("\"kind\": \"measurement\""), std::string::npos);
  EXPECT_NE(json->find("\"term.compute_mma_sync\": "), std::string::npos);
  Result<std::unique_ptr<TuningDb>> to = TuningDb::open(dir + "/b.sqlite", true);
  ASSERT_TRUE(to.ok());
  Result<int64_t> imported = (*to)->import_json(*json);
  ASSERT_TRUE(imported.ok()) << imported.status().to_string();
  EXPECT_EQ(*imported, 4);
  Result<std::vector<MeasurementRow>> a = (*from)->measurements(), b = (*to)->measurements();
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->size(), 3u);
  ASSERT_EQ(b->size(), 3u);
  for (size_t i = 0; i < a->size(); ++i) expect_same((*a)[i], (*b)[i]);
  EXPECT_EQ(*(*to)->export_json(), *json);
  // A measurement with a bad field fails the whole import; so does a negative term.
  for (const auto& [good, bad] : {std::pair<std::string, std::string>{"\"measured_us\": 18.75", "\"measured_us\": -1"},
                                  {"\"heuristic\": false", "\"heuristic\": 0"},
                                  {"\"term.launch\": 2e-06", "\"term.launch\": -2e-06"}}) {
    std::string broken = *json;
    const size_t at = broken.find(good);
    ASSERT_NE(at, std::string::npos) << good << " in " << *json;
    broken.replace(at, good.size(), bad);
    Result<std::unique_ptr<TuningDb>> empty = TuningDb::open(dir + "/c.sqlite", true);
    ASSERT_TRUE(empty.ok());
    EXPECT_EQ((*empty)->import_json(broken).status().code(), StatusCode::kDataLoss) << bad;
    EXPECT_TRUE((*empty)->rows()->empty());
    EXPECT_TRUE((*empty)->measurements()->empty());
  }
  // A damaged row in the file (terms that are not JSON) is DATA_LOSS, not a measurement read wrong.
  raw_sql(dir + "/b.sqlite", "UPDATE measurements SET terms='{oops' WHERE config='tiles 1'");
  EXPECT_EQ((*to)->measurements().status().code(), StatusCode::kDataLoss);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace boo::cache

// The refitted cost model beside the shipped tunings: read, used for ranking, named by dispatch; a
// corrupt or foreign file ignored with a log line.
namespace boo::runtime {
namespace {

// A weight gradient whose few output tiles the implicit GEMM's heuristic fills with split K.
constexpr const char* kSplitConv = "convbfp16 -n 8 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -F 4";

bool has_term(const ops::CostTerms& t, const std::string& name) {
  for (const auto& [term, s] : t.seconds)
    if (term == name) return s > 0;
  return false;
}

TEST(CostModelTest, EveryGemmTiersCandidateHasTermsThatRankItAsTheTierDoes) {
  for (const char* impl : {"gpu:conv:implicit_gemm", "gpu:conv:wgmma_sm90"}) {
    DispatchFixture f = fixture(impl == std::string("gpu:conv:wgmma_sm90") ? kConv : kSplitConv);
    Result<Dispatch> d = choose_gpu_implementation(*f.sig, f.device, impl);
    ASSERT_TRUE(d.ok() && d->chosen) << impl;
    EXPECT_EQ(d->arch.cost_model->origin(), "hand-set (ArchSpec rates)");
    Result<ops::ConfigList> list = d->chosen->candidates(*d->problem, d->arch);
    ASSERT_TRUE(list.ok() && list->size() > 2) << impl;
    double heuristic = 0, least = 1e300;
    for (size_t i = 0; i < list->size(); ++i) {
      Result<ops::CostTerms> terms = d->chosen->cost_terms(*d->problem, *(*list)[i], d->arch);
      ASSERT_TRUE(terms.ok()) << terms.status().to_string();
      const double s = terms->predicted_s(*d->arch.cost_model, impl);
      EXPECT_GT(s, 0) << impl << " " << (*list)[i]->text();
      if (i == 0)
        heuristic = s;
      else
        least = std::min(least, s);
    }
    // The heuristic's config is the cheapest by the same model (within the tiers' 0.1% tie margin).
    EXPECT_LE(heuristic, least * 1.002) << impl;
  }
}

// Writes a cost file for the fixture's device into a fresh shipped folder: its path.
std::string write_cost_file(const std::string& name, const DispatchFixture& f, const std::string& body) {
  const std::string dir = shipped_dir("cost_" + name);
  cache::ShippedTunings shipped(dir + "/tuning");
  std::ofstream(shipped.cost_path_of(f.device.name)) << body;
  return dir;
}

TEST(CostModelTest, ARefittedFileRanksTheConfigsAndExplainSaysSo) {
  DispatchFixture f = fixture(kSplitConv);
  Result<Dispatch> hand = choose_gpu_implementation(*f.sig, f.device, "gpu:conv:implicit_gemm");
  ASSERT_TRUE(hand.ok() && hand->chosen);
  Result<ops::CostTerms> hand_terms = hand->chosen->cost_terms(*hand->problem, *hand->config, hand->arch);
  ASSERT_TRUE(hand_terms.ok());
  ASSERT_TRUE(has_term(*hand_terms, "splitk_memory")) << hand->config->text() << ": the fixture needs a split-K pick";
  // A model in which split K's partials cost a million times the hand-set estimate: the pick is unsplit.
  const std::string dir = write_cost_file("refit", f,
                                          "{\"format\": \"boo-cost-model-1\", \"device\": \"" + f.device.name +
                                              "\", \"scale.gpu:conv:implicit_gemm.splitk_memory\": 1e6,"
                                              " \"scale.gpu:conv:implicit_gemm.compute_mma_sync\": 1.25,"
                                              " \"holdout.refitted.rank_accuracy\": 0.5}");
  cache::ShippedTunings shipped(dir + "/tuning");
  std::shared_ptr<const ops::CostModel> model = cost_model_of(&shipped, f.device);
  EXPECT_EQ(model->origin(), "refitted " + shipped.cost_path_of(f.device.name) + " (2 scales)");
  EXPECT_EQ(model->scale("gpu:conv:implicit_gemm", "compute_mma_sync"), 1.25);
  EXPECT_EQ(model->scale("gpu:conv:implicit_gemm", "launch"), 1.0);
  EXPECT_EQ(model->scale("gpu:conv:wgmma_sm90", "compute"), 1.0);
  Result<Dispatch> refit = choose_gpu_implementation(*f.sig, f.device, "gpu:conv:implicit_gemm", nullptr, &shipped);
  ASSERT_TRUE(refit.ok() && refit->chosen);
  EXPECT_EQ(refit->arch.cost_model->origin(), model->origin());
  EXPECT_NE(refit->config->text(), hand->config->text());
  Result<ops::CostTerms> terms = refit->chosen->cost_terms(*refit->problem, *refit->config, refit->arch);
  ASSERT_TRUE(terms.ok());
  EXPECT_FALSE(has_term(*terms, "splitk_memory")) << refit->config->text();
  // The terms are the hand-set model's whatever model ranked them; the prediction is the scaled sum.
  double scaled = 0;
  for (const auto& [term, s] : terms->seconds) scaled += model->scale("gpu:conv:implicit_gemm", term) * s;
  EXPECT_DOUBLE_EQ(terms->predicted_s(*model, "gpu:conv:implicit_gemm"), scaled);
  // Without the shipped folder (BOO_SHIPPED_TUNING=0 leaves none), the hand-set model.
  EXPECT_EQ(cost_model_of(nullptr, f.device)->origin(), "hand-set (ArchSpec rates)");
  std::filesystem::remove_all(dir);
}

TEST(CostModelTest, ACorruptOrForeignCostFileIsIgnoredWithALogLine) {
  DispatchFixture f = fixture(kConv);
  const std::pair<std::string, std::string> cases[] = {
      {"corrupt", "{\"format\": \"boo-cost-model-1\", \"dev"},
      {"foreign", "{\"format\": \"boo-cost-model-1\", \"device\": \"NVIDIA A100-SXM4-80GB\", "
                  "\"scale.gpu:conv:implicit_gemm.compute_mma_sync\": 2}"},
      {"format", "{\"format\": \"boo-cost-model-9\", \"device\": \"" + f.device.name +
                     "\", \"scale.gpu:conv:implicit_gemm.compute_mma_sync\": 2}"},
      {"negative", "{\"format\": \"boo-cost-model-1\", \"device\": \"" + f.device.name +
                       "\", \"scale.gpu:conv:implicit_gemm.compute_mma_sync\": -2}"},
      {"text", "{\"format\": \"boo-cost-model-1\", \"device\": \"" + f.device.name +
                   "\", \"scale.gpu:conv:implicit_gemm.compute_mma_sync\": \"2\"}"}};
  for (const auto& [name, body] : cases) {
    const std::string dir = write_cost_file(name, f, body);
    cache::ShippedTunings shipped(dir + "/tuning");
    ::testing::internal::CaptureStderr();
    Result<Dispatch> d = choose_gpu_implementation(*f.sig, f.device, "", nullptr, &shipped);
    const std::string log = ::testing::internal::GetCapturedStderr();
    ASSERT_TRUE(d.ok() && d->chosen) << name;
    EXPECT_EQ(d->arch.cost_model->origin(), "hand-set (ArchSpec rates)") << name;
    EXPECT_NE(log.find("the refitted cost model " + shipped.cost_path_of(f.device.name) + " is not used"),
              std::string::npos)
        << name << ": " << log;
    // Read once: the next dispatch says nothing more about it.
    ::testing::internal::CaptureStderr();
    d = choose_gpu_implementation(*f.sig, f.device, "", nullptr, &shipped);
    EXPECT_EQ(::testing::internal::GetCapturedStderr().find("is not used"), std::string::npos) << name;
    std::filesystem::remove_all(dir);
  }
}

TEST(CostModelTest, AShippedFileWithMeasurementsGivesItsRowsAndNoWarning) {
  DispatchFixture f = fixture(kConv);
  const std::vector<std::string> configs = three_configs(f);
  const std::string dir = shipped_dir("with_measurements");
  const std::string tuned = dir + "/tuned.sqlite";
  put_config(tuned, f, configs[1]);
  {
    Result<std::unique_ptr<TuningDb>> db = TuningDb::open(tuned, true);
    ASSERT_TRUE(db.ok());
    cache::MeasurementRow m;
    m.key = key_of(f, "gpu:conv:implicit_gemm");
    m.config = configs[1];
    m.measured_us = 10;
    m.terms = {{"compute_mma_sync", 1e-5}};
    ASSERT_TRUE((*db)->put_measurements({m}).ok());
  }
  Result<std::unique_ptr<TuningDb>> db = TuningDb::open(tuned, false);
  ASSERT_TRUE(db.ok());
  std::ofstream(dir + "/tuning/" + ShippedTunings::file_name(f.device.name)) << *(*db)->export_json();
  ShippedTunings shipped(dir + "/tuning");
  ::testing::internal::CaptureStderr();
  Result<Dispatch> d = choose_gpu_implementation(*f.sig, f.device, "gpu:conv:implicit_gemm", nullptr, &shipped);
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(d.ok() && d->chosen);
  EXPECT_EQ(d->config->text(), configs[1]);
  EXPECT_EQ(log.find("ignored row"), std::string::npos) << log;
  EXPECT_EQ(shipped.describe(f.device.name).find("ignored"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace boo::runtime

namespace boo::runtime {
namespace {

// A refit measures each fp32 path's compute term at the rate the tilings are ranked at (the mma.sync
// rate, FFMA's too), so its FFMA scale holds FFMA's own, slower rate: choosing between FFMA and 3xTF32
// must not count it again. A file whose scales reproduce the hand-set rates keeps the hand-set choice.
TEST(CostModelTest, AFittedFfmaScaleIsNotCountedTwiceWhenChoosingTheFp32Path) {
  DispatchFixture f = fixture("conv -n 64 -c 960 -H 7 -W 7 -k 160 -y 1 -x 1 -F 4");
  Result<Dispatch> hand = choose_gpu_implementation(*f.sig, f.device, "gpu:conv:implicit_gemm");
  ASSERT_TRUE(hand.ok() && hand->chosen);
  ASSERT_NE(hand->config->text().find("math ffma"), std::string::npos) << hand->config->text();
  const double ffma_scale = hand->arch.mma_sync_macs_per_s / (hand->arch.ffma_macs_per_s * 18.0 / 25.0);
  const std::string dir = write_cost_file("ffma", f,
                                          "{\"format\": \"boo-cost-model-1\", \"device\": \"" + f.device.name +
                                              "\", \"scale.gpu:conv:implicit_gemm.compute_ffma\": " +
                                              std::to_string(ffma_scale) +
                                              ", \"scale.gpu:conv:implicit_gemm.compute_3xtf32\": 1}");
  cache::ShippedTunings shipped(dir + "/tuning");
  Result<Dispatch> refit = choose_gpu_implementation(*f.sig, f.device, "gpu:conv:implicit_gemm", nullptr, &shipped);
  ASSERT_TRUE(refit.ok() && refit->chosen);
  EXPECT_NE(refit->arch.cost_model->origin().find("refitted"), std::string::npos);
  EXPECT_NE(refit->config->text().find("math ffma"), std::string::npos) << refit->config->text();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace boo::runtime
