#include "runtime/gguf/model_hparams.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "ops/error.h"
#include "runtime/gguf/gguf_names.h"

namespace gguflow {
namespace {

// Architectures whose rope pairs dimension i with i + n_rot/2 (GGML's NEOX mode): the list of
// graphs/decode.yaml's rope_mode switch, and nomic-bert (graphs/nomic-bert.yaml). For `inspect`.
bool uses_neox_rope(const std::string& arch) {
  return arch == "qwen2" || arch == "qwen2moe" || arch == "qwen3" || arch == "phi2" ||
         arch == "phi3" || arch == "gemma" || arch == "gemma2" || arch == "gemma3" ||
         arch == "stablelm" || arch == "gptneox" || arch == "falcon" || arch == "nomic-bert";
}

}  // namespace

ModelHparams read_model_hparams(const GgufFile& file) {
  ModelHparams h;
  h.architecture = file.architecture();
  if (h.architecture.empty())
    throw error(file.path(), ": metadata '", names::kArchitecture, "' is missing");
  auto key = [&](std::string_view pattern) { return names::expand(pattern, h.architecture); };
  auto required_int = [&](std::string_view pattern) {
    std::string k = key(pattern);
    return file.get(k).as_int(file.path() + ": metadata '" + k + "'");
  };
  auto optional_int = [&](std::string_view pattern, int64_t fallback) {
    std::string k = key(pattern);
    const GgufValue* v = file.find(k);
    return v ? v->as_int(file.path() + ": metadata '" + k + "'") : fallback;
  };
  auto optional_double = [&](std::string_view pattern, double fallback) {
    std::string k = key(pattern);
    const GgufValue* v = file.find(k);
    return v ? v->as_double(file.path() + ": metadata '" + k + "'") : fallback;
  };

  h.n_layer = required_int(names::kBlockCount);
  h.n_embd = required_int(names::kEmbeddingLength);
  h.n_head = required_int(names::kHeadCount);
  h.n_ff = optional_int(names::kFeedForwardLength, 0);
  h.n_ctx_train = optional_int(names::kContextLength, 0);
  h.n_head_kv = optional_int(names::kHeadCountKv, h.n_head);
  if (h.n_head <= 0 || h.n_head_kv <= 0 || h.n_head % h.n_head_kv != 0)
    throw error(file.path(), ": head counts ", h.n_head, " / ", h.n_head_kv,
                " (query / key-value) must be positive with n_head a multiple of n_head_kv");
  h.head_dim = optional_int(names::kKeyLength, h.n_embd / h.n_head);
  h.n_rot = optional_int(names::kRopeDimensionCount, h.head_dim);
  h.rope_freq_base = optional_double(names::kRopeFreqBase, 10000.0);
  h.layer_norm = !file.find(key(names::kRmsEpsilon)) && file.find(key(names::kLayerNormEpsilon));
  h.rms_eps = optional_double(h.layer_norm ? names::kLayerNormEpsilon : names::kRmsEpsilon, 1e-5);
  h.rope_neox = uses_neox_rope(h.architecture);
  h.learned_positions = file.find_tensor(names::kPositionEmbd) != nullptr;
  if (const GgufValue* causal = file.find(key(names::kAttentionCausal)))
    h.encoder = !causal->as_bool(key(names::kAttentionCausal));
  h.tied_output = !h.encoder && !file.find_tensor(names::kOutput) && file.find_tensor(names::kTokenEmbd);

  if (const GgufTensorInfo* embd = file.find_tensor(names::kTokenEmbd); embd && embd->dims.size() >= 2)
    h.n_vocab = static_cast<int64_t>(embd->dims[1]);
  else if (const GgufValue* tokens = file.find(names::kTokenizerTokens); tokens && tokens->type == GgufValueType::kArray)
    h.n_vocab = static_cast<int64_t>(tokens->array_size());
  else
    h.n_vocab = optional_int(names::kVocabSize, 0);

  for (const auto& t : file.tensors()) h.n_params += t.n_elements();
  return h;
}

void check_model_metadata(const GgufFile& file) {
  const std::string arch = file.architecture();
  if (arch.empty()) return;  // files without an architecture (vocabularies) carry none of these
  auto describe = [](const GgufValue& v) {
    return std::string(gguf_value_type_name(v.type)) + " " + v.to_string(4);
  };
  // Integer hyperparameters: an integer type, positive (a bool block_count was read as 1, a
  // context_length of -1 or "4096" accepted). Per-layer arrays are left to the graph.
  for (std::string_view pattern : {names::kBlockCount, names::kContextLength, names::kEmbeddingLength,
                                   names::kFeedForwardLength, names::kHeadCount, names::kHeadCountKv,
                                   names::kKeyLength, names::kValueLength, names::kRopeDimensionCount,
                                   names::kVocabSize}) {
    const std::string key = names::expand(pattern, arch);
    const GgufValue* v = file.find(key);
    if (!v || v->type == GgufValueType::kArray) continue;
    const bool ok = v->is_integer() && (v->type == GgufValueType::kU8 || v->type == GgufValueType::kU16 ||
                                        v->type == GgufValueType::kU32 || v->type == GgufValueType::kU64
                                            ? v->number.u64 > 0 && v->number.u64 <= uint64_t{INT64_MAX}
                                            : v->number.i64 > 0);
    if (!ok)
      throw error(file.path(), ": metadata '", key, "': expected a positive integer, found ", describe(*v));
  }
  // Float hyperparameters (norm epsilons, rope bases and scales, soft-caps): finite, and the
  // epsilons and the rope base positive. A nan epsilon ran to all-nan logits and token 0.
  const std::string prefix = arch + ".";
  for (const GgufKeyValue& kv : file.metadata()) {
    if (kv.key.rfind(prefix, 0) != 0) continue;
    const GgufValue& v = kv.value;
    std::vector<double> values;
    if (v.type == GgufValueType::kF32 || v.type == GgufValueType::kF64)
      values.push_back(v.as_double(kv.key));
    else if (v.type == GgufValueType::kArray &&
             (v.element_type == GgufValueType::kF32 || v.element_type == GgufValueType::kF64))
      values = v.as_double_array(kv.key);
    const bool positive = kv.key.ends_with("epsilon") || kv.key == names::expand(names::kRopeFreqBase, arch);
    for (double x : values)
      if (!std::isfinite(x) || (positive && !(x > 0)))
        throw error(file.path(), ": metadata '", kv.key, "': expected a finite", positive ? " positive" : "",
                    " number, found ", describe(v));
  }
  // Consistency with the tensors: token_embd is [n_embd, n_vocab].
  const GgufTensorInfo* embd = file.find_tensor(names::kTokenEmbd);
  if (!embd || embd->dims.size() < 2) return;
  const std::string embd_key = names::expand(names::kEmbeddingLength, arch);
  if (const GgufValue* v = file.find(embd_key); v && v->is_integer() &&
                                                 static_cast<uint64_t>(v->as_int(embd_key)) != embd->dims[0])
    throw error(file.path(), ": metadata '", embd_key, "' is ", describe(*v), " but tensor '",
                names::kTokenEmbd, "' has rows of ", embd->dims[0], ": expected them equal");
  if (const GgufValue* tokens = file.find(names::kTokenizerTokens);
      tokens && tokens->type == GgufValueType::kArray && tokens->array_size() != embd->dims[1])
    throw error(file.path(), ": metadata '", names::kTokenizerTokens, "' holds ", tokens->array_size(),
                " tokens but tensor '", names::kTokenEmbd, "' has ", embd->dims[1],
                " rows (one per token): expected them equal");
}

}  // namespace gguflow
