// `gguflow serve -m MODEL [--host H] [--port P] [--parallel N] [--ctx N] [--graph G]
// [--api-key KEY]`: the OpenAI-compatible HTTP server (runtime/server). This file parses options,
// loads the model, binds, and turns SIGTERM/SIGINT into a graceful stop.
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <thread>

#include "ops/error.h"
#include "runtime/cli/args.h"
#include "runtime/cli/commands.h"
#include "runtime/cli/shared_options.h"
#include "runtime/graph/load.h"
#include "runtime/server/http_server.h"
#include "runtime/server/served_model.h"

namespace gguflow::cli {
namespace {

// Waits for SIGTERM or SIGINT (blocked in every thread, so only this one takes them) and stops
// the server; ends by itself once `done` is set.
void watch_signals(server::HttpServer& http, const std::atomic<bool>& done, double grace_s) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  const timespec poll = {0, 200 * 1000 * 1000};
  while (!done.load()) {
    const int sig = sigtimedwait(&signals, nullptr, &poll);
    if (sig != SIGTERM && sig != SIGINT) continue;
    std::fprintf(stderr,
                 "gguflow serve: %s: no new requests; running ones have %.0f s to finish\n",
                 sig == SIGTERM ? "SIGTERM" : "SIGINT", grace_s);
    std::fflush(stderr);
    http.stop();
    return;
  }
}

}  // namespace

int run_serve(int argc, char** argv) {
  Args args(
      "serve -m MODEL.gguf [--host 127.0.0.1] [--port 8080] [--parallel N] [options]",
      "Serves the model over HTTP with the OpenAI API: POST /v1/chat/completions, "
      "/v1/completions (both with \"stream\": true as server-sent events), /v1/embeddings (models "
      "with an embedding graph), GET /v1/models, /health and /metrics (Prometheus).\n"
      "\n"
      "Up to --parallel requests generate at once, each in its own KV cache slot of --ctx tokens: "
      "every graph step runs the next token of each of them (and chunks of waiting prompts) "
      "together. A request at temperature 0 or with a seed gets the same tokens whether it runs "
      "alone or beside others. More requests wait in a queue of --queue; beyond it: 503 with "
      "Retry-After. Bad requests get 400 with an OpenAI error body, a wrong or missing --api-key "
      "401, an unknown model 404, a body over --max-body 413.\n"
      "SIGTERM or SIGINT: new requests get 503, running ones have --grace seconds to finish, then "
      "are cancelled; the server exits 0. docs/SERVER.md has the details.");
  model_option(args, "GGUF model to serve");
  args.option("--host", "ADDR", "address to listen on (0.0.0.0: every interface)", "127.0.0.1")
      .option("--port", "PORT", "TCP port (0: any free port, printed at start)", "8080")
      .option("--parallel", "N", "requests generating at once (KV cache slots)", "4")
      .option("--queue", "N", "requests that may wait for a slot; more get 503", "64")
      .option("--graph", "FILE",
              "generation graph (default: the shipped graph for the model's architecture)")
      .option("--alias", "NAME", "the model id clients use (default: the file name without .gguf)")
      .option("--api-key", "KEY", "require \"Authorization: Bearer KEY\" on /v1/*")
      .env("GGUFLOW_API_KEY")
      .option("--max-body", "BYTES", "largest request body accepted", "8388608")
      .option("--grace", "SECONDS", "on SIGTERM, how long running requests may finish", "10")
      .flag("--quiet", "do not log one line per request on stderr");
  ctx_option(args, "context per request slot in tokens (default: min(model, 4096))");
  threads_option(args);
  kernels_option(args);
  set_option(args);
  cache_type_options(args);
  if (!args.parse(argc, argv)) return 0;
  if (!args.has("--model")) throw usage_error("--model FILE is required");

  server::ModelOptions model_options;
  model_options.model_path = args.get("--model");
  model_options.alias = args.get("--alias");
  model_options.graph_path = args.get("--graph");
  model_options.set = set_values(args);
  model_options.kernels = args.get("--kernels");
  model_options.n_threads = threads_value(args);
  model_options.n_ctx = args.get_int("--ctx");
  model_options.n_slots = args.get_int_in("--parallel", 1, 256);
  exec::SessionOptions cache_types;
  cache_type_values(args, &cache_types);
  model_options.cache_type_k = cache_types.cache_type_k;
  model_options.cache_type_v = cache_types.cache_type_v;

  server::ServeOptions options;
  options.host = args.get("--host");
  options.port = static_cast<int>(args.get_int_in("--port", 0, 65535));
  options.api_key = args.get("--api-key");
  options.max_body_bytes = static_cast<size_t>(args.get_int_in("--max-body", 1024, int64_t{1} << 32));
  options.engine.max_queue = args.get_int_in("--queue", 0, 4096);
  const double grace_s = args.get_double("--grace");
  if (!(grace_s >= 0 && grace_s <= 3600))
    throw usage_error("--grace: expected seconds in [0, 3600], found ", args.get("--grace"));
  options.grace = std::chrono::milliseconds(static_cast<int64_t>(grace_s * 1000));
  options.log_requests = !args.has("--quiet");

  // Before any thread starts: every thread inherits the mask, so the signals reach only the
  // watcher, which stops the server in order instead of killing it mid-response. A client that
  // disconnects must not kill the process either.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  std::fprintf(stderr, "gguflow serve: loading %s\n", model_options.model_path.c_str());
  server::ServedModel model(model_options);
  server::HttpServer http(model, options, stderr);
  const int port = http.bind();
  if (exec::Session* session = model.session())
    std::fprintf(stderr,
                 "gguflow serve: model '%s': generation with %s, %lld slots x %lld tokens "
                 "(KV cache %s), chat template %s\n",
                 model.id().c_str(), model.graph_path().c_str(),
                 static_cast<long long>(session->n_slots()), static_cast<long long>(session->n_ctx()),
                 session->kv_cache_summary().c_str(),
                 model.chat_template() ? model.chat_template()->name() : "none (chat: 400)");
  else
    std::fprintf(stderr, "gguflow serve: model '%s': no generation (%s)\n", model.id().c_str(),
                 model.why_no_generation().c_str());
  std::fprintf(stderr, "gguflow serve: embeddings: %s\n",
               model.can_embed() ? "yes" : ("no (" + model.why_no_embedding() + ")").c_str());
  std::fprintf(stderr, "gguflow serve: kernels %s; threads %d\n",
               model.kernels().describe().c_str(),
               model.session() ? model.session()->n_threads() : model_options.n_threads);
  std::fprintf(stderr, "gguflow serve: listening on http://%s:%d\n", options.host.c_str(), port);
  std::fflush(stderr);

  std::atomic<bool> done{false};
  std::thread watcher([&] { watch_signals(http, done, grace_s); });
  http.listen();
  done = true;
  watcher.join();
  http.stop();
  std::fprintf(stderr, "gguflow serve: stopped\n");
  return 0;
}

}  // namespace gguflow::cli
