// Shapes, attribute values and their text forms (see op_schema.h).
#include "ops/op_schema.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace gguflow::ops {

namespace {
// Ops sit below the runtime and its error types: a broken invariant aborts with a message.
[[noreturn]] void invariant_failed(const char* what, std::string_view name) {
  std::fprintf(stderr, "gguflow: internal error: %s '%.*s'\n", what, static_cast<int>(name.size()),
               name.data());
  std::abort();
}
}  // namespace

int64_t Shape::elements(int64_t n_tokens) const {
  int64_t n = 1;
  for (int64_t d : dims) n *= (d == kTokenDim ? n_tokens : d);
  return n;
}

std::string Shape::to_string() const {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += dims[i] == kTokenDim ? std::string("T") : std::to_string(dims[i]);
  }
  return s + "]";
}

const char* dtype_name(DType type) { return type == DType::kI32 ? "i32" : "f32"; }

std::string attr_to_string(const AttrValue& value) {
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&value)) {
    // Shortest text that reads back to the same double, always recognisable as a float.
    char buf[32];
    for (int precision = 6; precision <= 17; ++precision) {
      std::snprintf(buf, sizeof buf, "%.*g", precision, *d);
      if (std::strtod(buf, nullptr) == *d) break;
    }
    std::string s = buf;
    if (std::isfinite(*d) && s.find_first_of(".eEn") == std::string::npos) s += ".0";
    return s;
  }
  return std::get<std::string>(value);
}

const char* attr_type_name(AttrType type) {
  switch (type) {
    case AttrType::kInt: return "int";
    case AttrType::kFloat: return "float";
    case AttrType::kBool: return "bool";
    case AttrType::kString: return "string";
    case AttrType::kEnum: return "enum";
  }
  return "?";
}

const char* feed_name(Feed feed) {
  switch (feed) {
    case Feed::kNone: return "";
    case Feed::kTokenIds: return "token ids";
    case Feed::kPositions: return "positions";
  }
  return "?";
}

const char* op_kind_name(OpKind kind) {
  switch (kind) {
    case OpKind::kEmbed: return "embed";
    case OpKind::kNorm: return "norm";
    case OpKind::kMatmul: return "matmul";
    case OpKind::kPosition: return "position";
    case OpKind::kAttention: return "attention";
    case OpKind::kActivation: return "activation";
    case OpKind::kElementwise: return "elementwise";
    case OpKind::kPool: return "pool";
    case OpKind::kProject: return "project";
  }
  return "?";
}

bool Attrs::has(std::string_view name) const {
  for (const auto& [n, v] : values)
    if (n == name) return true;
  return false;
}

const AttrValue& Attrs::get(std::string_view name) const {
  for (const auto& [n, v] : values)
    if (n == name) return v;
  invariant_failed("attribute not set", name);
}

int64_t Attrs::get_int(std::string_view name) const {
  const auto& v = get(name);
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  invariant_failed("attribute is not an int", name);
}

double Attrs::get_float(std::string_view name) const {
  const auto& v = get(name);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  invariant_failed("attribute is not a number", name);
}

bool Attrs::get_bool(std::string_view name) const {
  const auto& v = get(name);
  if (const auto* b = std::get_if<bool>(&v)) return *b;
  invariant_failed("attribute is not a bool", name);
}

const std::string& Attrs::get_string(std::string_view name) const {
  const auto& v = get(name);
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  invariant_failed("attribute is not a string", name);
}

void Attrs::set(std::string name, AttrValue value) {
  for (auto& [n, v] : values) {
    if (n == name) {
      v = std::move(value);
      return;
    }
  }
  values.emplace_back(std::move(name), std::move(value));
}

int OpSchema::input_index(std::string_view n) const {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (n == inputs[i].name) return static_cast<int>(i);
  return -1;
}

int OpSchema::weight_index(std::string_view n) const {
  for (size_t i = 0; i < weights.size(); ++i)
    if (n == weights[i].name) return static_cast<int>(i);
  return -1;
}

int OpSchema::attr_index(std::string_view n) const {
  for (size_t i = 0; i < attrs.size(); ++i)
    if (n == attrs[i].name) return static_cast<int>(i);
  return -1;
}

}  // namespace gguflow::ops
