#include "tests/support/json_value.h"

#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace gguflow::test {
namespace {

// The library's value as the tests' plain struct (numbers as double, as before).
JsonValue convert(const nlohmann::json& j) {
  JsonValue v;
  switch (j.type()) {
    case nlohmann::json::value_t::null: v.kind = JsonValue::Kind::kNull; break;
    case nlohmann::json::value_t::boolean:
      v.kind = JsonValue::Kind::kBool;
      v.boolean = j.get<bool>();
      break;
    case nlohmann::json::value_t::string:
      v.kind = JsonValue::Kind::kString;
      v.string = j.get<std::string>();
      break;
    case nlohmann::json::value_t::array:
      v.kind = JsonValue::Kind::kArray;
      for (const auto& e : j) v.array.push_back(convert(e));
      break;
    case nlohmann::json::value_t::object:
      v.kind = JsonValue::Kind::kObject;
      for (const auto& [key, e] : j.items()) v.object[key] = convert(e);
      break;
    default:  // the three number kinds
      v.kind = JsonValue::Kind::kNumber;
      v.number = j.get<double>();
  }
  return v;
}

}  // namespace

const JsonValue& JsonValue::operator[](const std::string& key) const {
  if (kind != Kind::kObject) throw std::runtime_error("JSON: not an object (looking up " + key + ")");
  const auto it = object.find(key);
  if (it == object.end()) throw std::runtime_error("JSON: no member '" + key + "'");
  return it->second;
}

std::vector<int> JsonValue::ints() const {
  if (kind != Kind::kArray) throw std::runtime_error("JSON: not an array");
  std::vector<int> out;
  for (const JsonValue& v : array) {
    if (v.kind != Kind::kNumber || v.number != std::floor(v.number))
      throw std::runtime_error("JSON: array element is not an integer");
    out.push_back(static_cast<int>(v.number));
  }
  return out;
}

JsonValue parse_json(std::string_view text) {
  try {
    return convert(nlohmann::json::parse(text));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(e.what());
  }
}

}  // namespace gguflow::test
