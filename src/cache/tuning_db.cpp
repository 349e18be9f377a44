// boo: the tuning database on SQLite.
#include "cache/tuning_db.hpp"

#include <sqlite3.h>
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "base/strings.hpp"

namespace boo::cache {
namespace {

// PRAGMA user_version of a boo tuning database; another value is another schema. Schema 1 had the
// tunings only; 2 adds the measurements (migrated on a writable open).
constexpr int kSchema = 2;
constexpr const char* kTuningsTable =
    "CREATE TABLE tunings(implementation TEXT NOT NULL, problem TEXT NOT NULL,"
    " arch TEXT NOT NULL, device TEXT NOT NULL, version TEXT NOT NULL, config TEXT NOT NULL,"
    " time_us REAL NOT NULL, heuristic_us REAL NOT NULL, tuned_at INTEGER NOT NULL,"
    " PRIMARY KEY(implementation, problem, arch, device, version));";
// terms: a flat JSON object of the cost model's terms (seconds by name).
constexpr const char* kMeasurementsTable =
    "CREATE TABLE measurements(implementation TEXT NOT NULL, problem TEXT NOT NULL,"
    " arch TEXT NOT NULL, device TEXT NOT NULL, version TEXT NOT NULL, config TEXT NOT NULL,"
    " predicted_us REAL NOT NULL, measured_us REAL NOT NULL, heuristic INTEGER NOT NULL, terms TEXT NOT NULL,"
    " measured_at INTEGER NOT NULL, PRIMARY KEY(implementation, problem, arch, device, version, config));";
// How long a writer waits for another's transaction before giving up (SQLITE_BUSY).
constexpr int kBusyTimeoutMs = 30000;

Status sqlite_error(sqlite3* db, const std::string& what) {
  const int code = sqlite3_extended_errcode(db);
  const std::string message = what + ": " + sqlite3_errmsg(db);
  if ((code & 0xff) == SQLITE_NOTADB || (code & 0xff) == SQLITE_CORRUPT)
    return data_loss(message + " (not a boo tuning database, or a damaged one)");
  if ((code & 0xff) == SQLITE_BUSY || (code & 0xff) == SQLITE_LOCKED)
    return unavailable(message + " (another process held the database past the busy timeout)");
  return internal_error(message);
}

// A prepared statement, finalized on scope exit.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db) { rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  Status prepared(const std::string& what) const { return rc_ == SQLITE_OK ? ok_status() : sqlite_error(db_, what); }
  void bind(int i, const std::string& v) { sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT); }
  void bind(int i, double v) { sqlite3_bind_double(stmt_, i, v); }
  void bind(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  /// A row's key in parameters 1-5 (both tables' first columns).
  void bind_key(const TuningKey& key) {
    bind(1, key.implementation);
    bind(2, key.problem);
    bind(3, key.arch);
    bind(4, key.device);
    bind(5, key.version);
  }
  int step() { return sqlite3_step(stmt_); }
  sqlite3_stmt* get() const { return stmt_; }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  int rc_;
};

Status exec(sqlite3* db, const char* sql, const std::string& what) {
  return sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK ? ok_status() : sqlite_error(db, what);
}

// Switches the file to write-ahead logging. SQLite answers a journal-mode change that meets another
// connection's lock with "locked" at once, without its busy handler (four tuners opening a new file
// together met it): retried here, for as long as the busy timeout.
Status enable_wal(sqlite3* db, const std::string& path) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  while (true) {
    const int rc = sqlite3_exec(db, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) return ok_status();
    if ((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED) break;
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return sqlite_error(db, "enabling write-ahead logging in " + path);
}

// The one integer `sql` returns (its statement finalized: no transaction stays open).
Result<int> query_int(sqlite3* db, const char* sql, const std::string& path) {
  Statement s(db, sql);
  BOO_RETURN_IF_ERROR(s.prepared("reading " + path));
  if (s.step() != SQLITE_ROW) return sqlite_error(db, "reading " + path);
  return sqlite3_column_int(s.get(), 0);
}

constexpr const char* kColumns = "implementation, problem, arch, device, version, config, time_us, heuristic_us, tuned_at";

// Column i as text, or nullopt where it is not text (a damaged or hand-edited row).
std::optional<std::string> text_column(sqlite3_stmt* s, int i) {
  if (sqlite3_column_type(s, i) != SQLITE_TEXT) return std::nullopt;
  const unsigned char* t = sqlite3_column_text(s, i);
  return std::string(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(s, i)));
}

// Both tables' first six columns at the statement's cursor: the key and the config, text each.
Status read_key_and_config(sqlite3_stmt* s, TuningKey& key, std::string& config) {
  std::string* texts[] = {&key.implementation, &key.problem, &key.arch, &key.device, &key.version, &config};
  const char* names[] = {"implementation", "problem", "arch", "device", "version", "config"};
  for (int i = 0; i < 6; ++i) {
    std::optional<std::string> t = text_column(s, i);
    if (!t) return data_loss(std::string("its ") + names[i] + " is not text");
    *texts[i] = std::move(*t);
  }
  return ok_status();
}

// The row at the statement's cursor (kColumns in order), or why it is malformed.
Result<TuningRow> read_row(sqlite3_stmt* s) {
  TuningRow row;
  BOO_RETURN_IF_ERROR(read_key_and_config(s, row.key, row.config));
  for (int i : {6, 7})
    if (const int type = sqlite3_column_type(s, i); type != SQLITE_FLOAT && type != SQLITE_INTEGER)
      return data_loss(std::string("its ") + (i == 6 ? "time_us" : "heuristic_us") + " is not a number");
  row.time_us = sqlite3_column_double(s, 6);
  row.heuristic_us = sqlite3_column_double(s, 7);
  row.tuned_at = sqlite3_column_int64(s, 8);
  if (!(row.time_us > 0) || !(row.heuristic_us > 0) || !std::isfinite(row.time_us) || !std::isfinite(row.heuristic_us))
    return data_loss("its times are not positive (" + base::format_double(row.time_us) + ", " +
                     base::format_double(row.heuristic_us) + " us)");
  if (row.config.empty()) return data_loss("its config is empty");
  return row;
}

Status check_row(const TuningRow& row) {
  const TuningKey& k = row.key;
  for (const std::string* field : {&k.implementation, &k.problem, &k.arch, &k.device, &k.version, &row.config})
    if (field->empty()) return invalid_argument("a tuning row needs every key field and a config");
  if (!(row.time_us > 0) || !(row.heuristic_us > 0) || !std::isfinite(row.time_us) || !std::isfinite(row.heuristic_us))
    return invalid_argument("a tuning row's times must be positive and finite");
  return ok_status();
}

constexpr const char* kMeasurementColumns =
    "implementation, problem, arch, device, version, config, predicted_us, measured_us, heuristic, terms, measured_at";
constexpr const char* kTermPrefix = "term.";

Status check_measurement(const MeasurementRow& row) {
  const TuningKey& k = row.key;
  for (const std::string* field : {&k.implementation, &k.problem, &k.arch, &k.device, &k.version, &row.config})
    if (field->empty()) return invalid_argument("a measurement needs every key field and a config");
  if (!(row.measured_us > 0) || !std::isfinite(row.measured_us))
    return invalid_argument("a measurement's time must be positive and finite");
  if (!(row.predicted_us >= 0) || !std::isfinite(row.predicted_us))
    return invalid_argument("a measurement's predicted time must be finite and not negative");
  for (const auto& [name, seconds] : row.terms)
    if (name.empty() || !(seconds >= 0) || !std::isfinite(seconds))
      return invalid_argument("a measurement's cost term " + base::echo_word(name) +
                              " must be named, finite and not negative");
  return ok_status();
}

// The measurement at the statement's cursor (kMeasurementColumns in order), or why it is malformed.
Result<MeasurementRow> read_measurement(sqlite3_stmt* s) {
  MeasurementRow row;
  BOO_RETURN_IF_ERROR(read_key_and_config(s, row.key, row.config));
  for (int i : {6, 7, 8, 10})
    if (const int type = sqlite3_column_type(s, i); type != SQLITE_FLOAT && type != SQLITE_INTEGER)
      return data_loss(std::string("its ") + sqlite3_column_name(s, i) + " is not a number");
  row.predicted_us = sqlite3_column_double(s, 6);
  row.measured_us = sqlite3_column_double(s, 7);
  row.heuristic = sqlite3_column_int64(s, 8) != 0;
  row.measured_at = sqlite3_column_int64(s, 10);
  std::optional<std::string> terms = text_column(s, 9);
  Result<base::JsonObject> parsed = terms ? base::JsonObject::parse(*terms) : data_loss("not text");
  if (!parsed.ok()) return data_loss("its terms are not a JSON object (" + parsed.status().message() + ")");
  for (const base::JsonObject::Entry& e : parsed->entries()) {
    Result<double> v = parsed->number(e.key);
    if (e.is_string || !v.ok()) return data_loss("its term " + base::echo_word(e.key) + " is not a number");
    row.terms.emplace_back(e.key, *v);
  }
  if (Status st = check_measurement(row); !st.ok()) return data_loss(st.message());
  return row;
}

// Every row `s` selects from `path`'s database `db`, each read by `read` (a row it refuses fails the whole read,
// named `what` + path).
template <class Row, class Read>
Result<std::vector<Row>> read_all(sqlite3* db, Statement& s, const std::string& path, Read read, const char* what) {
  BOO_RETURN_IF_ERROR(s.prepared("reading " + path));
  std::vector<Row> out;
  int rc;
  while ((rc = s.step()) == SQLITE_ROW) {
    Result<Row> row = read(s.get());
    if (!row.ok()) return std::move(row).take_status().annotate(what + path);
    out.push_back(std::move(*row));
  }
  if (rc != SQLITE_DONE) return sqlite_error(db, "reading " + path);
  return out;
}

}  // namespace

