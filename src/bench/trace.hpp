// boo: kernel traces for Perfetto / chrome://tracing (--trace out.json).
//
// Each process that runs commands (an executor, or the driver itself)
// appends the kernels of every command to its own part file, one record per
// line, flushed per command: a crash loses at most the command it crashed in.
// At the end the driver merges the parts into one Chrome trace-event JSON
// file: a process per GPU, a track per CUDA stream with every kernel (named,
// with its command index, backend, launch and command line), and a
// "commands" track with one span per command and backend.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "bench/backend.hpp"
#include "boo/status.hpp"

namespace boo::bench {

class TracePart {
 public:
  /// Opens `path` for appending (a restarted executor continues its part).
  static Result<TracePart> open(const std::string& path);
  TracePart(TracePart&& other) noexcept : file_(other.file_), path_(std::move(other.path_)) { other.file_ = nullptr; }
  TracePart& operator=(TracePart&&) = delete;
  ~TracePart();

  /// Records the kernels of one backend's timed launches of command `index`.
  Status add(int index, const std::string& command, const std::string& backend,
             const std::vector<KernelRecord>& kernels);

 private:
  TracePart(std::FILE* file, std::string path) : file_(file), path_(std::move(path)) {}
  std::FILE* file_;
  std::string path_;
};

struct TraceSummary {
  int64_t kernels = 0;
  int64_t commands = 0;  ///< command spans (one per command and backend)
};

/// Merges the part files (missing ones are skipped) into the trace JSON at
/// `out_path`, with timestamps relative to the first kernel.
Result<TraceSummary> write_trace(const std::vector<std::string>& part_paths, const std::string& out_path);

}  // namespace boo::bench
