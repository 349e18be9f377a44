// boo: .npy files.
#include "base/npy.hpp"

#include <cstring>
#include <fstream>
#include <sstream>

#include "base/checked_int.hpp"
#include "base/file_util.hpp"
#include "base/strings.hpp"

namespace boo::base {
namespace {

using base::CheckedInt;

const char kMagic[] = "\x93NUMPY";

}  // namespace

Status write_npy(const std::string& path, const HostTensor& tensor) {
  const TensorSpec& src = tensor.spec();
  TensorSpec dense{src.name, src.shape, contiguous_strides(src.shape),
                   src.dtype == DType::kBF16 ? DType::kF32 : src.dtype, ""};
  HostTensor out = convert_tensor(tensor, dense);
  const char* descr = dense.dtype == DType::kF16   ? "<f2"
                      : dense.dtype == DType::kF64 ? "<f8"
                      : dense.dtype == DType::kI64 ? "<i8"
                                                   : "<f4";
  // Python tuple syntax: "()", "(5,)", "(2, 3)".
  std::string shape = "(";
  for (size_t i = 0; i < dense.shape.size(); ++i) {
    if (i) shape += ", ";
    shape += std::to_string(dense.shape[i]);
  }
  shape += dense.shape.size() == 1 ? ",)" : ")";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Magic (6) + version (2) + header length (2) + header + '\n', padded to 64 bytes.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string bytes(kMagic, 6);
  bytes += '\x01';
  bytes += '\x00';
  uint16_t len = static_cast<uint16_t>(header.size());
  bytes += static_cast<char>(len & 0xff);
  bytes += static_cast<char>(len >> 8);
  bytes += header;
  bytes.append(reinterpret_cast<const char*>(out.data()), out.size_bytes());
  return write_file_atomic(path, bytes);
}

Result<HostTensor> read_npy(const std::string& path) {
  BOO_ASSIGN_OR_RETURN(std::string bytes, read_file(path));
  if (bytes.size() < 10 || bytes.compare(0, 6, kMagic, 6) != 0)
    return data_loss(path + ": not a .npy file");
  size_t header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
  if (bytes[6] != 1 || bytes.size() < 10 + header_len)
    return data_loss(path + ": unsupported .npy version or truncated header");
  std::string header = bytes.substr(10, header_len);
  auto field = [&](const std::string& key) -> std::string {
    size_t p = header.find("'" + key + "':");
    if (p == std::string::npos) return "";
    return header.substr(p + key.size() + 3);
  };
  std::string descr = field("descr");
  DType dtype;
  if (descr.find("'<f4'") != std::string::npos) dtype = DType::kF32;
  else if (descr.find("'<f2'") != std::string::npos) dtype = DType::kF16;
  else if (descr.find("'<f8'") != std::string::npos) dtype = DType::kF64;
  else return unimplemented(path + ": only little-endian f2/f4/f8 arrays are supported");
  if (field("fortran_order").find("True") == 1)
    return unimplemented(path + ": Fortran-ordered arrays are not supported");
  std::string shape_text = field("shape");
  size_t open = shape_text.find('('), close = shape_text.find(')');
  if (open == std::string::npos || close == std::string::npos) return data_loss(path + ": bad shape field");
  std::vector<int64_t> shape;
  for (const std::string& dim : split(shape_text.substr(open + 1, close - open - 1), ',')) {
    BOO_ASSIGN_OR_RETURN(int64_t d, parse_int(dim));
    shape.push_back(d);
  }
  // The data's size is checked against the shape before anything is allocated for it.
  CheckedInt data_bytes = static_cast<int64_t>(dtype_size_bytes(dtype));
  for (int64_t d : shape) data_bytes = d < 0 ? CheckedInt(-1) : data_bytes * d;
  if (!data_bytes.ok() || data_bytes.value() != static_cast<int64_t>(bytes.size() - 10 - header_len))
    return data_loss(path + ": data size does not match the shape");
  TensorSpec spec{"", shape, contiguous_strides(shape), dtype, ""};
  HostTensor tensor(spec);
  if (tensor.size_bytes() > 0) std::memcpy(tensor.data(), bytes.data() + 10 + header_len, tensor.size_bytes());
  return tensor;
}

}  // namespace boo::base
