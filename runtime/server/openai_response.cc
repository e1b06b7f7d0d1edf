#include "runtime/server/openai_response.h"

#include <bit>

namespace gguflow::server {
namespace {

const char* object_name(GenerationKind kind, bool chunk) {
  if (kind == GenerationKind::kChat) return chunk ? "chat.completion.chunk" : "chat.completion";
  return "text_completion";  // the completions API names its chunks the same
}

Json reason_json(FinishReason reason) { return finish_reason_name(reason); }

Json base(GenerationKind kind, const ResponseHeader& header, bool chunk) {
  return {{"id", header.id},
          {"object", object_name(kind, chunk)},
          {"created", header.created},
          {"model", header.model},
          {"system_fingerprint", "gguflow"}};
}

}  // namespace

Json usage_json(int64_t prompt_tokens, int64_t completion_tokens) {
  return {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens}};
}

Json completion_json(GenerationKind kind, const ResponseHeader& header, const std::string& text,
                     FinishReason reason, int64_t prompt_tokens, int64_t completion_tokens) {
  Json out = base(kind, header, false);
  Json choice = {{"index", 0}};
  if (kind == GenerationKind::kChat) {
    choice["message"] = {{"role", "assistant"}, {"content", text}};
    choice["logprobs"] = nullptr;
  } else {
    choice["text"] = text;
    choice["logprobs"] = nullptr;
  }
  choice["finish_reason"] = reason_json(reason);
  out["choices"] = Json::array({choice});
  out["usage"] = usage_json(prompt_tokens, completion_tokens);
  return out;
}

Json chunk_json(GenerationKind kind, const ResponseHeader& header, const std::string& text,
                bool first, const FinishReason* reason) {
  Json out = base(kind, header, true);
  Json choice = {{"index", 0}};
  if (kind == GenerationKind::kChat) {
    Json delta = Json::object();
    if (first) delta["role"] = "assistant";
    if (!text.empty() || first) delta["content"] = text;
    choice["delta"] = delta;
  } else {
    choice["text"] = text;
  }
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = reason ? reason_json(*reason) : Json(nullptr);
  out["choices"] = Json::array({choice});
  return out;
}

Json usage_chunk_json(GenerationKind kind, const ResponseHeader& header, int64_t prompt_tokens,
                      int64_t completion_tokens) {
  Json out = base(kind, header, true);
  out["choices"] = Json::array();
  out["usage"] = usage_json(prompt_tokens, completion_tokens);
  return out;
}

std::string sse_event(const Json& data) { return "data: " + json_text(data, -1) + "\n\n"; }

Json embeddings_json(const std::string& model, std::span<const float> vectors, int64_t dim,
                     bool as_base64, int64_t prompt_tokens) {
  Json data = Json::array();
  const int64_t n = dim > 0 ? static_cast<int64_t>(vectors.size()) / dim : 0;
  for (int64_t i = 0; i < n; ++i) {
    const std::span<const float> v = vectors.subspan(i * dim, dim);
    Json item = {{"object", "embedding"}, {"index", i}};
    if (as_base64) {
      // float32 little-endian, as the OpenAI API sends it (x86 and arm64 are little-endian).
      static_assert(std::endian::native == std::endian::little);
      item["embedding"] = base64(std::span<const unsigned char>(
          reinterpret_cast<const unsigned char*>(v.data()), v.size_bytes()));
    } else {
      item["embedding"] = Json(std::vector<float>(v.begin(), v.end()));
    }
    data.push_back(std::move(item));
  }
  return {{"object", "list"},
          {"data", data},
          {"model", model},
          {"usage", {{"prompt_tokens", prompt_tokens}, {"total_tokens", prompt_tokens}}}};
}

Json models_json(const std::string& model, int64_t created) {
  return {{"object", "list"},
          {"data", Json::array({{{"id", model},
                                 {"object", "model"},
                                 {"created", created},
                                 {"owned_by", "gguflow"}}})}};
}

std::string base64(std::span<const unsigned char> bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    for (int shift : {18, 12, 6, 0}) out += kAlphabet[(v >> shift) & 63];
  }
  if (const size_t rest = bytes.size() - i; rest > 0) {
    const uint32_t v = (bytes[i] << 16) | (rest == 2 ? bytes[i + 1] << 8 : 0);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

}  // namespace gguflow::server
