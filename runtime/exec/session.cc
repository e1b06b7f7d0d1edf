#include "runtime/exec/session.h"

#include <oneapi/tbb/global_control.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include <oneapi/tbb/info.h>

#include "ops/error.h"
#include "runtime/core/checked_math.h"
#include "runtime/exec/buffer_plan.h"
#include "runtime/exec/tbb_parallel.h"

namespace gguflow::exec {
namespace {

// The low-rank attention ops keep one sequence: their cache row is the position, and their
// coordinates have no region per slot or per sequence.
bool keeps_one_sequence(const graph::Node& n) {
  const std::string_view op = n.schema->name;
  return op == "kv_project" || op == "kv_project_rope";
}

constexpr int64_t kDefaultMaxContext = 4096;
// Bytes; every K or V block of the KV storage starts at a multiple: the widest element read is a
// float (f16 and the quantized blocks' f16 scales need 2). f32 blocks are whole floats already,
// so an all-f32 cache is exactly its rows (the low-rank study counts 4 bytes per rank).
constexpr uint64_t kBlockAlign = alignof(float);

using ops::has_token_dim;
using ops::row_length;

}  // namespace

Session::Session(std::shared_ptr<const graph::Graph> graph, const GguflowKernels& kernels,
                 SessionOptions options)
    : graph_(std::move(graph)), kernels_(kernels), packed_(kernels, options.pack_weights) {
  if (options.n_threads < 0) throw error("--threads must be positive, found ", options.n_threads);
  // More threads than oneTBB allows the process would only print oneTBB's own warning and be
  // ignored: the arena gets at most that many (the CLI says so, runtime/cli/shared_options.cc).
  const int most = static_cast<int>(
      tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism));
  n_threads_ = options.n_threads > 0 ? std::min(options.n_threads, most) : tbb::info::default_concurrency();
  arena_.initialize(n_threads_);
  find_inputs_and_output();
  size_context(options);
  find_vocabulary();
  allocate_kv_caches(options);
  link_dependencies();
  bind_nodes();
  plan_arena();
  executor_ = make_executor(options.scheduler, arena_, nodes_, io_, predecessors_);
}

Session::~Session() = default;

// Each graph input gets the feed its readers' slots declare (ops::Feed). build_graph refused
// graphs whose readers disagree, leave an input unfilled or read no token ids
// (check_input_feeds, with the YAML positions), so those are invariants here.
void Session::find_inputs_and_output() {
  const graph::Graph& g = *graph_;
  for (int t : g.inputs) {
    const graph::Tensor& input = g.tensors[static_cast<size_t>(t)];
    FeedSlot feed{ops::Feed::kNone, t, 0};
    for (int n : input.consumers) {
      const graph::Node& node = g.nodes[static_cast<size_t>(n)];
      for (size_t slot = 0; slot < node.inputs.size(); ++slot) {
        if (node.inputs[slot] != t) continue;
        const ops::Feed wanted = node.schema->inputs[slot].feed;
        GGUFLOW_CHECK(wanted != ops::Feed::kNone && (feed.feed == ops::Feed::kNone || feed.feed == wanted));
        feed.feed = wanted;
      }
    }
    // An input no node reads needs no feed.
    if (feed.feed != ops::Feed::kNone) feeds_.push_back(feed);
  }
  GGUFLOW_CHECK(std::any_of(feeds_.begin(), feeds_.end(), [](const FeedSlot& f) { return f.feed == ops::Feed::kTokenIds; }));
  if (g.outputs.empty()) throw error("graph '", g.name, "' declares no outputs");
  const graph::Tensor& output = g.tensors[static_cast<size_t>(g.outputs[0])];
  output_width_ = row_length(output.shape);
  output_per_token_ = has_token_dim(output.shape);
}

