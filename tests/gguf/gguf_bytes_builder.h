// Writes GGUF bytes field by field, so tests can build valid files and break them on purpose
// (independent of the production writer).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace gguflow::test {

class GgufBytesBuilder {
 public:
  explicit GgufBytesBuilder(uint32_t version = 3) : version_(version) {}

  std::vector<uint8_t> bytes;

  template <typename T>
  GgufBytesBuilder& raw(T value) {
    size_t at = bytes.size();
    bytes.resize(at + sizeof(T));
    std::memcpy(bytes.data() + at, &value, sizeof(T));
    return *this;
  }
  GgufBytesBuilder& count(uint64_t n);  // u32 in v1, u64 after
  GgufBytesBuilder& string(const std::string& s);
  GgufBytesBuilder& header(uint64_t n_tensors, uint64_t n_kv);  // magic, version, counts
  GgufBytesBuilder& kv_u32(const std::string& key, uint32_t v);
  GgufBytesBuilder& kv_string(const std::string& key, const std::string& v);
  GgufBytesBuilder& tensor_info(const std::string& name, std::vector<uint64_t> dims, uint32_t type,
                                uint64_t offset);
  GgufBytesBuilder& pad_to(size_t alignment);
  GgufBytesBuilder& zeros(size_t n);

 private:
  uint32_t version_;
};

}  // namespace gguflow::test
