// Streaming GGUF v3 writer (see gguf_writer.h). All multi-byte values are little-endian, as
// GGUF requires; this code assumes a little-endian host (x86-64, aarch64).
#include "runtime/gguf/gguf_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "ops/error.h"
#include "runtime/gguf/gguf_names.h"

namespace gguflow {
namespace {

constexpr uint32_t kGgufMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr uint32_t kGgufVersion = 3;
constexpr size_t kFileBufferBytes = 4 << 20;  // stdio buffer: large sequential writes

uint64_t align_up(uint64_t n, uint64_t alignment) { return (n + alignment - 1) / alignment * alignment; }

std::string errno_text() { return std::strerror(errno); }

// `alignment`, checked before the output file is created.
uint32_t checked_alignment(const std::string& path, uint32_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    throw error("GGUF writer for ", path, ": alignment ", alignment, " is not a power of two");
  return alignment;
}

}  // namespace

GgufWriter::GgufWriter(std::string path, uint32_t alignment)
    : path_(std::move(path)), alignment_(checked_alignment(path_, alignment)), out_(path_),
      file_(out_.stream()) {
  std::setvbuf(file_, nullptr, _IOFBF, kFileBufferBytes);
}

// ---- serialization helpers --------------------------------------------------------------------

void GgufWriter::put_bytes(std::vector<uint8_t>& out, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  out.insert(out.end(), p, p + n);
}

void GgufWriter::put_string(std::vector<uint8_t>& out, std::string_view s) {
  const uint64_t n = s.size();
  put_bytes(out, &n, sizeof n);
  put_bytes(out, s.data(), s.size());
}

void GgufWriter::put_scalar(std::vector<uint8_t>& out, GgufValueType type, const GgufValue& v) {
  switch (type) {
    case GgufValueType::kU8: { uint8_t x = static_cast<uint8_t>(v.number.u64); put_bytes(out, &x, 1); break; }
    case GgufValueType::kI8: { int8_t x = static_cast<int8_t>(v.number.i64); put_bytes(out, &x, 1); break; }
    case GgufValueType::kU16: { uint16_t x = static_cast<uint16_t>(v.number.u64); put_bytes(out, &x, 2); break; }
    case GgufValueType::kI16: { int16_t x = static_cast<int16_t>(v.number.i64); put_bytes(out, &x, 2); break; }
    case GgufValueType::kU32: { uint32_t x = static_cast<uint32_t>(v.number.u64); put_bytes(out, &x, 4); break; }
    case GgufValueType::kI32: { int32_t x = static_cast<int32_t>(v.number.i64); put_bytes(out, &x, 4); break; }
    case GgufValueType::kU64: put_bytes(out, &v.number.u64, 8); break;
    case GgufValueType::kI64: put_bytes(out, &v.number.i64, 8); break;
    case GgufValueType::kF32: { float x = static_cast<float>(v.number.f64); put_bytes(out, &x, 4); break; }
    case GgufValueType::kF64: put_bytes(out, &v.number.f64, 8); break;
    case GgufValueType::kBool: { uint8_t x = v.number.u64 ? 1 : 0; put_bytes(out, &x, 1); break; }
    case GgufValueType::kString: put_string(out, v.str); break;
    case GgufValueType::kArray: {
      const uint32_t element_type = static_cast<uint32_t>(v.element_type);
      const uint64_t count = v.array_size();
      put_bytes(out, &element_type, 4);
      put_bytes(out, &count, 8);
      for (uint64_t i = 0; i < count; ++i) {
        const GgufValue item = v.array_item(i);
        if (item.type != v.element_type)
          throw error("GGUF writer for ", path_, ": array of ", gguf_value_type_name(v.element_type),
                      " holds an item of type ", gguf_value_type_name(item.type));
        put_scalar(out, v.element_type, item);
      }
      break;
    }
    default:
      throw error("GGUF writer for ", path_, ": unknown metadata value type ",
                  static_cast<uint32_t>(type));
  }
}

void GgufWriter::put_value(std::vector<uint8_t>& out, const GgufValue& value) {
  put_scalar(out, value.type, value);
}

void GgufWriter::begin_value(std::string_view key, GgufValueType type) {
  if (header_written_)
    throw error("GGUF writer for ", path_, ": metadata '", key, "' set after the header was written");
  if (has_key(key)) throw error("GGUF writer for ", path_, ": metadata key '", key, "' set twice");
  if (key == names::kAlignment && type != GgufValueType::kU32)
    throw error("GGUF writer for ", path_, ": metadata '", key, "' must be a u32");
  keys_.emplace_back(key);
  put_string(metadata_, key);
  const uint32_t t = static_cast<uint32_t>(type);
  put_bytes(metadata_, &t, sizeof t);
  ++n_kv_;
}

bool GgufWriter::has_key(std::string_view key) const {
  return std::find(keys_.begin(), keys_.end(), key) != keys_.end();
}

// ---- typed setters ------------------------------------------------------------------------------

#define GGUFLOW_DEFINE_SETTER(name, ctype, value_type)            \
  void GgufWriter::name(std::string_view key, ctype v) {          \
    begin_value(key, GgufValueType::value_type);                  \
    put_bytes(metadata_, &v, sizeof v);                           \
  }
GGUFLOW_DEFINE_SETTER(set_u8, uint8_t, kU8)
GGUFLOW_DEFINE_SETTER(set_i8, int8_t, kI8)
GGUFLOW_DEFINE_SETTER(set_u16, uint16_t, kU16)
GGUFLOW_DEFINE_SETTER(set_i16, int16_t, kI16)
GGUFLOW_DEFINE_SETTER(set_i32, int32_t, kI32)
GGUFLOW_DEFINE_SETTER(set_u64, uint64_t, kU64)
GGUFLOW_DEFINE_SETTER(set_i64, int64_t, kI64)
GGUFLOW_DEFINE_SETTER(set_f32, float, kF32)
GGUFLOW_DEFINE_SETTER(set_f64, double, kF64)
#undef GGUFLOW_DEFINE_SETTER

void GgufWriter::set_u32(std::string_view key, uint32_t v) {
  if (key == names::kAlignment && v != alignment_)
    throw error("GGUF writer for ", path_, ": metadata '", key, "' = ", v,
                " differs from the writer's alignment ", alignment_);
  begin_value(key, GgufValueType::kU32);
  put_bytes(metadata_, &v, sizeof v);
}

void GgufWriter::set_bool(std::string_view key, bool v) {
  begin_value(key, GgufValueType::kBool);
  const uint8_t b = v ? 1 : 0;
  put_bytes(metadata_, &b, 1);
}

void GgufWriter::set_string(std::string_view key, std::string_view v) {
  begin_value(key, GgufValueType::kString);
  put_string(metadata_, v);
}

namespace {
template <typename Strings>
void put_string_array_header(std::vector<uint8_t>& out, const Strings& v) {
  const uint32_t element_type = static_cast<uint32_t>(GgufValueType::kString);
  const uint64_t count = v.size();
  const auto* t = reinterpret_cast<const uint8_t*>(&element_type);
  out.insert(out.end(), t, t + 4);
  const auto* c = reinterpret_cast<const uint8_t*>(&count);
  out.insert(out.end(), c, c + 8);
}
}  // namespace

void GgufWriter::set_string_array(std::string_view key, std::span<const std::string> v) {
  begin_value(key, GgufValueType::kArray);
  put_string_array_header(metadata_, v);
  for (const std::string& s : v) put_string(metadata_, s);
}

void GgufWriter::set_string_array(std::string_view key, std::span<const std::string_view> v) {
  begin_value(key, GgufValueType::kArray);
  put_string_array_header(metadata_, v);
  for (std::string_view s : v) put_string(metadata_, s);
}

void GgufWriter::set_f32_array(std::string_view key, std::span<const float> v) {
  begin_value(key, GgufValueType::kArray);
  const uint32_t element_type = static_cast<uint32_t>(GgufValueType::kF32);
  const uint64_t count = v.size();
  put_bytes(metadata_, &element_type, 4);
  put_bytes(metadata_, &count, 8);
  put_bytes(metadata_, v.data(), v.size_bytes());
}

void GgufWriter::set_i32_array(std::string_view key, std::span<const int32_t> v) {
  begin_value(key, GgufValueType::kArray);
  const uint32_t element_type = static_cast<uint32_t>(GgufValueType::kI32);
  const uint64_t count = v.size();
  put_bytes(metadata_, &element_type, 4);
  put_bytes(metadata_, &count, 8);
  put_bytes(metadata_, v.data(), v.size_bytes());
}

void GgufWriter::set(std::string_view key, const GgufValue& value) {
  // Serialize into a scratch buffer first so a bad value leaves the metadata unchanged.
  if (key == names::kAlignment) {
    if (value.type != GgufValueType::kU32) begin_value(key, value.type);  // throws
    set_u32(key, static_cast<uint32_t>(value.number.u64));
    return;
  }
  std::vector<uint8_t> encoded;
  put_value(encoded, value);
  begin_value(key, value.type);
  metadata_.insert(metadata_.end(), encoded.begin(), encoded.end());
}

// ---- tensors ------------------------------------------------------------------------------------

uint64_t GgufWriter::add_tensor(std::string_view name, uint32_t type,
                                std::span<const uint64_t> dims) {
  if (header_written_)
    throw error("GGUF writer for ", path_, ": tensor '", name, "' added after the header was written");
  for (const GgufTensorInfo& t : tensors_) {
    if (t.name == name) throw error("GGUF writer for ", path_, ": tensor '", name, "' added twice");
  }
  if (dims.empty() || dims.size() > 4)
    throw error("GGUF writer for ", path_, ": tensor '", name, "' has ", dims.size(),
                " dimensions; expected 1 to 4");
  const GgmlTypeInfo* info = ggml_type_info(type);
  if (info->block_size == 0)
    throw error("GGUF writer for ", path_, ": tensor '", name, "' has GGML type id ", type,
                " whose size is unknown");
  if (dims[0] % info->block_size != 0)
    throw error("GGUF writer for ", path_, ": tensor '", name, "' of type ", info->name,
                " has rows of ", dims[0], " elements; expected a multiple of ", info->block_size);

  GgufTensorInfo t;
  t.name = std::string(name);
  t.type = type;
  t.dims.assign(dims.begin(), dims.end());
  t.offset = data_size_;
  const uint64_t bytes = t.n_bytes();
  tensors_.push_back(std::move(t));
  tensor_bytes_.push_back(bytes);
  data_size_ = align_up(data_size_ + bytes, alignment_);
  return tensors_.back().offset;
}

// ---- file output --------------------------------------------------------------------------------

void GgufWriter::write_raw(const void* data, size_t n) {
  if (n && std::fwrite(data, 1, n, file_) != n)
    throw error("GGUF writer for ", path_, ": write failed: ", errno_text());
}

void GgufWriter::write_zeros(uint64_t n) {
  static const uint8_t kZeros[256] = {};
  while (n) {
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(n, sizeof kZeros));
    write_raw(kZeros, chunk);
    n -= chunk;
  }
}

