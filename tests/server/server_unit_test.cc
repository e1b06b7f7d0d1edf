// The server's pieces without a socket: request parsing and its 400s, stop strings over streamed
// text, response shapes, base64, and the Prometheus exposition.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/server/api_error.h"
#include "runtime/server/metrics.h"
#include "runtime/server/openai_request.h"
#include "runtime/server/openai_response.h"
#include "runtime/server/stop_matcher.h"

namespace gguflow::server {
namespace {

// The status and message of the ApiError `f` throws ("" / 0 when it does not throw).
template <typename F>
std::pair<int, std::string> api_error_of(F&& f) {
  try {
    f();
  } catch (const ApiError& e) {
    return {e.status(), e.what()};
  }
  return {0, ""};
}

TEST(OpenAiRequest, ChatFieldsAreRead) {
  const GenerationRequest r = parse_chat_request(Json::parse(R"({
    "model": "m", "messages": [{"role": "system", "content": "be brief"},
                               {"role": "user", "content": [{"type": "text", "text": "hi "},
                                                            {"type": "text", "text": "there"}]}],
    "max_tokens": 7, "temperature": 0, "top_p": 0.5, "seed": -3, "stop": "END",
    "stream": true, "stream_options": {"include_usage": true}, "user": "ignored"})"));
  EXPECT_EQ(r.kind, GenerationKind::kChat);
  EXPECT_EQ(r.model, "m");
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[1].role, "user");
  EXPECT_EQ(r.messages[1].content, "hi there");
  EXPECT_EQ(r.max_tokens, 7);
  EXPECT_EQ(r.sampling.temperature, 0.0f);
  EXPECT_EQ(r.sampling.top_p, 0.5f);
  EXPECT_EQ(r.sampling.seed, static_cast<uint64_t>(int64_t{-3}));
  EXPECT_EQ(r.stop, std::vector<std::string>{"END"});
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
}

TEST(OpenAiRequest, CompletionDefaultsToSixteenTokens) {
  const GenerationRequest r = parse_completion_request(Json::parse(R"({"prompt": ["abc"]})"));
  EXPECT_EQ(r.prompt, "abc");
  EXPECT_EQ(r.max_tokens, 16);
  EXPECT_FALSE(r.stream);
}

TEST(OpenAiRequest, BadFieldsAre400NamingTheField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({})", "messages: expected an array of messages, found none"},
      {R"({"messages": []})", "messages: expected a non-empty array of messages, found an empty array"},
      {R"({"messages": "hi"})", "found a string"},
      {R"({"messages": [{"role": "robot", "content": "x"}]})", "messages[0].role: expected system, user or assistant"},
      {R"({"messages": [{"role": "user"}]})", "messages[0].content: expected text, found none"},
      {R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})", "messages[0].content[0]"},
      {R"({"messages": [{"role": "user", "content": "x"}], "temperature": "hot"})", "temperature: expected a number, found a string"},
      {R"({"messages": [{"role": "user", "content": "x"}], "temperature": 3})", "temperature: expected a number in [0.0, 2.0], found 3"},
      {R"({"messages": [{"role": "user", "content": "x"}], "max_tokens": 1.5})", "max_tokens: expected an integer, found the number 1.5"},
      {R"({"messages": [{"role": "user", "content": "x"}], "max_tokens": 0})", "max_tokens: expected an integer in [1,"},
      {R"({"messages": [{"role": "user", "content": "x"}], "stream": "yes"})", "stream: expected true or false"},
      {R"({"messages": [{"role": "user", "content": "x"}], "stop": ["a", 1]})", "stop: expected strings"},
      {R"({"messages": [{"role": "user", "content": "x"}], "stop": ["a","b","c","d","e"]})", "stop: expected at most 4 strings"},
      {R"({"messages": [{"role": "user", "content": "x"}], "n": 2})", "n: expected an integer in [1, 1], found 2"},
      {R"({"messages": [{"role": "user", "content": "x"}], "logprobs": true})", "logprobs: returning log probabilities is not supported"},
      {R"({"messages": [{"role": "user", "content": "x"}], "model": 5})", "model: expected a string, found a number"},
  };
  for (const auto& [body, message] : cases) {
    const auto [status, what] = api_error_of([&] { parse_chat_request(Json::parse(body)); });
    EXPECT_EQ(status, 400) << body;
    EXPECT_NE(what.find(message), std::string::npos) << body << " -> " << what;
  }
  EXPECT_EQ(api_error_of([] { parse_completion_request(Json::parse(R"({"prompt": 5})")); }).first, 400);
  EXPECT_EQ(api_error_of([] { parse_completion_request(Json::parse(R"({"prompt": ["a", "b"]})")); }).first, 400);
}

TEST(OpenAiRequest, BodyMustBeAJsonObject) {
  EXPECT_EQ(api_error_of([] { parse_body("{\"a\": "); }).first, 400);
  EXPECT_NE(api_error_of([] { parse_body("{\"a\": "); }).second.find("not valid JSON"), std::string::npos);
  EXPECT_NE(api_error_of([] { parse_body("[1]"); }).second.find("found an array"), std::string::npos);
  EXPECT_EQ(api_error_of([] { parse_body(R"({"a": 1})"); }).first, 0);
  // A number beyond double's range is nlohmann's out_of_range, not a parse_error (found by
  // fuzz_server_request): still a 400.
  EXPECT_EQ(api_error_of([] { parse_body(R"({"model": 3333333333333333333e333})"); }).first, 400);
}

