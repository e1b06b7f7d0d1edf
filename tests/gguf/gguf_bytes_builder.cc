#include "tests/gguf/gguf_bytes_builder.h"

namespace gguflow::test {

GgufBytesBuilder& GgufBytesBuilder::count(uint64_t n) {
  return version_ == 1 ? raw<uint32_t>(static_cast<uint32_t>(n)) : raw<uint64_t>(n);
}

GgufBytesBuilder& GgufBytesBuilder::string(const std::string& s) {
  count(s.size());
  bytes.insert(bytes.end(), s.begin(), s.end());
  return *this;
}

GgufBytesBuilder& GgufBytesBuilder::header(uint64_t n_tensors, uint64_t n_kv) {
  bytes.insert(bytes.end(), {'G', 'G', 'U', 'F'});
  raw<uint32_t>(version_);
  count(n_tensors);
  return count(n_kv);
}

GgufBytesBuilder& GgufBytesBuilder::kv_u32(const std::string& key, uint32_t v) {
  string(key);
  raw<uint32_t>(4);
  return raw<uint32_t>(v);
}

GgufBytesBuilder& GgufBytesBuilder::kv_string(const std::string& key, const std::string& v) {
  string(key);
  raw<uint32_t>(8);
  return string(v);
}

GgufBytesBuilder& GgufBytesBuilder::tensor_info(const std::string& name, std::vector<uint64_t> dims,
                                                uint32_t type, uint64_t offset) {
  string(name);
  raw<uint32_t>(static_cast<uint32_t>(dims.size()));
  for (uint64_t d : dims) version_ == 1 ? raw<uint32_t>(static_cast<uint32_t>(d)) : raw<uint64_t>(d);
  raw<uint32_t>(type);
  return raw<uint64_t>(offset);
}

GgufBytesBuilder& GgufBytesBuilder::pad_to(size_t alignment) {
  while (bytes.size() % alignment) bytes.push_back(0);
  return *this;
}

GgufBytesBuilder& GgufBytesBuilder::zeros(size_t n) {
  bytes.resize(bytes.size() + n, 0);
  return *this;
}

}  // namespace gguflow::test