void Session::size_context(const SessionOptions& options) {
  const graph::Graph& g = *graph_;
  if (options.n_ctx < 0) throw error("--ctx must be positive, found ", options.n_ctx);
  if (options.n_ctx > kMaxContext)
    throw error("--ctx: expected at most ", kMaxContext, " tokens (2^24, the limit of a session's KV cache), found ",
                options.n_ctx);
  const int64_t model_ctx = g.model.n_ctx_train > 0 ? g.model.n_ctx_train : kDefaultMaxContext;
  n_ctx_ = options.n_ctx > 0 ? options.n_ctx : std::min(model_ctx, kDefaultMaxContext);
  max_batch_ = output_per_token_ ? std::clamp<int64_t>(options.max_batch, 1, n_ctx_) : n_ctx_;
  if (options.max_sequences < 1)
    throw error("max_sequences must be positive, found ", options.max_sequences);
  if (options.n_slots < 1 || options.n_slots > 4096)
    throw error("slots: expected 1 to 4096, found ", options.n_slots);
  slot_past_.assign(static_cast<size_t>(options.n_slots), 0);
  if (options.n_slots > 1) {
    for (const graph::Node& n : g.nodes)
      if (keeps_one_sequence(n))
        throw error("graph '", g.name, "': node '", n.name, "' (", n.schema->name,
                    ") keeps one sequence: expected one slot");
  }
  max_sequences_ = options.max_sequences;
  if (max_sequences_ > 1) {
    // A ragged step packs whole sequences of up to n_ctx tokens each: its token budget is its
    // own, and at least one whole sequence.
    if (options.max_batch < 1 || options.max_batch > kMaxContext)
      throw error("batch of ", options.max_batch, " tokens: expected 1 to ", kMaxContext);
    max_batch_ = std::max({max_batch_, options.max_batch, n_ctx_});  // a whole sequence fits
    max_sequences_ = std::min(max_sequences_, max_batch_);  // each sequence has a token
    for (const graph::Node& n : g.nodes)
      if (keeps_one_sequence(n))
        throw error("graph '", g.name, "': node '", n.name, "' (", n.schema->name,
                    ") keeps one sequence: expected one sequence per step");
  }
  // A step may hold every slot (a pooled vector per sequence is sized for them).
  max_sequences_ = std::max(max_sequences_, std::min(n_slots(), max_batch_));
}

// Valid token ids: rows of the tables the ids index (an op slot's `indexes_weight`), so a bad id
// is refused before a step instead of inside a kernel.
void Session::find_vocabulary() {
  const graph::Graph& g = *graph_;
  n_vocab_ = g.model.n_vocab > 0 ? g.model.n_vocab : INT32_MAX;
  for (const FeedSlot& feed : feeds_) {
    if (feed.feed != ops::Feed::kTokenIds) continue;
    for (int n : g.tensors[static_cast<size_t>(feed.tensor)].consumers) {
      const graph::Node& node = g.nodes[static_cast<size_t>(n)];
      for (size_t slot = 0; slot < node.inputs.size(); ++slot) {
        const int table = node.schema->inputs[slot].indexes_weight;
        if (node.inputs[slot] != feed.tensor || table < 0) continue;
        if (const auto& w = node.weights[static_cast<size_t>(table)])
          n_vocab_ = static_cast<int64_t>(w->info->n_rows());
      }
    }
  }
}

// Rows of a state's cache: one per context position, or for a sliding window of W the last
// W + max_batch - 1 positions (a ring: while a step of T tokens is stored, its first query
// still needs the W - 1 positions before it).
int64_t Session::cache_rows(const graph::State& s) const {
  // A ragged step packs its sequences into rows 0..max_batch-1 of every cache.
  const int64_t full = max_sequences_ > 1 ? std::max(n_ctx_, max_batch_) : n_ctx_;
  if (s.layout.window <= 0) return full;
  return std::min(full, s.layout.window + max_batch_ - 1);
}

