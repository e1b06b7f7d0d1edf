// The request bodies of the OpenAI endpoints, parsed and checked: every field the server uses is
// read with its type and range checked, and a bad one is a 400 naming the field, what was
// expected and what was found (ApiError). Fields clients send that change nothing here (user,
// logit_bias when empty, ...) are ignored; a feature the server lacks (n > 1, logprobs, tools)
// is refused rather than silently dropped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/json.h"
#include "runtime/runner/sampler_settings.h"
#include "runtime/tokenizer/chat_template.h"

namespace gguflow::server {

// A body as JSON: 400 for text that is not a JSON object (with the parser's line and column).
Json parse_body(std::string_view text);

enum class GenerationKind { kChat, kCompletion };

// POST /v1/chat/completions and POST /v1/completions.
struct GenerationRequest {
  GenerationKind kind = GenerationKind::kChat;
  std::string model;                    // "" when not given
  std::vector<ChatMessage> messages;    // chat: the conversation to continue
  std::string prompt;                   // completion: the text to continue
  std::optional<int64_t> max_tokens;    // max_tokens / max_completion_tokens
  std::vector<std::string> stop;        // up to 4 non-empty strings
  bool stream = false;
  bool include_usage = false;           // stream_options.include_usage
  bool ignore_eos = false;              // llama-server's extension: generate to the limit
  // temperature, top_p, seed (OpenAI), and top_k, min_p, repeat_penalty (llama-server's
  // extensions); unset ones take the graph's sampler defaults.
  runner::SamplerOverrides sampling;
};

GenerationRequest parse_chat_request(const Json& body);
GenerationRequest parse_completion_request(const Json& body);

// POST /v1/embeddings.
struct EmbeddingRequest {
  std::string model;
  std::vector<std::string> inputs;  // `input`: a string or an array of strings
  bool base64 = false;              // encoding_format "base64": little-endian float32 bytes
};

EmbeddingRequest parse_embedding_request(const Json& body);

}  // namespace gguflow::server
