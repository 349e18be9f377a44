// boo: the host's memory as a limit.
#include "base/host_memory.hpp"

#include <malloc.h>
#include <unistd.h>

#include <cstdio>

namespace boo::base {

uint64_t host_memory_limit_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_size > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size) : UINT64_MAX;
}

Status check_host_bytes(uint64_t bytes, std::string_view what) {
  const uint64_t limit = host_memory_limit_bytes();
  if (bytes <= limit) return ok_status();
  return resource_exhausted(std::string(what) + " needs " + format_bytes(bytes) + " of host memory; this host has " +
                            format_bytes(limit));
}

void keep_freed_host_memory() {
  mallopt(M_MMAP_MAX, 0);         // large blocks from the heap, where freed ones are found again
  mallopt(M_TRIM_THRESHOLD, -1);  // and the heap's free top is never returned
}

std::string format_bytes(uint64_t bytes) {
  static const char* const kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024 && unit < 6) {
    v /= 1024;
    ++unit;
  }
  if (unit == 0) return std::to_string(bytes) + " bytes";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f %s (%llu bytes)", v, kUnits[unit], static_cast<unsigned long long>(bytes));
  return buf;
}

}  // namespace boo::base
