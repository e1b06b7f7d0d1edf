// `gguflow serve`'s HTTP side (cpp-httplib): the OpenAI-compatible routes, API-key checks, body
// limits, OpenAI-style error bodies, server-sent-event streams, metrics and graceful shutdown.
// Generation runs in the BatchEngine's thread; handlers wait on their job's channel.
//
//   ServedModel model(model_options);
//   HttpServer server(model, serve_options, stderr);
//   int port = server.bind();   // before listen(): --port 0 picks a free port
//   server.listen();            // returns after stop() (from a signal thread)
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "runtime/server/batch_engine.h"
#include "runtime/server/metrics.h"
#include "runtime/server/served_model.h"

namespace httplib {
class Server;
struct Request;
struct Response;
class ContentReader;
}  // namespace httplib

namespace gguflow::server {

struct ServeOptions {
  std::string host = "127.0.0.1";  // loopback unless asked otherwise
  int port = 8080;                 // 0: any free port (bind() returns it)
  std::string api_key;             // "": no key; else /v1/* need "Authorization: Bearer KEY"
  size_t max_body_bytes = 8u << 20;  // larger request bodies: 413
  EngineOptions engine;            // queue size, prefill chunk
  std::chrono::milliseconds grace{10000};  // SIGTERM: how long running requests may finish
  bool log_requests = true;        // one line per request on the log
};

class HttpServer {
 public:
  // `model` and `log` must outlive the server. Starts the batch engine when the model generates.
  HttpServer(ServedModel& model, ServeOptions options, FILE* log);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds host:port; returns the port. Throws gguflow::Error naming the address when it cannot.
  int bind();
  // Serves until stop(); returns then.
  void listen();
  // Graceful stop, callable from any thread once: new requests get 503, running ones have the
  // grace period to finish, then are cancelled; then the listener stops.
  void stop();

  Metrics& metrics() { return metrics_; }

 private:
  void add_routes();
  void handle_generation(const httplib::Request& req, const httplib::ContentReader& content,
                         httplib::Response& res, bool chat);
  void handle_embeddings(const httplib::Request& req, const httplib::ContentReader& content,
                         httplib::Response& res);
  // The request body, read by us rather than by httplib 0.11: its --max-body limit then holds
  // for chunked bodies too (httplib checks Content-Length only, so a chunked body could be any
  // size), and a body sent as application/x-www-form-urlencoded (curl -d's default, as in the
  // docs' examples) is read as the JSON it is (httplib refused those over 8 KiB with a 413 that
  // blamed --max-body). Throws ApiError 413 past the limit, after reading the rest (keeping
  // nothing), so that a client still sending gets the 413, not a reset.
  std::string read_body(const httplib::Request& req, const httplib::ContentReader& content,
                        httplib::Response& res) const;
  // 404 unless `requested` is empty or names the served model.
  void check_model(const std::string& requested) const;
  std::string new_id(const char* prefix);

  ServedModel& model_;
  const ServeOptions options_;
  FILE* log_;
  Metrics metrics_;
  std::unique_ptr<BatchEngine> engine_;
  std::unique_ptr<httplib::Server> http_;
  const int64_t started_;               // Unix seconds, the model's "created"
  std::atomic<uint64_t> next_id_{0};
  std::atomic<int> responses_in_flight_{0};  // generation handlers still writing
  std::atomic<bool> stopping_{false};
};

}  // namespace gguflow::server
