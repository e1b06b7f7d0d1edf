#include "runtime/server/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <ctime>
#include <random>
#include <thread>

#include "runtime/runner/sampler_settings.h"
#include "runtime/sampling/sampler.h"
#include "runtime/server/api_error.h"
#include "runtime/server/openai_request.h"
#include "runtime/server/openai_response.h"

namespace gguflow::server {
namespace {

using namespace std::chrono_literals;

void reply_json(httplib::Response& res, int status, const Json& body) {
  res.status = status;
  res.set_content(json_text(body, -1), "application/json");
}

void reply_error(httplib::Response& res, const ApiError& e) {
  if (e.status() == 503) res.set_header("Retry-After", "1");
  if (e.status() == 401) res.set_header("WWW-Authenticate", "Bearer");
  reply_json(res, e.status(), error_body(e));
}

// Runs a handler; what it throws becomes the matching error response. gguflow::Error from the
// layers below (a prompt the tokenizer refuses, a sampler setting out of range) is bad input.
template <typename Handler>
void answer(httplib::Response& res, Handler&& handler) {
  try {
    handler();
  } catch (const ApiError& e) {
    reply_error(res, e);
  } catch (const Error& e) {
    reply_error(res, invalid_request(e.what()));
  } catch (const std::exception& e) {
    reply_error(res, ApiError(500, std::string("internal error: ") + e.what(), "server_error"));
  }
}

// The endpoint label of the request counter: the routes, or "other" (bounded label values).
std::string endpoint_label(const std::string& path) {
  for (const char* known : {"/v1/chat/completions", "/v1/completions", "/v1/embeddings",
                            "/v1/models", "/health", "/metrics"})
    if (path == known) return known;
  return "other";
}

// Compares without an early exit, so the time taken does not tell how much of a key matched.
bool same_secret(const std::string& given, const std::string& expected) {
  unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < given.size(); ++i)
    diff |= static_cast<unsigned char>(given[i] ^ expected[i % std::max<size_t>(expected.size(), 1)]);
  return diff == 0;
}

int64_t unix_now() { return static_cast<int64_t>(std::time(nullptr)); }

}  // namespace

