// boo: the shipped tunings — the package's read-only tuning rows for the
// public workloads, consulted after the user's tuning database misses.
//
// A folder of JSON files in `boo tune --export`'s format, one per device
// name (file_name()): the repository's tuning/, installed at
// <prefix>/share/boo/tuning and into the Python package as boo/tuning, found
// from the code's own file (libboo.so, bin/boo, boo/_C.so); BOO_SHIPPED_TUNING
// names another folder, or 0 turns them off. A device's file is parsed the
// first time that device is looked up, once per process (shared()); a file
// that does not parse, and rows that do not (or name another device), are
// logged once and ignored. Rows keep the database's validation: the caller
// matches version, arch and device through the key and checks the config
// against the tier's candidates. An export's measurements (boo tune's timed
// candidates) are not tunings: the loader passes over them.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "cache/tuning_db.hpp"

namespace boo::cache {

class ShippedTunings {
 public:
  explicit ShippedTunings(std::string folder) : folder_(std::move(folder)) {}
  ShippedTunings(const ShippedTunings&) = delete;
  ShippedTunings& operator=(const ShippedTunings&) = delete;

  /// BOO_SHIPPED_TUNING: "0" is empty (none); another non-empty value is the
  /// folder. Unset: the first of <dir>/tuning and <dir>/../share/boo/tuning
  /// that is a folder, <dir> holding the code's file; empty when neither is.
  static std::string default_folder();
  /// The file of a device's rows: its name with every character but letters,
  /// digits, '.' and '-' made '_', then ".json" ("NVIDIA_H100_80GB_HBM3.json").
  static std::string file_name(std::string_view device);
  /// The process's one instance for `folder` (files parsed once per process);
  /// nullptr for an empty folder.
  static std::shared_ptr<const ShippedTunings> shared(const std::string& folder);

  const std::string& folder() const { return folder_; }
  std::string path_of(std::string_view device) const { return folder_ + "/" + file_name(device); }
  /// The device's refitted cost model beside its rows (scripts/refit_cost_model.py):
  /// file_name() with ".cost.json" for ".json". Read by runtime::cost_model_of.
  std::string cost_path_of(std::string_view device) const;

  /// The row of `key` in its device's file, rows of the same problem under
  /// other versions listed as ignored; DATA_LOSS when the file does not parse.
  /// No file for the device: no row.
  Result<TuningLookup> find(const TuningKey& key) const;
  /// For `boo explain`: the device's file and how many rows it gave, or why none.
  std::string describe(std::string_view device) const;

 private:
  struct File {
    Status status;                ///< why the file is not used (OK where it is, or is absent)
    bool present = false;
    std::vector<TuningRow> rows;  ///< the well-formed rows of the file's device
    size_t ignored = 0;           ///< malformed or foreign rows, logged when read
  };
  const File& file(const std::string& device) const;

  std::string folder_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::unique_ptr<File>> files_;  // by device name, read on first use
};

}  // namespace boo::cache
