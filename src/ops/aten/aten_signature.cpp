// boo: AtenSignature's shared members.
#include "ops/aten/aten_signature.hpp"

#include "base/sha256.hpp"
#include "base/strings.hpp"

namespace boo::ops::aten {

std::string AtenSignature::func_name() const {
  std::string name = "aten_" + call_.op.substr(call_.op.rfind(':') + 1);
  bool typed = false;
  for (size_t i = 0; i < call_.args.size(); ++i) {
    if (!call_.is_tensor(i)) continue;
    const std::optional<DType> dtype = float_dtype(call_.args[i].dtype);
    if (!typed && dtype) name += "_" + std::string(dtype_name(*dtype));
    typed = typed || dtype.has_value();
    name += "_" + (call_.args[i].shape.empty() ? std::string("scalar") : base::join_ints(call_.args[i].shape, "x"));
  }
  return name + "_" + base::sha256_hex(call_.command()).substr(0, 8);
}

bool AtenSignature::equals(const OpSignature& other) const {
  const auto* o = dynamic_cast<const AtenSignature*>(&other);
  return o && o->op_name() == op_name() && o->call_ == call_;
}

}  // namespace boo::ops::aten
