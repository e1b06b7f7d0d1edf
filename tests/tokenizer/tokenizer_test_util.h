// Helpers shared by the tokenizer tests: loading a shared-data vocabulary once per process and
// reading llama.cpp's .inp/.out test vector files.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/tokenizer/tokenizer.h"

namespace gguflow::test {

// The tokenizer of a GGUF under shared data, e.g. "vocab/ggml-vocab-qwen2.gguf"; cached.
const Tokenizer& shared_tokenizer(const std::string& relative_path);

struct VocabVector {
  std::string text;              // bytes, exactly as in the .inp file
  std::vector<TokenId> expected;  // from the .out line
};
// All vectors of "vocab/ggml-vocab-NAME.gguf.inp/.out"; empty when the files are absent.
const std::vector<VocabVector>& vocab_vectors(const std::string& name);

std::string read_file_bytes(const std::string& path);

}  // namespace gguflow::test
