// JSON documents read back by tests (ours, such as the bench rows, and the reference files in
// ../shared/data/reference/generation) as a plain struct: parsed strictly by nlohmann-json
// (RFC 8259); numbers are kept as double; \uXXXX escapes (with surrogate pairs) become UTF-8.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gguflow::test {

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::map<std::string, JsonValue> object;

  // The member `key` of an object; throws std::runtime_error when absent or not an object.
  const JsonValue& operator[](const std::string& key) const;
  // An array of integers (throws when it is not one).
  std::vector<int> ints() const;
};

// Parses the whole text (surrounding whitespace allowed); throws std::runtime_error naming the
// byte offset of the first syntax error or of trailing garbage.
JsonValue parse_json(std::string_view text);

}  // namespace gguflow::test