void GgufWriter::copy_metadata(const GgufFile& source,
                               std::initializer_list<std::string_view> except) {
  for (const GgufKeyValue& kv : source.metadata()) {
    if (std::find(except.begin(), except.end(), kv.key) != except.end()) continue;
    set(kv.key, kv.value);
  }
}

void GgufWriter::write_header() {
  GGUFLOW_CHECK(!header_written_);
  // A non-default alignment must be recorded for readers to find the tensors.
  if (alignment_ != 32 && !has_key(names::kAlignment)) set_u32(names::kAlignment, alignment_);
  std::vector<uint8_t> header;
  const uint64_t n_tensors = tensors_.size();
  put_bytes(header, &kGgufMagic, 4);
  put_bytes(header, &kGgufVersion, 4);
  put_bytes(header, &n_tensors, 8);
  put_bytes(header, &n_kv_, 8);
  header.insert(header.end(), metadata_.begin(), metadata_.end());
  for (const GgufTensorInfo& t : tensors_) {
    put_string(header, t.name);
    const uint32_t n_dims = static_cast<uint32_t>(t.dims.size());
    put_bytes(header, &n_dims, 4);
    put_bytes(header, t.dims.data(), t.dims.size() * sizeof(uint64_t));
    put_bytes(header, &t.type, 4);
    put_bytes(header, &t.offset, 8);
  }
  write_raw(header.data(), header.size());
  if (!tensors_.empty()) write_zeros(align_up(header.size(), alignment_) - header.size());
  header_written_ = true;
  metadata_.clear();
  metadata_.shrink_to_fit();
}

