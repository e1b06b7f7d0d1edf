// Read-only view of a GGUF file (versions 1, 2 and 3).
//
// The file is memory-mapped; tensor data is never copied: `tensor_bytes()` points into the
// mapping, so a `GgufFile` must outlive every view taken from it (hold it by shared_ptr).
// Every count, length, offset and size is checked against the file size while parsing; a bad
// file throws `gguflow::Error` naming the file, the byte offset, what was expected and found.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/abi/ggml_type.h"

namespace gguflow {

// Metadata value types, numbered as in the GGUF specification.
enum class GgufValueType : uint32_t {
  kU8 = 0, kI8 = 1, kU16 = 2, kI16 = 3, kU32 = 4, kI32 = 5, kF32 = 6, kBool = 7,
  kString = 8, kArray = 9, kU64 = 10, kI64 = 11, kF64 = 12,
};
const char* gguf_value_type_name(GgufValueType type);

// One metadata value. Strings are views into the mapping; arrays hold their elements.
class GgufValue {
 public:
  GgufValueType type = GgufValueType::kU8;

  bool is_integer() const;  // any of the eight integer types (not bool)
  bool is_number() const;   // integer or float
  // Accessors throw gguflow::Error (naming `what`, e.g. the key) when the type does not fit.
  int64_t as_int(std::string_view what = "value") const;  // integers; u64 above INT64_MAX throws
  double as_double(std::string_view what = "value") const;  // any number
  bool as_bool(std::string_view what = "value") const;
  std::string_view as_string(std::string_view what = "value") const;

  // Arrays. `element_type` of an empty array is as written in the file.
  GgufValueType element_type = GgufValueType::kU8;
  size_t array_size(std::string_view what = "value") const;
  GgufValue array_item(size_t i) const;  // i < array_size(); a copy for nested arrays
  // The elements as GgufValues: only for arrays held in `items` (nested arrays, and values
  // built in memory for the writer); a flat array parsed from a file throws (use the accessors).
  const std::vector<GgufValue>& as_array(std::string_view what = "value") const;
  std::vector<std::string_view> as_string_array(std::string_view what = "value") const;
  std::vector<double> as_double_array(std::string_view what = "value") const;
  std::vector<int64_t> as_int_array(std::string_view what = "value") const;

  // Human-readable rendering; long arrays are abbreviated to their first `max_items` items.
  std::string to_string(size_t max_items = 8) const;

  // Storage (public so the parser and writer can fill it; use the accessors to read).
  union {
    uint64_t u64;
    int64_t i64;
    double f64;
  } number{};
  std::string_view str;
  std::vector<GgufValue> items;
  // A flat array parsed from a file (elements of one non-array type) stays in the mapping
  // instead of costing one GgufValue per element (151k-token vocabularies): `flat_count`
  // elements from `flat_data`; string elements are located by `flat_strings`.
  bool flat = false;
  const uint8_t* flat_data = nullptr;
  uint64_t flat_count = 0;
  std::vector<std::string_view> flat_strings;
  // The path of the file the value was parsed from (null for values built in memory): accessor
  // errors name it, so "tokenizer.ggml.tokens: expected an array of strings" says which file.
  const std::string* origin = nullptr;

 private:
  std::string label(std::string_view what) const;  // "FILE: metadata 'what'" or `what`
};

struct GgufKeyValue {
  std::string key;
  GgufValue value;
};

struct GgufTensorInfo {
  std::string name;
  uint32_t type = 0;            // GGML type id (see plugins/abi/ggml_type.h)
  std::vector<uint64_t> dims;   // ne0 first: ne0 is the contiguous (row) length
  uint64_t offset = 0;          // relative to the start of the data section

  uint64_t n_elements() const;
  uint64_t row_length() const { return dims.empty() ? 1 : dims[0]; }
  uint64_t n_rows() const;      // product of dims[1..]
  const char* type_name() const;  // "Q4_K", or "type#200" when the id is unknown
  // Bytes of one row / of the whole tensor. Throws when the type's size cannot be computed
  // (a format removed from GGML), naming the tensor and the type.
  uint64_t row_bytes() const;
  uint64_t n_bytes() const;
};

class GgufFile {
 public:
  // Maps and parses `path`. Throws gguflow::Error on any malformed input.
  static std::shared_ptr<const GgufFile> open(const std::string& path);
  // Parses bytes already in memory (tests of truncated/malformed headers). `name` is used in
  // error messages in place of a path.
  static std::shared_ptr<const GgufFile> parse(std::string name, std::vector<uint8_t> bytes);

  ~GgufFile();
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint64_t file_bytes() const { return size_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // absolute offset of the data section

  // Metadata in file order, and lookup by key.
  const std::vector<GgufKeyValue>& metadata() const { return metadata_; }
  const GgufValue* find(std::string_view key) const;
  const GgufValue& get(std::string_view key) const;  // throws naming the key and the file
  // `general.architecture`, or "" when absent.
  std::string architecture() const;

  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* find_tensor(std::string_view name) const;
  const GgufTensorInfo& tensor(std::string_view name) const;  // throws naming the tensor
  // The tensor's bytes inside the mapping (no copy). Throws for types of unknown size.
  std::span<const uint8_t> tensor_bytes(const GgufTensorInfo& info) const;
  // The bytes are a read-only mapping of the file (open()), not a copy in memory (parse()):
  // their pages may be dropped from the process (madvise DONTNEED) and fault back in.
  bool is_file_mapping() const { return mapping_ != nullptr; }

 private:
  GgufFile() = default;
  void parse_all();

  std::string path_;
  const uint8_t* data_ = nullptr;  // whole file
  uint64_t size_ = 0;
  void* mapping_ = nullptr;        // mmap'ed region (null when parsed from memory)
  std::vector<uint8_t> owned_;     // bytes when parsed from memory
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<GgufKeyValue> metadata_;
  std::map<std::string, size_t, std::less<>> metadata_index_;
  std::vector<GgufTensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
};

}  // namespace gguflow
