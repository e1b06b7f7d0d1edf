#include "runtime/exec/run_tokens.h"

#include <chrono>

#include "runtime/core/console.h"
#include "runtime/core/json.h"
#include "runtime/exec/greedy.h"
#include "runtime/exec/logits_output.h"
#include "runtime/exec/token_io.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/graph/load.h"

namespace gguflow::exec {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

void run_tokens(const RunTokensRequest& request, const GguflowKernels& kernels, FILE* out,
                FILE* log) {
  auto model = GgufFile::open(request.model_path);
  graph::LoadOptions load_options;
  load_options.set = request.set;
  load_options.job = graph::Job::kGenerate;
  for (const std::string& f : request.weight_files) load_options.weight_files.push_back(GgufFile::open(f));
  auto g = std::make_shared<const graph::Graph>(
      graph::load_graph(request.graph_path, model, load_options));
  const auto build_start = std::chrono::steady_clock::now();
  Session session(g, kernels, request.session);
  check_logits_output(request.graph_path, *g, session, 0);
  if (request.verbose)
    std::fprintf(log,
                 "graph %s: %zu nodes; kernels %s; threads %d; ctx %lld; arena %.1f MiB; "
                 "kv cache %s; session built in %.3f s\n",
                 g->name.c_str(), g->nodes.size(), kernels.target_name, session.n_threads(),
                 static_cast<long long>(session.n_ctx()), session.arena_bytes() / 1048576.0,
                 session.kv_cache_summary().c_str(), seconds_since(build_start));

  const auto start = std::chrono::steady_clock::now();
  // Every position's logits only when they are dumped: otherwise the lm-head computes just the
  // last row (a prompt of T tokens would pay T lm-head rows for one used row).
  std::vector<float> all;
  const bool dump = !request.dump_logits.empty();
  std::span<const float> last = session.prefill(request.tokens, dump ? &all : nullptr);
  if (request.verbose)
    std::fprintf(log, "prefill: %zu tokens in %.3f s\n", request.tokens.size(),
                 seconds_since(start));
  if (dump) write_f32_file(request.dump_logits, all);

  const double prefill_seconds = seconds_since(start);

  const auto decode_start = std::chrono::steady_clock::now();
  std::vector<int32_t> ids;
  for (int64_t i = 0; i < request.greedy_steps; ++i) {
    sampling::refuse_nan_logits(last);
    const int32_t next = argmax(last);
    ids.push_back(next);
    if (i + 1 == request.greedy_steps || session.n_past() >= session.n_ctx()) break;
    last = session.decode(next);
  }
  const double decode_seconds = seconds_since(decode_start);
  if (static_cast<int64_t>(ids.size()) < request.greedy_steps) {
    console::start_stderr_line();
    std::fprintf(log, "gguflow: context full (%lld of %lld tokens; --ctx sets the size): %zu of the %lld greedy tokens\n",
                 static_cast<long long>(session.n_past()), static_cast<long long>(session.n_ctx()),
                 ids.size(), static_cast<long long>(request.greedy_steps));
  }
  if (request.verbose && !ids.empty())
    std::fprintf(log, "decode: %zu tokens in %.3f s (%.1f tokens/s; packed %.1f MiB of weights at the first step)\n",
                 ids.size(), decode_seconds, ids.size() / decode_seconds,
                 session.packed_weight_bytes() / 1048576.0);

  if (request.json) {
    const Json json = {{"tokens", request.tokens},
                       {"greedy", ids},
                       {"dump_logits", dump ? Json(request.dump_logits) : Json(nullptr)},
                       {"n_vocab", session.output_width()},
                       {"prefill_seconds", prefill_seconds},
                       {"decode_seconds", decode_seconds},
                       {"kernels", kernels.target_name}};
    std::fprintf(out, "%s\n", json_text(json).c_str());
  } else if (!ids.empty()) {
    for (size_t i = 0; i < ids.size(); ++i) std::fprintf(out, i ? " %d" : "%d", ids[i]);
    std::fprintf(out, "\n");
  }
}

}  // namespace gguflow::exec
