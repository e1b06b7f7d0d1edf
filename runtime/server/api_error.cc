#include "runtime/server/api_error.h"

namespace gguflow::server {

ApiError invalid_request(const std::string& message, const std::string& code) {
  return ApiError(400, message, "invalid_request_error", code);
}

Json error_body(const std::string& message, const std::string& type, const std::string& code) {
  return {{"error",
           {{"message", message},
            {"type", type},
            {"param", nullptr},
            {"code", code.empty() ? Json(nullptr) : Json(code)}}}};
}

}  // namespace gguflow::server