bool is_measurement_json(const base::JsonObject& o) {
  const std::string* kind = o.get("kind");
  return kind && *kind == "measurement";
}

base::JsonObject MeasurementRow::to_json() const {
  base::JsonObject o;
  o.set("kind", "measurement");
  o.set("implementation", key.implementation).set("problem", key.problem).set("arch", key.arch);
  o.set("device", key.device).set("version", key.version).set("config", config);
  o.set_number("predicted_us", predicted_us).set_number("measured_us", measured_us).set_bool("heuristic", heuristic);
  for (const auto& [name, seconds] : terms) o.set_number(kTermPrefix + name, seconds);
  o.set_number("measured_at", static_cast<double>(measured_at));
  return o;
}

Result<MeasurementRow> MeasurementRow::from_json(const base::JsonObject& o) {
  if (!is_measurement_json(o)) return data_loss("the object is not a measurement (its 'kind')");
  MeasurementRow row;
  const std::pair<const char*, std::string*> texts[] = {
      {"implementation", &row.key.implementation}, {"problem", &row.key.problem}, {"arch", &row.key.arch},
      {"device", &row.key.device}, {"version", &row.key.version}, {"config", &row.config}};
  for (const auto& [name, field] : texts) {
    const std::string* v = o.get(name);
    if (!v) return data_loss(std::string("the measurement has no '") + name + "'");
    *field = *v;
  }
  const std::pair<const char*, double*> numbers[] = {{"predicted_us", &row.predicted_us},
                                                     {"measured_us", &row.measured_us}};
  for (const auto& [name, field] : numbers) {
    Result<double> v = o.number(name);
    if (!v.ok()) return data_loss(std::string("the measurement's '") + name + "' is not a number");
    *field = *v;
  }
  const std::string* heuristic = o.get("heuristic");
  if (!heuristic || (*heuristic != "true" && *heuristic != "false"))
    return data_loss("the measurement's 'heuristic' is not true or false");
  row.heuristic = *heuristic == "true";
  Result<double> at = o.number("measured_at");
  if (!at.ok() || !std::isfinite(*at)) return data_loss("the measurement's 'measured_at' is not a number");
  row.measured_at = static_cast<int64_t>(*at);
  for (const base::JsonObject::Entry& e : o.entries()) {
    if (e.key.rfind(kTermPrefix, 0) != 0) continue;
    Result<double> v = o.number(e.key);
    if (e.is_string || !v.ok()) return data_loss("the measurement's '" + e.key + "' is not a number");
    row.terms.emplace_back(e.key.substr(std::string(kTermPrefix).size()), *v);
  }
  if (Status s = check_measurement(row); !s.ok()) return data_loss(s.message());
  return row;
}

