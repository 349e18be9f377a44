// boo: Status and Result<T>, the error model of the whole library.
//
// The library never throws and never exits: every fallible call returns a Status
// or a Result<T>. A Status carries a canonical code, a message, the source
// location where it was created and a chain of annotations added on the way up.
#pragma once

#include <optional>
#include <source_location>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace boo {

/// Canonical error codes (a small fixed set, after IREE's list).
enum class StatusCode {
  kOk = 0,
  kInvalidArgument,     ///< a bad signature, flag or value
  kUnimplemented,       ///< no implementation accepts the problem / unsupported op
  kFailedPrecondition,  ///< wrong architecture, driver too old, missing library
  kResourceExhausted,   ///< out of memory or shared memory
  kNotFound,            ///< cache miss, missing symbol or file
  kDataLoss,            ///< corrupt cache entry or file
  kInternal,            ///< a bug in boo
  kUnavailable,         ///< no device
  kDeadlineExceeded,    ///< a watchdog fired
};

/// "INVALID_ARGUMENT", "UNIMPLEMENTED", ...
const char* status_code_name(StatusCode code);

/// A success or an error with message, location and annotations. Cheap to move;
/// an OK status holds no allocation.
class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message,
         std::source_location where = std::source_location::current());

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const;
  /// The innermost message, without annotations.
  const std::string& message() const;
  /// Adds a line of context ("while compiling conv ...") on the way up.
  Status& annotate(std::string context) &;
  Status&& annotate(std::string context) &&;
  /// "INVALID_ARGUMENT: <message>; <annotation>; ..." on one line.
  std::string to_string() const;
  /// Same as to_string(), plus the source location of the origin.
  std::string to_string_with_location() const;

  Status(const Status& other);
  Status& operator=(const Status& other);
  Status(Status&& other) noexcept : state_(std::exchange(other.state_, nullptr)) {}
  Status& operator=(Status&& other) noexcept {
    if (this != &other) {
      Status old(std::move(*this));
      state_ = std::exchange(other.state_, nullptr);
    }
    return *this;
  }
  ~Status();

 private:
  struct State {
    StatusCode code;
    std::string message;
    std::source_location where;
    std::vector<std::string> annotations;
  };
  State* state_ = nullptr;  // Owned; nullptr means OK.
};

inline Status ok_status() { return Status(); }

// Constructors for the common codes, so call sites read as sentences.
Status invalid_argument(std::string message,
                        std::source_location where = std::source_location::current());
Status unimplemented(std::string message,
                     std::source_location where = std::source_location::current());
Status failed_precondition(std::string message,
                           std::source_location where = std::source_location::current());
Status not_found(std::string message,
                 std::source_location where = std::source_location::current());
Status data_loss(std::string message,
                 std::source_location where = std::source_location::current());
Status internal_error(std::string message,
                      std::source_location where = std::source_location::current());
Status unavailable(std::string message,
                   std::source_location where = std::source_location::current());
Status resource_exhausted(std::string message,
                          std::source_location where = std::source_location::current());

/// A value or an error Status (an std::expected-like type; C++20 has none).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}  // NOLINT: implicit by design

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  Status take_status() && { return std::move(status_); }

  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T&& operator*() && { return std::move(*value_); }

 private:
  std::optional<T> value_;
  Status status_;  // OK iff value_ is set.
};

}  // namespace boo

#define BOO_CONCAT_INNER_(a, b) a##b
#define BOO_CONCAT_(a, b) BOO_CONCAT_INNER_(a, b)

/// Returns the status of `expr` from the enclosing function when it is an error.
#define BOO_RETURN_IF_ERROR(expr)                          \
  do {                                                     \
    ::boo::Status boo_status_ = (expr);                    \
    if (!boo_status_.ok()) return boo_status_;             \
  } while (0)

/// Same, adding a line of context to the error.
#define BOO_RETURN_IF_ERROR_CTX(expr, context)                           \
  do {                                                                   \
    ::boo::Status boo_status_ = (expr);                                  \
    if (!boo_status_.ok()) return std::move(boo_status_).annotate(context); \
  } while (0)

/// `BOO_ASSIGN_OR_RETURN(auto x, f());` unwraps a Result or returns its error.
#define BOO_ASSIGN_OR_RETURN(lhs, expr) \
  BOO_ASSIGN_OR_RETURN_IMPL_(BOO_CONCAT_(boo_result_, __LINE__), lhs, expr)
#define BOO_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr)       \
  auto tmp = (expr);                                     \
  if (!tmp.ok()) return std::move(tmp).take_status();    \
  lhs = std::move(tmp).value()
