#include "runtime/server/openai_request.h"

#include <cmath>
#include <limits>

#include "runtime/server/api_error.h"

namespace gguflow::server {
namespace {

// "a string", "an array", ... for messages.
std::string kind_of(const Json& value) {
  const std::string name = value.type_name();
  return (name == "array" || name == "object" ? "an " : "a ") + name;
}

// A value quoted in an error message: its JSON text, cut to 80 bytes (a client's megabyte-long
// value is not sent back to it).
std::string quoted(const Json& value) {
  constexpr size_t kMostBytes = 80;
  std::string text = json_text(value, -1);
  if (text.size() > kMostBytes) {
    size_t cut = kMostBytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // whole characters
    text = text.substr(0, cut) + "... (" + std::to_string(text.size()) + " bytes)";
  }
  return text;
}

const Json* member(const Json& object, const char* key) {
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

std::optional<double> number_in(const Json& body, const char* key, double min, double max) {
  const Json* v = member(body, key);
  if (!v) return std::nullopt;
  if (!v->is_number())
    throw invalid_request(std::string(key) + ": expected a number, found " + kind_of(*v));
  const double x = v->get<double>();
  if (!(x >= min && x <= max))
    throw invalid_request(std::string(key) + ": expected a number in [" + json_text(min, -1) +
                          ", " + json_text(max, -1) + "], found " + json_text(*v, -1));
  return x;
}

std::optional<int64_t> integer_in(const Json& body, const char* key, int64_t min, int64_t max) {
  const Json* v = member(body, key);
  if (!v) return std::nullopt;
  if (!v->is_number_integer())
    throw invalid_request(std::string(key) + ": expected an integer, found " +
                          (v->is_number() ? "the number " + json_text(*v, -1) : kind_of(*v)));
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(max))
    throw invalid_request(std::string(key) + ": expected an integer in [" + std::to_string(min) +
                          ", " + std::to_string(max) + "], found " + json_text(*v, -1));
  const int64_t x = v->get<int64_t>();
  if (x < min || x > max)
    throw invalid_request(std::string(key) + ": expected an integer in [" + std::to_string(min) +
                          ", " + std::to_string(max) + "], found " + std::to_string(x));
  return x;
}

std::optional<bool> boolean(const Json& body, const char* key) {
  const Json* v = member(body, key);
  if (!v) return std::nullopt;
  if (!v->is_boolean())
    throw invalid_request(std::string(key) + ": expected true or false, found " + kind_of(*v));
  return v->get<bool>();
}

std::string string_field(const Json& body, const char* key) {
  const Json* v = member(body, key);
  if (!v) return "";
  if (!v->is_string())
    throw invalid_request(std::string(key) + ": expected a string, found " + kind_of(*v));
  return v->get<std::string>();
}

// A field that must be absent, null or the value that means "off".
void refuse_unless(bool off, const char* key, const char* what) {
  if (!off) throw invalid_request(std::string(key) + ": " + what + " is not supported by this server");
}

void refuse_unsupported(const Json& body) {
  refuse_unless(integer_in(body, "n", 1, 1).value_or(1) == 1, "n", "more than one choice");
  refuse_unless(!boolean(body, "logprobs").value_or(false), "logprobs", "returning log probabilities");
  refuse_unless(!member(body, "tools") || (*member(body, "tools")).empty(), "tools", "tool calling");
  refuse_unless(number_in(body, "frequency_penalty", -2, 2).value_or(0) == 0, "frequency_penalty",
                "a frequency penalty (use repeat_penalty)");
  refuse_unless(number_in(body, "presence_penalty", -2, 2).value_or(0) == 0, "presence_penalty",
                "a presence penalty (use repeat_penalty)");
}

std::vector<std::string> stop_strings(const Json& body) {
  const Json* v = member(body, "stop");
  if (!v) return {};
  std::vector<std::string> stop;
  if (v->is_string()) {
    stop.push_back(v->get<std::string>());
  } else if (v->is_array()) {
    if (v->size() > 4)
      throw invalid_request("stop: expected at most 4 strings, found " + std::to_string(v->size()));
    for (const Json& s : *v) {
      if (!s.is_string())
        throw invalid_request("stop: expected strings, found " + kind_of(s) + " in the array");
      stop.push_back(s.get<std::string>());
    }
  } else {
    throw invalid_request("stop: expected a string or an array of strings, found " + kind_of(*v));
  }
  for (const std::string& s : stop)
    if (s.empty()) throw invalid_request("stop: expected non-empty strings, found \"\"");
  return stop;
}

// The fields both generation endpoints share.
GenerationRequest common_fields(const Json& body, GenerationKind kind) {
  if (!body.is_object())
    throw invalid_request("expected a JSON object as the request body, found " + kind_of(body));
  refuse_unsupported(body);
  GenerationRequest r;
  r.kind = kind;
  r.model = string_field(body, "model");
  constexpr int64_t kMaxTokens = std::numeric_limits<int32_t>::max();
  r.max_tokens = integer_in(body, "max_completion_tokens", 1, kMaxTokens);
  if (!r.max_tokens) r.max_tokens = integer_in(body, "max_tokens", 1, kMaxTokens);
  r.stop = stop_strings(body);
  r.stream = boolean(body, "stream").value_or(false);
  r.ignore_eos = boolean(body, "ignore_eos").value_or(false);
  if (const Json* options = member(body, "stream_options")) {
    if (!options->is_object())
      throw invalid_request("stream_options: expected an object, found " + kind_of(*options));
    r.include_usage = boolean(*options, "include_usage").value_or(false);
  }
  runner::SamplerOverrides& s = r.sampling;
  if (auto t = number_in(body, "temperature", 0, 2)) s.temperature = static_cast<float>(*t);
  if (auto p = number_in(body, "top_p", 0, 1)) s.top_p = static_cast<float>(*p);
  if (auto p = number_in(body, "min_p", 0, 1)) s.min_p = static_cast<float>(*p);
  if (auto k = integer_in(body, "top_k", 0, std::numeric_limits<int32_t>::max()))
    s.top_k = static_cast<int>(*k);
  if (auto p = number_in(body, "repeat_penalty", 0, 10)) s.repeat_penalty = static_cast<float>(*p);
  // OpenAI documents seed as an integer, negative ones included; any 64-bit pattern seeds.
  if (auto seed = integer_in(body, "seed", std::numeric_limits<int64_t>::min(),
                             std::numeric_limits<int64_t>::max()))
    s.seed = static_cast<uint64_t>(*seed);
  return r;
}

// A message's content: a string, or an array of {"type": "text", "text": ...} parts.
std::string message_content(const Json& content, size_t index) {
  const std::string where = "messages[" + std::to_string(index) + "].content";
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array())
    throw invalid_request(where + ": expected a string or an array of text parts, found " +
                          kind_of(content));
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const Json& part = content[i];
    const std::string part_where = where + "[" + std::to_string(i) + "]";
    if (!part.is_object() || !part.contains("type") || part["type"] != "text")
      throw invalid_request(part_where + ": expected a part {\"type\": \"text\", \"text\": ...} "
                            "(this model reads text only), found " + quoted(part));
    if (!part.contains("text") || !part["text"].is_string())
      throw invalid_request(part_where + ".text: expected a string");
    text += part["text"].get<std::string>();
  }
  return text;
}

}  // namespace

