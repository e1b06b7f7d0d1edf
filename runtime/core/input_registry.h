// The files this process reads as inputs (models, graphs, prompts, texts), by device and inode,
// so that OutputFile refuses an output path that names one of them (`quantize M.gguf M.gguf`,
// `tensor M.gguf NAME -o M.gguf`, `embed -f in.txt -o in.txt`) instead of replacing the input
// with the result: the comparison is on the file itself, whatever path (a link, ../) names it.
#pragma once

#include <sys/types.h>

#include <string>

namespace gguflow {

// Records an opened input (from its fstat/stat). Thread-safe.
void remember_input_file(dev_t device, ino_t inode);
// Records the file at `path` (following links) when it exists: for a command that opens an
// output before it reads the input (bench --json-file). Thread-safe.
void remember_input_path(const std::string& path);
// Whether that file was recorded as an input. Thread-safe.
bool is_input_file(dev_t device, ino_t inode);

}  // namespace gguflow
