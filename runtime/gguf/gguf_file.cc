// GGUF parsing: header, metadata, tensor table, with every count, length and offset checked
// against the file size before it is used.
//
// Layout (all little-endian; v1 uses u32 for counts, string lengths, array lengths and dims):
//   "GGUF" u32 version  u64 n_tensors  u64 n_kv
//   n_kv x { string key, u32 value_type, value }
//   n_tensors x { string name, u32 n_dims, u64 dims[n_dims], u32 ggml_type, u64 offset }
//   padding to `general.alignment` (default 32), then the data section.
#include "runtime/gguf/gguf_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "ops/error.h"
#include "runtime/core/checked_math.h"
#include "runtime/core/input_registry.h"

namespace gguflow {
namespace {

constexpr uint32_t kMaxDims = 4;
constexpr int kMaxArrayNesting = 8;

// Sequential bounds-checked reader over the file bytes.
class Cursor {
 public:
  Cursor(const std::string& name, const uint8_t* data, uint64_t size, uint32_t version)
      : name_(name), data_(data), size_(size), version_(version) {}

  uint64_t pos() const { return pos_; }
  const std::string& name() const { return name_; }
  const uint8_t* here() const { return data_ + pos_; }
  void skip(uint64_t n, const char* what) {
    need(n, what);
    pos_ += n;
  }
  uint64_t remaining() const { return size_ - pos_; }

