// boo: SHA-256 (FIPS 180-4), for cache keys and artifact checksums.
#pragma once

#include <string>
#include <string_view>

namespace boo::base {

/// Lower-case hex digest of `data`.
std::string sha256_hex(std::string_view data);

}  // namespace boo::base
