// The program's one JSON library: nlohmann-json (Debian's nlohmann-json3-dev), for every --json
// output, the embed command's JSON Lines input and the server's requests and responses.
//
//   Json doc = {{"model", path}, {"ids", ids}};   // keys stay in insertion order
//   std::string text = json_text(doc);            // pretty, 2 spaces per level
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gguflow {

// Objects keep their keys in the order they were added, so documents read in the order the
// docs list their fields (a std::map would sort them).
using Json = nlohmann::ordered_json;

// The text of `value`: `indent` spaces per level, or one line when indent < 0. Bytes that are
// not valid UTF-8 in a string (a token that ends inside a multi-byte character) are written as
// U+FFFD instead of failing, so a document is always valid JSON. Non-finite numbers are null.
std::string json_text(const Json& value, int indent = 2);

// The most levels of nested arrays and objects parse_json accepts. Nothing the program reads
// nests past a few; a body of 100,000 nested arrays parses (nlohmann's parser is iterative) but
// overflowed the stack of the first thing that walked it recursively (a copy, or the dump of a
// value quoted in an error message): a one-request crash of the server.
inline constexpr int kMaxJsonDepth = 64;

// `text` as JSON. Throws gguflow::Error with the parser's message (without nlohmann's
// "[json.exception.parse_error.101]" id, which means nothing to a user), also for nesting
// deeper than kMaxJsonDepth and for numbers out of range (1e999).
Json parse_json(std::string_view text);

}  // namespace gguflow