  template <typename T>
  T read(const char* what) {
    need(sizeof(T), what);
    T value;
    std::memcpy(&value, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }

  // Counts and lengths are u32 in GGUF v1 and u64 from v2 on.
  uint64_t read_count(const char* what) {
    return version_ == 1 ? read<uint32_t>(what) : read<uint64_t>(what);
  }

  std::string_view read_string(const char* what) {
    uint64_t at = pos_;
    uint64_t length = read_count(what);
    if (length > remaining())
      throw error(name_, ": byte ", at, ": ", what, " has length ", length,
                  ", which runs past the end of the file (", remaining(), " bytes left)");
    std::string_view s(reinterpret_cast<const char*>(data_ + pos_), length);
    pos_ += length;
    return s;
  }

  [[noreturn]] void fail(uint64_t at, const std::string& message) const {
    throw error(name_, ": byte ", at, ": ", message);
  }

 private:
  void need(uint64_t n, const char* what) const {
    if (n > remaining())
      throw error(name_, ": byte ", pos_, ": file truncated: expected ", what, " (", n,
                  " bytes) but the file ends at byte ", size_);
  }

  const std::string& name_;
  const uint8_t* data_;
  uint64_t size_;
  uint64_t pos_ = 0;
  uint32_t version_;
};

// Smallest encoding of one element of `type`: used to reject absurd counts before allocating.
uint64_t min_value_bytes(GgufValueType type, uint32_t version) {
  switch (type) {
    case GgufValueType::kU8: case GgufValueType::kI8: case GgufValueType::kBool: return 1;
    case GgufValueType::kU16: case GgufValueType::kI16: return 2;
    case GgufValueType::kU32: case GgufValueType::kI32: case GgufValueType::kF32: return 4;
    case GgufValueType::kU64: case GgufValueType::kI64: case GgufValueType::kF64: return 8;
    case GgufValueType::kString: return version == 1 ? 4 : 8;
    case GgufValueType::kArray: return (version == 1 ? 4 : 8) + 4;
  }
  return 1;
}

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string dims_text(const std::vector<uint64_t>& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + std::to_string(dims[i]);
  return out + "]";
}

bool valid_value_type(uint32_t t) { return t <= static_cast<uint32_t>(GgufValueType::kF64); }

void read_value(Cursor& in, GgufValueType type, GgufValue& out, uint32_t version, int depth) {
  out.type = type;
  out.origin = &in.name();
  switch (type) {
    case GgufValueType::kU8: out.number.u64 = in.read<uint8_t>("a u8 value"); break;
    case GgufValueType::kI8: out.number.i64 = in.read<int8_t>("an i8 value"); break;
    case GgufValueType::kU16: out.number.u64 = in.read<uint16_t>("a u16 value"); break;
    case GgufValueType::kI16: out.number.i64 = in.read<int16_t>("an i16 value"); break;
    case GgufValueType::kU32: out.number.u64 = in.read<uint32_t>("a u32 value"); break;
    case GgufValueType::kI32: out.number.i64 = in.read<int32_t>("an i32 value"); break;
    case GgufValueType::kU64: out.number.u64 = in.read<uint64_t>("a u64 value"); break;
    case GgufValueType::kI64: out.number.i64 = in.read<int64_t>("an i64 value"); break;
    case GgufValueType::kF32: out.number.f64 = in.read<float>("an f32 value"); break;
    case GgufValueType::kF64: out.number.f64 = in.read<double>("an f64 value"); break;
    case GgufValueType::kBool: {
      uint64_t at = in.pos();
      uint8_t b = in.read<uint8_t>("a bool value");
      if (b > 1) in.fail(at, "expected a bool (0 or 1), found " + std::to_string(b));
      out.number.u64 = b;
      break;
    }
    case GgufValueType::kString: out.str = in.read_string("a string value"); break;
    case GgufValueType::kArray: {
      if (depth >= kMaxArrayNesting)
        in.fail(in.pos(), "arrays nested deeper than " + std::to_string(kMaxArrayNesting));
      uint64_t at = in.pos();
      uint32_t element = in.read<uint32_t>("an array element type");
      if (!valid_value_type(element))
        in.fail(at, "expected an array element type 0..12, found " + std::to_string(element));
      out.element_type = static_cast<GgufValueType>(element);
      at = in.pos();
      uint64_t count = in.read_count("an array length");
      uint64_t min_bytes = min_value_bytes(out.element_type, version);
      if (count > in.remaining() / min_bytes)
        in.fail(at, "array of " + std::to_string(count) + " " +
                        gguf_value_type_name(out.element_type) + " cannot fit in the " +
                        std::to_string(in.remaining()) + " bytes left in the file");
      if (out.element_type == GgufValueType::kArray) {
        out.items.resize(count);
        for (auto& item : out.items) read_value(in, out.element_type, item, version, depth + 1);
        break;
      }
      // Flat arrays stay in the mapping (see GgufValue::flat); elements are still checked.
      out.flat = true;
      out.flat_count = count;
      out.flat_data = in.here();
      if (out.element_type == GgufValueType::kString) {
        out.flat_strings.reserve(count);
        for (uint64_t i = 0; i < count; ++i) out.flat_strings.push_back(in.read_string("a string in an array"));
      } else if (out.element_type == GgufValueType::kBool) {
        for (uint64_t i = 0; i < count; ++i) {
          uint64_t at_bool = in.pos();
          uint8_t b = in.read<uint8_t>("a bool in an array");
          if (b > 1) in.fail(at_bool, "expected a bool (0 or 1), found " + std::to_string(b));
        }
      } else {
        in.skip(count * min_bytes, "the elements of an array");
      }
      break;
    }
  }
}

}  // namespace

uint64_t GgufTensorInfo::n_elements() const {
  if (auto n = checked_product<uint64_t>(dims)) return *n;
  throw error("tensor '", name, "': the element count overflows 64 bits");
}

uint64_t GgufTensorInfo::n_rows() const { return dims.empty() ? 1 : n_elements() / dims[0]; }

const char* GgufTensorInfo::type_name() const {
  const char* name = ggml_type_info(type)->name;
  return name ? name : "unknown";
}

uint64_t GgufTensorInfo::row_bytes() const {
  const GgmlTypeInfo* t = ggml_type_info(type);
  if (t->block_size == 0)
    throw error("tensor '", name, "' has type ", type_name(), " (id ", type,
                "), whose size gguflow cannot compute (the format was removed from GGML)");
  if (auto bytes = checked_mul<uint64_t>(row_length() / t->block_size, t->type_size)) return *bytes;
  throw error("tensor '", name, "': the row size in bytes overflows 64 bits");
}

uint64_t GgufTensorInfo::n_bytes() const {
  if (auto bytes = checked_mul<uint64_t>(row_bytes(), n_rows())) return *bytes;
  throw error("tensor '", name, "' (", type_name(), ", ", n_elements(),
              " elements): the size in bytes overflows 64 bits");
}

std::shared_ptr<const GgufFile> GgufFile::open(const std::string& path) {
  // stat before open: opening a FIFO for reading blocks until a writer appears, so the type
  // is checked first; O_NONBLOCK covers a file replaced by a FIFO between the two calls, and
  // fstat re-checks the file actually opened.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw error(path, ": cannot open: ", std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw error(path, ": not a regular file (", file_kind(st.st_mode), ")");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw error(path, ": cannot open: ", std::strerror(errno));
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw error(path, ": not a regular file (", file_kind(st.st_mode), ")");
  }
  remember_input_file(st.st_dev, st.st_ino);
  std::shared_ptr<GgufFile> file(new GgufFile());
  file->path_ = path;
  file->size_ = static_cast<uint64_t>(st.st_size);
  if (file->size_ > 0) {
    void* p = ::mmap(nullptr, file->size_, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      int e = errno;
      ::close(fd);
      throw error(path, ": cannot map ", file->size_, " bytes: ", std::strerror(e));
    }
    file->mapping_ = p;
    file->data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
  file->parse_all();
  return file;
}

std::shared_ptr<const GgufFile> GgufFile::parse(std::string name, std::vector<uint8_t> bytes) {
  std::shared_ptr<GgufFile> file(new GgufFile());
  file->path_ = std::move(name);
  file->owned_ = std::move(bytes);
  file->data_ = file->owned_.data();
  file->size_ = file->owned_.size();
  file->parse_all();
  return file;
}

GgufFile::~GgufFile() {
  if (mapping_) ::munmap(mapping_, size_);
}

void GgufFile::parse_all() {
  Cursor magic_in(path_, data_, size_, 3);
  uint32_t magic = magic_in.read<uint32_t>("the magic \"GGUF\"");
  if (std::memcmp(&magic, "GGUF", 4) != 0) {
    std::string found(reinterpret_cast<const char*>(data_), 4);
    for (auto& c : found)
      if (c < 0x20 || c > 0x7e) c = '?';
    throw error(path_, ": byte 0: expected the magic \"GGUF\", found \"", found,
                "\" (not a GGUF file)");
  }
  version_ = magic_in.read<uint32_t>("the version");
  if (version_ < 1 || version_ > 3)
    throw error(path_, ": byte 4: expected GGUF version 1, 2 or 3, found ", version_,
                version_ >= 0x01000000 ? " (a big-endian file? only little-endian is supported)"
                                       : "");

  Cursor in(path_, data_, size_, version_);
  in.read<uint64_t>("the header");  // magic and version, checked above
  uint64_t at = in.pos();
  uint64_t n_tensors = in.read_count("the tensor count");
  uint64_t at_kv = in.pos();
  uint64_t n_kv = in.read_count("the metadata count");

  // A tensor info takes at least name length + n_dims + one dim + type + offset.
  const uint64_t min_tensor_bytes = version_ == 1 ? 4 + 4 + 4 + 4 + 8 : 8 + 4 + 8 + 4 + 8;
  if (n_tensors > in.remaining() / min_tensor_bytes)
    in.fail(at, "tensor count " + std::to_string(n_tensors) + " cannot fit in a file of " +
                    std::to_string(size_) + " bytes");
  const uint64_t min_kv_bytes = (version_ == 1 ? 4 : 8) + 4 + 1;
  if (n_kv > in.remaining() / min_kv_bytes)
    in.fail(at_kv, "metadata count " + std::to_string(n_kv) + " cannot fit in a file of " +
                       std::to_string(size_) + " bytes");

  metadata_.reserve(n_kv);
  for (uint64_t i = 0; i < n_kv; ++i) {
    uint64_t key_at = in.pos();
    GgufKeyValue kv;
    kv.key = std::string(in.read_string("a metadata key"));
    uint64_t type_at = in.pos();
    uint32_t type = in.read<uint32_t>("a metadata value type");
    if (!valid_value_type(type))
      in.fail(type_at, "metadata '" + kv.key + "': expected a value type 0..12, found " +
                           std::to_string(type));
    read_value(in, static_cast<GgufValueType>(type), kv.value, version_, 0);
    if (metadata_index_.count(kv.key)) in.fail(key_at, "duplicate metadata key '" + kv.key + "'");
    metadata_index_.emplace(kv.key, metadata_.size());
    metadata_.push_back(std::move(kv));
  }

  if (const GgufValue* a = find("general.alignment")) {
    if (!a->is_integer() || a->as_int("general.alignment") <= 0 ||
        (a->number.u64 & (a->number.u64 - 1)) != 0)
      throw error(path_, ": metadata 'general.alignment': expected a positive power of two, found ",
                  a->to_string());
    alignment_ = a->number.u64;
  }

  tensors_.reserve(n_tensors);
  for (uint64_t i = 0; i < n_tensors; ++i) {
    uint64_t info_at = in.pos();
    GgufTensorInfo t;
    t.name = std::string(in.read_string("a tensor name"));
    uint64_t dims_at = in.pos();
    uint32_t n_dims = in.read<uint32_t>("a tensor's dimension count");
    if (n_dims < 1 || n_dims > kMaxDims)
      in.fail(dims_at, "tensor '" + t.name + "': expected 1 to 4 dimensions, found " +
                           std::to_string(n_dims));
    uint64_t elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      uint64_t dim_at = in.pos();
      uint64_t dim = version_ == 1 ? in.read<uint32_t>("a tensor dimension")
                                   : in.read<uint64_t>("a tensor dimension");
      if (dim == 0) in.fail(dim_at, "tensor '" + t.name + "': dimension " + std::to_string(d) + " is zero");
      if (dim > (uint64_t{1} << 62) / elements)
        in.fail(dim_at, "tensor '" + t.name + "': dimensions overflow 2^62 elements");
      elements *= dim;
      t.dims.push_back(dim);
    }
    uint64_t type_at = in.pos();
    t.type = in.read<uint32_t>("a tensor type");
    if (!ggml_type_info(t.type)->name)
      in.fail(type_at, "tensor '" + t.name + "': unknown GGML type id " + std::to_string(t.type));
    uint64_t offset_at = in.pos();
    t.offset = in.read<uint64_t>("a tensor data offset");
    if (t.offset % alignment_ != 0)
      in.fail(offset_at, "tensor '" + t.name + "': data offset " + std::to_string(t.offset) +
                             " is not a multiple of the alignment " + std::to_string(alignment_));
    if (tensor_index_.count(t.name)) in.fail(info_at, "duplicate tensor name '" + t.name + "'");
    const GgmlTypeInfo* type_info = ggml_type_info(t.type);
    if (type_info->block_size > 1 && t.dims[0] % type_info->block_size != 0)
      in.fail(dims_at, "tensor '" + t.name + "': row length " + std::to_string(t.dims[0]) +
                           " is not a multiple of the " + t.type_name() + " block size " +
                           std::to_string(type_info->block_size));
    tensor_index_.emplace(t.name, tensors_.size());
    tensors_.push_back(std::move(t));
  }

