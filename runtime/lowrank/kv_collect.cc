#include "runtime/lowrank/kv_collect.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "ops/attention_op.h"
#include "ops/error.h"
#include "ops/rope_op.h"
#include "runtime/core/input_file.h"
#include "runtime/exec/session.h"
#include "runtime/gguf/model_hparams.h"
#include "runtime/graph/graph_choice.h"
#include "runtime/graph/load.h"
#include "runtime/tokenizer/tokenizer.h"

namespace gguflow::lowrank {

StudyModel StudyModel::open(const std::string& path, const GguflowKernels& kernels, int n_threads) {
  StudyModel m;
  m.path = path;
  m.file = GgufFile::open(path);
  m.kernels = &kernels;
  m.n_threads = n_threads;
  const ModelHparams h = read_model_hparams(*m.file);
  m.n_layer = h.n_layer;
  m.n_head_kv = h.n_head_kv;
  m.head_dim = h.head_dim;
  if (const GgufValue* n = m.file->find("general.name")) m.name = std::string(n->as_string("general.name"));
  return m;
}

std::vector<int32_t> tokenize_text_file(const StudyModel& m, const std::string& path) {
  const std::string text = read_input_file(path, "text file");
  if (text.empty()) throw error(path, ": the text file is empty: expected text to run the model over");
  const Tokenizer tok = Tokenizer::from_gguf(*m.file);
  const auto ids = tok.encode(text);
  return std::vector<int32_t>(ids.begin(), ids.end());
}

int64_t min_samples_for(int64_t dim) { return 2 * dim; }

void report(const StudyModel& m, const std::string& line) {
  if (m.quiet) return;
  std::fprintf(stderr, "gguflow kv: %s\n", line.c_str());
  std::fflush(stderr);
}

namespace {

// Undoes the rotation of the keys cached by the attention node writing state `state`: the
// rope node producing its k input gives the attributes; rows [0, n) are positions 0..n-1.
class KeyUnrotation {
 public:
  KeyUnrotation(const graph::Graph& g, int state, int64_t max_rows, const std::string& graph_path) {
    const graph::Node* rope = nullptr;
    for (const graph::Node& n : g.nodes)
      if (n.state == state) {
        const int k = n.inputs[ops::kAttnK];
        const int producer = k >= 0 ? g.tensors[static_cast<size_t>(k)].producer : -1;
        if (producer >= 0 && std::string_view(g.nodes[static_cast<size_t>(producer)].schema->name) == "rope")
          rope = &g.nodes[static_cast<size_t>(producer)];
        if (!rope)
          throw error("--keys pre-rope: node '", n.name, "' of ", graph_path,
                      " caches keys that no rope node rotated: expected its k input to come from a rope node");
      }
    GGUFLOW_CHECK(rope);
    a_ = ops::rope_attr_list().parse(rope->attrs);
    const float* factors = nullptr;
    if (const auto& w = rope->weight("freq_factors")) {
      if (w->type != GGML_TYPE_F32)
        throw error("--keys pre-rope: ", w->tensor, " has a type other than F32: expected F32 frequency factors");
      factors = reinterpret_cast<const float*>(w->file->tensor_bytes(*w->info).data());
    }
    // cos, sin of -theta at positions 0..max_rows-1: the inverse rotation.
    std::vector<int32_t> negated(static_cast<size_t>(max_rows));
    for (int64_t p = 0; p < max_rows; ++p) negated[p] = static_cast<int32_t>(-p);
    cos_sin_.resize(static_cast<size_t>(max_rows * a_.n_rot));
    ops::rope_cos_sin(negated.data(), max_rows, a_.n_rot, static_cast<float>(a_.base), cos_sin_.data(), factors);
  }

  // rows: [n][row] keys at positions 0..n-1, rotated back in place.
  void apply(const GguflowKernels& k, float* rows, int64_t n, int64_t row) const {
    ops::rope(k, rows, n, row / a_.head_dim, a_.head_dim, a_.n_rot, cos_sin_.data(), a_.pairing);
  }

