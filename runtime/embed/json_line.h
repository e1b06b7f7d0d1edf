// The part of JSON that `gguflow embed` reads: one object per line (JSON Lines), from which it
// takes one string field. Parsed strictly (RFC 8259, nlohmann-json): the whole line must be one
// object.
#pragma once

#include <string>
#include <string_view>

namespace gguflow::embed {

// What a line held, for the caller's error message.
struct JsonField {
  bool found = false;         // the object has the key
  bool is_string = false;     // ... and its value is a string
  std::string value;          // the decoded string (UTF-8; \uXXXX and surrogate pairs decoded)
  std::string found_type;     // when found but not a string: "number", "array", ...
};

// Parses `line` as one JSON object and returns its field `key` (the last one when repeated).
// Throws gguflow::Error "parse error at line 1, column C: ..." (1-based byte column) when the
// line is not a single valid JSON object, or when the string holds a NUL character (\u0000: no
// text to embed has one, and C strings downstream would cut it).
JsonField json_object_field(std::string_view line, std::string_view key);

}  // namespace gguflow::embed
