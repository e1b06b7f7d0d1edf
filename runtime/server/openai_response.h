// The response bodies of the OpenAI endpoints: completion objects, their streamed chunks (one
// per server-sent event), embedding lists and the model list, in the shapes the official client
// libraries parse.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "runtime/core/json.h"
#include "runtime/server/generation_job.h"
#include "runtime/server/openai_request.h"

namespace gguflow::server {

// What every object of one response shares.
struct ResponseHeader {
  std::string id;       // "chatcmpl-..." / "cmpl-..."
  int64_t created = 0;  // Unix seconds
  std::string model;
};

Json usage_json(int64_t prompt_tokens, int64_t completion_tokens);

// The whole answer of a non-streamed request.
Json completion_json(GenerationKind kind, const ResponseHeader& header, const std::string& text,
                     FinishReason reason, int64_t prompt_tokens, int64_t completion_tokens);

// One streamed chunk: `text` as the delta; `reason` set on the last one. A chat stream's first
// chunk (`first`) also carries the role.
Json chunk_json(GenerationKind kind, const ResponseHeader& header, const std::string& text,
                bool first, const FinishReason* reason);
// The usage chunk sent last when stream_options.include_usage is set (no choices).
Json usage_chunk_json(GenerationKind kind, const ResponseHeader& header, int64_t prompt_tokens,
                      int64_t completion_tokens);

// One server-sent event carrying `data` ("data: ...\n\n").
std::string sse_event(const Json& data);
inline constexpr const char* kSseDone = "data: [DONE]\n\n";

// POST /v1/embeddings: `vectors` is [n][dim], row-major.
Json embeddings_json(const std::string& model, std::span<const float> vectors, int64_t dim,
                     bool base64, int64_t prompt_tokens);

// GET /v1/models.
Json models_json(const std::string& model, int64_t created);

// RFC 4648 base64 of raw bytes (the embeddings' "base64" encoding).
std::string base64(std::span<const unsigned char> bytes);

}  // namespace gguflow::server
