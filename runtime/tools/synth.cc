#include "runtime/tools/synth.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "plugins/abi/ggml_type.h"
#include "ops/error.h"
#include "runtime/gguf/gguf_names.h"
#include "runtime/gguf/gguf_writer.h"
#include "runtime/quant/quant.h"
#include "runtime/tools/quant_mix.h"
#include "runtime/tools/row_convert.h"
#include "runtime/tools/synth_vocab.h"

namespace gguflow {
namespace {

constexpr float kWeightStd = 0.02f;
constexpr uint32_t kQuantizationVersion = 2;       // GGML_QNT_VERSION
constexpr uint64_t kChunkTargetBytes = 8u << 20;   // f32 bytes generated per chunk

SynthShape qwen2_shape(int64_t n_embd, int64_t n_layer, int64_t n_head, int64_t n_head_kv,
                       int64_t n_ff, int64_t n_ctx) {
  return SynthShape{"qwen2", n_embd, n_layer, n_head, n_head_kv, n_ff, 151936, n_ctx, 1e6, 1e-6,
                    /*qkv_bias=*/true, /*tied_output=*/true};
}

SynthShape qwen3_shape() {
  SynthShape s{"qwen3", 1024, 28, 16, 8, 3072, 151936, 40960, 1e6, 1e-6, false, true};
  s.head_dim = 128;
  return s;
}

// Encoders: two token types, LayerNorm epsilon 1e-12 (BERT's), no rope scaling.
SynthShape encoder_shape(const char* arch, int64_t n_embd, int64_t n_ff, int64_t n_ctx,
                         int64_t pooling_type) {
  SynthShape s{arch, n_embd, 12, 12, 12, n_ff, 30522, n_ctx, 1000.0, 1e-12, false, true};
  s.pooling_type = pooling_type;
  return s;
}

SynthShape gemma3_shape() {
  SynthShape s{"gemma3", 1152, 26, 4, 1, 6912, 262144, 32768, 1e6, 1e-6, false, true};
  s.head_dim = 256;
  s.sliding_window = 512;
  return s;
}

SynthShape phi3_shape() {
  SynthShape s{"phi3", 3072, 32, 32, 32, 8192, 32064, 4096, 10000.0, 1e-5, false, false};
  s.sliding_window = 2047;
  return s;
}

const std::array kPresets = {
    SynthPreset{"qwen2.5-0.5b", "Qwen2.5-0.5B: qwen2, 24 layers, 896 wide, 14/2 heads, FFN 4864",
                qwen2_shape(896, 24, 14, 2, 4864, 32768)},
    SynthPreset{"qwen2.5-1.5b", "Qwen2.5-1.5B: qwen2, 28 layers, 1536 wide, 12/2 heads, FFN 8960",
                qwen2_shape(1536, 28, 12, 2, 8960, 32768)},
    SynthPreset{"llama3.2-1b", "Llama-3.2-1B: llama, 16 layers, 2048 wide, 32/8 heads, FFN 8192, tied",
                SynthShape{"llama", 2048, 16, 32, 8, 8192, 128256, 131072, 500000.0, 1e-5, false, true}},
    SynthPreset{"qwen3-0.6b", "Qwen3-0.6B: qwen3, 28 layers, 1024 wide, 16/8 heads of 128, FFN 3072, tied",
                qwen3_shape()},
    SynthPreset{"gemma3-1b", "Gemma-3-1B: gemma3, 26 layers, 1152 wide, 4/1 heads of 256, FFN 6912, window 512",
                gemma3_shape()},
    SynthPreset{"phi3-mini", "Phi-3-mini-4k: phi3, 32 layers, 3072 wide, 32/32 heads, FFN 8192, window 2047",
                phi3_shape()},
    SynthPreset{"bge-small", "bge-small-en-v1.5: bert, 12 layers, 384 wide, 12 heads, FFN 1536, CLS pooling",
                encoder_shape("bert", 384, 1536, 512, 2)},
    SynthPreset{"nomic-embed-text", "nomic-embed-text-v1.5: nomic-bert, 12 layers, 768 wide, 12 heads, FFN 3072, mean pooling",
                encoder_shape("nomic-bert", 768, 3072, 2048, 1)},
    SynthPreset{"tinyllama-1.1b", "TinyLlama-1.1B: llama, 22 layers, 2048 wide, 32/4 heads, FFN 5632",
                SynthShape{"llama", 2048, 22, 32, 4, 5632, 32000, 2048, 10000.0, 1e-5, false, false}},
};

// Kind of values a tensor holds.
enum class Fill { kWeight, kNorm };

struct PlannedTensor {
  SynthTensor t;
  Fill fill = Fill::kWeight;
};

void check_shape(const SynthShape& s) {
  auto positive = [](const char* what, int64_t v) {
    if (v <= 0) throw error("synth: ", what, " must be positive, found ", v);
  };
  positive("--n-embd", s.n_embd);
  positive("--n-layer", s.n_layer);
  positive("--n-head", s.n_head);
  positive("--n-head-kv", s.n_head_kv);
  positive("--n-ff", s.n_ff);
  positive("--n-vocab", s.n_vocab);
  positive("--n-ctx", s.n_ctx);
  static const char* const kArchs[] = {"llama", "qwen2",  "qwen3", "gemma2",
                                       "gemma3", "phi3", "bert", "nomic-bert"};
  if (std::find(std::begin(kArchs), std::end(kArchs), s.arch) == std::end(kArchs))
    throw error("synth: --arch '", s.arch,
                "' is not supported; expected llama, qwen2, qwen3, gemma2, gemma3, phi3, bert or "
                "nomic-bert");
  if (s.head_dim == 0 && s.n_embd % s.n_head != 0)
    throw error("synth: --n-embd ", s.n_embd, " is not a multiple of --n-head ", s.n_head);
  if (s.n_head % s.n_head_kv != 0)
    throw error("synth: --n-head ", s.n_head, " is not a multiple of --n-head-kv ", s.n_head_kv);
  if (s.n_embd % 32 != 0 || s.n_ff % 32 != 0)
    throw error("synth: --n-embd and --n-ff must be multiples of 32 (a quant block), found ",
                s.n_embd, " and ", s.n_ff);
}

// Every tensor of the model in llama.cpp's order (outside blocks first, then by block), typed
// by the file type's mix.
int64_t head_dim_of(const SynthShape& s) { return s.head_dim > 0 ? s.head_dim : s.n_embd / s.n_head; }

using AddTensor = std::function<void(std::string name, std::vector<uint64_t> dims, Fill fill)>;

// Decoders: embeddings, pre-norm blocks, final norm and (untied) lm-head.
void plan_decoder(const SynthShape& s, const AddTensor& add) {
  const int64_t head_dim = head_dim_of(s);
  const uint64_t q_out = static_cast<uint64_t>(s.n_head * head_dim);
  const uint64_t kv_out = static_cast<uint64_t>(s.n_head_kv * head_dim);
  const uint64_t e = static_cast<uint64_t>(s.n_embd), ff = static_cast<uint64_t>(s.n_ff);
  const std::string& a = s.arch;
  add(std::string(names::kTokenEmbd), {e, static_cast<uint64_t>(s.n_vocab)}, Fill::kWeight);
  add(std::string(names::kOutputNorm), {e}, Fill::kNorm);
  if (!s.tied_output) add(std::string(names::kOutput), {e, static_cast<uint64_t>(s.n_vocab)}, Fill::kWeight);
  const bool qk_norm = a == "qwen3" || a == "gemma3";
  const bool post_norms = a == "gemma2" || a == "gemma3";
  const bool fused = a == "phi3";  // attn_qkv, and ffn_up = [gate; up]
  const uint64_t hd = static_cast<uint64_t>(head_dim);
  auto layer = [&](const char* pattern, int i) { return names::expand(pattern, a, i); };
  for (int i = 0; i < s.n_layer; ++i) {
    add(names::expand(names::kAttnNorm, a, i), {e}, Fill::kNorm);
    if (fused) {
      add(layer("blk.{i}.attn_qkv.weight", i), {e, q_out + 2 * kv_out}, Fill::kWeight);
    } else {
      add(names::expand(names::kAttnQ, a, i), {e, q_out}, Fill::kWeight);
      add(names::expand(names::kAttnK, a, i), {e, kv_out}, Fill::kWeight);
      add(names::expand(names::kAttnV, a, i), {e, kv_out}, Fill::kWeight);
    }
    if (qk_norm) {
      add(layer("blk.{i}.attn_q_norm.weight", i), {hd}, Fill::kNorm);
      add(layer("blk.{i}.attn_k_norm.weight", i), {hd}, Fill::kNorm);
    }
    if (s.qkv_bias) {
      add(names::expand(names::kAttnQBias, a, i), {q_out}, Fill::kWeight);
      add(names::expand(names::kAttnKBias, a, i), {kv_out}, Fill::kWeight);
      add(names::expand(names::kAttnVBias, a, i), {kv_out}, Fill::kWeight);
    }
    add(names::expand(names::kAttnOutput, a, i), {q_out, e}, Fill::kWeight);
    if (post_norms) add(layer("blk.{i}.post_attention_norm.weight", i), {e}, Fill::kNorm);
    add(names::expand(names::kFfnNorm, a, i), {e}, Fill::kNorm);
    if (fused) {
      add(names::expand(names::kFfnUp, a, i), {e, 2 * ff}, Fill::kWeight);
    } else {
      add(names::expand(names::kFfnGate, a, i), {e, ff}, Fill::kWeight);
      add(names::expand(names::kFfnUp, a, i), {e, ff}, Fill::kWeight);
    }
    add(names::expand(names::kFfnDown, a, i), {ff, e}, Fill::kWeight);
    if (post_norms) add(layer("blk.{i}.post_ffw_norm.weight", i), {e}, Fill::kNorm);
  }
}

// Encoders, exactly the sets of ENCODERS.md section 3: bert has learned positions and biases on
// every matmul; nomic-bert has neither (rope instead), one fused attn_qkv and a gated FFN.
void plan_encoder(const SynthShape& s, const AddTensor& add) {
  const bool nomic = s.arch == "nomic-bert";
  const uint64_t e = static_cast<uint64_t>(s.n_embd), ff = static_cast<uint64_t>(s.n_ff);
  const uint64_t kv = static_cast<uint64_t>(s.n_head_kv * head_dim_of(s));
  auto name = [](const std::string& pattern, int i) { return names::expand(pattern, "", i); };
  add("token_embd.weight", {e, static_cast<uint64_t>(s.n_vocab)}, Fill::kWeight);
  add("token_types.weight", {e, 2}, Fill::kWeight);
  if (!nomic) add("position_embd.weight", {e, static_cast<uint64_t>(s.n_ctx)}, Fill::kWeight);
  add("token_embd_norm.weight", {e}, Fill::kNorm);
  add("token_embd_norm.bias", {e}, Fill::kWeight);
  for (int i = 0; i < s.n_layer; ++i) {
    if (nomic) {
      add(name("blk.{i}.attn_qkv.weight", i), {e, e + 2 * kv}, Fill::kWeight);
    } else {
      for (const char* m : {"q", "k", "v"}) {
        add(name(std::string("blk.{i}.attn_") + m + ".weight", i), {e, m[0] == 'q' ? e : kv}, Fill::kWeight);
        add(name(std::string("blk.{i}.attn_") + m + ".bias", i), {m[0] == 'q' ? e : kv}, Fill::kWeight);
      }
    }
    add(name("blk.{i}.attn_output.weight", i), {e, e}, Fill::kWeight);
    if (!nomic) add(name("blk.{i}.attn_output.bias", i), {e}, Fill::kWeight);
    add(name("blk.{i}.attn_output_norm.weight", i), {e}, Fill::kNorm);
    add(name("blk.{i}.attn_output_norm.bias", i), {e}, Fill::kWeight);
    add(name("blk.{i}.ffn_up.weight", i), {e, ff}, Fill::kWeight);
    if (nomic) add(name("blk.{i}.ffn_gate.weight", i), {e, ff}, Fill::kWeight);
    else add(name("blk.{i}.ffn_up.bias", i), {ff}, Fill::kWeight);
    add(name("blk.{i}.ffn_down.weight", i), {ff, e}, Fill::kWeight);
    if (!nomic) add(name("blk.{i}.ffn_down.bias", i), {e}, Fill::kWeight);
    add(name("blk.{i}.layer_output_norm.weight", i), {e}, Fill::kNorm);
    add(name("blk.{i}.layer_output_norm.bias", i), {e}, Fill::kWeight);
  }
}

std::vector<PlannedTensor> plan(const SynthShape& s, const FileTypeSpec& spec) {
  std::vector<PlannedTensor> out;
  const AddTensor add = [&](std::string name, std::vector<uint64_t> dims, Fill fill) {
    out.push_back(PlannedTensor{SynthTensor{std::move(name), GGML_TYPE_F32, std::move(dims)}, fill});
  };
  const std::string& a = s.arch;
  if (a == "bert" || a == "nomic-bert") {
    plan_encoder(s, add);
  } else {
    plan_decoder(s, add);
  }
  std::vector<std::string> tensor_names;
  for (const PlannedTensor& p : out) tensor_names.push_back(p.t.name);
  std::vector<PlannedTensor> ordered;
  QuantMixPlanner planner(spec, static_cast<int>(s.n_layer), s.tied_output,
                          static_cast<int>(s.n_head / s.n_head_kv));
  for (size_t i : llama_tensor_order(tensor_names)) {
    PlannedTensor p = out[i];
    p.t.type = planner.choose(p.t.name, p.t.dims, GGML_TYPE_F32);
    ordered.push_back(std::move(p));
  }
  return ordered;
}

const FileTypeSpec& file_type_or_throw(const std::string& name) {
  const FileTypeSpec* spec = find_file_type(name);
  if (!spec) throw error("synth: unknown --type '", name, "'; expected one of ", file_type_names());
  return *spec;
}

// SplitMix64: a fast, well-mixed 64-bit generator; also used to derive per-row seeds.
uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Inverse of the standard normal CDF (Acklam's rational approximation, relative error
// below 1.2e-9), for building the quantile table.
double normal_quantile(double p) {
  static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                             1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                             6.680131188771972e+01, -1.328068155288572e+01};
  static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                             -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00};
  static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                             3.754408661907416e+00};
  const double p_low = 0.02425;
  if (p < p_low) {
    const double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - p_low) return -normal_quantile(1 - p);
  const double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

// N(0, 1) sampled by inverse transform from 2^16 equiprobable quantiles: 16 random bits per
// value, no transcendental per value. Random weights only need the distribution's shape
// (the tails stop at about 4.3 sigma); this is ~10x faster than Box-Muller.
constexpr int kQuantileBits = 16;
const std::vector<float>& normal_quantile_table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(size_t{1} << kQuantileBits);  // [65536] quantiles at (i + 0.5) / 65536
    for (size_t i = 0; i < t.size(); ++i)
      t[i] = static_cast<float>(normal_quantile((static_cast<double>(i) + 0.5) / t.size()));
    return t;
  }();
  return table;
}

