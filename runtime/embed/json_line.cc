#include "runtime/embed/json_line.h"

#include "ops/error.h"
#include "runtime/core/json.h"

namespace gguflow::embed {

JsonField json_object_field(std::string_view line, std::string_view key) {
  const Json object = parse_json(line);
  if (!object.is_object())
    throw error("expected a JSON object, found a", object.is_array() ? "n " : " ",
                object.type_name());
  JsonField field;
  const auto it = object.find(std::string(key));
  if (it == object.end()) return field;
  field.found = true;
  field.is_string = it->is_string();
  if (!field.is_string) {
    field.found_type = it->type_name();
    return field;
  }
  field.value = it->get<std::string>();
  if (const size_t nul = field.value.find('\0'); nul != std::string::npos)
    throw error("expected text in \"", key, "\", found a NUL character (\\u0000) at byte ", nul);
  return field;
}

}  // namespace gguflow::embed
