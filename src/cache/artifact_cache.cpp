// boo: the on-disk artifact cache.
#include "cache/artifact_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>

#include "base/file_util.hpp"
#include "base/log.hpp"
#include "base/sha256.hpp"
#include "base/strings.hpp"

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

// Bounds on what the cache reads: the largest module boo's tiers emit is a few
// MiB, its metadata a few KiB. A larger file is corrupt (or /dev/zero behind a link).
constexpr int64_t kMaxCubinBytes = int64_t{256} << 20;
constexpr int64_t kMaxJsonBytes = int64_t{1} << 20;

std::string version_name() { return "v" + std::to_string(kCacheSchema); }
std::string version_dir(const std::string& dir) { return dir + "/" + version_name(); }

// A file descriptor, closed on scope exit.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// "a symbolic link", "a FIFO", ...: what a file is, for messages.
std::string kind_of(mode_t mode) {
  if (S_ISLNK(mode)) return "a symbolic link";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a folder";
  return "a regular file";
}

std::string errno_text() { return std::strerror(errno); }

// The folder root/components..., opened one component at a time without
// following a symbolic link below the root (created where missing when
// `create`). NOT_FOUND when a component is missing; DATA_LOSS when one is not
// a real folder, so nothing is ever read or written outside the cache folder.
Result<Fd> open_folder(const std::string& root, const std::vector<std::string>& components, bool create) {
  struct stat st {};
  if (::stat(root.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
    return failed_precondition("the cache folder " + root + " is " + kind_of(st.st_mode) + ", not a folder");
  if (create) BOO_RETURN_IF_ERROR(base::make_directories(root));
  Fd dir(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) {
    if (errno == ENOENT) return not_found("no cache folder " + root);
    return failed_precondition("cannot open the cache folder " + root + ": " + errno_text());
  }
  std::string path = root;
  for (const std::string& name : components) {
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
      return internal_error("cache path component '" + name + "' is not a plain name");
    path += "/" + name;
    if (create && ::mkdirat(dir.get(), name.c_str(), 0755) != 0 && errno != EEXIST)
      return failed_precondition("cannot create " + path + ": " + errno_text());
    Fd next(::openat(dir.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (next.get() < 0) {
      if (errno == ENOENT) return not_found("no " + path);
      struct stat what {};
      if (::fstatat(dir.get(), name.c_str(), &what, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(what.st_mode))
        return data_loss(path + " is " + kind_of(what.st_mode) + ", not a folder; the cache holds only its own "
                         "folders and regular files");
      return failed_precondition("cannot open " + path + ": " + errno_text());
    }
    dir = std::move(next);
  }
  return dir;
}

// A regular file of at most `max_bytes` in folder `dir`: never through a
// symbolic link, never blocking on a FIFO.
Result<std::string> read_regular(int dir, const std::string& name, const std::string& path, int64_t max_bytes) {
  Fd fd(::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  if (fd.get() < 0) {
    if (errno == ENOENT) return not_found("no " + path);
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
      return data_loss(path + " is " + kind_of(st.st_mode) + ", not a regular file");
    return data_loss("cannot open " + path + ": " + errno_text());
  }
  if (::fstat(fd.get(), &st) != 0) return data_loss("cannot stat " + path + ": " + errno_text());
  if (!S_ISREG(st.st_mode)) return data_loss(path + " is " + kind_of(st.st_mode) + ", not a regular file");
  if (st.st_size > max_bytes)
    return data_loss(path + " has " + std::to_string(st.st_size) + " bytes, more than the " +
                     std::to_string(max_bytes) + " a cache file may have");
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return data_loss("error reading " + path + ": " + errno_text());
    if (n == 0) break;  // shrank while read: the checksum check below fails it
    got += static_cast<size_t>(n);
  }
  text.resize(got);
  return text;
}

// Writes `bytes` as `name` in folder `dir`: a temporary file created
// exclusively (never through a link), synced, then renamed over `name`, which
// is replaced only when it is absent or a regular file.
Status write_regular(int dir, const std::string& name, const std::string& path, std::string_view bytes) {
  struct stat st {};
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode))
    return data_loss(path + " is " + kind_of(st.st_mode) + "; the cache replaces only regular files (remove it)");
  std::random_device rd;
  const std::string tmp = name + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd());
  Fd fd(::openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (fd.get() < 0) return failed_precondition("cannot create a temporary file beside " + path + ": " + errno_text());
  for (size_t written = 0; written < bytes.size();) {
    const ssize_t n = ::write(fd.get(), bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string err = errno_text();
      ::unlinkat(dir, tmp.c_str(), 0);
      return resource_exhausted("cannot write " + path + ": " + err);
    }
    written += static_cast<size_t>(n);
  }
  ::fsync(fd.get());
  if (::renameat(dir, tmp.c_str(), dir, name.c_str()) != 0) {
    const std::string err = errno_text();
    ::unlinkat(dir, tmp.c_str(), 0);
    return failed_precondition("cannot rename a temporary file to " + path + ": " + err);
  }
  return ok_status();
}

// Checks an entry's metadata against its artifact; OK when they belong together.
Status check_entry(const std::string& key, const base::JsonObject& meta, const std::string& cubin) {
  const std::string* stored_key = meta.get("key");
  if (!stored_key || *stored_key != key) return data_loss("metadata belongs to another key");
  const std::string* record = meta.get("key_record");
  if (!record || base::sha256_hex(*record) != key) return data_loss("key record does not hash to the key");
  const std::string* sha = meta.get("cubin_sha256");
  if (!sha) return data_loss("metadata lacks cubin_sha256");
  Result<double> bytes = meta.number("cubin_bytes");
  if (!bytes.ok() || !(*bytes >= 0) || *bytes != static_cast<double>(cubin.size()))
    return data_loss("artifact has " + std::to_string(cubin.size()) + " bytes, metadata says " +
                     (bytes.ok() ? base::format_double(*bytes) : std::string("nothing")));
  if (base::sha256_hex(cubin) != *sha) return data_loss("artifact checksum does not match its metadata");
  return ok_status();
}

// The metadata and artifact of one key, read and checked.
Status read_entry(int dir, const std::string& folder, const std::string& key, Artifact& out) {
  Result<std::string> json = read_regular(dir, key + ".json", folder + "/" + key + ".json", kMaxJsonBytes);
  if (!json.ok()) return json.status();
  Result<std::string> cubin = read_regular(dir, key + ".cubin", folder + "/" + key + ".cubin", kMaxCubinBytes);
  if (!cubin.ok()) {
    if (cubin.status().code() == StatusCode::kNotFound) return data_loss("metadata without artifact");
    return cubin.status();
  }
  Result<base::JsonObject> meta = base::JsonObject::parse(*json);
  if (!meta.ok()) return data_loss("unreadable metadata: " + meta.status().message());
  BOO_RETURN_IF_ERROR(check_entry(key, *meta, *cubin));
  out.metadata = std::move(*meta);
  out.cubin = std::move(*cubin);
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
  const std::string folder = version_dir(config_.dir) + "/" + arch + "/" + key.substr(0, 2);
  Artifact artifact;
  Result<Fd> dir = open_folder(config_.dir, {version_name(), arch, key.substr(0, 2)}, false);
  Status problem = dir.ok() ? read_entry(dir->get(), folder, key, artifact) : dir.status();
  if (problem.code() == StatusCode::kNotFound) return std::nullopt;  // a plain miss
  if (!problem.ok()) {
    base::log_warning("cache entry " + folder + "/" + key + " is unusable (" + problem.message() + "); recompiling");
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
  BOO_ASSIGN_OR_RETURN(Fd dir, open_folder(config_.dir, {version_name(), arch, key.substr(0, 2)}, true));
  // The artifact first, then the metadata that vouches for it: a reader that
  // finds the metadata finds a complete artifact.
  BOO_RETURN_IF_ERROR(write_regular(dir.get(), key + ".cubin", cubin_path(key, arch), cubin));
  return write_regular(dir.get(), key + ".json", json_path(key, arch), metadata.dump());
}

Result<std::vector<CacheEntry>> ArtifactCache::list() const {
  std::vector<CacheEntry> entries;
  const std::string root = version_dir(config_.dir);
  Result<Fd> top = open_folder(config_.dir, {version_name()}, false);
  if (!top.ok() && top.status().code() == StatusCode::kNotFound) return entries;  // an empty cache
  if (!top.ok() && top.status().code() != StatusCode::kDataLoss) return top.status();
  // Everything under the root is looked at: what is not a sound entry, or a
  // temporary file of a writer, is reported (and never followed).
  auto report = [&](const fs::path& path, Status problem) {
    CacheEntry e;
    e.key = path.stem().string();
    (path.extension() == ".cubin" ? e.cubin_path : e.json_path) = path.string();
    e.problem = std::move(problem);
    entries.push_back(std::move(e));
  };
  if (!top.ok()) {
    report(root, top.status());
    return entries;
  }
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const fs::path path = it->path();
    const fs::file_status status = it->symlink_status(ec);
    if (ec) break;
    const int depth = it.depth();  // 0: arch folders, 1: key-prefix folders, 2: entries
    const std::string name = path.filename().string();
    if (fs::is_directory(status) && depth < 2) continue;
    if (fs::is_regular_file(status) && name.find(".tmp.") != std::string::npos) continue;  // stale_temporaries()
    const std::string ext = path.extension().string();
    struct stat st {};
    ::lstat(path.c_str(), &st);
    if (!fs::is_regular_file(status)) {
      if (fs::is_directory(status)) it.disable_recursion_pending();
      struct stat json {};
      if (depth == 2 && ext == ".cubin" && ::lstat((path.parent_path() / (path.stem().string() + ".json")).c_str(), &json) == 0)
        continue;  // reported with its metadata's entry below
      report(path, data_loss(kind_of(st.st_mode) + " where the cache holds only its own folders and regular files"));
      continue;
    }
    if (depth != 2 || (ext != ".json" && ext != ".cubin")) {
      report(path, data_loss("not a file the cache writes"));
      continue;
    }
    const std::string key = path.stem().string();
    const std::string arch = path.parent_path().parent_path().filename().string();
    if (ext == ".cubin") {
      struct stat json {};
      if (::lstat(json_path(key, arch).c_str(), &json) != 0) {
        CacheEntry orphan{key, arch, "", path.string(), static_cast<int64_t>(st.st_size), {},
                          data_loss("artifact without metadata (a writer stopped between the two renames)")};
        entries.push_back(std::move(orphan));
      }
      continue;
    }
    CacheEntry e;
    e.key = key;
    e.arch = arch;
    e.json_path = path.string();
    e.cubin_path = cubin_path(key, arch);
    Artifact artifact;
    // The walk found this folder a real one; opened without following a link, it is read as found.
    const std::string folder = path.parent_path().string();
    Fd dir(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    e.problem = dir.get() < 0 ? data_loss("cannot open " + folder + ": " + errno_text())
                              : read_entry(dir.get(), folder, key, artifact);
    if (e.problem.ok()) {
      e.metadata = std::move(artifact.metadata);
      e.cubin_bytes = static_cast<int64_t>(artifact.cubin.size());
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
  if (!fs::is_directory(fs::symlink_status(root, ec))) return out;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (fs::is_regular_file(it->symlink_status(ec)) && it->path().filename().string().find(".tmp.") != std::string::npos)
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
