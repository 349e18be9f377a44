// boo: CSV writer.
#include "bench/csv_writer.hpp"

namespace boo::bench {

std::string csv_field(const std::string& field) {
  if (field.find_first_of(",\"\r\n") == std::string::npos) return field;
  std::string out = "\"";
  for (char ch : field) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

std::string csv_row(const std::vector<std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) out += ',';
    out += csv_field(fields[i]);
  }
  return out + "\r\n";
}

Result<CsvWriter> CsvWriter::open(const std::string& path, const std::vector<std::string>& header) {
  CsvWriter w;
  w.path_ = path;
  w.out_.open(path, std::ios::binary | std::ios::trunc);
  if (!w.out_) return failed_precondition("cannot open CSV file '" + path + "' for writing");
  w.columns_ = header.size();
  BOO_RETURN_IF_ERROR(w.write_row(header));
  return w;
}

Status CsvWriter::write_row(const std::vector<std::string>& fields) {
  if (fields.size() != columns_)
    return internal_error("CSV row has " + std::to_string(fields.size()) + " fields, header has " +
                          std::to_string(columns_));
  out_ << csv_row(fields);
  out_.flush();
  if (!out_) return resource_exhausted("error writing CSV file '" + path_ + "'");
  return ok_status();
}

}  // namespace boo::bench