base::JsonObject TuningRow::to_json() const {
  base::JsonObject o;
  o.set("implementation", key.implementation).set("problem", key.problem).set("arch", key.arch);
  o.set("device", key.device).set("version", key.version).set("config", config);
  o.set_number("time_us", time_us).set_number("heuristic_us", heuristic_us);
  o.set_number("tuned_at", static_cast<double>(tuned_at));
  return o;
}

Result<TuningRow> TuningRow::from_json(const base::JsonObject& o) {
  TuningRow row;
  const std::pair<const char*, std::string*> texts[] = {
      {"implementation", &row.key.implementation}, {"problem", &row.key.problem}, {"arch", &row.key.arch},
      {"device", &row.key.device}, {"version", &row.key.version}, {"config", &row.config}};
  for (const auto& [name, field] : texts) {
    const std::string* v = o.get(name);
    if (!v) return data_loss(std::string("the row has no '") + name + "'");
    *field = *v;
  }
  const std::pair<const char*, double*> numbers[] = {{"time_us", &row.time_us}, {"heuristic_us", &row.heuristic_us}};
  for (const auto& [name, field] : numbers) {
    Result<double> v = o.number(name);
    if (!v.ok()) return data_loss(std::string("the row's '") + name + "' is not a number");
    *field = *v;
  }
  Result<double> at = o.number("tuned_at");
  if (!at.ok() || !std::isfinite(*at)) return data_loss("the row's 'tuned_at' is not a number");
  row.tuned_at = static_cast<int64_t>(*at);
  if (Status s = check_row(row); !s.ok()) return data_loss(s.message());
  return row;
}

