// Streaming GGUF v3 writer.
//
// Usage: declare metadata (`set_*`, or `set` to copy a value read by GgufFile) and every
// tensor (`add_tensor`: name, type, dims), then `write_header()`, then stream each tensor's
// bytes in declaration order with `write_tensor_data` (any number of calls per tensor, so a
// tool never holds a whole model in memory), then `finish()`.
//
// Layout (GGUF v3, as ggml's gguf writer): header, metadata, tensor infos, zero padding to
// `alignment`, then each tensor's bytes at an offset that is a multiple of `alignment`, each
// followed by zero padding to the alignment. A file without tensors ends after the tensor
// infos (like llama.cpp's vocab-only files).
//
// The file is written under a temporary name in the same folder (runtime/core/output_file.h)
// and renamed to `path` only by a successful `finish()`; a writer destroyed before that removes
// the temporary file, so a failed tool never leaves a partial model under the final name. I/O
// failures throw gguflow::Error naming the file.
#pragma once

#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/output_file.h"
#include "runtime/gguf/gguf_file.h"

namespace gguflow {

class GgufWriter {
 public:
  // Opens the temporary file for writing (throws naming `path` when that fails). `alignment` must be a
  // power of two; when it is not 32 it is recorded as `general.alignment` (u32) unless the
  // caller sets that key itself (to the same value: a different one throws).
  explicit GgufWriter(std::string path, uint32_t alignment = 32);
  GgufWriter(const GgufWriter&) = delete;
  GgufWriter& operator=(const GgufWriter&) = delete;

  // ---- metadata (before write_header); a key may be set once -------------------------------
  void set_u8(std::string_view key, uint8_t v);
  void set_i8(std::string_view key, int8_t v);
  void set_u16(std::string_view key, uint16_t v);
  void set_i16(std::string_view key, int16_t v);
  void set_u32(std::string_view key, uint32_t v);
  void set_i32(std::string_view key, int32_t v);
  void set_u64(std::string_view key, uint64_t v);
  void set_i64(std::string_view key, int64_t v);
  void set_f32(std::string_view key, float v);
  void set_f64(std::string_view key, double v);
  void set_bool(std::string_view key, bool v);
  void set_string(std::string_view key, std::string_view v);
  void set_string_array(std::string_view key, std::span<const std::string> v);
  void set_string_array(std::string_view key, std::span<const std::string_view> v);
  void set_f32_array(std::string_view key, std::span<const float> v);
  void set_i32_array(std::string_view key, std::span<const int32_t> v);
  // Any value, including arrays of arrays, with the type it carries (f32 values are written
  // as f32, so a value read from a file is written back bit-exactly).
  void set(std::string_view key, const GgufValue& value);
  bool has_key(std::string_view key) const;
  // Copies every key/value of `source` in file order, except the keys listed in `except`.
  void copy_metadata(const GgufFile& source, std::initializer_list<std::string_view> except = {});

  // ---- tensors (before write_header) --------------------------------------------------------
  // dims: ne0 first. The byte size follows from the type's block geometry; ne0 must be a
  // multiple of the block size. Returns the tensor's offset in the data section.
  uint64_t add_tensor(std::string_view name, uint32_t type, std::span<const uint64_t> dims);
  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }

  // ---- writing ------------------------------------------------------------------------------
  void write_header();
  // Appends the next bytes of the current tensor; crossing a tensor's end continues with the
  // next one (padding is inserted automatically). Throws when more bytes than declared arrive.
  void write_tensor_data(const void* data, size_t n_bytes);
  // Checks that every tensor received all its bytes, flushes, closes, renames to `path`.
  void finish();

  const std::string& path() const { return path_; }

 private:
  void begin_value(std::string_view key, GgufValueType type);
  void put_bytes(std::vector<uint8_t>& out, const void* data, size_t n);
  void put_string(std::vector<uint8_t>& out, std::string_view s);
  void put_value(std::vector<uint8_t>& out, const GgufValue& value);
  void put_scalar(std::vector<uint8_t>& out, GgufValueType type, const GgufValue& value);
  void write_raw(const void* data, size_t n);
  void write_zeros(uint64_t n);

  std::string path_;
  uint32_t alignment_;
  OutputFile out_;                  // the temporary file, renamed into place by finish()
  std::FILE* file_ = nullptr;       // out_.stream() until finish()
  uint64_t n_kv_ = 0;
  std::vector<uint8_t> metadata_;  // serialized key/value pairs, in order
  std::vector<std::string> keys_;
  std::vector<GgufTensorInfo> tensors_;
  std::vector<uint64_t> tensor_bytes_;  // byte size of each tensor
  uint64_t data_size_ = 0;              // running end of the data section (aligned)
  bool header_written_ = false;
  size_t current_tensor_ = 0;           // tensor being streamed
  uint64_t current_written_ = 0;        // bytes of it written so far
};

}  // namespace gguflow
