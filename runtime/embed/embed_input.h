// Reading the texts `gguflow embed` turns into vectors: one text per line, or JSON Lines with a
// string field `text` per record. Everything is read and checked before any model work, so a
// bad input fails fast with its line number and nothing half-computed is written.
//
//   auto texts = read_embed_inputs("queries.jsonl", {});   // "-" reads stdin
//   for (const EmbedInput& in : texts) ...                 // in.index, in.line, in.text
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

namespace gguflow::embed {

enum class InputFormat {
  kAuto,   // jsonl when the file name ends in .jsonl or .ndjson, else text
  kText,   // one text per line (a trailing '\r' is removed)
  kJsonl,  // one JSON object per line with a string field "text"; other fields are ignored
};

// Parses "auto", "text", "jsonl"; throws gguflow::Error naming the value and the accepted ones.
InputFormat parse_input_format(std::string_view name);

struct InputOptions {
  InputFormat format = InputFormat::kAuto;
  // An empty text (an empty line, or "text": "") is an error naming the line unless this is set;
  // then it is skipped, and its index is not used by any output.
  bool skip_empty = false;
};

// One text to embed.
struct EmbedInput {
  int64_t index = 0;  // 0-based record number in the input (= line - 1 in both formats)
  int64_t line = 0;   // 1-based line in the input file
  std::string text;   // valid UTF-8, no NUL bytes
};

struct InputReport {
  std::vector<EmbedInput> texts;  // in input order
  int64_t skipped_empty = 0;      // with skip_empty: empty texts left out
};

// Reads `path` ("-" = stdin). Throws gguflow::Error "FILE:LINE: ..." for a missing or unreadable
// file, a NUL byte (binary data), invalid UTF-8 (with the byte column), a JSONL line that is not
// an object or has no string `text`, or an empty text without skip_empty. An input with no texts
// at all is an error too.
InputReport read_embed_inputs(const std::string& path, const InputOptions& options);
// The same from a stream; `name` is used in messages, `format` must not be kAuto.
InputReport read_embed_inputs(std::istream& in, const std::string& name, InputFormat format,
                              bool skip_empty);


}  // namespace gguflow::embed
