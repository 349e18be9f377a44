// boo: the interface every op signature implements.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "boo/status.hpp"
#include "boo/tensor.hpp"

namespace boo {

/// What the user asked for: one operation with all its shapes, layouts, dtype,
/// direction and fusions. Signatures are plain values; compile-time choices
/// (tile shapes, ...) and run-time arguments (pointers) live elsewhere.
class OpSignature {
 public:
  virtual ~OpSignature() = default;

  /// The op's registry name: "conv", "layernorm".
  virtual std::string_view op_name() const = 0;
  /// OK, or an error naming the offending value and the rule it breaks.
  virtual Status validate() const = 0;
  /// The canonical MIOpenDriver command; parse_command(command()) == *this.
  virtual std::string command() const = 0;
  /// BOO's function name for this signature (iree-turbine's func_name format).
  virtual std::string func_name() const = 0;
  /// Input tensors in launch order.
  virtual std::vector<TensorSpec> arguments() const = 0;
  /// Output tensors in launch order.
  virtual std::vector<TensorSpec> results() const = 0;
  /// Floating-point operations of one invocation (multiply-add = 2).
  virtual double flop_count() const = 0;
  /// Bytes one invocation must at least read and write (each tensor once).
  double min_bytes_moved() const;

  virtual std::unique_ptr<OpSignature> clone() const = 0;
  virtual bool equals(const OpSignature& other) const = 0;
};

}  // namespace boo