void GgufWriter::write_tensor_data(const void* data, size_t n_bytes) {
  if (!header_written_) throw error("GGUF writer for ", path_, ": tensor data before the header");
  const auto* p = static_cast<const uint8_t*>(data);
  while (n_bytes > 0) {
    if (current_tensor_ >= tensors_.size())
      throw error("GGUF writer for ", path_, ": ", n_bytes,
                  " bytes of tensor data beyond the last declared tensor");
    const uint64_t want = tensor_bytes_[current_tensor_] - current_written_;
    const size_t n = static_cast<size_t>(std::min<uint64_t>(want, n_bytes));
    write_raw(p, n);
    p += n;
    n_bytes -= n;
    current_written_ += n;
    if (current_written_ == tensor_bytes_[current_tensor_]) {
      write_zeros(align_up(current_written_, alignment_) - current_written_);
      ++current_tensor_;
      current_written_ = 0;
    }
  }
}

void GgufWriter::finish() {
  if (!header_written_) write_header();
  // Zero-byte tensors complete without any data call.
  while (current_tensor_ < tensors_.size() && tensor_bytes_[current_tensor_] == 0) ++current_tensor_;
  if (current_tensor_ != tensors_.size())
    throw error("GGUF writer for ", path_, ": tensor '", tensors_[current_tensor_].name,
                "' received ", current_written_, " of ", tensor_bytes_[current_tensor_],
                " bytes; the file is incomplete");
  file_ = nullptr;
  out_.commit();  // flush, fsync, close, rename into place
}

}  // namespace gguflow
