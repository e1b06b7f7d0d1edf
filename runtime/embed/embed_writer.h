// Output of `gguflow embed`: one record per text, each written whole with a single fwrite so a
// run that stops (an error, a signal) leaves only complete records behind; the caller flushes
// once per batch. Formats:
//
//   jsonl  {"index": 3, "embedding": [0.1, -0.2, ...]}            one line per text
//          pooling none: {"index": 3, "tokens": T, "embedding": [[...], ... T rows]}
//   tsv    3<TAB>0.1<TAB>-0.2...                                  one line per text
//          pooling none: one line per token, "index<TAB>position<TAB>values..."
//   npy    NumPy format 1.0, little-endian float32, C order, shape (n_texts, dim)
//          pooling none: refused (rows per text differ); use jsonl or tsv
//
// Floats are printed in the shortest form that reads back to the same float (std::to_chars),
// so text outputs lose nothing.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/core/output_file.h"

namespace gguflow::embed {

enum class OutputFormat { kJsonl, kTsv, kNpy };

// Parses "jsonl", "tsv", "npy"; throws gguflow::Error naming the value and the accepted ones.
OutputFormat parse_output_format(std::string_view name);

class EmbeddingWriter {
 public:
  virtual ~EmbeddingWriter() = default;
  // `rows`: [n_rows][dim] floats of the text with input index `index` (n_rows is 1 unless the
  // writer was made per_token).
  virtual void write(int64_t index, const float* rows, int64_t n_rows) = 0;
  // Checks that the promised number of records came (npy) and flushes. Throws on a write error.
  virtual void finish() = 0;
};

// `out` stays owned by the caller. `n_texts` is the number of records that will be written
// (npy puts it in the header). Throws gguflow::Error for npy with per_token, and for npy to a
// terminal.
std::unique_ptr<EmbeddingWriter> make_embedding_writer(OutputFormat format, FILE* out,
                                                       std::string name, int64_t n_texts,
                                                       int64_t dim, bool per_token);

// Appends `v` in its shortest round-trip decimal form ("0.1", "-3.2e-05", "0").
void append_float(std::string* out, float v);

// The 128-byte-aligned NumPy 1.0 header for a little-endian float32 C-order array of `shape`.
std::string npy_header_f32(int64_t rows, int64_t cols);


}  // namespace gguflow::embed