  data_offset_ = (in.pos() + alignment_ - 1) / alignment_ * alignment_;
  // Every tensor's data [offset, offset + bytes) lies inside the file and no two tensors share
  // a byte. Sizes are computed with checked arithmetic: a product that wraps modulo 2^64 (dims
  // [4, 2^60] of F32 are 2^64 bytes, i.e. 0) is refused, never used.
  struct Extent {
    uint64_t begin, end;
    const GgufTensorInfo* t;
  };
  std::vector<Extent> extents;
  extents.reserve(tensors_.size());
  for (const auto& t : tensors_) {
    const GgmlTypeInfo* type_info = ggml_type_info(t.type);
    if (type_info->block_size == 0) continue;  // size reported when used
    const auto elements = checked_product<uint64_t>(t.dims);
    const auto row = checked_mul<uint64_t>(t.dims[0] / type_info->block_size, type_info->type_size);
    const auto bytes = row && elements ? checked_mul<uint64_t>(*row, *elements / t.dims[0]) : std::nullopt;
    if (!bytes)
      throw error(path_, ": tensor '", t.name, "' (", t.type_name(), ", dims ", dims_text(t.dims),
                  "): its size in bytes overflows 64 bits");
    const auto begin = checked_add<uint64_t>(data_offset_, t.offset);
    const auto end = begin ? checked_add<uint64_t>(*begin, *bytes) : std::nullopt;
    if (!end)
      throw error(path_, ": tensor '", t.name, "' (", t.type_name(), ", dims ", dims_text(t.dims),
                  "): data of ", *bytes, " bytes at offset ", t.offset,
                  " of the data section ends past 2^64: it lies past the end of the file (", size_, " bytes)");
    if (*end > size_)
      throw error(path_, ": tensor '", t.name, "': data [", *begin, ", ", *end,
                  ") lies past the end of the file (", size_, " bytes)");
    extents.push_back({*begin, *end, &t});
  }
  std::sort(extents.begin(), extents.end(),
            [](const Extent& a, const Extent& b) { return a.begin < b.begin; });
  for (size_t i = 1; i < extents.size(); ++i) {
    if (extents[i].begin < extents[i - 1].end)
      throw error(path_, ": tensors '", extents[i - 1].t->name, "' (bytes [", extents[i - 1].begin,
                  ", ", extents[i - 1].end, ")) and '", extents[i].t->name, "' (bytes [",
                  extents[i].begin, ", ", extents[i].end, ")) overlap: each tensor needs its own data");
  }
}

const GgufValue* GgufFile::find(std::string_view key) const {
  auto it = metadata_index_.find(key);
  return it == metadata_index_.end() ? nullptr : &metadata_[it->second].value;
}

const GgufValue& GgufFile::get(std::string_view key) const {
  if (const GgufValue* v = find(key)) return *v;
  throw error(path_, ": metadata key '", key, "' not found");
}

std::string GgufFile::architecture() const {
  const GgufValue* v = find("general.architecture");
  return v && v->type == GgufValueType::kString ? std::string(v->str) : std::string();
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const GgufTensorInfo& GgufFile::tensor(std::string_view name) const {
  if (const GgufTensorInfo* t = find_tensor(name)) return *t;
  throw error(path_, ": tensor '", name, "' not found");
}

std::span<const uint8_t> GgufFile::tensor_bytes(const GgufTensorInfo& info) const {
  uint64_t bytes = info.n_bytes();  // throws for a type of unknown size
  return {data_ + data_offset_ + info.offset, bytes};
}

}  // namespace gguflow
