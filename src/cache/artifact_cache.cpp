// boo: the on-disk artifact cache.
#include "cache/artifact_cache.hpp"

#include <cstdlib>
#include <filesystem>

#include "base/file_util.hpp"
#include "base/log.hpp"
#include "base/sha256.hpp"

namespace boo::cache {
namespace fs = std::filesystem;

KeyRecord& KeyRecord::add(const std::string& field, const std::string& value) {
  fields_.emplace_back(field, value);
  return *this;
}

std::string KeyRecord::text() const {
  std::string out;
  for (const auto& [k, v] : fields_) out += k + "=" + v + "\n";
  return out;
}

std::string KeyRecord::digest() const { return base::sha256_hex(text()); }

CacheConfig CacheConfig::from_environment() {
  CacheConfig c;
  if (const char* on = std::getenv("BOO_CACHE_ON"); on && *on) c.enabled = std::string(on) != "0";
  if (const char* dir = std::getenv("BOO_CACHE_DIR"); dir && *dir) {
    c.dir = dir;
  } else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    c.dir = std::string(xdg) + "/boo";
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    c.dir = std::string(home) + "/.cache/boo";
  } else {
    c.dir = "/tmp/boo-cache";
  }
  return c;
}

namespace {

std::string version_dir(const std::string& dir) { return dir + "/v" + std::to_string(kCacheSchema); }

// Checks an entry's metadata against its artifact; OK when they belong together.
Status check_entry(const std::string& key, const base::JsonObject& meta, const std::string& cubin) {
  const std::string* stored_key = meta.get("key");
  if (!stored_key || *stored_key != key) return data_loss("metadata belongs to another key");
  const std::string* record = meta.get("key_record");
  if (!record || base::sha256_hex(*record) != key) return data_loss("key record does not hash to the key");
  const std::string* sha = meta.get("cubin_sha256");
  if (!sha) return data_loss("metadata lacks cubin_sha256");
  Result<double> bytes = meta.number("cubin_bytes");
  if (!bytes.ok() || static_cast<size_t>(*bytes) != cubin.size())
    return data_loss("artifact has " + std::to_string(cubin.size()) + " bytes, metadata says " +
                     (bytes.ok() ? std::to_string(static_cast<int64_t>(*bytes)) : std::string("nothing")));
  if (base::sha256_hex(cubin) != *sha) return data_loss("artifact checksum does not match its metadata");
  return ok_status();
}

}  // namespace

std::string ArtifactCache::cubin_path(const std::string& key, const std::string& arch) const {
  return version_dir(config_.dir) + "/" + arch + "/" + key.substr(0, 2) + "/" + key + ".cubin";
}

std::string ArtifactCache::json_path(const std::string& key, const std::string& arch) const {
  return version_dir(config_.dir) + "/" + arch + "/" + key.substr(0, 2) + "/" + key + ".json";
}

std::optional<Artifact> ArtifactCache::load(const KeyRecord& key_record, const std::string& arch) const {
  if (!config_.enabled) return std::nullopt;
  const std::string key = key_record.digest();
  const std::string jpath = json_path(key, arch);
  std::error_code ec;
  if (!fs::exists(jpath, ec)) return std::nullopt;  // a plain miss
  Result<std::string> json = base::read_file(jpath);
  Result<std::string> cubin = base::read_file(cubin_path(key, arch));
  Status problem;
  Artifact artifact;
  if (!json.ok()) {
    problem = json.status();
  } else if (!cubin.ok()) {
    problem = cubin.status();
  } else if (Result<base::JsonObject> meta = base::JsonObject::parse(*json); !meta.ok()) {
    problem = meta.status();
  } else {
    problem = check_entry(key, *meta, *cubin);
    artifact.metadata = std::move(*meta);
    artifact.cubin = std::move(*cubin);
  }
  if (!problem.ok()) {
    base::log_warning("cache entry " + jpath + " is unusable (" + problem.message() + "); recompiling");
    return std::nullopt;
  }
  return artifact;
}

Status ArtifactCache::store(const KeyRecord& key_record, const std::string& arch, const std::string& cubin,
                            base::JsonObject metadata) const {
  if (!config_.enabled) return ok_status();
  const std::string key = key_record.digest();
  metadata.set("key", key);
  metadata.set("key_record", key_record.text());
  metadata.set("cubin_sha256", base::sha256_hex(cubin));
  metadata.set_number("cubin_bytes", static_cast<double>(cubin.size()));
  const std::string cpath = cubin_path(key, arch);
  BOO_RETURN_IF_ERROR(base::make_directories(fs::path(cpath).parent_path().string()));
  // The artifact first, then the metadata that vouches for it: a reader that
  // finds the metadata finds a complete artifact.
  BOO_RETURN_IF_ERROR(base::write_file_atomic(cpath, cubin));
  return base::write_file_atomic(json_path(key, arch), metadata.dump());
}

Result<std::vector<CacheEntry>> ArtifactCache::list() const {
  std::vector<CacheEntry> entries;
  const std::string root = version_dir(config_.dir);
  std::error_code ec;
  if (!fs::exists(root, ec)) return entries;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    const fs::path path = it->path();
    if (path.filename().string().find(".tmp.") != std::string::npos) continue;
    const std::string ext = path.extension().string();
    const std::string key = path.stem().string();
    const std::string arch = path.parent_path().parent_path().filename().string();
    if (ext == ".cubin") {
      if (!fs::exists(json_path(key, arch))) {
        CacheEntry orphan{key, arch, "", path.string(), static_cast<int64_t>(fs::file_size(path, ec)), {},
                          data_loss("artifact without metadata (a writer stopped between the two renames)")};
        entries.push_back(std::move(orphan));
      }
      continue;
    }
    if (ext != ".json") continue;
    CacheEntry e;
    e.key = key;
    e.arch = arch;
    e.json_path = path.string();
    e.cubin_path = cubin_path(key, arch);
    Result<std::string> json = base::read_file(e.json_path);
    Result<std::string> cubin = base::read_file(e.cubin_path);
    if (!json.ok()) {
      e.problem = json.status();
    } else if (!cubin.ok()) {
      e.problem = data_loss("metadata without artifact");
    } else if (Result<base::JsonObject> meta = base::JsonObject::parse(*json); !meta.ok()) {
      e.problem = data_loss("unreadable metadata: " + meta.status().message());
    } else {
      e.metadata = std::move(*meta);
      e.cubin_bytes = static_cast<int64_t>(cubin->size());
      e.problem = check_entry(key, e.metadata, *cubin);
    }
    entries.push_back(std::move(e));
  }
  if (ec) return failed_precondition("cannot read cache folder " + root + ": " + ec.message());
  return entries;
}

std::vector<std::string> ArtifactCache::stale_temporaries() const {
  std::vector<std::string> out;
  std::error_code ec;
  const std::string root = version_dir(config_.dir);
  if (!fs::exists(root, ec)) return out;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file() && it->path().filename().string().find(".tmp.") != std::string::npos)
      out.push_back(it->path().string());
  }
  return out;
}

Status ArtifactCache::clear() const {
  std::error_code ec;
  fs::remove_all(version_dir(config_.dir), ec);
  if (ec) return failed_precondition("cannot clear " + version_dir(config_.dir) + ": " + ec.message());
  return ok_status();
}

}  // namespace boo::cache
