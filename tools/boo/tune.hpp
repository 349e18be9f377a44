// boo tune: each signature of a commands file on its fastest measured config,
// written to the tuning database (cache/tuning_db.hpp).
#pragma once

#include <string>
#include <vector>

namespace boo::tools {

struct TuneOptions {
  std::string commands_file;  ///< the signatures to tune ("": none, only --import/--export)
  std::string db_path;        ///< the tuning database written
  std::string import_path, export_path;
  std::string cache_dir;       ///< "" = the environment's
  std::string implementation;  ///< --impl: tune this implementation only
  size_t top = 16;             ///< candidates per signature at most (the tier's best by its cost model)
  /// Per signature: no candidate starts timing after this many seconds of
  /// timing (compiling comes first, on `jobs` threads).
  double budget_s = 10;
  double margin = 0.03;        ///< a candidate replaces the heuristic's config only when this much faster
  int jobs = 1;                ///< NVRTC compile threads
  int gpu_id = 0;
};

/// `boo tune`: imports, tunes (every signature in an executor child process,
/// so that a config that faults or hangs costs only itself) and exports.
/// The exit code: 0, 1 when a signature failed, 2 for bad usage or no GPU.
int run_tune(const TuneOptions& options);

/// The executor child of run_tune: signatures arrive on stdin (RUN records),
/// each is tuned in this process and ends with a DONE record.
int run_tune_child(const TuneOptions& options);

/// The child's arguments after the program path (`tune --executor-child ...`).
std::vector<std::string> tune_child_arguments(const TuneOptions& options);

}  // namespace boo::tools