// Fills row[0..n) with mean + std * N(0, 1) from the row's own random stream.
void fill_normal_row(uint64_t seed, uint64_t tensor_index, uint64_t row, float mean, float std,
                     float* out, int64_t n) {
  const float* quantiles = normal_quantile_table().data();
  uint64_t state = seed;
  state = splitmix64(state) ^ (tensor_index * 0xD1B54A32D192ED03ull);
  state = splitmix64(state) ^ (row * 0x8CB92BA72F3D8DD7ull);
  for (int64_t i = 0; i < n; i += 4) {
    uint64_t bits = splitmix64(state);
    for (int64_t k = i; k < std::min(n, i + 4); ++k, bits >>= kQuantileBits)
      out[k] = mean + std * quantiles[bits & 0xFFFF];
  }
}

}  // namespace

void check_synth_options(const SynthShape& shape, const std::string& file_type) {
  check_shape(shape);
  file_type_or_throw(file_type);
}

std::span<const SynthPreset> synth_presets() { return kPresets; }

const SynthPreset* find_synth_preset(std::string_view name) {
  for (const SynthPreset& p : kPresets)
    if (name == p.name) return &p;
  return nullptr;
}

std::vector<SynthTensor> synth_tensor_plan(const SynthShape& shape, const std::string& file_type) {
  check_shape(shape);
  std::vector<SynthTensor> out;
  for (PlannedTensor& p : plan(shape, file_type_or_throw(file_type))) out.push_back(std::move(p.t));
  return out;
}

