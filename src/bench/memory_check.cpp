// boo: a command's memory against the host's and the device's.
#include "bench/memory_check.hpp"

#include <limits>

#include "base/checked_int.hpp"
#include "base/host_memory.hpp"

namespace boo::bench {
namespace {

using base::CheckedInt;

CheckedInt storage_bytes(const std::vector<TensorSpec>& specs) {
  CheckedInt sum = 0;
  for (const TensorSpec& s : specs) sum += CheckedInt(s.storage_elems()) * static_cast<int64_t>(dtype_size_bytes(s.dtype));
  return sum;
}

CheckedInt float64_bytes(const std::vector<TensorSpec>& specs) {
  CheckedInt sum = 0;
  for (const TensorSpec& s : specs) sum += CheckedInt(s.numel()) * 8;
  return sum;
}

uint64_t saturated(CheckedInt bytes) {
  return bytes.ok() ? static_cast<uint64_t>(bytes.value()) : std::numeric_limits<uint64_t>::max();
}

}  // namespace

uint64_t host_bytes_needed(const OpSignature& sig, int64_t result_copies, bool reference) {
  const std::vector<TensorSpec> args = sig.arguments(), results = sig.results();
  CheckedInt bytes = storage_bytes(args) + storage_bytes(results) * result_copies;
  // The reference reads float64 copies of its operands and writes float64 results.
  if (reference) bytes += float64_bytes(args) + float64_bytes(results);
  return saturated(bytes);
}

Status check_host_memory(const OpSignature& sig, int64_t result_copies, bool reference) {
  return base::check_host_bytes(host_bytes_needed(sig, result_copies, reference),
                                reference ? "this command (inputs, results and the float64 CPU reference)"
                                          : "this command (inputs and results)");
}

Status check_device_memory(const OpSignature& sig, const DeviceInfo& device) {
  const uint64_t bytes = saturated(storage_bytes(sig.arguments()) + storage_bytes(sig.results()));
  if (device.total_memory_bytes <= 0 || bytes <= static_cast<uint64_t>(device.total_memory_bytes)) return ok_status();
  return resource_exhausted("this command's inputs and results need " + base::format_bytes(bytes) +
                            " of device memory; " + device.name + " has " +
                            base::format_bytes(static_cast<uint64_t>(device.total_memory_bytes)));
}

}  // namespace boo::bench
