// boo: Status implementation.
#include "boo/status.hpp"

namespace boo {

const char* status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "OK";
    case StatusCode::kInvalidArgument: return "INVALID_ARGUMENT";
    case StatusCode::kUnimplemented: return "UNIMPLEMENTED";
    case StatusCode::kFailedPrecondition: return "FAILED_PRECONDITION";
    case StatusCode::kResourceExhausted: return "RESOURCE_EXHAUSTED";
    case StatusCode::kNotFound: return "NOT_FOUND";
    case StatusCode::kDataLoss: return "DATA_LOSS";
    case StatusCode::kInternal: return "INTERNAL";
    case StatusCode::kUnavailable: return "UNAVAILABLE";
    case StatusCode::kDeadlineExceeded: return "DEADLINE_EXCEEDED";
  }
  return "UNKNOWN";
}

Status::Status(StatusCode code, std::string message, std::source_location where) {
  if (code != StatusCode::kOk) state_ = new State{code, std::move(message), where, {}};
}

Status::Status(const Status& other)
    : state_(other.state_ ? new State(*other.state_) : nullptr) {}

Status& Status::operator=(const Status& other) {
  if (this != &other) {
    delete state_;
    state_ = other.state_ ? new State(*other.state_) : nullptr;
  }
  return *this;
}

Status::~Status() { delete state_; }

StatusCode Status::code() const { return state_ ? state_->code : StatusCode::kOk; }

const std::string& Status::message() const {
  static const std::string kEmpty;
  return state_ ? state_->message : kEmpty;
}

Status& Status::annotate(std::string context) & {
  if (state_) state_->annotations.push_back(std::move(context));
  return *this;
}

Status&& Status::annotate(std::string context) && {
  if (state_) state_->annotations.push_back(std::move(context));
  return std::move(*this);
}

std::string Status::to_string() const {
  if (!state_) return "OK";
  std::string out = std::string(status_code_name(state_->code)) + ": " + state_->message;
  for (const std::string& a : state_->annotations) out += "; " + a;
  return out;
}

std::string Status::to_string_with_location() const {
  if (!state_) return "OK";
  return to_string() + " [at " + state_->where.file_name() + ":" +
         std::to_string(state_->where.line()) + "]";
}

Status invalid_argument(std::string message, std::source_location where) {
  return Status(StatusCode::kInvalidArgument, std::move(message), where);
}
Status unimplemented(std::string message, std::source_location where) {
  return Status(StatusCode::kUnimplemented, std::move(message), where);
}
Status failed_precondition(std::string message, std::source_location where) {
  return Status(StatusCode::kFailedPrecondition, std::move(message), where);
}
Status not_found(std::string message, std::source_location where) {
  return Status(StatusCode::kNotFound, std::move(message), where);
}
Status data_loss(std::string message, std::source_location where) {
  return Status(StatusCode::kDataLoss, std::move(message), where);
}
Status internal_error(std::string message, std::source_location where) {
  return Status(StatusCode::kInternal, std::move(message), where);
}
Status unavailable(std::string message, std::source_location where) {
  return Status(StatusCode::kUnavailable, std::move(message), where);
}
Status resource_exhausted(std::string message, std::source_location where) {
  return Status(StatusCode::kResourceExhausted, std::move(message), where);
}

}  // namespace boo
