// A minimal JSON reader for the bench tests: parses a document (objects, arrays, strings with
// simple escapes, numbers, true/false/null) into a tree, so tests check keys and values
// structurally rather than with regexes. Throws std::runtime_error on malformed input.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace gguflow::test {

struct JsonNode {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonNode> array;
  std::map<std::string, JsonNode> object;

  bool has(const std::string& key) const { return object.count(key) != 0; }
  const JsonNode& at(const std::string& key) const { return object.at(key); }
};

JsonNode parse_json(const std::string& text);

}  // namespace gguflow::test
