#include "fuzz/gguf_seeds.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "plugins/abi/ggml_type.h"
#include "runtime/gguf/gguf_writer.h"

namespace gguflow::fuzz {
namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> bytes(n);
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  return bytes;
}

// One tensor `t` of `type`: two blocks per row, three rows.
void write_type_seed(const fs::path& path, uint32_t type) {
  const GgmlTypeInfo* info = ggml_type_info(type);
  GgufWriter w(path.string());
  w.set_string("general.architecture", "llama");
  const uint64_t dims[] = {uint64_t{info->block_size} * 2, 3};
  w.add_tensor("t", type, dims);
  w.write_header();
  const auto bytes = random_bytes(uint64_t{info->type_size} * 2 * 3, type);
  w.write_tensor_data(bytes.data(), bytes.size());
  w.finish();
}

GgufValue number(GgufValueType type, uint64_t bits) {
  GgufValue v;
  v.type = type;
  v.number.u64 = bits;
  return v;
}

// Every value type, flat and nested arrays, and a non-default alignment.
void write_metadata_seed(const fs::path& path) {
  GgufWriter w(path.string(), 64);
  w.set_string("general.architecture", "llama");
  w.set_u8("u8", 200);
  w.set_i8("i8", -100);
  w.set_u16("u16", 60000);
  w.set_i16("i16", -30000);
  w.set_u32("u32", 4000000000u);
  w.set_i32("i32", -2000000000);
  w.set_u64("u64", UINT64_MAX);
  w.set_i64("i64", INT64_MIN);
  w.set_f32("f32", 1.5f);
  w.set_f64("f64", -2.25);
  w.set_bool("bool", true);
  w.set_string("string", "text \xe2\x96\x81 with \"quotes\"\n");
  const std::string words[] = {"a", "", "ccc"};
  w.set_string_array("strings", words);
  const float floats[] = {0.5f, -1.0f};
  w.set_f32_array("floats", floats);
  const int32_t ints[] = {1, -2, 3};
  w.set_i32_array("ints", ints);
  GgufValue nested;
  nested.type = GgufValueType::kArray;
  nested.element_type = GgufValueType::kArray;
  for (int i = 0; i < 2; ++i) {
    GgufValue inner;
    inner.type = GgufValueType::kArray;
    inner.element_type = GgufValueType::kU16;
    inner.items = {number(GgufValueType::kU16, 7), number(GgufValueType::kU16, 8)};
    nested.items.push_back(inner);
  }
  w.set("nested", nested);
  GgufValue bools;
  bools.type = GgufValueType::kArray;
  bools.element_type = GgufValueType::kBool;
  bools.items = {number(GgufValueType::kBool, 1), number(GgufValueType::kBool, 0)};
  w.set("bools", bools);
  const uint64_t dims[] = {8};
  w.add_tensor("token_embd.weight", GGML_TYPE_F32, dims);
  w.write_header();
  const auto bytes = random_bytes(32, 1);
  w.write_tensor_data(bytes.data(), bytes.size());
  w.finish();
}

// A tokenizer-only file (no tensors) of `model` with a handful of tokens.
void write_vocab_seed(const fs::path& path, const std::string& model, const std::string& pre) {
  GgufWriter w(path.string());
  w.set_string("tokenizer.ggml.model", model);
  if (!pre.empty()) w.set_string("tokenizer.ggml.pre", pre);
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  if (model == "llama") {
    tokens = {"<unk>", "<s>", "</s>", "<0x41>", "<0xE2>", "\xe2\x96\x81", "\xe2\x96\x81H", "ello", "H",
              "e", "l", "o", "<|im_start|>"};
    types = {2, 3, 3, 6, 6, 1, 1, 1, 1, 1, 1, 1, 4};
    std::vector<float> scores(tokens.size());
    for (size_t i = 0; i < scores.size(); ++i) scores[i] = -static_cast<float>(i);
    w.set_f32_array("tokenizer.ggml.scores", scores);
  } else if (model == "gpt2") {
    // Byte-level texts: "Ġ" is the space byte.
    tokens = {"H", "e", "l", "o", "\xc4\xa0", "He", "ll", "llo", "Hello", "\xc4\xa0w", "<|endoftext|>",
              "<|im_start|>", "1", "2"};
    types = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 1, 1};
    const std::string merges[] = {"H e", "l l", "ll o", "He llo", "\xc4\xa0 w"};
    w.set_string_array("tokenizer.ggml.merges", merges);
  } else {
    tokens = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "##lo", "hel", "world", ",", "!"};
    types = {3, 2, 3, 3, 3, 1, 1, 1, 1, 1, 1};
    w.set_u32("tokenizer.ggml.cls_token_id", 2);
    w.set_u32("tokenizer.ggml.seperator_token_id", 3);
    w.set_u32("tokenizer.ggml.unknown_token_id", 1);
  }
  w.set_string_array("tokenizer.ggml.tokens", tokens);
  w.set_i32_array("tokenizer.ggml.token_type", types);
  w.set_bool("tokenizer.ggml.add_bos_token", true);
  w.write_header();
  w.finish();
}

}  // namespace

int write_gguf_seeds(const fs::path& dir) {
  int n = 0;
  for (uint32_t type = 0; type < GGML_TYPE_COUNT; ++type) {
    const GgmlTypeInfo* info = ggml_type_info(type);
    if (!info->name || info->block_size == 0) continue;
    write_type_seed(dir / ("type-" + std::string(info->name) + ".gguf"), type);
    ++n;
  }
  write_metadata_seed(dir / "metadata.gguf");
  write_vocab_seed(dir / "vocab-spm.gguf", "llama", "");
  write_vocab_seed(dir / "vocab-bpe-default.gguf", "gpt2", "");
  write_vocab_seed(dir / "vocab-bpe-gpt2.gguf", "gpt2", "gpt-2");
  write_vocab_seed(dir / "vocab-bpe-llama3.gguf", "gpt2", "llama-bpe");
  write_vocab_seed(dir / "vocab-bpe-qwen2.gguf", "gpt2", "qwen2");
  write_vocab_seed(dir / "vocab-wordpiece.gguf", "bert", "bert-bge");
  return n + 7;
}

}  // namespace gguflow::fuzz
