// The text side of `gguflow run`: prompt in, streamed text out. Loads the model (or the default
// one, default_model.h), the graph and its sampler stage, the tokenizer and the kernel plugin,
// then runs a completion or a chat (one turn, or interactive turns read line by line).
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/exec/session.h"
#include "runtime/runner/sampler_settings.h"

namespace gguflow::runner {

struct TextRunRequest {
  std::string graph_path;                                // "" -> the shipped graph for the model's architecture
  std::string model_path;                                // --model; "" -> the default search
  std::vector<std::pair<std::string, std::string>> set;  // --set name=value
  std::vector<std::string> weight_files;                 // --kv-proj: more weights (side files)
  exec::SessionOptions session;                          // --threads, --ctx
  std::string kernels;                                   // --kernels; "" -> $GGUFLOW_KERNELS/best
  SamplerOverrides sampling;                             // --temp, --top-k, ...
  std::optional<std::string> prompt;  // the prompt text; nullopt when none was given
  int64_t n_predict = -1;             // -n; < 0: until EOS or the context is full
  bool context_shift = false;         // --context-shift (GenerateOptions::context_shift)
  int64_t keep = 0;                   // --keep
  bool parse_special = false;         // --special: <|im_start|>-like text in the prompt is a token
  bool echo = true;                   // completion: print the prompt before the continuation
  bool json = false;                  // --json: one JSON document instead of streamed text
  bool chat = false;                  // --chat: format with the model's chat template
  bool interactive = false;           // chat turns read from `in` line by line
  std::string system;                 // --system text for chat
  std::string chat_template;          // --chat-template NAME; "" = the model's own
  bool verbose = false;
};

// Runs the request; streams text to `out` (flushed per token), notices and timings to `log`,
// and reads interactive chat turns from `in`. Returns the process exit status (0).
// Throws gguflow::Error for bad input: the model, graph, sampler settings, a prompt that is not
// UTF-8 or does not fit in the context, a model without a chat template for --chat.
int run_text(const TextRunRequest& request, FILE* in, FILE* out, FILE* log);

// The prompt from --prompt TEXT, --prompt - (all of `in`) or --prompt-file FILE (read as bytes;
// from a file or stdin one trailing line break, "\n" or "\r\n", is dropped, as llama.cpp does:
// editors end files with one). nullopt when neither is given. Throws when both are given or the file
// cannot be read.
std::optional<std::string> read_prompt(const std::optional<std::string>& prompt_option,
                                       const std::string& prompt_file, FILE* in);

}  // namespace gguflow::runner
