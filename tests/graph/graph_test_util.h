// Helpers shared by the graph tests: the shipped decode graph's text and a way to name the
// exact line and column of a piece of it (so error-location tests are computed, not typed).
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "ops/error.h"
#include "runtime/gguf/gguf_writer.h"
#include "runtime/graph/load.h"
#include "tests/support/test_data.h"

namespace gguflow::test {

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// A GGUF holding metadata only (general.architecture = `arch`), like a tokenizer file.
inline std::shared_ptr<const GgufFile> tensorless_model(const std::filesystem::path& path, const std::string& arch) {
  GgufWriter w(path.string());
  w.set_string("general.architecture", arch);
  w.write_header();
  w.finish();
  return GgufFile::open(path.string());
}

inline std::filesystem::path decode_yaml() { return source_dir() / "graphs" / "decode.yaml"; }

// "FILE:LINE:COL" of the first occurrence of `needle` (offset by `skip` characters into it).
inline std::string location_of(const std::string& file, const std::string& text, const std::string& needle,
                               size_t skip = 0) {
  const size_t at = text.find(needle);
  if (at == std::string::npos) return "<" + needle + " not in text>";
  const size_t pos = at + skip;
  size_t line = 1, col = 1;
  for (size_t i = 0; i < pos; ++i) {
    if (text[i] == '\n') ++line, col = 1;
    else ++col;
  }
  return file + ":" + std::to_string(line) + ":" + std::to_string(col);
}

// Replaces the first occurrence of `from` (which must exist) by `to`.
inline std::string replace_once(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "pattern not found: " << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// Loads `text` written to DIR/NAME and returns the error message ("" when it loads).
inline std::string load_error(const std::filesystem::path& path, const std::string& text,
                              std::shared_ptr<const GgufFile> model, const graph::LoadOptions& options = {}) {
  write_text(path, text);
  try {
    graph::load_graph(path.string(), std::move(model), options);
  } catch (const gguflow::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace gguflow::test
