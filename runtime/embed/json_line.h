// The part of JSON that `gguflow embed` reads: one object per line (JSON Lines), from which it
// takes one string field. A small strict parser (RFC 8259): the whole line must be one object,
// every other value is checked and skipped.
#pragma once

#include <optional>
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
// Throws gguflow::Error "column C: expected ..., found ..." (1-based byte column) when the line
// is not a single valid JSON object.
JsonField json_object_field(std::string_view line, std::string_view key);

}  // namespace gguflow::embed