HttpServer::HttpServer(ServedModel& model, ServeOptions options, FILE* log)
    : model_(model),
      options_(std::move(options)),
      log_(log),
      metrics_(model.session() ? model.session()->n_slots() : 0),
      http_(std::make_unique<httplib::Server>()),
      started_(unix_now()) {
  if (exec::Session* session = model_.session())
    engine_ = std::make_unique<BatchEngine>(*session, model_.tokenizer(), metrics_, options_.engine);
  // A thread per connection that may be waiting at once: every slot, the queue, and a few for
  // /health, /metrics and refusals. Streams hold their thread for their whole length.
  const size_t threads = static_cast<size_t>(
      std::clamp<int64_t>((model.session() ? model.session()->n_slots() : 1) +
                              options_.engine.max_queue + 4, 8, 1024));
  http_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  http_->set_payload_max_length(options_.max_body_bytes);
  // SO_REUSEADDR only: httplib 0.11's default adds SO_REUSEPORT, with which a second server on
  // a port in use bound it too and the kernel split the connections between the two (each
  // serving its own model) instead of the second one failing to start.
  http_->set_socket_options([](socket_t sock) {
    const int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  http_->set_keep_alive_max_count(1000);
  // An idle keep-alive connection is closed after 2 s (httplib's default is 5): a worker waiting
  // on one cannot be woken, so after SIGTERM's grace period the server waited up to this long
  // for each before it could exit.
  http_->set_keep_alive_timeout(2);
  http_->set_read_timeout(30s);
  http_->set_write_timeout(30s);
  add_routes();
}

HttpServer::~HttpServer() {
  stop();
}

int HttpServer::bind() {
  int port = options_.port;
  if (port == 0) {
    port = http_->bind_to_any_port(options_.host);
    if (port < 0) throw error("serve: cannot listen on ", options_.host, " (any port)");
  } else if (!http_->bind_to_port(options_.host, port)) {
    throw error("serve: cannot listen on ", options_.host, ":", port,
                " (in use, or not an address of this machine)");
  }
  return port;
}

void HttpServer::listen() { http_->listen_after_bind(); }

void HttpServer::stop() {
  if (stopping_.exchange(true)) return;
  if (engine_) engine_->shutdown(options_.grace);
  // The jobs are finished; let their handlers write their last bytes before the listener goes
  // (httplib ends open streams when it stops).
  for (int waited = 0; responses_in_flight_.load() > 0 && waited < 200; ++waited)
    std::this_thread::sleep_for(10ms);
  http_->stop();
}

void HttpServer::check_model(const std::string& requested) const {
  if (!requested.empty() && requested != model_.id())
    throw ApiError(404, "the model '" + requested + "' does not exist; this server serves '" +
                            model_.id() + "' (GET /v1/models)",
                   "invalid_request_error", "model_not_found");
}

std::string HttpServer::new_id(const char* prefix) {
  static const uint64_t run = std::random_device{}();
  char text[64];
  std::snprintf(text, sizeof text, "%s-%08llx%06llx", prefix,
                static_cast<unsigned long long>(run & 0xffffffffu),
                static_cast<unsigned long long>(next_id_++));
  return text;
}

void HttpServer::add_routes() {
  httplib::Server& http = *http_;
  http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (options_.api_key.empty() || req.path.rfind("/v1/", 0) != 0)
      return httplib::Server::HandlerResponse::Unhandled;
    const std::string given = req.get_header_value("Authorization");
    const std::string expected = "Bearer " + options_.api_key;
    if (same_secret(given, expected)) return httplib::Server::HandlerResponse::Unhandled;
    reply_error(res, ApiError(401,
                              given.empty() ? "missing API key: send \"Authorization: Bearer KEY\""
                                            : "invalid API key",
                              "authentication_error", "invalid_api_key"));
    return httplib::Server::HandlerResponse::Handled;
  });
  // Statuses httplib sets itself (no route, body over the limit, a malformed request) get the
  // same error body as ours.
  http.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    if (res.status == 413)
      reply_error(res, ApiError(413, "the request body is larger than the server's limit of " +
                                         std::to_string(options_.max_body_bytes) + " bytes",
                                "invalid_request_error", "request_too_large"));
    else if (res.status == 404)
      reply_error(res, ApiError(404, "no route for " + req.method + " " + req.path,
                                "invalid_request_error", "not_found"));
    else
      reply_error(res, ApiError(res.status, "the request could not be served (HTTP " +
                                                std::to_string(res.status) + ")",
                                "invalid_request_error"));
  });
  http.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    metrics_.count_request(endpoint_label(req.path), res.status);
    if (options_.log_requests) {
      std::fprintf(log_, "gguflow serve: %s %s %d\n", req.method.c_str(), req.path.c_str(),
                   res.status);
      std::fflush(log_);
    }
  });

  // 503 from the start of a drain on, so a load balancer's health check takes the replica out
  // of rotation while its running requests finish.
  http.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    if (stopping_) reply_json(res, 503, {{"status", "stopping"}});
    else reply_json(res, 200, {{"status", "ok"}});
  });
  http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_.render(), "text/plain; version=0.0.4");
  });
  http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    reply_json(res, 200, models_json(model_.id(), started_));
  });
  // Routes with a content reader: read_body reads the body (see there).
  using Reader = httplib::ContentReader;
  http.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res, const Reader& body) {
    handle_generation(req, body, res, /*chat=*/true);
  });
  http.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res, const Reader& body) {
    handle_generation(req, body, res, /*chat=*/false);
  });
  http.Post("/v1/embeddings", [this](const httplib::Request& req, httplib::Response& res, const Reader& body) {
    handle_embeddings(req, body, res);
  });
}

