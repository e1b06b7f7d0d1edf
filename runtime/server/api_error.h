// An error the server answers with an HTTP status and the OpenAI error body
//   {"error": {"message": "...", "type": "invalid_request_error", "code": "..."}}
// (the shape client libraries parse into their exception types).
#pragma once

#include <string>

#include "ops/error.h"
#include "runtime/core/json.h"

namespace gguflow::server {

class ApiError : public Error {
 public:
  // `type`: invalid_request_error, authentication_error, not_found_error, server_error, ...
  // `code`: a short machine-readable reason ("context_length_exceeded"), or "" for null.
  ApiError(int status, std::string message, std::string type, std::string code = "")
      : Error(message), status_(status), type_(std::move(type)), code_(std::move(code)) {}

  int status() const { return status_; }
  const std::string& type() const { return type_; }
  const std::string& code() const { return code_; }

 private:
  int status_;
  std::string type_, code_;
};

// 400 invalid_request_error: `message` names the field, what was expected and what was found.
ApiError invalid_request(const std::string& message, const std::string& code = "");

// The OpenAI error body for a status, message, type and code ("" -> null).
Json error_body(const std::string& message, const std::string& type, const std::string& code);
inline Json error_body(const ApiError& e) { return error_body(e.what(), e.type(), e.code()); }

}  // namespace gguflow::server