Json parse_body(std::string_view text) {
  Json body;
  try {
    body = parse_json(text);
  } catch (const Error& e) {
    throw invalid_request(std::string("the request body is not valid JSON: ") + e.what());
  }
  if (!body.is_object())
    throw invalid_request("expected a JSON object as the request body, found " + kind_of(body));
  return body;
}

GenerationRequest parse_chat_request(const Json& body) {
  GenerationRequest r = common_fields(body, GenerationKind::kChat);
  const Json* messages = member(body, "messages");
  if (!messages) throw invalid_request("messages: expected an array of messages, found none");
  if (!messages->is_array() || messages->empty())
    throw invalid_request("messages: expected a non-empty array of messages, found " +
                          (messages->is_array() ? std::string("an empty array") : kind_of(*messages)));
  for (size_t i = 0; i < messages->size(); ++i) {
    const Json& m = (*messages)[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) throw invalid_request(where + ": expected an object, found " + kind_of(m));
    std::string role = string_field(m, "role");
    if (role == "developer") role = "system";  // the newer OpenAI name for the system role
    if (role != "system" && role != "user" && role != "assistant")
      throw invalid_request(where + ".role: expected system, user or assistant, found " +
                            (member(m, "role") ? quoted(m["role"]) : std::string("none")));
    const Json* content = member(m, "content");
    if (!content) throw invalid_request(where + ".content: expected text, found none");
    r.messages.push_back(ChatMessage{role, message_content(*content, i)});
  }
  return r;
}

GenerationRequest parse_completion_request(const Json& body) {
  GenerationRequest r = common_fields(body, GenerationKind::kCompletion);
  const Json* prompt = member(body, "prompt");
  if (!prompt) throw invalid_request("prompt: expected a string, found none");
  if (prompt->is_array() && prompt->size() == 1 && (*prompt)[0].is_string()) prompt = &(*prompt)[0];
  if (!prompt->is_string())
    throw invalid_request("prompt: expected a string (or an array of one string), found " +
                          kind_of(*prompt));
  r.prompt = prompt->get<std::string>();
  if (!member(body, "max_tokens") && !member(body, "max_completion_tokens"))
    r.max_tokens = 16;  // the completions API's documented default
  if (boolean(body, "echo").value_or(false))
    throw invalid_request("echo: returning the prompt with the completion is not supported");
  return r;
}

EmbeddingRequest parse_embedding_request(const Json& body) {
  if (!body.is_object())
    throw invalid_request("expected a JSON object as the request body, found " + kind_of(body));
  EmbeddingRequest r;
  r.model = string_field(body, "model");
  const Json* input = member(body, "input");
  if (!input) throw invalid_request("input: expected a string or an array of strings, found none");
  if (input->is_string()) {
    r.inputs.push_back(input->get<std::string>());
  } else if (input->is_array() && !input->empty()) {
    for (size_t i = 0; i < input->size(); ++i) {
      if (!(*input)[i].is_string())
        throw invalid_request("input[" + std::to_string(i) + "]: expected a string, found " +
                              kind_of((*input)[i]) + " (token arrays are not supported)");
      r.inputs.push_back((*input)[i].get<std::string>());
    }
  } else {
    throw invalid_request("input: expected a string or a non-empty array of strings, found " +
                          (input->is_array() ? std::string("an empty array") : kind_of(*input)));
  }
  for (size_t i = 0; i < r.inputs.size(); ++i)
    if (r.inputs[i].empty())  // named as the client sent it: "input" for one string
      throw invalid_request((input->is_array() ? "input[" + std::to_string(i) + "]" : std::string("input")) +
                            ": expected text, found an empty string");
  const std::string format = string_field(body, "encoding_format");
  if (!format.empty() && format != "float" && format != "base64")
    throw invalid_request("encoding_format: expected float or base64, found \"" + format + "\"");
  r.base64 = format == "base64";
  if (member(body, "dimensions"))
    throw invalid_request("dimensions: shortening embeddings is not supported");
  return r;
}

}  // namespace gguflow::server
