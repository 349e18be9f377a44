// boo: one ATen op call as PyTorch's profiler records it (record_shapes):
//
//   aten::<op> "<shapes>" "<dtypes>" "<strides>" "<concrete inputs>"
//
// four Python-literal lists with one entry per argument of the op's schema:
// the shape and strides of a tensor ([] for a scalar or None), its dtype name
// ("float", "c10::BFloat16", "Scalar" for a number, "" for None), and the
// value of a non-tensor argument ("1", "False", "None", "[1, 1]"; "" for a
// tensor). An AtenCall is that line read once; the ATen ops (aten_op.hpp)
// turn it into a signature.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "boo/status.hpp"
#include "boo/tensor.hpp"

namespace boo::ops::aten {

/// One argument's entries in the four lists.
struct AtenArg {
  std::vector<int64_t> shape;
  std::string dtype;  ///< as written: "float", "c10::Half", "Scalar", "" (None)
  std::vector<int64_t> strides;
  std::string value;  ///< the concrete input: "" for a tensor, "1", "0.5", "True", "None", "[1, 1]"
  bool operator==(const AtenArg&) const = default;
};

struct AtenCall {
  std::string op;  ///< "aten::mm"
  std::vector<AtenArg> args;

  /// The canonical line: the op and its four lists in Python's repr, each
  /// double-quoted; parse_aten_call reads it back to an equal call.
  std::string command() const;
  bool operator==(const AtenCall&) const = default;

  // Typed reads of argument `i`. Errors name the op, the argument's position
  // and what was expected (INVALID_ARGUMENT; UNIMPLEMENTED for a dtype boo
  // does not compute in).

  /// "argument 2 of aten::addmm" for messages.
  std::string where(size_t i) const;
  /// INVALID_ARGUMENT unless the call has between `min` and `max` arguments;
  /// `schema` (e.g. "mm(Tensor self, Tensor mat2)") names them in the error.
  Status expect_arity(size_t min, size_t max, std::string_view schema) const;
  /// Whether argument `i` is absent or None (dtype "" and value "" or "None").
  bool is_none(size_t i) const;
  /// Whether argument `i` is a tensor (its dtype names a tensor element type).
  bool is_tensor(size_t i) const;
  /// Tensor `i` as a TensorSpec called `name`: float, double, c10::Half or
  /// c10::BFloat16, with the recorded shape and strides.
  Result<TensorSpec> tensor(size_t i, std::string name) const;
  Result<int64_t> integer(size_t i) const;
  Result<double> number(size_t i) const;
  Result<bool> boolean(size_t i) const;
  /// An int[] argument ("[1, 1]"; a single integer is repeated `fill` times when fill > 0).
  Result<std::vector<int64_t>> int_list(size_t i, size_t fill = 0) const;
};

/// Whether tensor `t` (a call's recorded shape and strides) is stored with the dense strides that
/// `order` (its dims, outermost first) gives; a size-1 dim's stride is arbitrary.
bool stored_in_order(const TensorSpec& t, const std::vector<int>& order);

/// The element type of an ATen dtype name: float, double, c10::Half,
/// c10::BFloat16 (nullopt for any other name).
std::optional<DType> float_dtype(std::string_view name);

/// Reads the four lists of `op` (the words after the op token, quotes
/// already removed). Errors say which list, where, and what was expected;
/// lists of different lengths are an error naming each length.
Result<AtenCall> parse_aten_call(std::string op, std::span<const std::string> lists);

}  // namespace boo::ops::aten