// One k block [rows][layout.k] and one v block [rows][layout.v] per state, as the op that
// writes the state laid it out (full rows for attention, ranks for kv_project; a ring for a
// sliding window), in the state's element types; attention's blocks head-major where a head is
// whole blocks of the types (KvCacheView::heads: [heads][slots * rows][head_dim]).
void Session::allocate_kv_caches(const SessionOptions& options) {
  const graph::Graph& g = *graph_;
  struct Planned {
    ops::KvCacheType k_type, v_type;
    size_t k_row, v_row;  // bytes of a stored row: one head's (heads > 1) or the whole row
    int64_t heads;        // KvCacheView::heads
  };
  std::vector<Planned> planned;
  for (const graph::State& s : g.states) {
    Planned p{options.cache_type_k.value_or(s.cache_type_k.value_or(ops::KvCacheType::kF32)),
              options.cache_type_v.value_or(s.cache_type_v.value_or(ops::KvCacheType::kF32)), 0, 0, 1};
    if (s.layout.f32_only && (p.k_type != ops::KvCacheType::kF32 || p.v_type != ops::KvCacheType::kF32))
      throw error("state '", s.name, "' is written by an op that keeps a low-rank f32 cache "
                  "(kv_project): expected cache types f32, found K ", ops::kv_cache_type_name(p.k_type),
                  ", V ", ops::kv_cache_type_name(p.v_type), " (--cache-type-k/-v apply to full caches only)");
    for (const auto& [type, width, which] : {std::tuple{p.k_type, s.layout.k, "K"}, std::tuple{p.v_type, s.layout.v, "V"}}) {
      const std::string why = ops::kv_cache_row_error(type, width);
      if (!why.empty()) throw error("state '", s.name, "' ", which, " cache: ", why);
    }
    // Head-major (a block per KV head, see KvCacheView) where the writer reads heads apart and
    // a head's width is a whole number of the types' blocks; else whole rows (stories260K's
    // 8-wide heads in q8_0: a row is one 32-element block, a head a quarter of one).
    const int64_t h = s.layout.heads;
    if (h > 1 && s.layout.k % h == 0 && s.layout.v % h == 0 &&
        ops::kv_cache_row_error(p.k_type, s.layout.k / h).empty() &&
        ops::kv_cache_row_error(p.v_type, s.layout.v / h).empty())
      p.heads = h;
    p.k_row = ops::kv_cache_row_bytes(p.k_type, s.layout.k / p.heads);
    p.v_row = ops::kv_cache_row_bytes(p.v_type, s.layout.v / p.heads);
    planned.push_back(p);
  }
  // Sizes in checked arithmetic (a --ctx of 2^62 wrapped the product and the caches were
  // written out of bounds); an allocation the machine refuses is an error naming the size.
  std::optional<uint64_t> bytes = 0;
  const uint64_t slots = static_cast<uint64_t>(n_slots());
  // Each block starts at a multiple of kBlockAlign bytes: f32 rows after a block of q8_0 rows
  // (34 bytes per 32 elements, an odd number of halves) stay float-aligned.
  // The bytes of one head's rows (heads > 1) or of the whole block, and of a whole block.
  const auto head_bytes = [&](size_t i, size_t row_bytes) -> std::optional<uint64_t> {
    const auto rows = checked_mul<uint64_t>(static_cast<uint64_t>(cache_rows(g.states[i])), slots);
    return rows ? checked_mul<uint64_t>(*rows, row_bytes) : std::nullopt;
  };
  const auto block_bytes = [&](size_t i, size_t row_bytes) -> std::optional<uint64_t> {
    const auto one = head_bytes(i, row_bytes);
    const auto b = one ? checked_mul<uint64_t>(*one, static_cast<uint64_t>(planned[i].heads)) : std::nullopt;
    const auto padded = b ? checked_add<uint64_t>(*b, kBlockAlign - 1) : std::nullopt;
    return padded ? std::optional<uint64_t>(*padded / kBlockAlign * kBlockAlign) : std::nullopt;
  };
  for (size_t i = 0; i < g.states.size(); ++i)
    for (size_t row_bytes : {planned[i].k_row, planned[i].v_row}) {
      const auto b = block_bytes(i, row_bytes);
      bytes = bytes && b ? checked_add<uint64_t>(*bytes, *b) : std::nullopt;
    }
  if (!bytes || *bytes > static_cast<uint64_t>(PTRDIFF_MAX))
    throw error("KV cache of ", g.states.size(), " states x ", n_ctx_,
                " rows does not fit in this machine's address space (--ctx ", n_ctx_, ")");
  // Not zero-filled: every row is written before it is read (a position is stored before any
  // query sees it), so pages become resident only as the context fills; zeroing a 4096-row
  // cache cost more than embedding a few hundred short texts. Several slots' caches go on huge
  // pages (large_buffer.h): an 8-slot decode step's attention took 1.24-1.45 ms with them and
  // 1.64-1.98 ms without (slots_bench, a local per-node timer). One slot takes no advice:
  // huge ones made a 32-token `gguflow run` resident 97 MiB more at --ctx 4096 and 196 MiB
  // more and 0.2-0.3 s slower at --ctx 32768 (2 MiB zeroed per head block at first touch).
  if (*bytes > 0) {
    kv_storage_ = allocate_large_buffer(static_cast<size_t>(*bytes), slots > 1 ? HugePages::kAdvise : HugePages::kNo);
    if (!kv_storage_)
      throw error("KV cache of ", *bytes / 1048576, " MiB could not be allocated (--ctx ", n_ctx_,
                  ", ", g.states.size(), " states): lower --ctx");
  }
  kv_bytes_ = static_cast<size_t>(*bytes);
  std::byte* kv = kv_storage_.get();
  for (size_t i = 0; i < g.states.size(); ++i) {
    const Planned& p = planned[i];
    ops::KvCacheView c;
    c.rows = cache_rows(g.states[i]);
    c.slots = n_slots();
    c.k_type = p.k_type;
    c.v_type = p.v_type;
    c.k_row_bytes = p.k_row;
    c.v_row_bytes = p.v_row;
    c.heads = p.heads;
    if (p.heads > 1) {
      c.k_head_stride = static_cast<size_t>(*head_bytes(i, p.k_row));
      c.v_head_stride = static_cast<size_t>(*head_bytes(i, p.v_row));
    }
    c.k = kv;
    c.v = kv + *block_bytes(i, p.k_row);
    caches_.push_back(c);
    kv = c.v + *block_bytes(i, p.v_row);
  }
}

