// boo: OpDefinition's defaults and the helpers op folders share.
#include "ops/op_definition.hpp"

namespace boo::ops {

Result<double> OpDefinition::cancellation_scale(const OpSignature&, const std::vector<base::HostTensor>&,
                                                size_t) const {
  return 0.0;
}

Result<std::vector<double>> OpDefinition::element_allowances(const OpSignature&, const std::vector<base::HostTensor>&,
                                                             size_t, double, const std::vector<int64_t>*) const {
  return std::vector<double>{};
}

Result<std::vector<double>> OpDefinition::reference_sample(const OpSignature& sig,
                                                          const std::vector<base::HostTensor>& args,
                                                          size_t result_index, const std::vector<int64_t>& linear) const {
  BOO_ASSIGN_OR_RETURN(std::vector<base::HostTensor> all, reference(sig, args));
  const base::HostTensor& r = all.at(result_index);
  std::vector<double> out;
  out.reserve(linear.size());
  for (int64_t i : linear) out.push_back(r.load(base::offset_of_linear(r.spec(), i)));
  return out;
}

std::vector<base::HostTensor> make_f64_results(const OpSignature& sig) {
  std::vector<base::HostTensor> out;
  for (TensorSpec& spec : sig.results()) {
    spec.dtype = DType::kF64;
    out.emplace_back(std::move(spec));
  }
  return out;
}

}  // namespace boo::ops