TuningDb::~TuningDb() { sqlite3_close_v2(db_); }

std::string TuningDb::default_path(const std::string& cache_dir) {
  for (const char* name : {"BOO_TUNING_DB", "BOO_TUNING_SPEC_PATH"})
    if (const char* v = std::getenv(name); v && *v) return v;
  return cache_dir + "/tuning.sqlite";
}

Result<std::unique_ptr<TuningDb>> TuningDb::open(const std::string& path, bool writable) {
  struct stat st {};
  if (!writable && ::stat(path.c_str(), &st) != 0) return not_found("no tuning database at " + path);
  if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return invalid_argument("the tuning database " + path + " is not a regular file (a link, folder or device)");
  sqlite3* raw = nullptr;
  const int flags = (writable ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY) |
                    SQLITE_OPEN_FULLMUTEX | SQLITE_OPEN_NOFOLLOW;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  std::unique_ptr<TuningDb> db(new TuningDb(path, raw));
  if (rc != SQLITE_OK) return sqlite_error(raw, "opening the tuning database " + path);
  sqlite3_busy_timeout(raw, kBusyTimeoutMs);
  BOO_ASSIGN_OR_RETURN(int schema, query_int(raw, "PRAGMA user_version", path));
  if (schema == 0 && writable) {
    // A new file (or an empty one), which tuners started together may all be creating: write-ahead
    // logging lets readers and one writer proceed together; the check and the schema with its
    // version in one write transaction, so each sees either no table or the whole schema (checked
    // outside it, a second tuner read version 0, then counted the first one's new table: "another
    // schema", on an H100 with four tuners, 2026-11-26).
    BOO_RETURN_IF_ERROR(enable_wal(raw, path));
    BOO_RETURN_IF_ERROR(exec(raw, "BEGIN IMMEDIATE", "creating the tuning database " + path));
    Result<int> version = query_int(raw, "PRAGMA user_version", path);
    Result<int> tables = query_int(raw, "SELECT count(*) FROM sqlite_master", path);
    if (version.ok() && tables.ok() && *version == 0 && *tables == 0) {
      BOO_RETURN_IF_ERROR(exec(raw,
                               (std::string(kTuningsTable) + kMeasurementsTable + "PRAGMA user_version=" +
                                std::to_string(kSchema) + ";COMMIT;")
                                   .c_str(),
                               "creating the tuning database " + path));
      return db;
    }
    (void)exec(raw, "ROLLBACK", path);  // the read-only transaction changed nothing
    if (!version.ok()) return version.status();
    if (!tables.ok()) return tables.status();
    if (*version == 0) return data_loss(path + " is a SQLite database of another schema, not a boo tuning database");
    schema = *version;  // another tuner made it meanwhile
  }
  if (schema == 1 && writable) {
    // Schema 1 (tunings only): the measurements table added, once, by whichever opener gets there first.
    BOO_RETURN_IF_ERROR(enable_wal(raw, path));
    BOO_RETURN_IF_ERROR(exec(raw, "BEGIN IMMEDIATE", "migrating the tuning database " + path));
    Result<int> version = query_int(raw, "PRAGMA user_version", path);
    if (version.ok() && *version == 1) {
      BOO_RETURN_IF_ERROR(exec(raw,
                               (std::string(kMeasurementsTable) + "PRAGMA user_version=" + std::to_string(kSchema) +
                                ";COMMIT;")
                                   .c_str(),
                               "adding the measurements table to the tuning database " + path));
      return db;
    }
    (void)exec(raw, "ROLLBACK", path);
    if (!version.ok()) return version.status();
    schema = *version;
  }
  if (schema == 1 && !writable) {
    db->has_measurements_ = false;
    return db;
  }
  if (schema != kSchema)
    return data_loss(path + " is not a boo tuning database of schema 1 or " + std::to_string(kSchema) +
                     " (user_version " + std::to_string(schema) + ")");
  if (writable) BOO_RETURN_IF_ERROR(enable_wal(raw, path));
  return db;
}

