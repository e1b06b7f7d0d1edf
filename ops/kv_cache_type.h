// The element type of a KV cache block (K or V): how a cached row is stored.
//
//   f32   4 bytes per element (the default; exact)
//   f16   2 bytes per element (IEEE binary16, round to nearest even)
//   q8_0  34 bytes per 32 elements: one f16 scale d = max|x| / 127 and 32 int8 (x ~ d * q)
//   q4_0  18 bytes per 32 elements: one f16 scale and 32 4-bit values (x ~ d * (q - 8))
//
// The block formats are GGML's (plugins/abi/quant_blocks.h), spelled as llama.cpp's
// --cache-type-k/-v values. A quantized row is made of whole blocks: its width (n_head_kv *
// head_dim) must be a multiple of 32; a block may span heads (stories260K: 8 per head).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gguflow::ops {

enum class KvCacheType : uint8_t { kF32, kF16, kQ8_0, kQ4_0 };
inline constexpr int kKvCacheTypeCount = 4;

const char* kv_cache_type_name(KvCacheType type);  // "f32", "f16", "q8_0", "q4_0"
// "f32, f16, q8_0, q4_0": for messages and help.
const char* kv_cache_type_names();
// The type named `name`, or std::nullopt.
std::optional<KvCacheType> find_kv_cache_type(std::string_view name);
// The type named `name`; throws gguflow::Error "<what>: expected one of f32, f16, q8_0, q4_0,
// found 'x'" otherwise.
KvCacheType parse_kv_cache_type(std::string_view name, const std::string& what);

// The GGML type id of the stored blocks (GGML_TYPE_F32, ...), as the kernel table takes it.
uint32_t kv_cache_ggml_type(KvCacheType type);
// Elements per block (1 for f32/f16, 32 for the quantized types) and bytes per block.
int64_t kv_cache_block_elements(KvCacheType type);
size_t kv_cache_block_bytes(KvCacheType type);
// Bytes of one cached row of `width` elements; width must be a multiple of the block
// (kv_cache_row_error says why not).
size_t kv_cache_row_bytes(KvCacheType type, int64_t width);
// "" when rows of `width` elements can be stored as `type`, else what is wrong.
std::string kv_cache_row_error(KvCacheType type, int64_t width);

}  // namespace gguflow::ops