std::string HttpServer::read_body(const httplib::Request& req, const httplib::ContentReader& content,
                                  httplib::Response& res) const {
  if (req.is_multipart_form_data()) {  // httplib would hand its parts to callbacks we lack
    res.set_header("Connection", "close");  // the body is not read: nothing after it is either
    throw invalid_request("expected a JSON body, found multipart/form-data");
  }
  std::string body;
  size_t received = 0;
  // A declared length past the limit: httplib reads the body past (keeping none of it) without
  // handing it to us, and the connection stays in step for its next request.
  const bool finished = content([&](const char* data, size_t n) {
    received += n;
    if (received <= options_.max_body_bytes) {
      body.append(data, n);
      return true;
    }
    // Over the limit: nothing more is kept, but the rest is read (and dropped), so that the
    // client, still sending, reads the 413 rather than a connection reset by unread data, and
    // the connection stays in step for its next request. (A client that never stops sending
    // holds a connection thread, as a slow one can anyway: see docs/DEPLOY.md's proxy.)
    std::string().swap(body);
    return true;
  });
  const bool declared_too_large = req.has_header("Content-Length") &&
                                  req.get_header_value<uint64_t>("Content-Length") > options_.max_body_bytes;
  if (!finished && !declared_too_large) {
    // A broken body (bad chunk framing, the client gone): what is left of it must not be read
    // as the connection's next request.
    res.set_header("Connection", "close");
  }
  if (received > options_.max_body_bytes || declared_too_large)
    throw ApiError(413, "the request body is larger than the server's limit of " +
                            std::to_string(options_.max_body_bytes) + " bytes",
                   "invalid_request_error", "request_too_large");
  return body;
}

void HttpServer::handle_generation(const httplib::Request& req, const httplib::ContentReader& content,
                                   httplib::Response& res, bool chat) {
  answer(res, [&] {
    const Json body = parse_body(read_body(req, content, res));
    const GenerationRequest g = chat ? parse_chat_request(body) : parse_completion_request(body);
    check_model(g.model);
    if (!engine_)
      throw invalid_request("the model '" + model_.id() + "' does not generate text (" +
                                model_.why_no_generation() + "); it serves /v1/embeddings",
                            "model_cannot_generate");
    const Tokenizer& tokenizer = model_.tokenizer();
    EncodeOptions encode;
    std::vector<TokenId> prompt;
    if (chat) {
      if (!model_.chat_template())
        throw invalid_request("the model '" + model_.id() +
                              "' has no chat template this server knows; use /v1/completions");
      // The template's markup is special tokens; a client's message is text, whatever it holds
      // ("<|im_end|>" in a message cannot end its turn and forge another).
      const RenderedChat chat = model_.chat_template()->render(g.messages);
      encode.parse_special = true;
      encode.literal_ranges = chat.content;
      prompt = tokenizer.encode(chat.text, encode);
    } else {
      prompt = tokenizer.encode(g.prompt, encode);
      if (prompt.empty() && tokenizer.vocab().bos() != kNoToken) prompt.push_back(tokenizer.vocab().bos());
    }
    JobSpec spec;
    spec.prompt = std::move(prompt);
    spec.sampler = runner::apply_overrides(model_.sampler_defaults(), g.sampling);
    if (!g.sampling.seed) spec.sampler.seed = sampling::draw_seed();
    spec.max_tokens = g.max_tokens.value_or(-1);
    spec.stop = g.stop;
    spec.ignore_eos = g.ignore_eos;
    auto job = std::make_shared<GenerationJob>(std::move(spec));
    engine_->submit(job);

    ResponseHeader header{new_id(chat ? "chatcmpl" : "cmpl"), unix_now(), model_.id()};
    const GenerationKind kind = chat ? GenerationKind::kChat : GenerationKind::kCompletion;
    if (!g.stream) {
      ++responses_in_flight_;
      std::string text;
      JobUpdate u;
      do {
        u = job->take(1000ms);
        text += u.text;
      } while (!u.finished);
      --responses_in_flight_;
      if (*u.finished == FinishReason::kCancelled)
        throw ApiError(503, "the server shut down before the request finished", "server_error",
                       "shutting_down");
      if (*u.finished == FinishReason::kError)
        throw ApiError(500, "generation failed: " + u.error, "server_error");
      reply_json(res, 200,
                 completion_json(kind, header, text, *u.finished, u.prompt_tokens, u.completion_tokens));
      return;
    }

    // A stream: one event per piece of text as the engine produces it, then the finish chunk,
    // the usage chunk when asked for, and [DONE]. A comment line every second without text
    // finds out whether the client is still there; a failed write cancels the job.
    struct Stream {
      std::shared_ptr<GenerationJob> job;
      ResponseHeader header;
      GenerationKind kind;
      bool include_usage;
      bool first = true;
    };
    auto stream = std::make_shared<Stream>(Stream{job, header, kind, g.include_usage});
    ++responses_in_flight_;
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [stream](size_t, httplib::DataSink& sink) {
          const JobUpdate u = stream->job->take(1000ms);
          std::string out;
          if (!u.text.empty()) {
            out += sse_event(chunk_json(stream->kind, stream->header, u.text, stream->first, nullptr));
            stream->first = false;
          }
          if (u.finished) {
            if (*u.finished == FinishReason::kError) {
              out += sse_event(error_body("generation failed: " + u.error, "server_error", ""));
            } else if (*u.finished != FinishReason::kCancelled) {
              out += sse_event(chunk_json(stream->kind, stream->header, "", stream->first,
                                          &*u.finished));
              if (stream->include_usage)
                out += sse_event(usage_chunk_json(stream->kind, stream->header, u.prompt_tokens,
                                                  u.completion_tokens));
            }
            out += kSseDone;
          }
          if (out.empty()) out = ": waiting\n\n";  // an SSE comment: clients skip it
          if (!sink.write(out.data(), out.size())) {
            stream->job->cancel();
            return false;
          }
          if (u.finished) sink.done();
          return true;
        },
        [this, stream](bool success) {
          if (!success) stream->job->cancel();  // the client went away mid-stream
          --responses_in_flight_;
        });
  });
}

