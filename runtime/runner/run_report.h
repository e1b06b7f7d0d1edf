// What `gguflow run` reports at the end of a text run: timings as lines on stderr, or the whole
// run as one JSON document (--json).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "runtime/runner/generator.h"
#include "runtime/sampling/sampler.h"

namespace gguflow::runner {

struct RunReport {
  std::string model_path, model_source;  // see default_model.h
  bool random_weights = false;
  std::string graph_path;
  std::string kernels_name, kernels_target, kernels_path;
  int threads = 0;
  int64_t n_ctx = 0;
  sampling::SamplerConfig sampler;
  std::string mode;  // "completion" or "chat (chatml)"
  std::string prompt;  // the prompt text as given (chat: the rendered turn)
  double load_seconds = 0;  // model choice, GGUF open, graph load, tokenizer, kernels, session
  std::vector<GenerationResult> turns;  // one per generate() (chat: per turn)
  int64_t context_shifts = 0;           // --context-shift: how often the context was halved
};

// "load 3.1 ms | prompt 13 tokens in 1.0 ms (13000.0 tok/s) | generated 64 tokens in 9.5 ms
// (6736.8 tok/s) | stop: n_predict | kernels avx2 | seed 42", one line, totals over the turns.
std::string timings_line(const RunReport& report);

// The run as one JSON document: model, graph, kernels, sampler, prompt, prompt_ids, text, ids,
// stop, timings (chat turns: the totals, and every turn's text and ids under "turns").
std::string report_json(const RunReport& report);

}  // namespace gguflow::runner
