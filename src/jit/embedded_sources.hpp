// boo: the device sources (src/kernels/**.cuh, src/ops/*/device/*.cuh), embedded at build time.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace boo::jit {

struct EmbeddedSource {
  std::string_view include_name;  ///< "boo/conv/conv_direct.cuh", as device code includes it
  std::string_view text;
  std::string_view sha256;
};

/// Every embedded device source (generated table).
std::span<const EmbeddedSource> embedded_sources();

/// The source included as `include_name`, or nullptr.
const EmbeddedSource* find_embedded_source(std::string_view include_name);

/// SHA-256 over the names and hashes of the embedded sources that `text`
/// includes, directly or through other embedded sources: it changes exactly
/// when a header the program uses changes (part of every cache key).
std::string included_sources_digest(std::string_view text);

}  // namespace boo::jit
