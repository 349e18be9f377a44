// boo: lookups over the embedded device sources.
#include <set>
#include <vector>

#include "base/sha256.hpp"
#include "jit/embedded_sources.hpp"

namespace boo::jit {
namespace {

// Include names of the form #include "boo/..." in `text`.
std::vector<std::string> boo_includes(std::string_view text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while ((pos = text.find("#include \"boo/", pos)) != std::string_view::npos) {
    const size_t start = pos + 10;
    const size_t end = text.find('"', start);
    if (end == std::string_view::npos) break;
    out.emplace_back(text.substr(start, end - start));
    pos = end;
  }
  return out;
}

}  // namespace

const EmbeddedSource* find_embedded_source(std::string_view include_name) {
  for (const EmbeddedSource& s : embedded_sources())
    if (s.include_name == include_name) return &s;
  return nullptr;
}

std::string included_sources_digest(std::string_view text) {
  std::set<std::string> seen;
  std::vector<std::string> pending = boo_includes(text);
  while (!pending.empty()) {
    std::string name = pending.back();
    pending.pop_back();
    if (!seen.insert(name).second) continue;
    if (const EmbeddedSource* s = find_embedded_source(name)) {
      for (std::string& inner : boo_includes(s->text)) pending.push_back(std::move(inner));
    }
  }
  std::string record;
  for (const std::string& name : seen) {  // std::set: sorted, so the digest is order-independent
    const EmbeddedSource* s = find_embedded_source(name);
    record += name + "=" + (s ? std::string(s->sha256) : std::string("missing")) + "\n";
  }
  return base::sha256_hex(record);
}

}  // namespace boo::jit
