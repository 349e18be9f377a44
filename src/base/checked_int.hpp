// boo: checked int64 arithmetic for sizes, strides, offsets and output sizes.
//
// Every size a signature implies is computed with CheckedInt and compared with
// kMaxTensorElements before anything is allocated or planned. Once a signature
// has validated, products of its sizes that the references, tiers and kernels
// form (an index times a stride, a size times a few split-K slices) stay far
// inside int64, so they need no further checks.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>

namespace boo::base {

/// The largest element count of one tensor (and the largest stride, padding
/// or dilation) boo accepts: 2^48, far more than any device or host holds
/// (a 2^48-element bfloat16 tensor is 512 TiB), and low enough that a product
/// of such a size with another validated size or a small factor cannot
/// overflow the int64 arithmetic of the references and the kernels.
inline constexpr int64_t kMaxTensorElements = int64_t{1} << 48;

/// "2^48 (281474976710656)": the limit as messages print it.
inline std::string max_tensor_elements_text() { return "2^48 (" + std::to_string(kMaxTensorElements) + ")"; }

/// An int64 that remembers whether any operation that produced it
/// overflowed (or divided by zero). value() is meaningful only when ok().
class CheckedInt {
 public:
  constexpr CheckedInt(int64_t value) : value_(value) {}  // NOLINT: implicit by design

  constexpr bool ok() const { return ok_; }
  constexpr int64_t value() const { return value_; }
  /// The value, or `fallback` when an operation overflowed.
  constexpr int64_t value_or(int64_t fallback) const { return ok_ ? value_ : fallback; }

  friend constexpr CheckedInt operator+(CheckedInt a, CheckedInt b) {
    CheckedInt r = 0;
    return r.set(a, b, __builtin_add_overflow(a.value_, b.value_, &r.value_));
  }
  friend constexpr CheckedInt operator-(CheckedInt a, CheckedInt b) {
    CheckedInt r = 0;
    return r.set(a, b, __builtin_sub_overflow(a.value_, b.value_, &r.value_));
  }
  friend constexpr CheckedInt operator*(CheckedInt a, CheckedInt b) {
    CheckedInt r = 0;
    return r.set(a, b, __builtin_mul_overflow(a.value_, b.value_, &r.value_));
  }
  /// Truncating division; a zero divisor (and INT64_MIN / -1) is an overflow.
  friend constexpr CheckedInt operator/(CheckedInt a, CheckedInt b) {
    const bool bad = b.value_ == 0 || (a.value_ == std::numeric_limits<int64_t>::min() && b.value_ == -1);
    CheckedInt r = bad ? 0 : a.value_ / b.value_;
    return r.set(a, b, bad);
  }
  CheckedInt& operator+=(CheckedInt b) { return *this = *this + b; }
  CheckedInt& operator*=(CheckedInt b) { return *this = *this * b; }

 private:
  // The result of an operation on a and b: valid when both were and it did not overflow.
  constexpr CheckedInt set(CheckedInt a, CheckedInt b, bool overflowed) {
    ok_ = a.ok_ && b.ok_ && !overflowed;
    return *this;
  }
  int64_t value_;
  bool ok_ = true;
};

/// The product of `values`, checked.
constexpr CheckedInt checked_product(std::span<const int64_t> values) {
  CheckedInt p = 1;
  for (int64_t v : values) p *= v;
  return p;
}

/// `value` as a T when it fits, else nothing (flag values are read as int64
/// and must never be truncated silently).
template <typename T>
constexpr std::optional<T> narrow(int64_t value) {
  if (value < std::numeric_limits<T>::min() || value > std::numeric_limits<T>::max()) return std::nullopt;
  return static_cast<T>(value);
}

}  // namespace boo::base