TEST(OpenAiRequest, EmbeddingInputs) {
  EmbeddingRequest r = parse_embedding_request(Json::parse(R"({"input": "one"})"));
  EXPECT_EQ(r.inputs, std::vector<std::string>{"one"});
  EXPECT_FALSE(r.base64);
  r = parse_embedding_request(Json::parse(R"({"input": ["a", "b"], "encoding_format": "base64"})"));
  EXPECT_EQ(r.inputs.size(), 2u);
  EXPECT_TRUE(r.base64);
  for (const char* bad : {R"({})", R"({"input": []})", R"({"input": [[1, 2]]})", R"({"input": [""]})",
                          R"({"input": "a", "encoding_format": "hex"})"})
    EXPECT_EQ(api_error_of([&] { parse_embedding_request(Json::parse(bad)); }).first, 400) << bad;
  // The empty text is named as it was sent: one string is "input", not "input[0]".
  EXPECT_EQ(api_error_of([&] { parse_embedding_request(Json::parse(R"({"input": ""})")); }).second.rfind("input: ", 0), 0u);
  EXPECT_EQ(api_error_of([&] { parse_embedding_request(Json::parse(R"({"input": ["a", ""]})")); }).second.rfind("input[1]: ", 0), 0u);
}

TEST(StopMatcher, HoldsBackWhatMayBeginAStopString) {
  StopMatcher m({"\n\n", "END"});
  EXPECT_EQ(m.push("Hello\n"), "Hello");
  EXPECT_EQ(m.push("world E"), "\nworld ");
  EXPECT_EQ(m.push("N"), "");
  EXPECT_EQ(m.push("Dless"), "");
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(m.push("more"), "");
}

TEST(StopMatcher, EarliestStopWinsAndFlushReturnsTheRest) {
  StopMatcher m({"bc", "ab"});
  EXPECT_EQ(m.push("xabc"), "x");
  EXPECT_TRUE(m.stopped());
  StopMatcher n({"END"});
  EXPECT_EQ(n.push("the E"), "the ");
  EXPECT_EQ(n.flush(), "E");
  StopMatcher none({});
  EXPECT_EQ(none.push("anything"), "anything");
}

TEST(OpenAiResponse, Base64MatchesRfc4648) {
  const auto b64 = [](std::string s) {
    return base64({reinterpret_cast<const unsigned char*>(s.data()), s.size()});
  };
  EXPECT_EQ(b64(""), "");
  EXPECT_EQ(b64("f"), "Zg==");
  EXPECT_EQ(b64("fo"), "Zm8=");
  EXPECT_EQ(b64("foo"), "Zm9v");
  EXPECT_EQ(b64("foobar"), "Zm9vYmFy");
}

TEST(OpenAiResponse, ChatShapes) {
  const ResponseHeader h{"chatcmpl-1", 100, "m"};
  const Json whole = completion_json(GenerationKind::kChat, h, "hi", FinishReason::kLength, 3, 2);
  EXPECT_EQ(whole["object"], "chat.completion");
  EXPECT_EQ(whole["choices"][0]["message"]["content"], "hi");
  EXPECT_EQ(whole["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(whole["usage"]["total_tokens"], 5);
  const Json first = chunk_json(GenerationKind::kChat, h, "a", true, nullptr);
  EXPECT_EQ(first["choices"][0]["delta"]["role"], "assistant");
  EXPECT_TRUE(first["choices"][0]["finish_reason"].is_null());
  const FinishReason stop = FinishReason::kStop;
  const Json last = chunk_json(GenerationKind::kChat, h, "", false, &stop);
  EXPECT_TRUE(last["choices"][0]["delta"].empty());
  EXPECT_EQ(last["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(sse_event(Json{{"a", 1}}), "data: {\"a\":1}\n\n");
}

TEST(OpenAiResponse, EmbeddingsAsFloatsOrBase64) {
  const std::vector<float> v = {1.0f, -2.0f, 0.5f, 0.25f};
  const Json floats = embeddings_json("m", v, 2, false, 7);
  ASSERT_EQ(floats["data"].size(), 2u);
  EXPECT_EQ(floats["data"][1]["embedding"][0], 0.5);
  EXPECT_EQ(floats["usage"]["prompt_tokens"], 7);
  const Json packed = embeddings_json("m", v, 2, true, 7);
  // 1.0f and -2.0f little-endian: 00 00 80 3f 00 00 00 c0.
  EXPECT_EQ(packed["data"][0]["embedding"], "AACAPwAAAMA=");
}

TEST(Metrics, PrometheusExposition) {
  Metrics m(4);
  m.count_request("/v1/completions", 200);
  m.count_request("/v1/completions", 200);
  m.count_request("/v1/completions", 400);
  m.add_generated_tokens(5);
  m.set_slots_in_use(3);
  m.time_to_first_token().observe(0.02);
  m.time_to_first_token().observe(7);
  const std::string text = m.render();
  EXPECT_NE(text.find("gguflow_requests_total{endpoint=\"/v1/completions\",status=\"200\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("gguflow_requests_total{endpoint=\"/v1/completions\",status=\"400\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("gguflow_generated_tokens_total 5\n"), std::string::npos);
  EXPECT_NE(text.find("gguflow_kv_slots_in_use 3\n"), std::string::npos);
  EXPECT_NE(text.find("gguflow_kv_slots_total 4\n"), std::string::npos);
  EXPECT_NE(text.find("gguflow_time_to_first_token_seconds_bucket{le=\"0.01\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("gguflow_time_to_first_token_seconds_bucket{le=\"0.025\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("gguflow_time_to_first_token_seconds_bucket{le=\"10\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("gguflow_time_to_first_token_seconds_count 2\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE gguflow_time_per_output_token_seconds histogram\n"), std::string::npos);
}

}  // namespace
}  // namespace gguflow::server
