#include "runtime/core/json.h"

#include "ops/error.h"

namespace gguflow {

Json parse_json(std::string_view text) {
  const Json::parser_callback_t limit_depth = [](int depth, Json::parse_event_t, Json&) {
    if (depth > kMaxJsonDepth)
      throw error("arrays and objects nested more than ", kMaxJsonDepth, " levels deep");
    return true;
  };
  try {
    return Json::parse(text, limit_depth);
  } catch (const Json::exception& e) {  // parse_error, and out_of_range for a number like 1e999
    const std::string what = e.what();
    const size_t start = what.find("] ");
    throw error(start == std::string::npos ? what : what.substr(start + 2));
  }
}

std::string json_text(const Json& value, int indent) {
  return value.dump(indent, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

}  // namespace gguflow
