// boo: deterministic inputs: OpDefinition's default arguments, and make_arguments
// (the defaults, then the op's derived ones).
#include "ops/input_generation.hpp"

#include "base/parallel.hpp"
#include "base/random.hpp"
#include "ops/op_definition.hpp"

namespace boo::ops {

uint64_t input_stream(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (char ch : name) h = (h ^ static_cast<uint8_t>(ch)) * 0x100000001b3ull;
  return h;
}

void fill_uniform(base::HostTensor& tensor, uint64_t seed, uint64_t stream) {
  const TensorSpec& spec = tensor.spec();
  std::byte* data = tensor.data();
  base::visit_dtype(spec.dtype, [&](auto d) {
    base::parallel_for(spec.numel(), [&](int64_t begin, int64_t end) {
      base::for_each_offset_in(spec, begin, end, [&](int64_t i, int64_t offset) {
        base::store_element<decltype(d)::value>(data, offset, base::uniform_pm1(seed, stream, static_cast<uint64_t>(i)));
      });
    });
  });
}

void fill_splat(base::HostTensor& tensor, double value) {
  const TensorSpec& spec = tensor.spec();
  std::byte* data = tensor.data();
  base::visit_dtype(spec.dtype, [&](auto d) {
    base::parallel_for(spec.numel(), [&](int64_t begin, int64_t end) {
      base::for_each_offset_in(spec, begin, end,
                               [&](int64_t, int64_t offset) { base::store_element<decltype(d)::value>(data, offset, value); });
    });
  });
}

Result<std::vector<base::HostTensor>> OpDefinition::make_arguments(const OpSignature& sig,
                                                                   const InputOptions& options) const {
  BOO_ASSIGN_OR_RETURN(std::vector<base::HostTensor> args, make_default_arguments(sig, options));
  BOO_RETURN_IF_ERROR(derive_arguments(sig, args));
  return args;
}

Result<std::vector<base::HostTensor>> OpDefinition::make_default_arguments(const OpSignature& sig,
                                                                           const InputOptions& options) const {
  std::vector<base::HostTensor> args;
  for (TensorSpec& spec : sig.arguments()) {
    BOO_ASSIGN_OR_RETURN(base::HostTensor t, base::HostTensor::allocate(std::move(spec)));
    if (options.splat) fill_splat(t, *options.splat);
    else fill_uniform(t, options.seed, input_stream(t.spec().name));
    args.push_back(std::move(t));
  }
  return args;
}

}  // namespace boo::ops
