// Status and Result: how errors cross the plugin boundary. Exceptions never do:
// every SDK entry point a plugin implements is noexcept and reports failure here.
#pragma once

#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace sy {

/// Broad class of a failure; the message carries the specifics for the user.
enum class StatusCode {
  ok = 0,
  invalid_argument,  ///< the caller passed something wrong (bad parameter, bad shape)
  not_found,         ///< a file, tensor, key or component does not exist
  io_error,          ///< the operating system refused a read, write or map
  corrupt,           ///< a file's contents contradict its own structure
  unsupported,       ///< valid, but this implementation cannot do it (yet)
  unavailable,       ///< a device or runtime that is needed is not present
  out_of_memory,     ///< an allocation failed
  out_of_range,      ///< a limit was reached (context length, token budget)
  exhausted,         ///< a pool is used up (sequence slots, cache blocks)
  internal,          ///< a bug: an invariant did not hold
};

/// Name of a status code, e.g. "invalid_argument".
const char* status_code_name(StatusCode code) noexcept;

/// Outcome of an operation: ok, or a code plus a sentence for the user.
class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  /// The success value.
  static Status ok() { return {}; }

  /// True when the operation succeeded.
  [[nodiscard]] bool is_ok() const noexcept { return code_ == StatusCode::ok; }
  explicit operator bool() const noexcept { return is_ok(); }

  /// The failure class (StatusCode::ok on success).
  [[nodiscard]] StatusCode code() const noexcept { return code_; }
  /// The user-facing sentence; empty on success.
  [[nodiscard]] const std::string& message() const noexcept { return message_; }

 private:
  StatusCode code_ = StatusCode::ok;
  std::string message_;
};

/// Shorthands that read well at the call site: `return sy::error::not_found("...")`.
namespace error {
inline Status invalid_argument(std::string m) { return {StatusCode::invalid_argument, std::move(m)}; }
inline Status not_found(std::string m) { return {StatusCode::not_found, std::move(m)}; }
inline Status io_error(std::string m) { return {StatusCode::io_error, std::move(m)}; }
inline Status corrupt(std::string m) { return {StatusCode::corrupt, std::move(m)}; }
inline Status unsupported(std::string m) { return {StatusCode::unsupported, std::move(m)}; }
inline Status unavailable(std::string m) { return {StatusCode::unavailable, std::move(m)}; }
inline Status out_of_memory(std::string m) { return {StatusCode::out_of_memory, std::move(m)}; }
inline Status out_of_range(std::string m) { return {StatusCode::out_of_range, std::move(m)}; }
inline Status resource_exhausted(std::string m) { return {StatusCode::exhausted, std::move(m)}; }
inline Status internal(std::string m) { return {StatusCode::internal, std::move(m)}; }
}  // namespace error

/// A value or the Status that explains why there is none.
template <class T>
class Result {
 public:
  /// A value: anything T can be built from (so a unique_ptr<Derived> makes a Result<unique_ptr<Base>>).
  template <class U>
    requires(std::is_constructible_v<T, U &&> && !std::is_same_v<std::remove_cvref_t<U>, Status> &&
             !std::is_same_v<std::remove_cvref_t<U>, Result>)
  Result(U&& value) : v_(std::in_place_index<0>, std::forward<U>(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    if (std::get<Status>(v_).is_ok())
      v_ = Status(StatusCode::internal, "a Result was built from an ok Status without a value");
  }

  /// True when a value is present.
  [[nodiscard]] bool has_value() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  /// The value; only valid when has_value().
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &std::get<T>(v_); }
  const T* operator->() const { return &std::get<T>(v_); }
  T& operator*() & { return value(); }

  /// The failure; Status::ok() when a value is present.
  [[nodiscard]] Status status() const { return has_value() ? Status::ok() : std::get<Status>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace sy
