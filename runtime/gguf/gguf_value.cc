// GgufValue accessors and rendering.
#include <cmath>
#include <limits>
#include <sstream>

#include "runtime/core/error.h"
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
    throw error(what, ": expected an integer, found ", gguf_value_type_name(type));
  if (is_unsigned(type) && number.u64 > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    throw error(what, ": integer ", number.u64, " is too large");
  return number.i64;
}

double GgufValue::as_double(std::string_view what) const {
  if (type == GgufValueType::kF32 || type == GgufValueType::kF64) return number.f64;
  if (is_unsigned(type)) return static_cast<double>(number.u64);
  if (is_integer()) return static_cast<double>(number.i64);
  throw error(what, ": expected a number, found ", gguf_value_type_name(type));
}

bool GgufValue::as_bool(std::string_view what) const {
  if (type != GgufValueType::kBool)
    throw error(what, ": expected a bool, found ", gguf_value_type_name(type));
  return number.u64 != 0;
}

std::string_view GgufValue::as_string(std::string_view what) const {
  if (type != GgufValueType::kString)
    throw error(what, ": expected a string, found ", gguf_value_type_name(type));
  return str;
}

const std::vector<GgufValue>& GgufValue::as_array(std::string_view what) const {
  if (type != GgufValueType::kArray)
    throw error(what, ": expected an array, found ", gguf_value_type_name(type));
  return items;
}

std::vector<std::string_view> GgufValue::as_string_array(std::string_view what) const {
  const auto& a = as_array(what);
  if (!a.empty() && element_type != GgufValueType::kString)
    throw error(what, ": expected an array of strings, found an array of ",
                gguf_value_type_name(element_type));
  std::vector<std::string_view> out;
  out.reserve(a.size());
  for (const auto& v : a) out.push_back(v.str);
  return out;
}

std::vector<double> GgufValue::as_double_array(std::string_view what) const {
  const auto& a = as_array(what);
  std::vector<double> out;
  out.reserve(a.size());
  for (const auto& v : a) out.push_back(v.as_double(what));
  return out;
}

std::vector<int64_t> GgufValue::as_int_array(std::string_view what) const {
  const auto& a = as_array(what);
  std::vector<int64_t> out;
  out.reserve(a.size());
  for (const auto& v : a) out.push_back(v.as_int(what));
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
      for (size_t i = 0; i < items.size() && i < max_items; ++i)
        out << (i ? ", " : "") << items[i].to_string(max_items);
      if (items.size() > max_items) out << ", … (" << items.size() << " " << gguf_value_type_name(element_type) << ")";
      out << "]";
      break;
    default:
      if (is_unsigned(type)) out << number.u64;
      else out << number.i64;
  }
  return out.str();
}

}  // namespace gguflow
