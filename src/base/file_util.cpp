// boo: file utilities.
#include "base/file_util.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>

namespace boo::base {

Result<std::string> read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return not_found("cannot open '" + path + "': " + std::strerror(errno));
  struct stat st {};
  // A folder opens and reads as empty: that must not pass for an empty file.
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return invalid_argument("'" + path + "' is a folder, not a file");
  }
  std::string text;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string err = std::strerror(errno);
      ::close(fd);
      return data_loss("error reading '" + path + "': " + err);
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

Status write_file_atomic(const std::string& path, std::string_view bytes) {
  std::filesystem::path target(path);
  std::random_device rd;
  std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return failed_precondition("cannot create '" + tmp + "': " + std::strerror(errno));
  size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::string err = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return resource_exhausted("cannot write '" + tmp + "': " + err);
    }
    written += static_cast<size_t>(n);
  }
  ::fsync(fd);
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string err = std::strerror(errno);
    ::unlink(tmp.c_str());
    return failed_precondition("cannot rename '" + tmp + "' to '" + path + "': " + err);
  }
  return ok_status();
}

Status make_directories(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return failed_precondition("cannot create directory '" + path + "': " + ec.message());
  return ok_status();
}

}  // namespace boo::base