SynthReport synth_model(const SynthOptions& options,
                        const std::function<void(uint64_t, uint64_t)>& progress) {
  const FileTypeSpec& spec = file_type_or_throw(options.file_type);
  SynthShape shape = options.shape;
  check_shape(shape);

  GgufWriter writer(options.output);
  const std::string& a = shape.arch;
  writer.set_string(names::kArchitecture, a);
  writer.set_string(names::kModelName, options.name);
  writer.set_u32(names::expand(names::kContextLength, a), static_cast<uint32_t>(shape.n_ctx));
  writer.set_u32(names::expand(names::kEmbeddingLength, a), static_cast<uint32_t>(shape.n_embd));
  writer.set_u32(names::expand(names::kBlockCount, a), static_cast<uint32_t>(shape.n_layer));
  writer.set_u32(names::expand(names::kFeedForwardLength, a), static_cast<uint32_t>(shape.n_ff));
  writer.set_u32(names::expand(names::kHeadCount, a), static_cast<uint32_t>(shape.n_head));
  writer.set_u32(names::expand(names::kHeadCountKv, a), static_cast<uint32_t>(shape.n_head_kv));
  writer.set_f32(names::expand(names::kRopeFreqBase, a), static_cast<float>(shape.rope_freq_base));
  const bool encoder = a == "bert" || a == "nomic-bert";
  if (encoder) {
    // ENCODERS.md section 2: LayerNorm epsilon, bidirectional attention, the pooling the model
    // was trained with, two token types.
    writer.set_f32(names::expand(names::kLayerNormEpsilon, a), static_cast<float>(shape.rms_eps));
    writer.set_bool(names::expand(names::kAttentionCausal, a), false);
    if (shape.pooling_type > 0)
      writer.set_u32(names::expand("{arch}.pooling_type", a), static_cast<uint32_t>(shape.pooling_type));
  } else {
    writer.set_f32(names::expand(names::kRmsEpsilon, a), static_cast<float>(shape.rms_eps));
  }
  const int64_t head_dim = head_dim_of(shape);
  if (shape.head_dim > 0) {
    writer.set_u32(names::expand("{arch}.attention.key_length", a), static_cast<uint32_t>(head_dim));
    writer.set_u32(names::expand("{arch}.attention.value_length", a), static_cast<uint32_t>(head_dim));
  }
  if (a == "llama" || a == "phi3" || shape.n_rot > 0)
    writer.set_u32(names::expand(names::kRopeDimensionCount, a),
                   static_cast<uint32_t>(shape.n_rot > 0 ? shape.n_rot : head_dim));
  if (shape.sliding_window > 0)
    writer.set_u32(names::expand("{arch}.attention.sliding_window", a),
                   static_cast<uint32_t>(shape.sliding_window));
  writer.set_u32(names::kFileType, spec.ftype);
  writer.set_u32("general.quantization_version", kQuantizationVersion);
  if (!options.vocab_path.empty()) {
    const int64_t n_tokens = copy_tokenizer_metadata(options.vocab_path, writer);
    if (n_tokens != shape.n_vocab)
      throw error("synth: --vocab ", options.vocab_path, " has ", n_tokens,
                  " tokens but the model's n_vocab is ", shape.n_vocab,
                  " (pass --n-vocab ", n_tokens, " or another vocabulary)");
  } else {
    write_placeholder_tokenizer(shape.n_vocab, a, writer);
  }
  // The rows of token_types (a WordPiece vocabulary may carry the key already).
  if (encoder && !writer.has_key("tokenizer.ggml.token_type_count"))
    writer.set_u32("tokenizer.ggml.token_type_count", 2);

  const std::vector<PlannedTensor> tensors = plan(shape, spec);
  SynthReport report;
  for (const PlannedTensor& p : tensors) {
    writer.add_tensor(p.t.name, p.t.type, p.t.dims);
    report.tensors.push_back(p.t);
    report.tensor_bytes += GgufTensorInfo{p.t.name, p.t.type, p.t.dims, 0}.n_bytes();
  }
  writer.write_header();

  uint64_t done = 0;
  std::vector<float> rows_f32;   // [chunk rows][row_length]
  std::vector<uint8_t> encoded;  // [chunk rows][output row bytes]
  for (size_t ti = 0; ti < tensors.size(); ++ti) {
    const PlannedTensor& p = tensors[ti];
    const int64_t row_length = static_cast<int64_t>(p.t.dims[0]);
    int64_t n_rows = 1;
    for (size_t d = 1; d < p.t.dims.size(); ++d) n_rows *= static_cast<int64_t>(p.t.dims[d]);
    const uint64_t out_row = row_bytes(p.t.type, row_length);
    const int64_t chunk = std::max<int64_t>(1, static_cast<int64_t>(kChunkTargetBytes / (4 * row_length)));
    const float mean = p.fill == Fill::kNorm ? 1.0f : 0.0f;
    for (int64_t r0 = 0; r0 < n_rows; r0 += chunk) {
      const int64_t rows = std::min(chunk, n_rows - r0);
      rows_f32.resize(static_cast<size_t>(rows * row_length));
      encoded.resize(static_cast<size_t>(rows * out_row));
      tbb::parallel_for(tbb::blocked_range<int64_t>(0, rows), [&](const tbb::blocked_range<int64_t>& range) {
        for (int64_t r = range.begin(); r != range.end(); ++r) {
          float* row = rows_f32.data() + r * row_length;
          fill_normal_row(options.seed, ti, static_cast<uint64_t>(r0 + r), mean, kWeightStd, row, row_length);
          quantize_row(p.t.type, row, encoded.data() + r * out_row, row_length);
        }
      });
      writer.write_tensor_data(encoded.data(), encoded.size());
      done += encoded.size();
      if (progress) progress(done, report.tensor_bytes);
    }
  }
  writer.finish();
  return report;
}

}  // namespace gguflow
