// boo: the tuning database — the measured best config of a problem.
//
// One SQLite file (BOO_TUNING_DB; BOO's BOO_TUNING_SPEC_PATH is accepted too;
// default tuning.sqlite in the cache folder) with one row per
// (implementation, problem, arch, device, version): the config text `boo tune`
// chose, its measured time and the heuristic config's. Dispatch reads it
// before the heuristic; `boo tune` writes it. SQLite's write-ahead log and a
// busy timeout let several tuners and readers share the file; each write is
// one transaction, so a killed tuner leaves every finished row whole.
// Nothing here knows about ops: the caller checks a row's config against the
// tier's candidates before trusting it.
// Beside the rows, every candidate `boo tune` timed (MeasurementRow, table
// `measurements`, schema 2): the data scripts/refit_cost_model.py fits the
// tiers' cost models on. A schema-1 file is migrated (the table added) when
// opened for writing, and read as it is (no measurements) otherwise.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/json.hpp"
#include "boo/status.hpp"

struct sqlite3;

namespace boo::cache {

struct TuningKey {
  std::string implementation;  ///< "gpu:conv:implicit_gemm"
  std::string problem;         ///< the signature's canonical command
  std::string arch;            ///< "sm_90a"
  std::string device;          ///< "NVIDIA H100 80GB HBM3"
  std::string version;         ///< runtime::tuning_version when measured: the kernels' sources
};

struct TuningRow {
  TuningKey key;
  std::string config;         ///< the chosen config's text()
  double time_us = 0;         ///< its median time
  double heuristic_us = 0;    ///< the heuristic config's, measured alongside
  int64_t tuned_at = 0;       ///< Unix seconds

  base::JsonObject to_json() const;
  /// DATA_LOSS naming the missing or malformed field.
  static Result<TuningRow> from_json(const base::JsonObject& object);
};

/// One timed candidate of a signature: its config, what the cost model
/// predicted (the terms at the hand-set rates, ops/cost_model.hpp, and their
/// scaled sum under the model that ranked it; none where the tier has no
/// model), its measured time and whether it was the heuristic's choice.
struct MeasurementRow {
  TuningKey key;
  std::string config;
  double predicted_us = 0;  ///< 0: the tier has no cost model of its configs
  double measured_us = 0;
  bool heuristic = false;
  std::vector<std::pair<std::string, double>> terms;  ///< seconds, by term name
  int64_t measured_at = 0;                            ///< Unix seconds

  /// The export's object: "kind": "measurement", the fields, "term.<name>" per term.
  base::JsonObject to_json() const;
  /// DATA_LOSS naming the missing or malformed field.
  static Result<MeasurementRow> from_json(const base::JsonObject& object);
};

/// Whether an export's object is a measurement (else a tuning row).
bool is_measurement_json(const base::JsonObject& object);

/// What a lookup found for a key: the row of this version, and why any other
/// rows of the same problem were not used (another version; a malformed row).
struct TuningLookup {
  std::optional<TuningRow> row;
  std::vector<std::string> ignored;
};

class TuningDb {
 public:
  ~TuningDb();
  TuningDb(const TuningDb&) = delete;
  TuningDb& operator=(const TuningDb&) = delete;

  /// BOO_TUNING_DB, else BOO_TUNING_SPEC_PATH, else <cache_dir>/tuning.sqlite.
  static std::string default_path(const std::string& cache_dir);

  /// Opens (creating it and its schema when `writable`) the database at
  /// `path`. Read-only: NOT_FOUND when there is no file. A file that is not a
  /// boo tuning database (another SQLite schema, not SQLite) is DATA_LOSS.
  static Result<std::unique_ptr<TuningDb>> open(const std::string& path, bool writable);

  const std::string& path() const { return path_; }

  /// The row of `key`; rows of the same implementation, problem, arch and
  /// device under other versions are listed as ignored.
  Result<TuningLookup> find(const TuningKey& key) const;
  /// Inserts or replaces the row of its key (one transaction).
  Status put(const TuningRow& row);
  /// Every row, ordered by key.
  Result<std::vector<TuningRow>> rows() const;

  /// Inserts or replaces the measurements of their keys and configs (one transaction).
  Status put_measurements(const std::vector<MeasurementRow>& rows);
  /// Every measurement, ordered by key and config; those of a malformed row are
  /// DATA_LOSS. None in a schema-1 file opened read-only.
  Result<std::vector<MeasurementRow>> measurements() const;

  /// The rows, then the measurements, as a JSON array (boo tune --export), and
  /// the array read back into the database (--import; everything in one
  /// transaction; an export without measurements imports too): the count.
  Result<std::string> export_json() const;
  Result<int64_t> import_json(const std::string& text);

 private:
  TuningDb(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  Status put_measurement(const MeasurementRow& row);
  std::string path_;
  sqlite3* db_;
  bool has_measurements_ = true;  // false: a schema-1 file opened read-only
};

}  // namespace boo::cache
