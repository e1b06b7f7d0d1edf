#include "runtime/lowrank/kv_eval.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "ops/error.h"
#include "runtime/core/json.h"
#include "runtime/exec/session.h"
#include "runtime/graph/graph_choice.h"
#include "runtime/graph/load.h"

namespace gguflow::lowrank {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// "<label>: N tokens in S s (T tokens/s)", after a run.
void report_run(const StudyModel& m, const std::string& label, size_t tokens, double seconds) {
  char line[200];
  std::snprintf(line, sizeof line, "%s: %zu tokens in %.1f s", label.c_str(), tokens, seconds);
  report(m, line);
}

CacheRun run_graph(const StudyModel& m, const std::string& label, const std::string& graph_path,
                   std::vector<std::shared_ptr<const GgufFile>> weight_files, std::span<const int32_t> tokens,
                   CacheTypes types = {}) {
  graph::LoadOptions load;
  load.weight_files = std::move(weight_files);
  auto g = std::make_shared<const graph::Graph>(
      graph::load_graph(graph_path, m.file, load));
  exec::SessionOptions options;
  options.n_threads = m.n_threads;
  options.n_ctx = static_cast<int64_t>(tokens.size());
  options.cache_type_k = types.k;
  options.cache_type_v = types.v;
  exec::Session session(g, *m.kernels, options);
  CacheRun run;
  const auto start = std::chrono::steady_clock::now();
  session.prefill(tokens, &run.logits);
  run.seconds = seconds_since(start);
  report_run(m, label, tokens.size(), run.seconds);
  run.n_vocab = session.output_width();
  run.kv_bytes = session.kv_cache_bytes();
  run.kv_bytes_per_token = static_cast<double>(session.kv_cache_bytes()) / static_cast<double>(session.n_ctx());
  return run;
}

// log-softmax of one row in double.
void log_softmax(const float* x, int64_t n, std::vector<double>* out) {
  out->resize(static_cast<size_t>(n));
  const double mx = *std::max_element(x, x + n);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(x[i]) - mx);
  const double lse = mx + std::log(sum);
  for (int64_t i = 0; i < n; ++i) (*out)[i] = static_cast<double>(x[i]) - lse;
}

}  // namespace

std::string CacheTypes::name() const {
  return std::string("K ") + ops::kv_cache_type_name(k) + ", V " + ops::kv_cache_type_name(v);
}

CacheRun run_full(const StudyModel& m, std::span<const int32_t> tokens, CacheTypes types) {
  return run_graph(m, types.name() + " cache", graph::default_graph_path(*m.file, graph::Job::kGenerate), {},
                   tokens, types);
}

CacheRun run_projected(const StudyModel& m, const std::string& projection_path, std::span<const int32_t> tokens) {
  auto file = GgufFile::open(projection_path);
  const KvProjection p = read_kv_projection(*file);
  check_projection_matches_model(p, projection_path, *m.file);
  return run_graph(m, "projected cache " + std::filesystem::path(projection_path).filename().string(),
                   projected_graph_path(*m.file, p.keys), {file}, tokens);
}

CacheRun run_zero(const StudyModel& m, std::span<const int32_t> tokens) {
  auto g = std::make_shared<const graph::Graph>(
      graph::load_graph(graph::default_graph_path(*m.file, graph::Job::kGenerate), m.file));
  exec::SessionOptions options;
  options.n_threads = m.n_threads;
  options.n_ctx = static_cast<int64_t>(tokens.size());
  exec::Session session(g, *m.kernels, options);
  CacheRun run;
  run.n_vocab = session.output_width();
  const auto start = std::chrono::steady_clock::now();
  // One token per step: by far the slowest run, so it reports every tenth of the text once it
  // has taken a few seconds.
  const size_t every = std::max<size_t>(1, tokens.size() / 10);
  for (size_t i = 0; i < tokens.size(); ++i) {
    const int32_t t = tokens[i];
    if (i > 0 && i % every == 0 && seconds_since(start) >= 2.0) {
      char line[160];
      std::snprintf(line, sizeof line, "zeroed-cache control (one token a step): %zu of %zu tokens (%.1f s)", i,
                    tokens.size(), seconds_since(start));
      report(m, line);
    }
    for (size_t s = 0; s < g->states.size(); ++s) {  // forget every earlier token
      const ops::KvCacheView& c = session.kv_caches()[s];
      std::memset(c.k, 0, c.k_bytes());
      std::memset(c.v, 0, c.v_bytes());
    }
    const std::span<const float> logits = session.decode(t);
    run.logits.insert(run.logits.end(), logits.begin(), logits.end());
  }
  run.seconds = seconds_since(start);
  report_run(m, "zeroed-cache control", tokens.size(), run.seconds);
  run.kv_bytes_per_token = 0;  // it keeps nothing of the past
  return run;
}