Result<TuningLookup> TuningDb::find(const TuningKey& key) const {
  Statement s(db_, (std::string("SELECT ") + kColumns +
                    " FROM tunings WHERE implementation=?1 AND problem=?2 AND arch=?3 AND device=?4")
                       .c_str());
  BOO_RETURN_IF_ERROR(s.prepared("reading " + path_));
  s.bind(1, key.implementation);
  s.bind(2, key.problem);
  s.bind(3, key.arch);
  s.bind(4, key.device);
  TuningLookup out;
  int rc;
  while ((rc = s.step()) == SQLITE_ROW) {
    Result<TuningRow> row = read_row(s.get());
    if (!row.ok()) {
      out.ignored.push_back("a malformed row (" + row.status().message() + ")");
    } else if (row->key.version != key.version) {
      out.ignored.push_back("a row of version " + base::echo_word(row->key.version) + " (this is " + key.version + ")");
    } else {
      out.row = std::move(*row);
    }
  }
  if (rc != SQLITE_DONE) return sqlite_error(db_, "reading " + path_);
  return out;
}

Status TuningDb::put(const TuningRow& row) {
  BOO_RETURN_IF_ERROR(check_row(row));
  Statement s(db_, (std::string("INSERT OR REPLACE INTO tunings(") + kColumns + ") VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9)")
                       .c_str());
  BOO_RETURN_IF_ERROR(s.prepared("writing " + path_));
  s.bind_key(row.key);
  s.bind(6, row.config);
  s.bind(7, row.time_us);
  s.bind(8, row.heuristic_us);
  s.bind(9, row.tuned_at);
  if (s.step() != SQLITE_DONE) return sqlite_error(db_, "writing " + path_);
  return ok_status();
}

Result<std::vector<TuningRow>> TuningDb::rows() const {
  Statement s(db_, (std::string("SELECT ") + kColumns +
                    " FROM tunings ORDER BY implementation, problem, arch, device, version")
                       .c_str());
  return read_all<TuningRow>(db_, s, path_, read_row, "a row of ");
}

