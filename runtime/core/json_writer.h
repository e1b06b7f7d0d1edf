// A small streaming JSON writer for the CLI's --json outputs (inspect, run, bench, kv eval).
// Keys and values are emitted in call order; commas and escaping are handled here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gguflow {

class JsonWriter {
 public:
  // `indent` > 0 pretty-prints with that many spaces per level; 0 writes one line.
  explicit JsonWriter(int indent = 2) : indent_(indent) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view name);
  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(const std::string& s) { return value(std::string_view(s)); }
  JsonWriter& value(double d);  // non-finite values are written as null
  JsonWriter& value(int64_t i);
  JsonWriter& value(uint64_t u);
  JsonWriter& value(int i) { return value(static_cast<int64_t>(i)); }
  JsonWriter& value(bool b);
  JsonWriter& null();

  const std::string& str() const { return out_; }

  static std::string escape(std::string_view s);  // quoted JSON string

 private:
  void before_value();
  void newline();
  std::string out_;
  std::vector<bool> first_in_scope_;  // per open scope: no element written yet
  bool after_key_ = false;
  int indent_;
};

}  // namespace gguflow