CacheMetrics compare(const CacheRun& full, const CacheRun& run, std::span<const int32_t> tokens) {
  const int64_t T = static_cast<int64_t>(tokens.size()), V = full.n_vocab;
  GGUFLOW_CHECK(run.n_vocab == V && static_cast<int64_t>(full.logits.size()) == T * V &&
                static_cast<int64_t>(run.logits.size()) == T * V);
  if (T < 2) throw error("kv eval: expected at least 2 tokens of text (positions predict the next token), found ", T);
  CacheMetrics m;
  m.kv_bytes_per_token = run.kv_bytes_per_token;
  m.kv_bytes = run.kv_bytes;
  m.tokens_per_second = run.seconds > 0 ? static_cast<double>(tokens.size()) / run.seconds : 0;
  double kl = 0, nll = 0, diff2 = 0, ref2 = 0;
  int64_t agree = 0;
  std::vector<double> lp, lq;
  for (int64_t t = 0; t + 1 < T; ++t) {
    const float* p = full.logits.data() + t * V;
    const float* q = run.logits.data() + t * V;
    log_softmax(p, V, &lp);
    log_softmax(q, V, &lq);
    for (int64_t i = 0; i < V; ++i) {
      kl += std::exp(lp[i]) * (lp[i] - lq[i]);
      const double d = static_cast<double>(q[i]) - p[i];
      diff2 += d * d;
      ref2 += static_cast<double>(p[i]) * p[i];
    }
    agree += std::max_element(p, p + V) - p == std::max_element(q, q + V) - q;
    nll -= lq[tokens[t + 1]];
  }
  const double n = static_cast<double>(T - 1);
  m.kld_mean = std::max(0.0, kl / n);
  m.top1_agreement = static_cast<double>(agree) / n;
  m.perplexity = std::exp(nll / n);
  m.logit_rel_l2 = ref2 > 0 ? std::sqrt(diff2 / ref2) : 0.0;
  return m;
}

EvalResult evaluate(const StudyModel& m, const std::string& projection_path,
                    std::span<const CacheTypes> cache_types, std::span<const int32_t> tokens) {
  std::vector<std::pair<std::string, CacheRun>> runs;
  if (!projection_path.empty())
    runs.emplace_back("projected", run_projected(m, projection_path, tokens));  // checks the file first
  for (const CacheTypes& types : cache_types) runs.emplace_back(types.name(), run_full(m, tokens, types));
  const CacheRun full = run_full(m, tokens);
  const CacheRun zero = run_zero(m, tokens);
  EvalResult r;
  r.tokens = static_cast<int64_t>(tokens.size());
  r.full = compare(full, full, tokens);
  for (const auto& [name, run] : runs) r.tested.emplace_back(name, compare(full, run, tokens));
  r.zero = compare(full, zero, tokens);
  return r;
}

void print_eval_text(const EvalResult& r, FILE* out) {
  std::fprintf(out, "%lld tokens (%lld predictions)\n", static_cast<long long>(r.tokens),
               static_cast<long long>(r.tokens - 1));
  std::fprintf(out, "cache             KL(full||x)   top-1   perplexity   logit rel L2   KV bytes/token   KV bytes\n");
  const auto row = [&](const std::string& name, const CacheMetrics& m) {
    std::fprintf(out, "%-15s  %12.6f  %6.4f  %11.4f  %13.6g  %15.1f  %9llu\n", name.c_str(), m.kld_mean,
                 m.top1_agreement, m.perplexity, m.logit_rel_l2, m.kv_bytes_per_token,
                 static_cast<unsigned long long>(m.kv_bytes));
  };
  row("full", r.full);
  for (const auto& [name, m] : r.tested) row(name, m);
  row("zero", r.zero);
}

Json metrics_json(const CacheMetrics& m) {
  return {{"kld_mean", m.kld_mean},
          {"top1_agreement", m.top1_agreement},
          {"perplexity", m.perplexity},
          {"logit_rel_l2", m.logit_rel_l2},
          {"kv_bytes_per_token", m.kv_bytes_per_token},
          {"kv_bytes", m.kv_bytes}};
}

void print_eval_json(const EvalResult& r, FILE* out) {
  Json doc = {{"tokens", r.tokens}, {"full", metrics_json(r.full)}};
  for (const auto& [name, m] : r.tested) doc[name] = metrics_json(m);
  doc["zero"] = metrics_json(r.zero);
  std::fprintf(out, "%s\n", json_text(doc).c_str());
}

}  // namespace gguflow::lowrank
