// Errors in OpenAI's shape: {"error": {"message", "type", "param", "code"}} with the HTTP
// status clients map to their exception types (400 BadRequestError, 401
// AuthenticationError, 404 NotFoundError, 429 RateLimitError, ...).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace sy::server {

struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;  ///< the request field at fault; empty: none
  std::string code;   ///< machine-readable; empty: none

  [[nodiscard]] nlohmann::ordered_json to_json() const {
    nlohmann::ordered_json e{{"message", message}, {"type", type}};
    e["param"] = param.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(param);
    e["code"] = code.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(code);
    return {{"error", e}};
  }
};

/// A 400 about one field.
inline ApiError bad_field(const std::string& param, const std::string& message, const std::string& code = "invalid_value") {
  return {400, message, "invalid_request_error", param, code};
}

}  // namespace sy::server
