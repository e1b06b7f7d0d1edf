// The program's one JSON library: nlohmann-json (Debian's nlohmann-json3-dev), for every --json
// output, the embed command's JSON Lines input and the server's requests and responses.
//
//   Json doc = {{"model", path}, {"ids", ids}};   // keys stay in insertion order
//   std::string text = json_text(doc);            // pretty, 2 spaces per level
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace gguflow {

// Objects keep their keys in the order they were added, so documents read in the order the
// docs list their fields (a std::map would sort them).
using Json = nlohmann::ordered_json;

// The text of `value`: `indent` spaces per level, or one line when indent < 0. Bytes that are
// not valid UTF-8 in a string (a token that ends inside a multi-byte character) are written as
// U+FFFD instead of failing, so a document is always valid JSON. Non-finite numbers are null.
std::string json_text(const Json& value, int indent = 2);

}  // namespace gguflow
