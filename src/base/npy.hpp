// boo: reading and writing NumPy .npy files (format version 1.0).
#pragma once

#include <string>

#include "base/host_tensor.hpp"
#include "boo/status.hpp"

namespace boo::base {

/// Writes `tensor` in its logical shape, C-contiguous. float32/float16/float64
/// keep their dtype; bfloat16, which NumPy lacks, is written as float32 (exact).
Status write_npy(const std::string& path, const HostTensor& tensor);

/// Reads a little-endian, C-ordered float16/float32/float64 .npy file.
Result<HostTensor> read_npy(const std::string& path);

}  // namespace boo::base
