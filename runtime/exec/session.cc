#include "runtime/exec/session.h"

#include <algorithm>
#include <cstring>

#include <oneapi/tbb/info.h>

#include "runtime/core/error.h"
#include "runtime/exec/buffer_plan.h"
#include "runtime/exec/kv_cache_layout.h"

namespace gguflow::exec {
namespace {

constexpr int64_t kDefaultMaxContext = 4096;

int64_t row_length(const ops::Shape& s) {
  int64_t n = 1;
  for (int64_t d : s.dims)
    if (d != ops::kTokenDim) n *= d;
  return n;
}
bool has_token_dim(const ops::Shape& s) {
  return std::find(s.dims.begin(), s.dims.end(), ops::kTokenDim) != s.dims.end();
}

int find_input(const graph::Graph& g, const char* name) {
  for (int t : g.inputs)
    if (g.tensors[t].name == name) return t;
  return -1;
}

}  // namespace

Session::Session(std::shared_ptr<const graph::Graph> graph, const GguflowKernels& kernels,
                 SessionOptions options)
    : graph_(std::move(graph)), kernels_(kernels), packed_(kernels, options.pack_weights) {
  const graph::Graph& g = *graph_;
  if (options.n_threads < 0) throw error("--threads must be positive, found ", options.n_threads);
  n_threads_ = options.n_threads > 0 ? options.n_threads : tbb::info::default_concurrency();
  arena_.initialize(n_threads_);

  // Inputs and output.
  const int tokens_tensor = find_input(g, "tokens");
  const int positions_tensor = find_input(g, "positions");
  for (int t : g.inputs)
    if (t != tokens_tensor && t != positions_tensor)
      throw error("graph '", g.name, "': input '", g.tensors[t].name,
                  "' is not one the executor provides (tokens, positions)");
  if (tokens_tensor < 0) throw error("graph '", g.name, "' has no input named 'tokens'");
  if (g.outputs.empty()) throw error("graph '", g.name, "' declares no outputs");
  const graph::Tensor& output = g.tensors[g.outputs[0]];
  output_width_ = row_length(output.shape);
  output_per_token_ = has_token_dim(output.shape);

  // Context and batch sizes.
  const int64_t model_ctx = g.model.n_ctx_train > 0 ? g.model.n_ctx_train : kDefaultMaxContext;
  n_ctx_ = options.n_ctx > 0 ? options.n_ctx : std::min(model_ctx, kDefaultMaxContext);
  if (options.n_ctx < 0) throw error("--ctx must be positive, found ", options.n_ctx);
  max_batch_ = output_per_token_ ? std::clamp<int64_t>(options.max_batch, 1, n_ctx_) : n_ctx_;

  // Vocabulary: rows of the table the tokens index.
  n_vocab_ = g.model.n_vocab > 0 ? g.model.n_vocab : INT32_MAX;
  for (const graph::Node& node : g.nodes)
    if (node.op == ops::OpId::kEmbed && node.inputs[0] == tokens_tensor && node.weights[0])
      n_vocab_ = static_cast<int64_t>(node.weights[0]->info->n_rows());

  // KV caches: one k block [n_ctx][widths.k] and one v block [n_ctx][widths.v] per state;
  // widths are n_head_kv * head_dim, or the ranks of a low-rank cache (kv_cache_layout.h).
  size_t kv_floats = 0;
  for (size_t s = 0; s < g.states.size(); ++s) {
    const KvRowWidths w = kv_row_widths(g, static_cast<int>(s));
    kv_floats += static_cast<size_t>(n_ctx_ * (w.k + w.v));
  }
  kv_storage_.assign(kv_floats, 0.0f);
  kv_bytes_ = kv_floats * sizeof(float);
  float* kv = kv_storage_.data();
  for (size_t s = 0; s < g.states.size(); ++s) {
    const KvRowWidths w = kv_row_widths(g, static_cast<int>(s));
    caches_.push_back({kv, kv + n_ctx_ * w.k, n_ctx_});
    kv += n_ctx_ * (w.k + w.v);
  }

  // Dependencies: a node waits for the producers of its inputs.
  predecessors_.resize(g.nodes.size());
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    for (int t : g.nodes[n].inputs)
      if (t >= 0 && g.tensors[t].producer >= 0) predecessors_[n].push_back(g.tensors[t].producer);
    std::sort(predecessors_[n].begin(), predecessors_[n].end());
    predecessors_[n].erase(std::unique(predecessors_[n].begin(), predecessors_[n].end()),
                           predecessors_[n].end());
  }

  // Bind every node, then plan its tensors and scratch in the arena.
  BindContext ctx{&kernels_, max_batch_, n_ctx_, n_threads_, &caches_, &widened_, &packed_};
  for (size_t n = 0; n < g.nodes.size(); ++n)
    nodes_.push_back(bind_node(g, static_cast<int>(n), ctx));

