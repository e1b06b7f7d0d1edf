#include "runtime/gguf/model_hparams.h"

#include "ops/error.h"
#include "runtime/gguf/gguf_names.h"

namespace gguflow {
namespace {

// Architectures whose rope pairs dimension i with i + n_rot/2 (GGML's NEOX mode).
bool uses_neox_rope(const std::string& arch) {
  return arch == "qwen2" || arch == "qwen2moe" || arch == "qwen3" || arch == "phi2" ||
         arch == "phi3" || arch == "gemma" || arch == "gemma2" || arch == "stablelm" ||
         arch == "gptneox" || arch == "falcon";
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
  h.rms_eps = optional_double(names::kRmsEpsilon, 1e-5);
  h.rope_neox = uses_neox_rope(h.architecture);
  h.tied_output = !file.find_tensor(names::kOutput) && file.find_tensor(names::kTokenEmbd);

  if (const GgufTensorInfo* embd = file.find_tensor(names::kTokenEmbd); embd && embd->dims.size() >= 2)
    h.n_vocab = static_cast<int64_t>(embd->dims[1]);
  else if (const GgufValue* tokens = file.find(names::kTokenizerTokens); tokens && tokens->type == GgufValueType::kArray)
    h.n_vocab = static_cast<int64_t>(tokens->array_size());
  else
    h.n_vocab = optional_int(names::kVocabSize, 0);

  for (const auto& t : file.tensors()) h.n_params += t.n_elements();
  return h;
}

}  // namespace gguflow