std::string Session::kv_cache_summary() const {
  // Group the states by (rows, bytes per row): "5 x 31 rows (windowed) + 1 x 4096 rows".
  std::vector<std::pair<std::pair<int64_t, size_t>, int>> kinds;
  for (size_t s = 0; s < graph_->states.size(); ++s) {
    const ops::KvCacheView& c = caches_[s];
    const std::pair<int64_t, size_t> key{c.rows, static_cast<size_t>(c.heads) * (c.k_row_bytes + c.v_row_bytes)};
    auto it = std::find_if(kinds.begin(), kinds.end(), [&](const auto& k) { return k.first == key; });
    if (it == kinds.end()) kinds.push_back({key, 1});
    else ++it->second;
  }
  std::ostringstream out;
  out.precision(3);
  out << kv_bytes_ << " bytes = " << static_cast<double>(kv_bytes_) / 1048576.0 << " MiB";
  if (kinds.size() > 1 || (!kinds.empty() && kinds[0].first.first < n_ctx_)) {
    out << " (";
    for (size_t i = 0; i < kinds.size(); ++i) {
      const auto& [key, count] = kinds[i];
      const double mib = static_cast<double>(key.first * n_slots()) * static_cast<double>(key.second) * count / 1048576.0;
      out << (i ? ", " : "") << count << " x " << key.first << " rows"
          << (key.first < n_ctx_ ? " (window ring)" : "") << " = " << mib << " MiB";
    }
    out << ")";
  }
  // The element types, when any is not f32 (mixed types across states are listed per kind).
  std::vector<std::string> types;
  for (const ops::KvCacheView& c : caches_) {
    const std::string t = std::string("K ") + ops::kv_cache_type_name(c.k_type) + ", V " +
                          ops::kv_cache_type_name(c.v_type);
    if (std::find(types.begin(), types.end(), t) == types.end()) types.push_back(t);
  }
  if (!(types.size() == 1 && types[0] == "K f32, V f32"))
    for (const std::string& t : types) out << ", " << t;
  return out.str();
}

// A node waits for the producers of its inputs.
void Session::link_dependencies() {
  const graph::Graph& g = *graph_;
  predecessors_.resize(g.nodes.size());
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    for (int t : g.nodes[n].inputs)
      if (t >= 0 && g.tensors[t].producer >= 0) predecessors_[n].push_back(g.tensors[t].producer);
    std::sort(predecessors_[n].begin(), predecessors_[n].end());
    predecessors_[n].erase(std::unique(predecessors_[n].begin(), predecessors_[n].end()),
                           predecessors_[n].end());
  }
}

void Session::bind_nodes() {
  const graph::Graph& g = *graph_;
  BindContext ctx{&kernels_, &tbb_parallel(), max_batch_, n_ctx_, n_threads_, &caches_,
                  &widened_, &packed_};
  for (size_t n = 0; n < g.nodes.size(); ++n)
    nodes_.push_back(bind_node(g, static_cast<int>(n), ctx));
}

