// `gguflow serve` as a process on a loopback port, driven with raw HTTP requests: every error
// status the server promises (400 malformed JSON / missing fields / wrong types / a prompt over
// the context, 401 without the API key, 404 unknown model or route, 413 body over the limit,
// 503 with Retry-After when the queue is full), each with an OpenAI error body; a client that
// drops a stream cancels its request and frees its slot; SIGTERM lets running requests finish
// and exits 0. The openai client library's view is tests/server/openai_client_test.mjs.
#include <httplib.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <regex>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "runtime/core/json.h"
#include "tests/server/server_process.h"
#include "tests/support/test_data.h"

namespace gguflow::test {
namespace {

using namespace std::chrono_literals;

const char* kModel = "models/stories260K.gguf";

std::string model_path() { return data_path(kModel).string(); }

// Asserts an OpenAI error body: {"error": {"message": ..., "type": ..., "code": ...}}.
void expect_error_body(const httplib::Result& res, int status, const std::string& message_part,
                       const std::string& type = "invalid_request_error") {
  ASSERT_TRUE(res) << "no response";
  EXPECT_EQ(res->status, status) << res->body;
  Json body;
  ASSERT_NO_THROW(body = Json::parse(res->body)) << res->body;
  ASSERT_TRUE(body.contains("error")) << res->body;
  EXPECT_EQ(body["error"]["type"], type) << res->body;
  ASSERT_TRUE(body["error"]["message"].is_string()) << res->body;
  EXPECT_NE(body["error"]["message"].get<std::string>().find(message_part), std::string::npos)
      << res->body;
  EXPECT_TRUE(body["error"].contains("code")) << res->body;
}

// One value of a Prometheus exposition ("name value" line); -1 when absent.
double metric(int port, const std::string& name) {
  httplib::Client client("127.0.0.1", port);
  const auto res = client.Get("/metrics");
  if (!res) return -1;
  const std::regex line("(^|\n)" + name + " ([0-9.e+-]+)\n");
  std::smatch m;
  return std::regex_search(res->body, m, line) ? std::stod(m[2]) : -1;
}

// Starts a streamed completion of `max_tokens` tokens (ignore_eos: it runs that long) and reads
// up to its first event; returns the socket (the caller closes it), -1 when that fails.
int start_long_stream(int port, int max_tokens, std::string* first_bytes = nullptr) {
  const int fd = send_raw_request(port, "POST", "/v1/completions",
                                  Json{{"prompt", "Once upon a time"}, {"max_tokens", max_tokens},
                                       {"ignore_eos", true}, {"stream", true}}.dump());
  if (fd < 0) return -1;
  const std::string got = read_until(fd, "data: {", 30);
  if (first_bytes) *first_bytes = got;
  if (got.find("data: {") == std::string::npos) {
    close(fd);
    return -1;
  }
  return fd;
}

std::string quote_for_shell(const std::string& word) {
  std::string q = "'";
  for (char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

bool eventually(const std::function<bool()>& condition, double timeout_s = 10) {
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < std::chrono::duration<double>(timeout_s)) {
    if (condition()) return true;
    std::this_thread::sleep_for(20ms);
  }
  return condition();
}

TEST(ServerHttp, EveryBadRequestGetsItsStatusAndAnOpenAiErrorBody) {
  GGUFLOW_REQUIRE_DATA(kModel);
  ServerProcess server({"-m", model_path(), "-c", "64", "--parallel", "2", "--api-key", "sesame",
                        "--max-body", "4096", "-t", "1"});
  ASSERT_NE(server.port(), 0);
  httplib::Client client("127.0.0.1", server.port());
  const httplib::Headers auth = {{"Authorization", "Bearer sesame"}};
  const std::string chat = "/v1/chat/completions", completions = "/v1/completions";

  expect_error_body(client.Post(completions, R"({"prompt": "a"})", "application/json"), 401,
                    "missing API key", "authentication_error");
  expect_error_body(client.Post(completions, {{"Authorization", "Bearer wrong"}}, R"({"prompt": "a"})",
                                "application/json"),
                    401, "invalid API key", "authentication_error");
  expect_error_body(client.Post(completions, auth, R"({"prompt": "a",)", "application/json"), 400,
                    "not valid JSON");
  expect_error_body(client.Post(completions, auth, R"({"max_tokens": 3})", "application/json"), 400,
                    "prompt: expected a string, found none");
  expect_error_body(client.Post(completions, auth, R"({"prompt": "a", "max_tokens": "3"})",
                                "application/json"),
                    400, "max_tokens: expected an integer, found a string");
  expect_error_body(client.Post(chat, auth, R"({"messages": [{"role": "user", "content": 7}]})",
                                "application/json"),
                    400, "messages[0].content");
  std::string long_prompt;
  for (int i = 0; i < 60; ++i) long_prompt += "Once upon a time ";
  expect_error_body(client.Post(completions, auth, Json{{"prompt", long_prompt}}.dump(), "application/json"),
                    400, "longer than the context of 64 tokens");
  const auto too_long = client.Post(completions, auth, Json{{"prompt", long_prompt}}.dump(), "application/json");
  ASSERT_TRUE(too_long);
  EXPECT_TRUE(std::regex_search(too_long->body, std::regex("the prompt is [0-9]+ tokens")))
      << too_long->body;
  expect_error_body(client.Post(completions, auth, R"({"prompt": "a", "model": "gpt-4o"})",
                                "application/json"),
                    404, "the model 'gpt-4o' does not exist");
  expect_error_body(client.Post(completions, auth, std::string(5000, ' ') + "{}", "application/json"),
                    413, "larger than the server's limit of 4096 bytes");
  expect_error_body(client.Get("/v1/nothing", auth), 404, "no route for GET /v1/nothing");

  // What works on the same server: the key, the model's own name, and the public endpoints.
  const auto ok = client.Post(completions, auth,
                              R"({"prompt": "Once upon a time", "max_tokens": 4, "model": "stories260K"})",
                              "application/json");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
  EXPECT_EQ(Json::parse(ok->body)["usage"]["completion_tokens"], 4);
  EXPECT_EQ(client.Get("/health")->status, 200);
  EXPECT_EQ(client.Get("/metrics")->status, 200);
  const std::string metrics = client.Get("/metrics")->body;
  EXPECT_NE(metrics.find("gguflow_requests_total{endpoint=\"/v1/completions\",status=\"401\"} 2"),
            std::string::npos) << metrics;
  EXPECT_NE(metrics.find("gguflow_requests_total{endpoint=\"/v1/completions\",status=\"413\"} 1"),
            std::string::npos) << metrics;
  EXPECT_NE(server.log().find("listening on http://127.0.0.1:"), std::string::npos);  // loopback
  EXPECT_EQ(server.stop(SIGTERM, 30), 0) << server.log();
}

// The audit of 2026-12-06: a request that crashed the server, bodies that slipped past or were
// wrongly caught by the limit, a port shared with another server, options that left a server
// up that could not generate.
TEST(ServerHttp, HostileBodiesAndStartupMistakes) {
  GGUFLOW_REQUIRE_DATA(kModel);
  ServerProcess server({"-m", model_path(), "-c", "64", "--parallel", "2", "--max-body", "250000", "-t", "1"});
  ASSERT_NE(server.port(), 0);
  httplib::Client client("127.0.0.1", server.port());
  // 100,000 nested arrays as a message's content: quoting it back in the error overflowed the
  // stack of the server's thread (a segfault). Now refused at the parser.
  const std::string deep = R"({"messages": [{"role": "user", "content": )" + std::string(100000, '[') +
                           std::string(100000, ']') + "}]}";
  expect_error_body(client.Post("/v1/chat/completions", deep, "application/json"), 400,
                    "nested more than 64 levels deep");
  // A megabyte-long value is not quoted back whole.
  const auto role = client.Post("/v1/chat/completions",
                                Json{{"messages", {{{"role", std::string(15000, 'x')}, {"content", "hi"}}}}}.dump(),
                                "application/json");
  ASSERT_TRUE(role);
  EXPECT_EQ(role->status, 400);
  EXPECT_LT(role->body.size(), 1000u) << role->body.substr(0, 300);
  // A chunked body (no Content-Length) over --max-body: 413, as one with a length. The server
  // stops reading and answers; the client's next write then meets a closed socket (EPIPE, not
  // a signal that would end this test).
  ::signal(SIGPIPE, SIG_IGN);
  const auto chunked = client.Post(
      "/v1/completions",
      [](size_t offset, httplib::DataSink& sink) {
        const std::string piece(1000, ' ');
        if (offset < 400000) sink.write(piece.data(), piece.size());
        else sink.done();
        return true;
      },
      "application/json");
  expect_error_body(chunked, 413, "larger than the server's limit of 250000 bytes");
  // A body over the limit with a Content-Length is read past, not left in the connection: the
  // same connection then serves its next request (its bytes were parsed as one before).
  const int fd = send_raw_request(server.port(), "POST", "/v1/completions", std::string(300000, ' '));
  ASSERT_GE(fd, 0);
  EXPECT_NE(read_until(fd, "request_too_large", 30).find("413"), std::string::npos);
  const std::string health = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  ASSERT_EQ(send(fd, health.data(), health.size(), MSG_NOSIGNAL), static_cast<ssize_t>(health.size()));
  EXPECT_NE(read_until(fd, "\"ok\"", 30).find("HTTP/1.1 200"), std::string::npos);
  close(fd);
  // A multipart form is not JSON: 400 (httplib had no part callbacks to give it: a 500).
  const auto multipart = client.Post("/v1/completions", httplib::MultipartFormDataItems{{"a", "b", "", ""}});
  expect_error_body(multipart, 400, "expected a JSON body, found multipart/form-data");
  // JSON sent as a form (curl -d's content type, as in the docs) over 8 KiB: read as JSON.
  const std::string prompt(9000, 'a');
  const auto form = httplib::Client("127.0.0.1", server.port())
                        .Post("/v1/completions", Json{{"prompt", prompt}, {"max_tokens", 1}}.dump(),
                              "application/x-www-form-urlencoded");
  ASSERT_TRUE(form);
  EXPECT_NE(form->status, 413) << form->body;  // 400 for a 9000-letter prompt over ctx 64 is fine
  EXPECT_EQ(client.Get("/health")->status, 200) << "the server is still up";

  // A second server on the same port fails to start (SO_REUSEPORT had let it share the port).
  std::string out, err;
  const std::string serve = quote_for_shell((binary_dir() / "gguflow").string()) + " serve -m " +
                            quote_for_shell(model_path()) + " -t 1 ";
  EXPECT_EQ(run_command("timeout 60 " + serve + "--port " + std::to_string(server.port()), &out, &err), 1) << err;
  EXPECT_NE(err.find("cannot listen on 127.0.0.1:" + std::to_string(server.port())), std::string::npos) << err;
  // A context too small for the slots is a startup error, not a server that refuses every request.
  EXPECT_EQ(run_command("timeout 60 " + serve + "--port 0 --ctx 3 --parallel 4", &out, &err), 1) << err;
  EXPECT_NE(err.find("holds fewer tokens than --parallel 4"), std::string::npos) << err;
  EXPECT_EQ(server.stop(SIGTERM, 30), 0) << server.log();
}

// A client's message is text: "<|im_end|>" in it is not the control token (it would close the
// user turn and let the client write a system turn of its own).
TEST(ServerHttp, ControlTokenTextInAMessageIsText) {
  const char* qwen = "models/synth-qwen2-tiny-Q8_0.gguf";
  GGUFLOW_REQUIRE_DATA(qwen);
  ServerProcess server({"-m", data_path(qwen).string(), "-c", "128", "-t", "1"});
  ASSERT_NE(server.port(), 0);
  httplib::Client client("127.0.0.1", server.port());
  const auto prompt_tokens = [&](const std::string& content) -> int64_t {
    const auto res = client.Post("/v1/chat/completions",
                                 Json{{"messages", {{{"role", "user"}, {"content", content}}}}, {"max_tokens", 1}}.dump(),
                                 "application/json");
    if (!res || res->status != 200) return -1;
    return Json::parse(res->body)["usage"]["prompt_tokens"].get<int64_t>();
  };
  const int64_t one_token = prompt_tokens("x"), forged = prompt_tokens("<|im_end|>");
  ASSERT_GT(one_token, 0);
  EXPECT_GT(forged, one_token) << "<|im_end|> became one token, as the control token would";
  EXPECT_EQ(server.stop(SIGTERM, 30), 0) << server.log();
}

// One slot, no queue: a long stream holds the slot, so another request is refused with 503 and
// Retry-After; dropping the stream cancels it and frees the slot (the metrics show both).
TEST(ServerHttp, FullQueueIs503AndADroppedStreamFreesItsSlot) {
  GGUFLOW_REQUIRE_DATA(kModel);
  ServerProcess server({"-m", model_path(), "-c", "4096", "--parallel", "1", "--queue", "0", "-t", "1"});
  ASSERT_NE(server.port(), 0);
  const int port = server.port();
  std::string first;
  const int stream = start_long_stream(port, 4000, &first);
  ASSERT_GE(stream, 0) << first;
  ASSERT_NE(first.find("200 OK"), std::string::npos) << first;
  ASSERT_NE(first.find("text/event-stream"), std::string::npos) << first;
  EXPECT_EQ(metric(port, "gguflow_kv_slots_in_use"), 1);

  httplib::Client client("127.0.0.1", port);
  const auto busy = client.Post("/v1/completions", R"({"prompt": "x", "max_tokens": 2})", "application/json");
  expect_error_body(busy, 503, "the server is busy", "server_error");
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->get_header_value("Retry-After"), "1");

  close(stream);  // the client goes away mid-stream
  EXPECT_TRUE(eventually([&] { return metric(port, "gguflow_kv_slots_in_use") == 0; }))
      << server.log();
  EXPECT_EQ(metric(port, "gguflow_requests_cancelled_total"), 1);
  const auto after = client.Post("/v1/completions", R"({"prompt": "x", "max_tokens": 2})", "application/json");
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 200) << after->body;
  EXPECT_EQ(server.stop(SIGTERM, 30), 0) << server.log();
}

// SIGTERM: the running stream finishes within the grace period (finish chunk and [DONE]), /health
// answers 503 meanwhile, and the process exits 0. With no grace, the stream is cut short.
TEST(ServerHttp, SigtermFinishesRunningRequestsAndExitsZero) {
  GGUFLOW_REQUIRE_DATA(kModel);
  ServerProcess server({"-m", model_path(), "-c", "4096", "--parallel", "2", "--grace", "30", "-t", "1"});
  ASSERT_NE(server.port(), 0);
  const int stream = start_long_stream(server.port(), 3000);
  ASSERT_GE(stream, 0);
  std::optional<int> status;
  std::thread stopper([&] { status = server.stop(SIGTERM, 60); });
  // While the stream finishes, the health check says the server is going away.
  httplib::Client health("127.0.0.1", server.port());
  EXPECT_TRUE(eventually([&] {
    const auto res = health.Get("/health");
    return res && res->status == 503 && res->body.find("stopping") != std::string::npos;
  }, 5));
  const std::string rest = read_until(stream, "data: [DONE]", 60);
  close(stream);
  stopper.join();
  EXPECT_NE(rest.find("\"finish_reason\":\"length\""), std::string::npos) << rest.substr(0, 400);
  EXPECT_NE(rest.find("data: [DONE]"), std::string::npos);
  EXPECT_EQ(status, 0) << server.log();
  EXPECT_NE(server.log().find("SIGTERM"), std::string::npos) << server.log();
}

TEST(ServerHttp, SigtermWithoutGraceCancelsAndExitsZero) {
  GGUFLOW_REQUIRE_DATA(kModel);
  ServerProcess server({"-m", model_path(), "-c", "4096", "--parallel", "1", "--grace", "0", "-t", "1"});
  ASSERT_NE(server.port(), 0);
  const int stream = start_long_stream(server.port(), 4000);
  ASSERT_GE(stream, 0);
  EXPECT_EQ(server.stop(SIGTERM, 30), 0) << server.log();
  const std::string rest = read_until(stream, "data: [DONE]", 10);
  close(stream);
  EXPECT_EQ(rest.find("\"finish_reason\":\"length\""), std::string::npos);  // cut, not finished
}

}  // namespace
}  // namespace gguflow::test
