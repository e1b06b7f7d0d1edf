#include "runtime/core/json.h"

namespace gguflow {

std::string json_text(const Json& value, int indent) {
  return value.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

}  // namespace gguflow
