// Fuzzes the cache's record reader: the input is one entry's metadata (.json)
// and artifact (.cubin), split at the first NUL byte, written under the key
// of a fixed record in a private cache folder. load() must return the
// artifact only when the metadata vouches for exactly these bytes, and list()
// must report the entry, sound or not.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/log.hpp"
#include "cache/artifact_cache.hpp"

namespace {

struct Fixture {
  boo::cache::KeyRecord record;
  std::string key;
  std::unique_ptr<boo::cache::ArtifactCache> cache;

  Fixture() {
    record.add("schema", "1").add("fuzz", "record");  // fuzz/make_seeds.py writes seeds for this key
    key = record.digest();
    char dir[] = "/tmp/boo-fuzz-cache-XXXXXX";
    if (!::mkdtemp(dir)) std::abort();
    cache = std::make_unique<boo::cache::ArtifactCache>(boo::cache::CacheConfig{dir, true});
    std::filesystem::create_directories(std::filesystem::path(cache->json_path(key, "sm_90a")).parent_path());
    boo::base::set_log_level(boo::base::LogLevel::kError);  // a bad entry is a logged warning: thousands per second
  }
  ~Fixture() { std::filesystem::remove_all(cache->dir()); }
};

void write(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture f;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t split = input.find('\0');
  const std::string_view json = input.substr(0, split);
  const std::string_view cubin = split == std::string_view::npos ? std::string_view() : input.substr(split + 1);
  write(f.cache->json_path(f.key, "sm_90a"), json);
  write(f.cache->cubin_path(f.key, "sm_90a"), cubin);
  const std::optional<boo::cache::Artifact> artifact = f.cache->load(f.record, "sm_90a");
  if (artifact && artifact->cubin != cubin) {
    std::fprintf(stderr, "cache_record_fuzzer: load() returned bytes the entry does not hold\n");
    std::abort();
  }
  boo::Result<std::vector<boo::cache::CacheEntry>> entries = f.cache->list();
  if (!entries.ok() || entries->size() != 1 || entries->front().problem.ok() != artifact.has_value()) {
    std::fprintf(stderr, "cache_record_fuzzer: list() and load() disagree about the entry\n");
    std::abort();
  }
  return 0;
}