  std::vector<BufferRequest> requests;
  for (const graph::Tensor& t : g.tensors) {
    BufferRequest r;
    r.producer = std::max(t.producer, 0);
    r.users = t.consumers;
    r.bytes = sizeof(float) * row_length(t.shape) * (has_token_dim(t.shape) ? max_batch_ : 1);
    r.pinned = t.producer < 0 ||
               std::find(g.outputs.begin(), g.outputs.end(), &t - g.tensors.data()) != g.outputs.end();
    requests.push_back(std::move(r));
  }
  std::vector<std::vector<size_t>> scratch_request(g.nodes.size());
  for (size_t n = 0; n < g.nodes.size(); ++n)
    for (size_t bytes : nodes_[n].scratch_bytes) {
      scratch_request[n].push_back(requests.size());
      requests.push_back({static_cast<int>(n), {static_cast<int>(n)}, bytes, false});
    }
  const BufferPlan plan = plan_buffers(predecessors_, requests);
  arena_bytes_ = plan.arena_bytes;
  arena_storage_.reset(new std::byte[arena_bytes_ + 64]);
  const auto base = reinterpret_cast<uintptr_t>(arena_storage_.get());
  arena_base_ = arena_storage_.get() + ((64 - base % 64) % 64);

  io_.resize(g.nodes.size());
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    for (int t : g.nodes[n].inputs) io_[n].inputs.push_back(t >= 0 ? plan.offsets[t] : NodeIo::kAbsent);
    for (int t : g.nodes[n].outputs) io_[n].outputs.push_back(plan.offsets[t]);
    for (size_t r : scratch_request[n]) io_[n].scratch.push_back(plan.offsets[r]);
  }
  tokens_offset_ = plan.offsets[tokens_tensor];
  positions_offset_ = positions_tensor >= 0 ? plan.offsets[positions_tensor] : 0;
  if (positions_tensor < 0) {
    // No node reads positions; keep a pinned region anyway so step() can write them.
    positions_offset_ = tokens_offset_;
  }
  output_offset_ = plan.offsets[g.outputs[0]];
  const int output_producer = g.tensors[g.outputs[0]].producer;
  last_output_only_supported_ =
      output_per_token_ && output_producer >= 0 && nodes_[output_producer].writes_last_output_only;
  executor_ = make_executor(options.scheduler, arena_, nodes_, io_, predecessors_);
}

Session::~Session() = default;

void Session::step(const int32_t* tokens, int64_t n, bool last_output_only) {
  GGUFLOW_CHECK(n >= 1 && n <= max_batch_ && n_past_ + n <= n_ctx_);
  std::memcpy(arena_base_ + tokens_offset_, tokens, sizeof(int32_t) * n);
  if (positions_offset_ != tokens_offset_) {
    auto* pos = reinterpret_cast<int32_t*>(arena_base_ + positions_offset_);
    for (int64_t i = 0; i < n; ++i) pos[i] = static_cast<int32_t>(n_past_ + i);
  }
  executor_->run(StepView{arena_base_, n, last_output_only});
  n_past_ += n;
}

std::span<const float> Session::prefill(std::span<const int32_t> tokens,
                                        std::vector<float>* all_outputs) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n == 0) throw error("no tokens to evaluate");
  for (int64_t i = 0; i < n; ++i)
    if (tokens[i] < 0 || tokens[i] >= n_vocab_)
      throw error("token id ", tokens[i], " at index ", i, " is out of range: the model has ",
                  n_vocab_, " tokens (ids 0..", n_vocab_ - 1, ")");
  if (n_past_ + n > n_ctx_)
    throw error(n, " tokens do not fit in the context: ", n_past_, " already cached, context is ",
                n_ctx_, " tokens (--ctx)");
  if (!output_per_token_ && n_past_ + n > max_batch_)
    throw error("graph '", graph_->name, "' pools over the whole sequence: at most ", max_batch_,
                " tokens in total, found ", n_past_ + n);
  if (all_outputs) all_outputs->clear();
  const float* out = reinterpret_cast<const float*>(arena_base_ + output_offset_);
  for (int64_t done = 0; done < n;) {
    const int64_t chunk = std::min(max_batch_, n - done);
    // Without all_outputs only the last row is returned: let the lm-head compute just that.
    const bool last_only = all_outputs == nullptr && last_output_only_supported_;
    step(tokens.data() + done, chunk, last_only);
    const int64_t rows = output_per_token_ && !last_only ? chunk : 1;
    if (all_outputs) all_outputs->insert(all_outputs->end(), out, out + rows * output_width_);
    done += chunk;
    if (done == n)
      return {out + (rows - 1) * output_width_, static_cast<size_t>(output_width_)};
  }
  GGUFLOW_CHECK(false);
  return {};
}

std::span<const float> Session::decode(int32_t token) {
  // Decode is where packed weights pay; pack on the first step, on the session's threads.
  if (!packed_for_decode_) {
    arena_.execute([&] { packed_.pack_all(); });
    packed_for_decode_ = true;
  }
  return prefill(std::span<const int32_t>(&token, 1));
}

}  // namespace gguflow::exec
