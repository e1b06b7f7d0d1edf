#include "ops/kv_cache_type.h"

#include <array>

#include "ops/error.h"
#include "plugins/abi/ggml_type.h"
#include "plugins/abi/quant_blocks.h"

namespace gguflow::ops {
namespace {

struct TypeRow {
  KvCacheType type;
  const char* name;
  uint32_t ggml;
  int64_t block_elements;
  size_t block_bytes;
};

// Indexed by KvCacheType.
constexpr std::array<TypeRow, kKvCacheTypeCount> kTypes = {{
    {KvCacheType::kF32, "f32", GGML_TYPE_F32, 1, sizeof(float)},
    {KvCacheType::kF16, "f16", GGML_TYPE_F16, 1, sizeof(gguflow_fp16_t)},
    {KvCacheType::kQ8_0, "q8_0", GGML_TYPE_Q8_0, 32, sizeof(block_q8_0)},
    {KvCacheType::kQ4_0, "q4_0", GGML_TYPE_Q4_0, 32, sizeof(block_q4_0)},
}};
static_assert(static_cast<int>(KvCacheType::kQ4_0) + 1 == kKvCacheTypeCount);

const TypeRow& row_of(KvCacheType type) {
  const TypeRow& r = kTypes[static_cast<size_t>(type)];
  GGUFLOW_CHECK(r.type == type);
  return r;
}

}  // namespace

const char* kv_cache_type_name(KvCacheType type) { return row_of(type).name; }

const char* kv_cache_type_names() { return "f32, f16, q8_0, q4_0"; }

std::optional<KvCacheType> find_kv_cache_type(std::string_view name) {
  for (const TypeRow& r : kTypes)
    if (name == r.name) return r.type;
  return std::nullopt;
}

KvCacheType parse_kv_cache_type(std::string_view name, const std::string& what) {
  if (const auto type = find_kv_cache_type(name)) return *type;
  throw error(what, ": expected a KV cache type, one of ", kv_cache_type_names(), ", found '",
              std::string(name), "'");
}

uint32_t kv_cache_ggml_type(KvCacheType type) { return row_of(type).ggml; }
int64_t kv_cache_block_elements(KvCacheType type) { return row_of(type).block_elements; }
size_t kv_cache_block_bytes(KvCacheType type) { return row_of(type).block_bytes; }

size_t kv_cache_row_bytes(KvCacheType type, int64_t width) {
  const TypeRow& r = row_of(type);
  GGUFLOW_CHECK(width >= 0 && width % r.block_elements == 0);
  return static_cast<size_t>(width / r.block_elements) * r.block_bytes;
}

std::string kv_cache_row_error(KvCacheType type, int64_t width) {
  const TypeRow& r = row_of(type);
  if (width > 0 && width % r.block_elements == 0) return "";
  return std::string("a ") + r.name + " cache stores rows in blocks of " +
         std::to_string(r.block_elements) + " elements: expected a row width (n_head_kv * "
         "head_dim) that is a multiple of " + std::to_string(r.block_elements) + ", found " +
         std::to_string(width);
}

}  // namespace gguflow::ops
