// Dispatch of runtime/quant/quant.h onto the per-format codecs (formats.h): one table indexed
// by GGML type id, so a type is either fully supported (both directions) or reported by name.
#include "runtime/quant/quant.h"

#include <array>

#include "ops/error.h"
#include "runtime/quant/formats.h"

namespace gguflow {
namespace {

using DequantizeFn = void (*)(const void* src, float* dst, int64_t n);
using QuantizeFn = void (*)(const float* src, void* dst, int64_t n);

struct Codec {
  DequantizeFn dequantize = nullptr;
  QuantizeFn quantize = nullptr;
};

// Adapts a typed codec pair (`const Block*` / `Block*`) to the untyped table signature.
template <typename Block, void (*Dequantize)(const Block*, float*, int64_t),
          void (*Quantize)(const float*, Block*, int64_t)>
constexpr Codec make_codec() {
  return Codec{
      [](const void* src, float* dst, int64_t n) {
        Dequantize(static_cast<const Block*>(src), dst, n);
      },
      [](const float* src, void* dst, int64_t n) { Quantize(src, static_cast<Block*>(dst), n); },
  };
}

constexpr std::array<Codec, GGML_TYPE_COUNT> make_codecs() {
  using namespace quant;
  std::array<Codec, GGML_TYPE_COUNT> codecs{};
  codecs[GGML_TYPE_F32] = make_codec<float, dequantize_row_f32, quantize_row_f32>();
  codecs[GGML_TYPE_F16] = make_codec<gguflow_fp16_t, dequantize_row_f16, quantize_row_f16>();
  codecs[GGML_TYPE_BF16] = make_codec<gguflow_bf16_t, dequantize_row_bf16, quantize_row_bf16>();
  codecs[GGML_TYPE_Q4_0] = make_codec<block_q4_0, dequantize_row_q4_0, quantize_row_q4_0>();
  codecs[GGML_TYPE_Q4_1] = make_codec<block_q4_1, dequantize_row_q4_1, quantize_row_q4_1>();
  codecs[GGML_TYPE_Q5_0] = make_codec<block_q5_0, dequantize_row_q5_0, quantize_row_q5_0>();
  codecs[GGML_TYPE_Q5_1] = make_codec<block_q5_1, dequantize_row_q5_1, quantize_row_q5_1>();
  codecs[GGML_TYPE_Q8_0] = make_codec<block_q8_0, dequantize_row_q8_0, quantize_row_q8_0>();
  codecs[GGML_TYPE_Q8_1] = make_codec<block_q8_1, dequantize_row_q8_1, quantize_row_q8_1>();
  codecs[GGML_TYPE_Q2_K] = make_codec<block_q2_K, dequantize_row_q2_K, quantize_row_q2_K>();
  codecs[GGML_TYPE_Q3_K] = make_codec<block_q3_K, dequantize_row_q3_K, quantize_row_q3_K>();
  codecs[GGML_TYPE_Q4_K] = make_codec<block_q4_K, dequantize_row_q4_K, quantize_row_q4_K>();
  codecs[GGML_TYPE_Q5_K] = make_codec<block_q5_K, dequantize_row_q5_K, quantize_row_q5_K>();
  codecs[GGML_TYPE_Q6_K] = make_codec<block_q6_K, dequantize_row_q6_K, quantize_row_q6_K>();
  codecs[GGML_TYPE_Q8_K] = make_codec<block_q8_K, dequantize_row_q8_K, quantize_row_q8_K>();
  return codecs;
}

constexpr std::array<Codec, GGML_TYPE_COUNT> kCodecs = make_codecs();

// The codec of `type`, after checking that it exists and that `n` fills whole blocks.
const Codec& codec_for(uint32_t type, int64_t n, const char* what) {
  const GgmlTypeInfo* info = ggml_type_info(type);
  const char* name = info->name ? info->name : "unknown";
  if (type >= GGML_TYPE_COUNT || !kCodecs[type].dequantize) {
    throw error(what, ": no reference codec for GGML type ", name, " (id ", type, ")");
  }
  if (n < 0 || n % info->block_size != 0) {
    throw error(what, " ", name, ": row of ", n, " elements; expected a multiple of the block size ",
                info->block_size);
  }
  return kCodecs[type];
}

}  // namespace

bool has_dequantize_reference(uint32_t type) {
  return type < GGML_TYPE_COUNT && kCodecs[type].dequantize != nullptr;
}

bool has_quantize_reference(uint32_t type) {
  return type < GGML_TYPE_COUNT && kCodecs[type].quantize != nullptr;
}

void dequantize_row(uint32_t type, const void* src, float* dst, int64_t n) {
  codec_for(type, n, "dequantize_row").dequantize(src, dst, n);
}

size_t quantize_row(uint32_t type, const float* src, void* dst, int64_t n) {
  codec_for(type, n, "quantize_row").quantize(src, dst, n);
  const GgmlTypeInfo* info = ggml_type_info(type);
  return static_cast<size_t>(n / info->block_size) * info->type_size;
}

}  // namespace gguflow
