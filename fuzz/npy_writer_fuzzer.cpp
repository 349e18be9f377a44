// Fuzzes the .npy writer (and reader): a tensor of any rank up to 4, any
// dtype, any memory order and any element bits is written as .npy and read
// back; every element must come back equal (NaN as NaN), in the logical order.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>

#include "base/host_tensor.hpp"
#include "base/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  static const std::string path = "/tmp/boo-fuzz-npy-" + std::to_string(::getpid()) + ".npy";
  const int rank = data[0] % 5;
  const boo::DType dtype = static_cast<boo::DType>(data[1] % 4);
  const uint8_t order_bits = data[2];
  size_t at = 3;
  std::vector<int64_t> shape;
  for (int d = 0; d < rank; ++d) shape.push_back(at < size ? data[at++] % 6 : 1);  // 0..5: empty tensors too
  // A memory order: a rotation of the dimensions picked by the third byte.
  std::vector<int> order(static_cast<size_t>(rank));
  std::iota(order.begin(), order.end(), 0);
  if (rank > 0) std::rotate(order.begin(), order.begin() + order_bits % rank, order.end());
  boo::TensorSpec spec{"t", shape, boo::permuted_strides(shape, order), dtype, ""};
  boo::base::HostTensor tensor(spec);
  const size_t bytes = std::min(tensor.size_bytes(), size - at);
  if (bytes > 0) std::memcpy(tensor.data(), data + at, bytes);
  if (boo::Status st = boo::base::write_npy(path, tensor); !st.ok()) {
    std::fprintf(stderr, "npy_writer_fuzzer: write_npy failed: %s\n", st.to_string().c_str());
    std::abort();
  }
  boo::Result<boo::base::HostTensor> back = boo::base::read_npy(path);
  if (!back.ok() || back->spec().shape != shape) {
    std::fprintf(stderr, "npy_writer_fuzzer: read back %s\n", back.ok() ? "another shape" : back.status().to_string().c_str());
    std::abort();
  }
  for (int64_t i = 0; i < spec.numel(); ++i) {
    const double want = tensor.load(boo::base::offset_of_linear(spec, i));
    const double got = back->load(boo::base::offset_of_linear(back->spec(), i));
    if (!(want == got || (std::isnan(want) && std::isnan(got)))) {
      std::fprintf(stderr, "npy_writer_fuzzer: element %lld: wrote %g, read %g\n", static_cast<long long>(i), want, got);
      std::abort();
    }
  }
  return 0;
}
