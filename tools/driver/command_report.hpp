// boo-driver: a CommandResult rendered as BOO-style text and as a CSV row.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "command_result.hpp"

namespace boo::driver {

/// What the text shows.
struct TextStyle {
  bool verbose = true;            ///< each backend's results and timings
  bool numerics_verbose = false;  ///< the full numerics statistics block
  std::string reference_dtype;    ///< "float64" or "float32", for that block
};

/// "\n>>> <command>\n\n": printed (and flushed) before a command runs, so a
/// command that takes the process down is still named.
std::string command_header(const std::string& text);

/// ">>> FAILED (line 3): <error>\n" (UNSUPPORTED for an unsupported op).
std::string failure_line(const CommandResult& result);

/// Everything a command prints after its header.
std::string render_text(const CommandResult& result, const TextStyle& style);

/// The CSV columns: the command, five statistics per backend, BOO's numerics
/// columns with --verify-numerics; by default exactly BOO's header (its
/// numerics columns name the vendor "pytorch": cuDNN's results stand where BOO
/// puts PyTorch's). With --csv-extra the numerics columns name the vendor
/// "cudnn", numerics_reference follows them, then the work done and the error.
class CsvLayout {
 public:
  CsvLayout(std::vector<std::string> backends, bool numerics, bool extra)
      : backends_(std::move(backends)), numerics_(numerics), extra_(extra) {}
  std::vector<std::string> header() const;
  /// The command's row, or nothing for a command that is not a benchmark (`<op> --help`).
  std::optional<std::vector<std::string>> row(const CommandResult& result) const;

 private:
  size_t numerics_cells() const;  ///< 11 (BOO's), 12 with --csv-extra (numerics_reference)

  std::vector<std::string> backends_;
  bool numerics_;
  bool extra_;
};

}  // namespace boo::driver
