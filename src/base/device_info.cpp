// boo: device descriptions.
#include <algorithm>
#include <charconv>
#include <string_view>

#include "boo/device.hpp"

namespace boo {

std::string DeviceInfo::arch() const {
  const std::string base = "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
  // Arch-specific ("a") targets exist for 9.0 and the 10.x/12.x families.
  return (cc_major == 9 && cc_minor == 0) || cc_major >= 10 ? base + "a" : base;
}

Result<DeviceInfo> DeviceInfo::for_arch(const std::string& arch) {
  // "sm_" then one major digit, the minor digits, and an optional "a" (no <regex>: see nvrtc_compiler.cpp).
  const std::string_view digits = std::string_view(arch).substr(std::min<size_t>(arch.size(), 3));
  const size_t minor_end = digits.size() - (digits.ends_with('a') ? 1 : 0);
  const bool well_formed = arch.starts_with("sm_") && minor_end >= 2 &&
                           digits.substr(0, minor_end).find_first_not_of("0123456789") == std::string_view::npos;
  if (!well_formed)
    return invalid_argument("--arch '" + arch + "': expected an NVRTC target such as sm_90a or sm_80");
  DeviceInfo d;
  d.cc_major = digits[0] - '0';
  std::from_chars(digits.data() + 1, digits.data() + minor_end, d.cc_minor);
  d.name = arch + " (no device)";
  if (d.cc_major < 7) return invalid_argument("--arch " + arch + ": boo needs compute capability 7.0 or newer");
  if (d.arch() != arch)
    return invalid_argument("--arch " + arch + ": boo compiles for " + d.arch() + " on this architecture");
  // Resources of the flagship part of each generation (H100 SXM for sm_90a).
  d.sm_count = d.cc_major == 9 ? 132 : d.cc_major == 8 ? 108 : 80;
  d.max_shared_bytes_per_block = d.cc_major >= 9 ? 232448 : d.cc_major == 8 ? 166912 : 98304;
  return d;
}

}  // namespace boo
