// `gguflow synth`: the preset's shape and type mix (planned, not written: the 0.5B file takes
// seconds), and a tiny custom model written end to end (metadata, shapes, statistics of the
// weights, determinism, tokenizer copy).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "plugins/abi/ggml_type.h"
#include "ops/error.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/quant/quant.h"
#include "runtime/tools/synth.h"
#include "tests/support/test_data.h"

namespace gguflow {
namespace {

std::string type_of(const std::vector<SynthTensor>& plan, const std::string& name) {
  for (const SynthTensor& t : plan)
    if (t.name == name) return ggml_type_info(t.type)->name;
  return "missing";
}

TEST(SynthPlan, Qwen25HalfBillionQ4KMMatchesTheRealFile) {
  const SynthPreset* preset = find_synth_preset("qwen2.5-0.5b");
  ASSERT_NE(preset, nullptr);
  const std::vector<SynthTensor> plan = synth_tensor_plan(preset->shape, "Q4_K_M");
  EXPECT_EQ(plan.size(), 2u + 24u * 12u);  // token_embd, output_norm; 12 per layer, no output
  EXPECT_EQ(type_of(plan, "token_embd.weight"), "Q8_0");
  EXPECT_EQ(type_of(plan, "output.weight"), "missing");  // tied
  EXPECT_EQ(type_of(plan, "output_norm.weight"), "F32");
  const std::vector<int> more_bits = {0, 1, 2, 5, 8, 11, 14, 17, 20, 21, 22, 23};
  uint64_t bytes = 0;
  for (const SynthTensor& t : plan) bytes += GgufTensorInfo{t.name, t.type, t.dims, 0}.n_bytes();
  for (int i = 0; i < 24; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    const bool more = std::find(more_bits.begin(), more_bits.end(), i) != more_bits.end();
    for (const char* role : {"attn_q", "attn_k", "attn_output", "ffn_gate", "ffn_up"})
      EXPECT_EQ(type_of(plan, b + role + ".weight"), "Q5_0") << b << role;
    EXPECT_EQ(type_of(plan, b + "attn_v.weight"), more ? "Q8_0" : "Q5_0") << i;
    EXPECT_EQ(type_of(plan, b + "ffn_down.weight"), more ? "Q6_K" : "Q4_K") << i;
    for (const char* f32 : {"attn_norm.weight", "ffn_norm.weight", "attn_q.bias", "attn_k.bias", "attn_v.bias"})
      EXPECT_EQ(type_of(plan, b + f32), "F32") << b << f32;
  }
  for (const SynthTensor& t : plan) {
    if (t.name == "blk.0.attn_k.weight") {
      EXPECT_EQ(t.dims, (std::vector<uint64_t>{896, 128}));
    } else if (t.name == "blk.0.ffn_down.weight") {
      EXPECT_EQ(t.dims, (std::vector<uint64_t>{4864, 896}));
    } else if (t.name == "token_embd.weight") {
      EXPECT_EQ(t.dims, (std::vector<uint64_t>{896, 151936}));
    }
  }
  EXPECT_NEAR(bytes / 1048576.0, 373.7, 0.1);  // "about 374 MiB"
}

const SynthTensor* find_tensor(const std::vector<SynthTensor>& plan, const std::string& name) {
  for (const SynthTensor& t : plan)
    if (t.name == name) return &t;
  return nullptr;
}

// The family presets carry each family's tensor set with the real shapes (ARCHS.md lists the
// sets; the shapes are those of the published checkpoints).
TEST(SynthPlan, FamilyPresetsHaveTheirTensorSets) {
  const auto qwen3 = synth_tensor_plan(find_synth_preset("qwen3-0.6b")->shape, "Q4_K_M");
  EXPECT_EQ(qwen3.size(), 2u + 28u * 11u);  // no output (tied); q/k norms, no biases
  ASSERT_NE(find_tensor(qwen3, "blk.27.attn_k_norm.weight"), nullptr);
  EXPECT_EQ(find_tensor(qwen3, "blk.0.attn_q_norm.weight")->dims, (std::vector<uint64_t>{128}));
  EXPECT_EQ(find_tensor(qwen3, "blk.0.attn_q.weight")->dims, (std::vector<uint64_t>{1024, 2048}));
  EXPECT_EQ(find_tensor(qwen3, "blk.0.attn_q.bias"), nullptr);

  const auto gemma3 = synth_tensor_plan(find_synth_preset("gemma3-1b")->shape, "Q4_K_M");
  EXPECT_EQ(gemma3.size(), 2u + 26u * 13u);
  ASSERT_NE(find_tensor(gemma3, "blk.3.post_ffw_norm.weight"), nullptr);
  ASSERT_NE(find_tensor(gemma3, "blk.3.post_attention_norm.weight"), nullptr);
  EXPECT_EQ(find_tensor(gemma3, "blk.0.attn_k.weight")->dims, (std::vector<uint64_t>{1152, 256}));

  const auto phi3 = synth_tensor_plan(find_synth_preset("phi3-mini")->shape, "Q4_K_M");
  EXPECT_EQ(phi3.size(), 3u + 32u * 6u);  // output.weight; qkv, output, up, down and two norms
  EXPECT_EQ(find_tensor(phi3, "blk.0.attn_qkv.weight")->dims, (std::vector<uint64_t>{3072, 9216}));
  EXPECT_EQ(find_tensor(phi3, "blk.0.ffn_up.weight")->dims, (std::vector<uint64_t>{3072, 16384}));
  EXPECT_EQ(find_tensor(phi3, "blk.0.ffn_gate.weight"), nullptr);
}

TEST(SynthPlan, Q8_0AndF16Mixes) {
  const SynthShape shape = find_synth_preset("qwen2.5-0.5b")->shape;
  for (const SynthTensor& t : synth_tensor_plan(shape, "Q8_0"))
    EXPECT_STREQ(ggml_type_info(t.type)->name, t.dims.size() == 2 ? "Q8_0" : "F32") << t.name;
  for (const SynthTensor& t : synth_tensor_plan(shape, "F16"))
    EXPECT_STREQ(ggml_type_info(t.type)->name, t.dims.size() == 2 ? "F16" : "F32") << t.name;
}

TEST(SynthPlan, LlamaPresetKeepsKQuants) {
  const std::vector<SynthTensor> plan = synth_tensor_plan(find_synth_preset("llama3.2-1b")->shape, "Q4_K_M");
  EXPECT_EQ(type_of(plan, "token_embd.weight"), "Q6_K");  // tied output, 2048 % 256 == 0
  EXPECT_EQ(type_of(plan, "blk.0.attn_q.weight"), "Q4_K");
  EXPECT_EQ(type_of(plan, "blk.0.attn_v.weight"), "Q6_K");
  EXPECT_EQ(type_of(plan, "blk.3.ffn_down.weight"), "Q4_K");
}

SynthOptions tiny(const std::string& output, uint64_t seed) {
  SynthOptions o;
  o.shape = SynthShape{"qwen2", 64, 2, 4, 2, 128, 300, 512, 1e6, 1e-6, true, true};
  o.file_type = "Q8_0";
  o.seed = seed;
  o.output = output;
  return o;
}

std::vector<char> file_bytes(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

std::vector<float> decode(const GgufFile& f, const std::string& name) {
  const GgufTensorInfo& t = f.tensor(name);
  std::vector<float> out(t.n_elements());
  auto bytes = f.tensor_bytes(t);
  for (uint64_t r = 0; r < t.n_rows(); ++r)
    dequantize_row(t.type, bytes.data() + r * t.row_bytes(), out.data() + r * t.row_length(),
                   static_cast<int64_t>(t.row_length()));
  return out;
}

TEST(SynthModel, TinyModelIsValidDeterministicAndWellDistributed) {
  const auto dir = test::temp_dir();
  const std::string a = (dir / "a.gguf").string(), b = (dir / "b.gguf").string(),
                    c = (dir / "c.gguf").string();
  synth_model(tiny(a, 7));
  synth_model(tiny(b, 7));
  synth_model(tiny(c, 8));
  EXPECT_TRUE(file_bytes(a) == file_bytes(b)) << "same seed must give the same file";
  EXPECT_FALSE(file_bytes(a) == file_bytes(c)) << "another seed must give other weights";

  auto f = GgufFile::open(a);
  EXPECT_EQ(f->architecture(), "qwen2");
  EXPECT_EQ(f->get("qwen2.block_count").as_int(), 2);
  EXPECT_EQ(f->get("qwen2.embedding_length").as_int(), 64);
  EXPECT_EQ(f->get("qwen2.attention.head_count_kv").as_int(), 2);
  EXPECT_EQ(f->get("general.file_type").as_int(), 7);
  EXPECT_EQ(f->get("tokenizer.ggml.tokens").array_size(), 300u);
  EXPECT_EQ(f->tensor("blk.1.attn_k.weight").dims, (std::vector<uint64_t>{64, 32}));
  EXPECT_EQ(f->tensor("blk.1.ffn_down.weight").dims, (std::vector<uint64_t>{128, 64}));
  EXPECT_STREQ(f->tensor("blk.1.attn_k.bias").type_name(), "F32");
  EXPECT_EQ(f->find_tensor("output.weight"), nullptr);

  auto stats = [](const std::vector<float>& v) {
    double s = 0, s2 = 0;
    for (float x : v) s += x, s2 += double(x) * x;
    const double mean = s / v.size();
    return std::pair{mean, std::sqrt(s2 / v.size() - mean * mean)};
  };
  auto [emb_mean, emb_std] = stats(decode(*f, "token_embd.weight"));  // 19200 values
  EXPECT_NEAR(emb_mean, 0.0, 0.001);
  EXPECT_NEAR(emb_std, 0.02, 0.001);
  auto [norm_mean, norm_std] = stats(decode(*f, "blk.0.attn_norm.weight"));
  EXPECT_NEAR(norm_mean, 1.0, 0.01);
  EXPECT_NEAR(norm_std, 0.02, 0.01);
}

TEST(SynthModel, CopiesARealTokenizerAndChecksItsSize) {
  GGUFLOW_REQUIRE_DATA("vocab/ggml-vocab-llama-spm.gguf");
  const std::string vocab = test::data_path("vocab/ggml-vocab-llama-spm.gguf").string();
  auto source = GgufFile::open(vocab);
  const std::string out = (test::temp_dir() / "v.gguf").string();
  SynthOptions o = tiny(out, 1);
  o.vocab_path = vocab;
  EXPECT_THROW(synth_model(o), Error);  // 300 != 32000 tokens
  EXPECT_FALSE(std::filesystem::exists(out));
  o.shape.n_vocab = static_cast<int64_t>(source->get("tokenizer.ggml.tokens").array_size());
  synth_model(o);
  auto f = GgufFile::open(out);
  EXPECT_EQ(f->get("tokenizer.ggml.tokens").as_string_array(),
            source->get("tokenizer.ggml.tokens").as_string_array());
  EXPECT_EQ(f->get("tokenizer.ggml.model").as_string(), source->get("tokenizer.ggml.model").as_string());
  EXPECT_EQ(f->tensor("token_embd.weight").dims[1], static_cast<uint64_t>(o.shape.n_vocab));
}

// A phi3 model's placeholder vocabulary holds Phi-3's added control tokens (at 32000 in the
// preset's 32,064; here, in 300 tokens, as the last 11), with <|endoftext|> the eos: other
// runtimes refuse a phi3 model without it, and the chat format uses <|user|> and <|end|>.
TEST(SynthModel, Phi3PlaceholderVocabularyHasPhi3sAddedTokens) {
  const std::string out = (test::temp_dir() / "phi3.gguf").string();
  SynthOptions o = tiny(out, 1);
  o.shape = SynthShape{"phi3", 64, 2, 4, 4, 128, 300, 512, 1e4, 1e-5, false, false};
  synth_model(o);
  auto f = GgufFile::open(out);
  const auto tokens = f->get("tokenizer.ggml.tokens").as_string_array();
  ASSERT_EQ(tokens.size(), 300u);
  EXPECT_EQ(tokens[289], "<|endoftext|>");
  EXPECT_EQ(tokens[296], "<|end|>");
  EXPECT_EQ(tokens[299], "<|user|>");
  EXPECT_EQ(f->get("tokenizer.ggml.token_type").as_int_array()[289], 3);  // control
  EXPECT_EQ(f->get("tokenizer.ggml.eos_token_id").as_int(), 289);
  EXPECT_EQ(tokens[288].substr(0, 3), "\xE2\x96\x81");  // a word piece before them
  // Everywhere else a model's placeholder vocabulary has none of them.
  const std::string plain = (test::temp_dir() / "plain.gguf").string();
  synth_model(tiny(plain, 1));
  const auto plain_tokens = GgufFile::open(plain)->get("tokenizer.ggml.tokens").as_string_array();
  EXPECT_EQ(std::count(plain_tokens.begin(), plain_tokens.end(), "<|endoftext|>"), 0);
}

TEST(SynthModel, RejectsBadShapes) {
  const std::string out = (test::temp_dir() / "bad.gguf").string();
  SynthOptions o = tiny(out, 1);
  o.shape.n_head = 5;  // 64 % 5 != 0
  EXPECT_THROW(synth_model(o), Error);
  o = tiny(out, 1);
  o.shape.arch = "gpt9";
  EXPECT_THROW(synth_model(o), Error);
  o = tiny(out, 1);
  o.file_type = "Q9_9";
  EXPECT_THROW(synth_model(o), Error);
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace gguflow