// Every tensor and every node's scratch in one arena, regions reused between buffers whose
// lifetimes cannot overlap.
void Session::plan_arena() {
  const graph::Graph& g = *graph_;
  std::vector<BufferRequest> requests;
  for (const graph::Tensor& t : g.tensors) {
    BufferRequest r;
    r.producer = std::max(t.producer, 0);
    r.users = t.consumers;
    // A tensor without T (a pooled vector) has one row per sequence of the step.
    r.bytes = sizeof(float) * row_length(t.shape) * (has_token_dim(t.shape) ? max_batch_ : max_sequences_);
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
  for (FeedSlot& feed : feeds_) feed.offset = plan.offsets[static_cast<size_t>(feed.tensor)];
  output_offset_ = plan.offsets[g.outputs[0]];
  const int output_producer = g.tensors[g.outputs[0]].producer;
  last_output_only_supported_ =
      output_per_token_ && output_producer >= 0 && nodes_[output_producer].writes_last_output_only;
}

void Session::run_step(const int32_t* tokens, int64_t n, bool last_output_only) {
  for (const FeedSlot& feed : feeds_) {
    auto* dst = reinterpret_cast<int32_t*>(arena_base_ + feed.offset);
    if (feed.feed == ops::Feed::kTokenIds) {
      std::memcpy(dst, tokens, sizeof(int32_t) * n);
    } else if (feed.feed == ops::Feed::kPositions) {
      for (const ops::StepSequence& s : step_sequences_) {
        const int64_t first = s.length - (s.end - s.begin);  // the sequence's next position
        for (int64_t t = s.begin; t < s.end; ++t) dst[t] = static_cast<int32_t>(first + t - s.begin);
      }
    }
  }
  StepView view{arena_base_, n, last_output_only};
  view.sequences = step_sequences_.data();
  view.n_sequences = static_cast<int64_t>(step_sequences_.size());
  view.token_sequence = step_sequences_.size() > 1 ? token_sequence_.data() : nullptr;
  executor_->run(view);
}

void Session::step(const int32_t* tokens, int64_t n, bool last_output_only) {
  GGUFLOW_CHECK(n >= 1 && n <= max_batch_ && slot_past_[0] + n <= n_ctx_);
  step_sequences_.assign(1, ops::StepSequence{0, n, 0, 0, slot_past_[0] + n, 0});
  run_step(tokens, n, last_output_only);
  slot_past_[0] += n;
}

void Session::check_token_ids(std::span<const int32_t> tokens) const {
  for (size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] < 0 || tokens[i] >= n_vocab_)
      throw error("token id ", tokens[i], " at index ", i, " is out of range: the model has ",
                  n_vocab_, " tokens (ids 0..", n_vocab_ - 1, ")");
}

void Session::evaluate_sequences(std::span<const std::span<const int32_t>> sequences,
                                 std::vector<float>& outputs) {
  const int64_t count = static_cast<int64_t>(sequences.size());
  if (count == 0) throw error("no sequences to evaluate");
  if (count > max_sequences_)
    throw error(count, " sequences in one step: expected at most ", max_sequences_);
  std::vector<int32_t> tokens;
  step_sequences_.clear();
  token_sequence_.clear();
  for (int64_t i = 0; i < count; ++i) {
    const auto& seq = sequences[static_cast<size_t>(i)];
    const int64_t len = static_cast<int64_t>(seq.size());
    if (len == 0 || len > n_ctx_)
      throw error("sequence ", i, " has ", len, " tokens: expected 1 to ", n_ctx_, " (--ctx)");
    check_token_ids(seq);
    const int64_t begin = static_cast<int64_t>(tokens.size());
    step_sequences_.push_back({begin, begin + len, begin, len, len, 0});
    tokens.insert(tokens.end(), seq.begin(), seq.end());
    token_sequence_.insert(token_sequence_.end(), static_cast<size_t>(len), static_cast<int32_t>(i));
  }
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n > max_batch_)
    throw error(n, " tokens in one step: expected at most ", max_batch_, " (the batch budget)");
  // The packed regions overwrite what the session's slots had cached.
  std::fill(slot_past_.begin(), slot_past_.end(), 0);
  run_step(tokens.data(), n, false);
  const float* out = reinterpret_cast<const float*>(arena_base_ + output_offset_);
  const int64_t rows = output_per_token_ ? n : count;
  outputs.insert(outputs.end(), out, out + rows * output_width_);
}

