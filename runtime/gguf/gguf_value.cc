// GgufValue accessors and rendering.
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "ops/error.h"
#include "runtime/gguf/gguf_file.h"

namespace gguflow {

const char* gguf_value_type_name(GgufValueType type) {
  switch (type) {
    case GgufValueType::kU8: return "u8";
    case GgufValueType::kI8: return "i8";
    case GgufValueType::kU16: return "u16";
    case GgufValueType::kI16: return "i16";
    case GgufValueType::kU32: return "u32";
    case GgufValueType::kI32: return "i32";
    case GgufValueType::kF32: return "f32";
    case GgufValueType::kBool: return "bool";
    case GgufValueType::kString: return "string";
    case GgufValueType::kArray: return "array";
    case GgufValueType::kU64: return "u64";
    case GgufValueType::kI64: return "i64";
    case GgufValueType::kF64: return "f64";
  }
  return "unknown";
}

static bool is_unsigned(GgufValueType t) {
  return t == GgufValueType::kU8 || t == GgufValueType::kU16 || t == GgufValueType::kU32 ||
         t == GgufValueType::kU64;
}

std::string GgufValue::label(std::string_view what) const {
  if (!origin || what.substr(0, origin->size()) == *origin) return std::string(what);
  return *origin + ": metadata '" + std::string(what) + "'";
}

bool GgufValue::is_integer() const {
  switch (type) {
    case GgufValueType::kU8: case GgufValueType::kI8: case GgufValueType::kU16:
    case GgufValueType::kI16: case GgufValueType::kU32: case GgufValueType::kI32:
    case GgufValueType::kU64: case GgufValueType::kI64:
      return true;
    default:
      return false;
  }
}

bool GgufValue::is_number() const {
  return is_integer() || type == GgufValueType::kF32 || type == GgufValueType::kF64;
}

int64_t GgufValue::as_int(std::string_view what) const {
  if (!is_integer())
    throw error(label(what), ": expected an integer, found ", gguf_value_type_name(type));
  if (is_unsigned(type) && number.u64 > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    throw error(label(what), ": integer ", number.u64, " is too large");
  return number.i64;
}

double GgufValue::as_double(std::string_view what) const {
  if (type == GgufValueType::kF32 || type == GgufValueType::kF64) return number.f64;
  if (is_unsigned(type)) return static_cast<double>(number.u64);
  if (is_integer()) return static_cast<double>(number.i64);
  throw error(label(what), ": expected a number, found ", gguf_value_type_name(type));
}

bool GgufValue::as_bool(std::string_view what) const {
  if (type != GgufValueType::kBool)
    throw error(label(what), ": expected a bool, found ", gguf_value_type_name(type));
  return number.u64 != 0;
}

std::string_view GgufValue::as_string(std::string_view what) const {
  if (type != GgufValueType::kString)
    throw error(label(what), ": expected a string, found ", gguf_value_type_name(type));
  return str;
}

namespace {

// Bytes of one element of a flat numeric array in the file.
size_t element_bytes(GgufValueType t) {
  switch (t) {
    case GgufValueType::kU8: case GgufValueType::kI8: case GgufValueType::kBool: return 1;
    case GgufValueType::kU16: case GgufValueType::kI16: return 2;
    case GgufValueType::kU32: case GgufValueType::kI32: case GgufValueType::kF32: return 4;
    default: return 8;
  }
}

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

}  // namespace

size_t GgufValue::array_size(std::string_view what) const {
  if (type != GgufValueType::kArray)
    throw error(label(what), ": expected an array, found ", gguf_value_type_name(type));
  return flat ? flat_count : items.size();
}

GgufValue GgufValue::array_item(size_t i) const {
  if (!flat) return items.at(i);
  GGUFLOW_CHECK(i < flat_count);
  GgufValue v;
  v.type = element_type;
  v.origin = origin;
  if (element_type == GgufValueType::kString) {
    v.str = flat_strings[i];
    return v;
  }
  const uint8_t* p = flat_data + i * element_bytes(element_type);
  switch (element_type) {
    case GgufValueType::kU8: case GgufValueType::kBool: v.number.u64 = load<uint8_t>(p); break;
    case GgufValueType::kI8: v.number.i64 = load<int8_t>(p); break;
    case GgufValueType::kU16: v.number.u64 = load<uint16_t>(p); break;
    case GgufValueType::kI16: v.number.i64 = load<int16_t>(p); break;
    case GgufValueType::kU32: v.number.u64 = load<uint32_t>(p); break;
    case GgufValueType::kI32: v.number.i64 = load<int32_t>(p); break;
    case GgufValueType::kU64: v.number.u64 = load<uint64_t>(p); break;
    case GgufValueType::kI64: v.number.i64 = load<int64_t>(p); break;
    case GgufValueType::kF32: v.number.f64 = load<float>(p); break;
    case GgufValueType::kF64: v.number.f64 = load<double>(p); break;
    default: GGUFLOW_CHECK(!"flat arrays hold scalars or strings");
  }
  return v;
}

const std::vector<GgufValue>& GgufValue::as_array(std::string_view what) const {
  if (type != GgufValueType::kArray)
    throw error(label(what), ": expected an array, found ", gguf_value_type_name(type));
  if (flat)
    throw error(label(what), ": an array of ", gguf_value_type_name(element_type),
                " is read with the typed array accessors");
  return items;
}

std::vector<std::string_view> GgufValue::as_string_array(std::string_view what) const {
  size_t n = array_size(what);
  if (n && element_type != GgufValueType::kString)
    throw error(label(what), ": expected an array of strings, found an array of ",
                gguf_value_type_name(element_type));
  if (flat) return flat_strings;
  std::vector<std::string_view> out;
  out.reserve(n);
  for (const auto& v : items) out.push_back(v.str);
  return out;
}

std::vector<double> GgufValue::as_double_array(std::string_view what) const {
  size_t n = array_size(what);
  std::vector<double> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(array_item(i).as_double(what));
  return out;
}

std::vector<int64_t> GgufValue::as_int_array(std::string_view what) const {
  size_t n = array_size(what);
  std::vector<int64_t> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(array_item(i).as_int(what));
  return out;
}

static void render_string(std::ostringstream& out, std::string_view s) {
  constexpr size_t kMaxShown = 60;
  out << '"';
  for (size_t i = 0; i < s.size() && i < kMaxShown; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') out << '\\' << c;
    else if (c == '\n') out << "\\n";
    else if (c < 0x20) out << "\\x" << "0123456789abcdef"[c >> 4] << "0123456789abcdef"[c & 15];
    else out << c;
  }
  if (s.size() > kMaxShown) out << "…";
  out << '"';
}

std::string GgufValue::to_string(size_t max_items) const {
  std::ostringstream out;
  switch (type) {
    case GgufValueType::kString: render_string(out, str); break;
    case GgufValueType::kBool: out << (number.u64 ? "true" : "false"); break;
    case GgufValueType::kF32: case GgufValueType::kF64: out << number.f64; break;
    case GgufValueType::kArray:
      out << "[";
      for (size_t i = 0; i < array_size() && i < max_items; ++i)
        out << (i ? ", " : "") << array_item(i).to_string(max_items);
      if (array_size() > max_items)
        out << ", … (" << array_size() << " " << gguf_value_type_name(element_type) << ")";
      out << "]";
      break;
    default:
      if (is_unsigned(type)) out << number.u64;
      else out << number.i64;
  }
  return out.str();
}

}  // namespace gguflow
