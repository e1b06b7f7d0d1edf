// Small GGUF files written with the project's GgufWriter as seeds for fuzz_gguf_reader: one
// tensor of each GGML type with a known block size (a few rows of pseudo-random bytes, so every
// dequantizer runs), every metadata value type and nested arrays, and tiny vocabularies of each
// tokenizer kind and BPE pre-tokenizer. They are a few hundred bytes to a few KB, so the
// fuzzer mutates them far faster than the real models (which are also seeds).
#pragma once

#include <filesystem>

namespace gguflow::fuzz {

// Writes the seeds into `dir` (which must exist); returns how many.
int write_gguf_seeds(const std::filesystem::path& dir);

}  // namespace gguflow::fuzz
