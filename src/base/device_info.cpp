// boo: device descriptions.
#include <regex>

#include "boo/device.hpp"

namespace boo {

std::string DeviceInfo::arch() const {
  const std::string base = "sm_" + std::to_string(cc_major) + std::to_string(cc_minor);
  // Arch-specific ("a") targets exist for 9.0 and the 10.x/12.x families.
  return (cc_major == 9 && cc_minor == 0) || cc_major >= 10 ? base + "a" : base;
}

Result<DeviceInfo> DeviceInfo::for_arch(const std::string& arch) {
  static const std::regex pattern(R"(sm_(\d)(\d+)a?)");
  std::smatch m;
  if (!std::regex_match(arch, m, pattern))
    return invalid_argument("--arch '" + arch + "': expected an NVRTC target such as sm_90a or sm_80");
  DeviceInfo d;
  d.cc_major = std::stoi(m[1]);
  d.cc_minor = std::stoi(m[2]);
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
