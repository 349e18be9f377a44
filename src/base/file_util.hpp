// boo: file utilities.
#pragma once

#include <string>
#include <string_view>

#include "boo/status.hpp"

namespace boo::base {

Result<std::string> read_file(const std::string& path);

/// Writes `bytes` to a temporary file in the same directory, fsyncs it and
/// renames it over `path`, so readers never see a partial file.
Status write_file_atomic(const std::string& path, std::string_view bytes);

/// mkdir -p.
Status make_directories(const std::string& path);

}  // namespace boo::base