 private:
  ops::RopeAttrs a_;
  std::vector<float> cos_sin_;  // [max_rows][n_rot]
};

}  // namespace

KvSamples collect_kv(const StudyModel& m, std::span<const int32_t> tokens, int64_t ctx,
                     Granularity granularity, KeyPosition keys) {
  if (tokens.empty()) throw error("no tokens to collect keys and values from");
  if (ctx < 0) throw error("--ctx must be positive, found ", ctx);
  const int64_t n = static_cast<int64_t>(tokens.size());
  int64_t chunk = ctx > 0 ? std::min(ctx, n) : n;

  // The generate default: its caches are named kv.{i}, one per layer.
  const std::string graph_path = graph::default_graph_path(*m.file, graph::Job::kGenerate);
  auto g = std::make_shared<const graph::Graph>(graph::load_graph(graph_path, m.file));
  exec::SessionOptions options;
  options.n_threads = m.n_threads;
  options.n_ctx = chunk;
  auto session = std::make_unique<exec::Session>(g, *m.kernels, options);
  // A sliding-window layer (gemma2, gemma3, phi3) caches only its last `window` positions: a
  // run longer than that would read rows its ring no longer holds. Runs are cut to the
  // smallest cache.
  int64_t smallest = chunk;
  for (const ops::KvCacheView& c : session->kv_caches()) smallest = std::min(smallest, c.rows);
  if (smallest < chunk) {
    report(m, "runs of " + std::to_string(smallest) + " tokens: a sliding-window layer caches only its last " +
                  std::to_string(smallest) + " positions");
    chunk = smallest;
    options.n_ctx = chunk;
    session = std::make_unique<exec::Session>(g, *m.kernels, options);
  }

  KvSamples s;
  s.granularity = granularity;
  s.keys = keys;
  s.n_layer = m.n_layer;
  s.groups = granularity == Granularity::kHead ? m.n_head_kv : 1;
  const int64_t row = m.n_head_kv * m.head_dim;
  s.group_dim = row / s.groups;
  for (int64_t i = 0; i < s.n_layer * s.groups; ++i) {
    s.k.emplace_back(s.group_dim);
    s.v.emplace_back(s.group_dim);
  }
  std::vector<int> state(static_cast<size_t>(s.n_layer));
  for (int64_t l = 0; l < s.n_layer; ++l) {
    state[l] = g->find_state("kv." + std::to_string(l));
    if (state[l] < 0) throw error("graph ", graph_path, " has no cache 'kv.", l, "' for layer ", l);
    const ops::KvLayout w = g->states[static_cast<size_t>(state[l])].layout;
    GGUFLOW_CHECK(w.k == row && w.v == row);
  }
  std::vector<KeyUnrotation> unrotate;  // [n_layer] for pre-rope keys
  if (keys == KeyPosition::kPreRope)
    for (int64_t l = 0; l < s.n_layer; ++l) unrotate.emplace_back(*g, state[l], chunk, graph_path);
  // [chunk][row]: one layer's keys (rotated back for pre-rope keys) and values, one row a token
  // (kv_rows_f32 gathers them from a head-major cache).
  std::vector<float> k_rows(static_cast<size_t>(chunk * row)), v_rows(k_rows.size());

  const auto start = std::chrono::steady_clock::now();
  const std::string what = std::string("collecting keys (") + key_position_name(keys) + ") and values";
  report(m, what + " over " + std::to_string(n) + " tokens" +
                (chunk < n ? " in runs of " + std::to_string(chunk) : ""));
  for (int64_t begin = 0; begin < n; begin += chunk) {
    const int64_t len = std::min(chunk, n - begin);
    if (begin > 0) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      char line[160];
      std::snprintf(line, sizeof line, "%s: %lld of %lld tokens (%.1f s)", what.c_str(),
                    static_cast<long long>(begin), static_cast<long long>(n), elapsed);
      report(m, line);
    }
    session->reset();
    session->prefill(tokens.subspan(static_cast<size_t>(begin), static_cast<size_t>(len)));
    for (int64_t l = 0; l < s.n_layer; ++l) {
      const ops::KvCacheView& c = session->kv_caches()[static_cast<size_t>(state[l])];
      // rows [len][row] f32 (the session's default type), row = position
      ops::kv_rows_f32(c, false, len, k_rows.data());
      ops::kv_rows_f32(c, true, len, v_rows.data());
      if (keys == KeyPosition::kPreRope) unrotate[l].apply(*m.kernels, k_rows.data(), len, row);
      for (int64_t gi = 0; gi < s.groups; ++gi) {
        s.k[l * s.groups + gi].add(k_rows.data() + gi * s.group_dim, len, row);
        s.v[l * s.groups + gi].add(v_rows.data() + gi * s.group_dim, len, row);
      }
    }
  }
  s.tokens = n;
  return s;
}

}  // namespace gguflow::lowrank