void HttpServer::handle_embeddings(const httplib::Request& req, const httplib::ContentReader& content,
                                   httplib::Response& res) {
  answer(res, [&] {
    const EmbeddingRequest e = parse_embedding_request(parse_body(read_body(req, content, res)));
    check_model(e.model);
    if (stopping_) throw ApiError(503, "the server is shutting down", "server_error", "shutting_down");
    if (!model_.can_embed())
      throw invalid_request("the model '" + model_.id() + "' has no embedding graph (" +
                                model_.why_no_embedding() + ")",
                            "model_cannot_embed");
    std::vector<std::vector<int32_t>> tokens;
    for (size_t i = 0; i < e.inputs.size(); ++i) {
      tokens.push_back(model_.embed_tokens(e.inputs[i]));
      if (static_cast<int64_t>(tokens.back().size()) > model_.embed_max_tokens())
        throw invalid_request("input[" + std::to_string(i) + "] is " +
                                  std::to_string(tokens.back().size()) +
                                  " tokens, longer than the context of " +
                                  std::to_string(model_.embed_max_tokens()) + " tokens",
                              "context_length_exceeded");
    }
    const std::vector<embed::Embedding> vectors = model_.embed(std::move(tokens));
    std::vector<float> flat;
    int64_t n_tokens = 0;
    for (const embed::Embedding& v : vectors) {
      flat.insert(flat.end(), v.values.begin(), v.values.end());
      n_tokens += v.n_tokens;
    }
    metrics_.add_prompt_tokens(n_tokens);
    reply_json(res, 200, embeddings_json(model_.id(), flat, model_.embed_dim(), e.base64, n_tokens));
  });
}

}  // namespace gguflow::server
