// boo: the shipped tunings, read from their JSON files on first use.
#include "cache/shipped_tunings.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <climits>
#include <cstdlib>

#include "base/file_util.hpp"
#include "base/json.hpp"
#include "base/log.hpp"
#include "base/strings.hpp"

namespace boo::cache {
namespace {

bool is_folder(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The folder of the file this code was loaded from: libboo.so, the Python extension, or an executable
// linking boo statically (dladdr of a function of this file answers for whichever holds it).
std::string code_folder() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&code_folder), &info) == 0 || !info.dli_fname) return "";
  const std::string file = info.dli_fname;
  const size_t slash = file.rfind('/');
  return slash == std::string::npos ? "." : file.substr(0, slash);
}

}  // namespace

std::string ShippedTunings::default_folder() {
  if (const char* v = std::getenv("BOO_SHIPPED_TUNING"); v && *v) return std::string(v) == "0" ? "" : v;
  const std::string dir = code_folder();
  if (dir.empty()) return "";
  // The Python package keeps them beside its extension (boo/_C.so, boo/tuning); an install and the
  // build tree beside lib/ and bin/ (lib/libboo.so, bin/boo, <build>/src, <build>/tools: share/boo/tuning).
  for (const std::string& candidate : {dir + "/tuning", dir + "/../share/boo/tuning"}) {
    if (!is_folder(candidate)) continue;
    char resolved[PATH_MAX];  // without "bin/..": the path explain and the log lines print
    return ::realpath(candidate.c_str(), resolved) ? std::string(resolved) : candidate;
  }
  return "";
}

std::string ShippedTunings::file_name(std::string_view device) {
  std::string name;
  for (const char c : device) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
    name += keep ? c : '_';
  }
  return name + ".json";
}

std::string ShippedTunings::cost_path_of(std::string_view device) const {
  std::string name = file_name(device);
  name.resize(name.size() - std::string_view(".json").size());
  return folder_ + "/" + name + ".cost.json";
}

std::shared_ptr<const ShippedTunings> ShippedTunings::shared(const std::string& folder) {
  if (folder.empty()) return nullptr;
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const ShippedTunings>> instances;
  std::lock_guard<std::mutex> lock(mutex);
  std::shared_ptr<const ShippedTunings>& one = instances[folder];
  if (!one) one = std::make_shared<const ShippedTunings>(folder);
  return one;
}

const ShippedTunings::File& ShippedTunings::file(const std::string& device) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::unique_ptr<File>& slot = files_[device];
  if (slot) return *slot;
  slot = std::make_unique<File>();
  File& f = *slot;
  const std::string path = path_of(device);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    base::log_debug("no shipped tuning for " + device + " (" + path + ")");
    return f;
  }
  f.present = true;
  Result<std::string> text = base::read_file(path);
  Result<std::vector<base::JsonObject>> objects =
      text.ok() ? base::JsonObject::parse_array(*text) : Result<std::vector<base::JsonObject>>(text.status());
  if (!objects.ok()) {
    f.status = data_loss("the shipped tuning " + path + " is not used: " + objects.status().message());
    base::log_warning(f.status.message());
    return f;
  }
  for (size_t i = 0; i < objects->size(); ++i) {
    if (is_measurement_json((*objects)[i])) continue;  // a refit's data, not a row
    Result<TuningRow> row = TuningRow::from_json((*objects)[i]);
    std::string why;
    if (!row.ok())
      why = row.status().message();
    else if (row->key.device != device)
      why = "it is a row of " + base::echo_word(row->key.device) + ", not of " + device;
    if (why.empty()) {
      f.rows.push_back(std::move(*row));
    } else {
      ++f.ignored;
      base::log_warning("shipped tuning " + path + ": ignored row " + std::to_string(i) + ": " + why);
    }
  }
  base::log_debug("shipped tuning " + path + ": " + std::to_string(f.rows.size()) + " rows");
  return f;
}

Result<TuningLookup> ShippedTunings::find(const TuningKey& key) const {
  const File& f = file(key.device);
  BOO_RETURN_IF_ERROR(f.status);
  TuningLookup out;
  for (const TuningRow& row : f.rows) {
    const TuningKey& k = row.key;
    if (k.implementation != key.implementation || k.problem != key.problem || k.arch != key.arch) continue;
    if (k.version != key.version)
      out.ignored.push_back("a row of version " + base::echo_word(k.version) + " (this is " + key.version + ")");
    else if (!out.row)
      out.row = row;
  }
  return out;
}

std::string ShippedTunings::describe(std::string_view device) const {
  const File& f = file(std::string(device));
  const std::string path = path_of(device);
  if (!f.status.ok()) return f.status.message();
  if (!f.present) return "no file for this device (" + path + ")";
  return path + ": " + std::to_string(f.rows.size()) + " rows" +
         (f.ignored ? " (" + std::to_string(f.ignored) + " ignored)" : "");
}

}  // namespace boo::cache
