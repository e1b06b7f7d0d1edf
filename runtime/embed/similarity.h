// `gguflow embed --similarity`: the cosine similarity of every pair of texts, as a table a
// person can read for a handful of texts (and still a correct, wider one for more).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gguflow::embed {

// vectors: [n][dim] row-major. Returns [n][n] with cos(a, b) = a.b / (|a| |b|) computed in double
// (1 on the diagonal, 0 for a pair with a zero vector). Symmetric by construction.
std::vector<double> cosine_matrix(const std::vector<float>& vectors, int64_t n, int64_t dim);

// What the table calls row/column i.
struct SimilarityLabel {
  int64_t index = 0;  // the text's input index, shown as "[index]"
  int64_t line = 0;   // its input line
  std::string text;
};

// A table: a header of column labels, one row per text ("[index]" then n values with 3
// decimals), then a legend "[index] line L: <first characters of the text>" (whole UTF-8
// characters, control characters shown as spaces).
std::string similarity_table(const std::vector<double>& matrix,
                             const std::vector<SimilarityLabel>& labels);

// At most `max_chars` UTF-8 characters of `text` (valid UTF-8), "..." appended when cut, with
// tabs, newlines and other control characters replaced by spaces.
std::string text_snippet(const std::string& text, size_t max_chars);

}  // namespace gguflow::embed
