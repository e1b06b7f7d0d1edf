// `gguflow kv eval`: the same tokens through several caches, compared with the full cache's
// next-token distributions:
//   full       the generate default (graphs/decode.yaml) with an f32 cache, the reference (KL 0,
//              top-1 1, relative L2 0)
//   projected  the family's low-rank graph (graphs/decode-lowrank-kv.yaml, qwen3-lowrank-kv.yaml,
//              or their -prerope variants for keys fitted before RoPE) with a .kvproj.gguf side
//              file, and/or
//   K x, V y   decode.yaml with its cache stored in smaller element types (f16, q8_0, q4_0)
//   zero       decode.yaml one token at a time with the cache cleared before every step: each
//              token sees only itself. A control: a decode that did not read its cache would
//              score as well as the full one here.
// Positions 0..T-2 predict tokens 1..T-1; KL, top-1 and the relative L2 are over those rows.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "ops/kv_cache_type.h"
#include "runtime/core/json.h"
#include "runtime/lowrank/kv_collect.h"

namespace gguflow::lowrank {

struct CacheMetrics {
  double kld_mean = 0;        // mean over positions of KL(p_full || p_cache), nats
  double top1_agreement = 0;  // fraction of positions whose argmax equals the full cache's
  double perplexity = 0;      // exp(mean -log p_cache(next token))
  double logit_rel_l2 = 0;    // ||L_cache - L_full|| / ||L_full|| over all compared logits
  double kv_bytes_per_token = 0;  // bytes the session allocated for KV / context slots (0: zero)
  uint64_t kv_bytes = 0;          // bytes the session allocated for KV (0: zero)
  // Tokens / seconds of the run's prefill of the whole text (one batch; the zeroed control
  // decodes token by token). Wall time on a possibly shared machine: a rough speed only.
  double tokens_per_second = 0;
};

// Logits [T][n_vocab] of one cache over the tokens, and its allocated KV bytes per token.
struct CacheRun {
  std::vector<float> logits;
  int64_t n_vocab = 0;
  double kv_bytes_per_token = 0;
  uint64_t kv_bytes = 0;
  double seconds = 0;  // wall time of the model steps
};

// The KV cache element types of one evaluated cache.
struct CacheTypes {
  ops::KvCacheType k = ops::KvCacheType::kF32, v = ops::KvCacheType::kF32;
  std::string name() const;  // "K q8_0, V q8_0"
};

CacheRun run_full(const StudyModel& m, std::span<const int32_t> tokens, CacheTypes types = {});
// Through the model family's low-rank graph for the file's key position (projected_graph_path).
CacheRun run_projected(const StudyModel& m, const std::string& projection_path, std::span<const int32_t> tokens);
CacheRun run_zero(const StudyModel& m, std::span<const int32_t> tokens);

// Metrics of `run` against `full` (same tokens).
CacheMetrics compare(const CacheRun& full, const CacheRun& run, std::span<const int32_t> tokens);

struct EvalResult {
  CacheMetrics full, zero;
  // The evaluated caches in order: ("projected", ...) and/or ("K q8_0, V q8_0", ...).
  std::vector<std::pair<std::string, CacheMetrics>> tested;
  int64_t tokens = 0;
};
// Runs the full cache, the projection when `projection_path` is not empty (opened and checked
// against the model first: a clear error otherwise), decode.yaml with each of `cache_types`,
// and the zeroed control.
EvalResult evaluate(const StudyModel& m, const std::string& projection_path,
                    std::span<const CacheTypes> cache_types, std::span<const int32_t> tokens);

void print_eval_text(const EvalResult& r, FILE* out);
// The metrics as a JSON object (kld_mean, top1_agreement, perplexity, logit_rel_l2,
// kv_bytes_per_token, kv_bytes).
Json metrics_json(const CacheMetrics& m);
// {"tokens": T, "full": {...}, "projected": {...}, "K q8_0, V q8_0": {...}, "zero": {...}}
// with keys kld_mean, top1_agreement, perplexity, logit_rel_l2, kv_bytes_per_token.
void print_eval_json(const EvalResult& r, FILE* out);

}  // namespace gguflow::lowrank
