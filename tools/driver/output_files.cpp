// boo-driver: the files and folders a run writes, checked before it starts.
#include "output_files.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/strings.hpp"

namespace boo::driver {
namespace {

std::string parent_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// One output file: what it may not be, and a note when it replaces a file.
Status check_output_file(const std::string& option, const std::string& path, const DriverOptions& opts,
                         std::string& notes) {
  const std::string named = option + " '" + base::echo_word(path) + "'";
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode))
      return invalid_argument(named + " is a symbolic link; boo-driver does not write through links (give the path "
                              "of a file)");
    if (S_ISDIR(st.st_mode)) return invalid_argument(named + " is a folder; give the path of a file");
    if (!S_ISREG(st.st_mode)) return invalid_argument(named + " is not a regular file");
    struct stat input {};
    if (!opts.commands_file.empty() && ::stat(opts.commands_file.c_str(), &input) == 0 && same_file(st, input))
      return invalid_argument(named + " is the --commands-file; boo-driver does not overwrite its input");
    notes += "boo-driver: " + option + " replaces the existing file " + base::echo_word(path) + "\n";
    return ok_status();
  }
  if (errno != ENOENT) return invalid_argument(named + ": " + std::strerror(errno));
  const std::string folder = parent_of(path);
  struct stat dir {};
  if (::stat(folder.c_str(), &dir) != 0 || !S_ISDIR(dir.st_mode))
    return invalid_argument(named + ": the folder '" + base::echo_word(folder) + "' does not exist");
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    return invalid_argument(named + ": the folder '" + base::echo_word(folder) + "' cannot be written: " +
                            std::strerror(errno));
  return ok_status();
}

Status check_dump_folder(const DriverOptions& opts) {
  const std::string named = "--dump '" + base::echo_word(opts.dump_dir) + "'";
  struct stat st {};
  if (::stat(opts.dump_dir.c_str(), &st) != 0) {
    if (errno == ENOENT) return ok_status();  // created by the first command
    return invalid_argument(named + ": " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) return invalid_argument(named + " is not a folder");
  if (opts.dump_append) return ok_status();
  DIR* d = ::opendir(opts.dump_dir.c_str());
  if (!d) return invalid_argument(named + ": " + std::strerror(errno));
  int entries = 0;
  while (const dirent* e = ::readdir(d))
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) ++entries;
  ::closedir(d);
  if (entries > 0)
    return invalid_argument(named + " is not empty (" + std::to_string(entries) +
                            " entries): two runs' files would mix; give an empty or new folder, or --dump-append");
  return ok_status();
}

}  // namespace

Status check_outputs(const DriverOptions& opts, std::string& notes) {
  if (!opts.csv_path.empty()) BOO_RETURN_IF_ERROR(check_output_file("--csv", opts.csv_path, opts, notes));
  if (!opts.trace_path.empty()) BOO_RETURN_IF_ERROR(check_output_file("--trace", opts.trace_path, opts, notes));
  if (!opts.csv_path.empty() && opts.csv_path == opts.trace_path)
    return invalid_argument("--csv and --trace name the same file '" + base::echo_word(opts.csv_path) + "'");
  if (!opts.dump_dir.empty()) BOO_RETURN_IF_ERROR(check_dump_folder(opts));
  return ok_status();
}

Status check_dump_entry(const std::string& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return ok_status();
  if (S_ISDIR(st.st_mode)) return ok_status();
  return failed_precondition("'" + base::echo_word(dir) + "' exists and is " +
                             (S_ISLNK(st.st_mode) ? "a symbolic link" : "not a folder") +
                             "; boo-driver writes only into real folders");
}

}  // namespace boo::driver
