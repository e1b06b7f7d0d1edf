// The logic of `gguflow run GRAPH.yaml --model M --tokens ...`: load and bind the graph, build
// a Session, evaluate the ids as one prompt, optionally dump every position's logits and
// continue greedily. The command file only parses options and picks the kernel plugin.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "plugins/abi/kernel_abi.h"
#include "runtime/exec/session.h"

namespace gguflow::exec {

struct RunTokensRequest {
  std::string graph_path;                                  // GRAPH.yaml
  std::string model_path;                                  // --model
  std::vector<std::pair<std::string, std::string>> set;    // --set name=value
  std::vector<std::string> weight_files;                   // --kv-proj: more weights (side files)
  std::vector<int32_t> tokens;                             // --tokens
  std::string dump_logits;                                 // --dump-logits FILE ("" = none)
  int64_t greedy_steps = 0;                                // --greedy N
  SessionOptions session;                                  // --threads, --ctx
  bool verbose = false;                                    // --verbose: sizes and timings
  bool json = false;                                       // --json: one JSON document on `out`
};

// Writes the logits of every prompt position as f32 little-endian [n_tokens][n_vocab] to
// `dump_logits`, then prints the greedy ids (space-separated, one line; the first is the most
// likely token after the prompt) to `out`. With `json`, prints instead one JSON document:
// {"tokens", "greedy", "dump_logits", "n_vocab", "prefill_seconds", "decode_seconds", "kernels"}.
// Throws gguflow::Error for bad input (graph, model, token ids, context).
void run_tokens(const RunTokensRequest& request, const GguflowKernels& kernels, FILE* out,
                FILE* log);

}  // namespace gguflow::exec
