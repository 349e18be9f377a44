// boo: the on-disk cache of compiled kernels.
//
// Layout: <dir>/v<schema>/<arch>/<key[0:2]>/<key>.cubin and <key>.json, where
// key = SHA-256 of a complete, versioned KeyRecord. Writes go to a temporary
// file in the same folder and are renamed into place, so any number of
// processes (and machines sharing the folder) may fill it at once and readers
// never see a partial file. A corrupt, truncated or foreign entry is a miss
// (logged), never a crash; storing the entry again repairs it.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/json.hpp"
#include "boo/status.hpp"

namespace boo::cache {

/// Bump when the key record's fields or the layout change.
inline constexpr int kCacheSchema = 1;

/// The readable record a cache key is the hash of.
class KeyRecord {
 public:
  KeyRecord& add(const std::string& field, const std::string& value);
  /// "field=value" lines, in insertion order.
  std::string text() const;
  /// SHA-256 of text(), the cache key.
  std::string digest() const;
  const std::vector<std::pair<std::string, std::string>>& fields() const { return fields_; }

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

struct CacheConfig {
  std::string dir;
  bool enabled = true;
  /// BOO_CACHE_ON (default 1) and BOO_CACHE_DIR (default $XDG_CACHE_HOME/boo,
  /// else ~/.cache/boo). Read by tools and bindings, which then pass the config down.
  static CacheConfig from_environment();
};

struct Artifact {
  std::string cubin;
  base::JsonObject metadata;
};

/// One entry found by list(): its files and, when something is wrong, why.
struct CacheEntry {
  std::string key;
  std::string arch;
  std::string json_path, cubin_path;
  int64_t cubin_bytes = 0;
  base::JsonObject metadata;
  Status problem;  ///< OK for a sound entry
};

class ArtifactCache {
 public:
  explicit ArtifactCache(CacheConfig config) : config_(std::move(config)) {}

  bool enabled() const { return config_.enabled; }
  const std::string& dir() const { return config_.dir; }

  /// The artifact for `key`, or nullopt on a miss. A bad entry is a miss and a warning.
  std::optional<Artifact> load(const KeyRecord& key, const std::string& arch) const;
  /// Stores the cubin and its metadata (adds the key, the record and the
  /// checksum to `metadata`). An error (read-only folder, full disk) is
  /// returned for the caller to report; the cache stays consistent.
  Status store(const KeyRecord& key, const std::string& arch, const std::string& cubin,
               base::JsonObject metadata) const;

  /// Every entry (and every orphaned artifact) under the cache folder, checked.
  Result<std::vector<CacheEntry>> list() const;
  /// Temporary files left by killed writers.
  std::vector<std::string> stale_temporaries() const;
  /// Removes the cache folder's versioned contents.
  Status clear() const;

  std::string cubin_path(const std::string& key, const std::string& arch) const;
  std::string json_path(const std::string& key, const std::string& arch) const;

 private:
  CacheConfig config_;
};

}  // namespace boo::cache
