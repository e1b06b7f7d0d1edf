// The KV cache element types' names, sizes and row checks (ops/kv_cache_type.h).
#include "ops/kv_cache_type.h"

#include <gtest/gtest.h>

#include "ops/error.h"
#include "plugins/abi/ggml_type.h"

namespace gguflow {
namespace {

using ops::KvCacheType;

TEST(KvCacheType, NamesRoundTripAndUnknownNamesListTheAllowedOnes) {
  for (KvCacheType t : {KvCacheType::kF32, KvCacheType::kF16, KvCacheType::kQ8_0, KvCacheType::kQ4_0})
    EXPECT_EQ(ops::parse_kv_cache_type(ops::kv_cache_type_name(t), "x"), t);
  EXPECT_FALSE(ops::find_kv_cache_type("Q8_0").has_value());  // llama.cpp's spelling is lower case
  try {
    ops::parse_kv_cache_type("q5_1", "--cache-type-k");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "--cache-type-k: expected a KV cache type, one of f32, f16, q8_0, q4_0, found 'q5_1'");
  }
}

TEST(KvCacheType, RowBytesFollowTheGgmlBlocks) {
  EXPECT_EQ(ops::kv_cache_row_bytes(KvCacheType::kF32, 128), 512u);
  EXPECT_EQ(ops::kv_cache_row_bytes(KvCacheType::kF16, 128), 256u);
  EXPECT_EQ(ops::kv_cache_row_bytes(KvCacheType::kQ8_0, 128), 4 * 34u);
  EXPECT_EQ(ops::kv_cache_row_bytes(KvCacheType::kQ4_0, 128), 4 * 18u);
  for (KvCacheType t : {KvCacheType::kQ8_0, KvCacheType::kQ4_0}) {
    const GgmlTypeInfo* info = ggml_type_info(ops::kv_cache_ggml_type(t));
    EXPECT_EQ(static_cast<size_t>(info->type_size), ops::kv_cache_block_bytes(t));
    EXPECT_EQ(static_cast<int64_t>(info->block_size), ops::kv_cache_block_elements(t));
  }
  EXPECT_EQ(ops::kv_cache_row_error(KvCacheType::kQ8_0, 64), "");
  EXPECT_EQ(ops::kv_cache_row_error(KvCacheType::kF16, 24), "");
  EXPECT_EQ(ops::kv_cache_row_error(KvCacheType::kQ4_0, 48),
            "a q4_0 cache stores rows in blocks of 32 elements: expected a row width (n_head_kv * head_dim) "
            "that is a multiple of 32, found 48");
}

}  // namespace
}  // namespace gguflow