Status TuningDb::put_measurement(const MeasurementRow& row) {
  BOO_RETURN_IF_ERROR(check_measurement(row));
  if (!has_measurements_) return failed_precondition(path_ + " is of schema 1 (no measurements), opened read-only");
  base::JsonObject terms;
  for (const auto& [name, seconds] : row.terms) terms.set_number(name, seconds);
  Statement s(db_, (std::string("INSERT OR REPLACE INTO measurements(") + kMeasurementColumns +
                    ") VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)")
                       .c_str());
  BOO_RETURN_IF_ERROR(s.prepared("writing " + path_));
  s.bind_key(row.key);
  s.bind(6, row.config);
  s.bind(7, row.predicted_us);
  s.bind(8, row.measured_us);
  s.bind(9, static_cast<int64_t>(row.heuristic ? 1 : 0));
  s.bind(10, terms.dump());
  s.bind(11, row.measured_at);
  if (s.step() != SQLITE_DONE) return sqlite_error(db_, "writing " + path_);
  return ok_status();
}

Status TuningDb::put_measurements(const std::vector<MeasurementRow>& rows) {
  BOO_RETURN_IF_ERROR(exec(db_, "BEGIN IMMEDIATE", "writing " + path_));
  for (const MeasurementRow& row : rows) {
    if (Status s = put_measurement(row); !s.ok()) {
      static_cast<void>(exec(db_, "ROLLBACK", "rolling back " + path_));
      return s;
    }
  }
  return exec(db_, "COMMIT", "writing " + path_);
}

Result<std::vector<MeasurementRow>> TuningDb::measurements() const {
  if (!has_measurements_) return std::vector<MeasurementRow>{};
  Statement s(db_, (std::string("SELECT ") + kMeasurementColumns +
                    " FROM measurements ORDER BY implementation, problem, arch, device, version, config")
                       .c_str());
  return read_all<MeasurementRow>(db_, s, path_, read_measurement, "a measurement of ");
}

Result<std::string> TuningDb::export_json() const {
  BOO_ASSIGN_OR_RETURN(std::vector<TuningRow> all, rows());
  BOO_ASSIGN_OR_RETURN(std::vector<MeasurementRow> timed, measurements());
  std::vector<base::JsonObject> objects;
  for (const TuningRow& r : all) objects.push_back(r.to_json());
  for (const MeasurementRow& m : timed) objects.push_back(m.to_json());
  return base::JsonObject::dump_array(objects);
}

Result<int64_t> TuningDb::import_json(const std::string& text) {
  BOO_ASSIGN_OR_RETURN(std::vector<base::JsonObject> objects, base::JsonObject::parse_array(text));
  std::vector<TuningRow> parsed;
  std::vector<MeasurementRow> timed;
  for (size_t i = 0; i < objects.size(); ++i) {
    if (is_measurement_json(objects[i])) {
      Result<MeasurementRow> m = MeasurementRow::from_json(objects[i]);
      if (!m.ok()) return std::move(m).take_status().annotate("row " + std::to_string(i));
      timed.push_back(std::move(*m));
      continue;
    }
    Result<TuningRow> row = TuningRow::from_json(objects[i]);
    if (!row.ok()) return std::move(row).take_status().annotate("row " + std::to_string(i));
    parsed.push_back(std::move(*row));
  }
  BOO_RETURN_IF_ERROR(exec(db_, "BEGIN IMMEDIATE", "writing " + path_));
  Status s = ok_status();
  for (const TuningRow& row : parsed)
    if (s.ok()) s = put(row);
  for (const MeasurementRow& m : timed)
    if (s.ok()) s = put_measurement(m);
  if (!s.ok()) {
    // The put's error is the one to report; a rollback that fails too leaves SQLite to discard the
    // transaction when the connection closes.
    static_cast<void>(exec(db_, "ROLLBACK", "rolling back " + path_));
    return s;
  }
  BOO_RETURN_IF_ERROR(exec(db_, "COMMIT", "writing " + path_));
  return static_cast<int64_t>(parsed.size() + timed.size());
}

}  // namespace boo::cache