std::span<const float> Session::prefill(std::span<const int32_t> tokens,
                                        std::vector<float>* all_outputs) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n == 0) throw error("no tokens to evaluate");
  check_token_ids(tokens);
  const int64_t n_past = slot_past_[0];
  if (n_past + n > n_ctx_)
    throw error(n, " tokens do not fit in the context: ", n_past, " already cached, context is ",
                n_ctx_, " tokens (--ctx)");
  if (!output_per_token_ && n_past + n > max_batch_)
    throw error("graph '", graph_->name, "' pools over the whole sequence: at most ", max_batch_,
                " tokens in total, found ", n_past + n);
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
  pack_weights();
  return prefill(std::span<const int32_t>(&token, 1));
}

void Session::pack_weights() {
  if (weights_packed_) return;
  arena_.execute([&] { packed_.pack_all(); });
  weights_packed_ = true;
}

void Session::rewind(int64_t n_past) {
  if (n_past < 0 || n_past > slot_past_[0])
    throw error("rewind to ", n_past, " tokens: expected 0 to ", slot_past_[0], " (the tokens cached)");
  // A ring of `rows` keeps positions p - rows + 1 .. p of the last position p stored: the kept
  // ones are intact only when nothing wrapped over them.
  for (const ops::KvCacheView& c : caches_)
    if (slot_past_[0] > c.rows)
      throw error("rewind: a sliding window's ring of ", c.rows, " rows has overwritten positions of the first ",
                  n_past, " tokens (", slot_past_[0], " cached)");
  slot_past_[0] = n_past;
}

bool Session::can_rewind() const {
  return std::all_of(caches_.begin(), caches_.end(),
                     [&](const ops::KvCacheView& c) { return slot_past_[0] <= c.rows; });
}

int64_t Session::n_past(int64_t slot) const {
  if (slot < 0 || slot >= n_slots()) throw error("slot ", slot, ": expected 0 to ", n_slots() - 1);
  return slot_past_[static_cast<size_t>(slot)];
}

void Session::reset_slot(int64_t slot) {
  n_past(slot);  // checks the slot
  slot_past_[static_cast<size_t>(slot)] = 0;
}

std::vector<std::span<const float>> Session::step_slots(std::span<const SlotTokens> inputs) {
  const int64_t count = static_cast<int64_t>(inputs.size());
  if (count == 0) throw error("no slots to step");
  if (count > max_sequences_)
    throw error(count, " sequences in one step: expected at most ", max_sequences_);
  std::vector<int32_t> tokens;
  std::vector<bool> seen(slot_past_.size(), false);
  step_sequences_.clear();
  token_sequence_.clear();
  for (int64_t i = 0; i < count; ++i) {
    const SlotTokens& in = inputs[static_cast<size_t>(i)];
    const int64_t past = n_past(in.slot);
    if (seen[static_cast<size_t>(in.slot)]) throw error("slot ", in.slot, " appears twice in one step");
    seen[static_cast<size_t>(in.slot)] = true;
    const int64_t len = static_cast<int64_t>(in.tokens.size());
    if (len == 0) throw error("slot ", in.slot, ": no tokens to evaluate");
    check_token_ids(in.tokens);
    if (past + len > n_ctx_)
      throw error("slot ", in.slot, ": ", len, " tokens do not fit in the context: ", past,
                  " already cached, context is ", n_ctx_, " tokens (--ctx)");
    const int64_t begin = static_cast<int64_t>(tokens.size());
    step_sequences_.push_back({begin, begin + len, 0, 0, past + len, in.slot});
    tokens.insert(tokens.end(), in.tokens.begin(), in.tokens.end());
    token_sequence_.insert(token_sequence_.end(), static_cast<size_t>(len), static_cast<int32_t>(i));
  }
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n > max_batch_)
    throw error(n, " tokens in one step: expected at most ", max_batch_, " (the batch budget)");
  if (!output_per_token_)
    for (const ops::StepSequence& s : step_sequences_)
      if (s.length > max_batch_ || s.length != s.end - s.begin)
        throw error("graph '", graph_->name, "' pools over a whole sequence: expected each slot's "
                    "tokens in one step");
  run_step(tokens.data(), n, false);
  std::vector<std::span<const float>> rows;
  const float* out = reinterpret_cast<const float*>(arena_base_ + output_offset_);
  for (int64_t i = 0; i < count; ++i) {
    const ops::StepSequence& s = step_sequences_[static_cast<size_t>(i)];
    slot_past_[static_cast<size_t>(s.slot)] = s.length;
    const int64_t row = output_per_token_ ? s.end - 1 : i;
    rows.emplace_back(out + row * output_width_, static_cast<size_t>(output_width_));
  }
  return rows;
}

}  // namespace gguflow::exec
