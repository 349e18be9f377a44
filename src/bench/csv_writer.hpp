// boo: a CSV writer (RFC 4180 quoting, as Python's csv module writes).
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "boo/status.hpp"

namespace boo::bench {

/// Quotes a field when it contains a comma, a quote or a line break.
std::string csv_field(const std::string& field);
std::string csv_row(const std::vector<std::string>& fields);

/// Appends rows to a file as they come, flushing each, so a run that dies
/// keeps the rows written so far.
class CsvWriter {
 public:
  static Result<CsvWriter> open(const std::string& path, const std::vector<std::string>& header);
  Status write_row(const std::vector<std::string>& fields);

 private:
  std::string path_;
  std::ofstream out_;
  size_t columns_ = 0;
};

}  // namespace boo::bench
