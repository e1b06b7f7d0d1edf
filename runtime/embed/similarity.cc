#include "runtime/embed/similarity.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "ops/error.h"

namespace gguflow::embed {

std::vector<double> cosine_matrix(const std::vector<float>& vectors, int64_t n, int64_t dim) {
  GGUFLOW_CHECK(static_cast<int64_t>(vectors.size()) == n * dim);
  std::vector<double> norms(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    double s = 0;
    for (int64_t k = 0; k < dim; ++k) s += double(vectors[i * dim + k]) * vectors[i * dim + k];
    norms[i] = std::sqrt(s);
  }
  std::vector<double> m(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = i; j < n; ++j) {
      double dot = 0;
      for (int64_t k = 0; k < dim; ++k) dot += double(vectors[i * dim + k]) * vectors[j * dim + k];
      const double denom = norms[i] * norms[j];
      const double c = denom > 0 ? dot / denom : 0.0;
      m[i * n + j] = m[j * n + i] = c;
    }
  }
  return m;
}

std::string text_snippet(const std::string& text, size_t max_chars) {
  std::string out;
  size_t chars = 0;
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (chars == max_chars) return out + "...";
    if (c < 0x20 || c == 0x7F) out += ' ';
    else out.append(text, i, len);
    i += len;
    ++chars;
  }
  return out;
}

std::string similarity_table(const std::vector<double>& matrix,
                             const std::vector<SimilarityLabel>& labels) {
  const int64_t n = static_cast<int64_t>(labels.size());
  GGUFLOW_CHECK(static_cast<int64_t>(matrix.size()) == n * n);
  auto tag = [&](int64_t i) {
    std::string t(1, '[');
    t += std::to_string(labels[i].index);
    t += ']';
    return t;
  };
  // Cells are at least 7 wide ("  0.123", " -0.456"); the label column fits the widest tag.
  int label_width = 3;
  for (int64_t i = 0; i < n; ++i) label_width = std::max(label_width, static_cast<int>(tag(i).size()));
  const int cell_width = std::max(6, label_width);
  std::string out = "cosine similarity of " + std::to_string(n) + " text" + (n == 1 ? "" : "s") + "\n";
  char cell[64];
  std::snprintf(cell, sizeof cell, "%*s", label_width, "");
  out += cell;
  for (int64_t j = 0; j < n; ++j) {
    std::snprintf(cell, sizeof cell, " %*s", cell_width, tag(j).c_str());
    out += cell;
  }
  out += '\n';
  for (int64_t i = 0; i < n; ++i) {
    std::snprintf(cell, sizeof cell, "%*s", label_width, tag(i).c_str());
    out += cell;
    for (int64_t j = 0; j < n; ++j) {
      std::snprintf(cell, sizeof cell, " %*.3f", cell_width, matrix[i * n + j]);
      out += cell;
    }
    out += '\n';
  }
  out += '\n';
  for (int64_t i = 0; i < n; ++i) {
    std::snprintf(cell, sizeof cell, "%*s", label_width, tag(i).c_str());
    out += std::string(cell) + " line " + std::to_string(labels[i].line) + ": " +
           text_snippet(labels[i].text, 60) + "\n";
  }
  return out;
}

}  // namespace gguflow::embed
