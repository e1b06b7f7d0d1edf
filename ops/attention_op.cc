// The attention op: appends k, v at their positions to a kv_cache state, then causal (or, with
// causal: false, bidirectional) grouped-query attention of q over the cache.
#include "ops/attention_op.h"

#include "ops/op_binder.h"
#include "ops/shape_rules.h"

namespace gguflow::ops {

const AttrList<AttentionAttrs>& attention_attr_list() {
  static const AttrList<AttentionAttrs> list =
      AttrList<AttentionAttrs>()
          .required("n_head", &AttentionAttrs::n_head, "query heads")
          .required("n_head_kv", &AttentionAttrs::n_head_kv, "key/value heads")
          .required("cache", &AttentionAttrs::cache, "name of a declared kv_cache state")
          .optional("window", &AttentionAttrs::window, 0,
                    "sliding window: position i sees keys j with i - j < window; 0 = all of 0..i")
          .optional("softcap", &AttentionAttrs::softcap, 0.0,
                    "scores s -> softcap * tanh(s / softcap) before the softmax; 0 = none")
          .optional("scale", &AttentionAttrs::scale, 0.0,
                    "factor of the q.k scores; 0 = 1/sqrt(head_dim)")
          .optional("causal", &AttentionAttrs::causal, true,
                    "false: every token sees every position of the sequence, later ones of its "
                    "step included (encoders); the cache still stores them");
  return list;
}

std::vector<InputSpec> attention_inputs() {
  return {{"q", false, DType::kF32, "[head_dim * n_head, T]"},
          {"k", false, DType::kF32, "[head_dim * n_head_kv, T]"},
          {"v", false, DType::kF32, "[head_dim * n_head_kv, T]"},
          {"positions", false, DType::kI32, "[T]", Feed::kPositions}};
}

std::string attention_shape(const ShapeQuery& q, std::vector<Shape>* out) {
  for (size_t i : {kAttnQ, kAttnK, kAttnV}) GGUFLOW_SHAPE_TRY(need_rank(q, false, i, 2));
  GGUFLOW_SHAPE_TRY(need_rank(q, false, kAttnPositions, 1));
  const AttentionAttrs a = attention_attr_list().parse(*q.attrs);
  if (a.n_head <= 0 || a.n_head_kv <= 0 || a.n_head % a.n_head_kv != 0)
    return "expected n_head_kv (" + std::to_string(a.n_head_kv) + ") to divide n_head (" +
           std::to_string(a.n_head) + "), both positive";
  if (a.window < 0 || a.softcap < 0 || a.scale < 0)
    return "expected window, softcap and scale >= 0 (0 = the default), found window " +
           std::to_string(a.window) + ", softcap " + attr_to_string(a.softcap) + ", scale " +
           attr_to_string(a.scale);
  if (!a.causal && a.window != 0)
    return "expected window 0 with causal false (a non-causal query sees the whole sequence), "
           "found window " + std::to_string(a.window);
  const Shape& qs = *q.inputs[kAttnQ];
  if (qs[0] % a.n_head != 0)
    return "expected n_head (" + std::to_string(a.n_head) + ") to divide the query's ne0, found " +
           shape_of(q, false, kAttnQ);
  const int64_t head_dim = qs[0] / a.n_head;
  for (size_t i : {kAttnK, kAttnV}) {
    const Shape& s = *q.inputs[i];
    if (s[0] != head_dim * a.n_head_kv || s[1] != qs[1])
      return "expected [" + std::to_string(head_dim * a.n_head_kv) +
             ", rows of q] (n_head_kv * head_dim) for keys and values, found " +
             shape_of(q, false, kAttnQ) + " and " + shape_of(q, false, i);
  }
  if ((*q.inputs[kAttnPositions])[0] != qs[1])
    return "expected one position per query row, found " + shape_of(q, false, kAttnQ) + " and " +
           shape_of(q, false, kAttnPositions);
  out->push_back(qs);
  return "";
}

AttentionShape attention_geometry(const AttentionAttrs& a, const Shape& q) {
  AttentionShape shape;
  shape.n_head = a.n_head;
  shape.n_kv_head = a.n_head_kv;
  shape.head_dim = row_length(q) / a.n_head;
  return shape;
}

AttentionScoring attention_scoring(const AttentionAttrs& a) {
  return {static_cast<float>(a.scale), static_cast<float>(a.softcap), a.window, a.causal};
}

std::string check_kv_state(const ShapeQuery& node, const Attrs& state, KvLayout* layout) {
  const AttentionAttrs a = attention_attr_list().parse(*node.attrs);
  const int64_t head_dim = node.inputs[kAttnQ]->dims[0] / a.n_head;
  const int64_t st_heads = state.get_int("n_head_kv"), st_dim = state.get_int("head_dim");
  if (st_heads != a.n_head_kv || st_dim != head_dim)
    return "state '" + a.cache + "' holds " + std::to_string(st_heads) + " heads of " +
           std::to_string(st_dim) + ": expected " + std::to_string(a.n_head_kv) + " heads of " +
           std::to_string(head_dim) + " (from n_head_kv and the query shape " +
           node.inputs[kAttnQ]->to_string() + ")";
  layout->k = layout->v = a.n_head_kv * head_dim;
  layout->window = a.window;  // a windowed layer's cache is a ring of the last positions
  layout->heads = a.n_head_kv;  // read one KV head at a time
  return "";
}

namespace {

BoundOp bind_attention(Binder& b) {
  const AttentionAttrs a = attention_attr_list().parse(b.attrs());
  const AttentionShape shape = attention_geometry(a, *b.input_shape(kAttnQ));
  const AttentionScoring scoring = attention_scoring(a);
  const KvCacheView cache = b.kv_cache();
  const int64_t n_ctx = b.n_ctx();
  const GguflowKernels& k = b.kernels();
  const Parallel& par = b.parallel();
  // A block of queries' scores over up to n_ctx keys, its queries and outputs, per thread.
  const int64_t scratch_floats = attention_scratch_floats(shape, n_ctx, cache);
  return {{sizeof(float) * static_cast<size_t>(scratch_floats * b.max_threads())},
          [&k, &par, shape, scoring, cache, n_ctx, scratch_floats](const StepView& s, const NodeIo& io) {
            const int32_t* pos = at<const int32_t>(s, io.inputs[kAttnPositions]);
            const float* k_new = at<const float>(s, io.inputs[kAttnK]);
            const float* v_new = at<const float>(s, io.inputs[kAttnV]);
            const int64_t row = shape.kv_row();
            for (int64_t i = 0; i < s.n_sequences; ++i) {
              const StepSequence& seq = s.sequences[i];
              kv_cache_store(k, shape, k_new + seq.begin * row, v_new + seq.begin * row,
                             pos + seq.begin, seq.end - seq.begin, sequence_cache(cache, seq));
            }
            const float* q = at<const float>(s, io.inputs[kAttnQ]);
            float* out = at<float>(s, io.outputs[0]);
            float* scores = at<float>(s, io.scratch[0]);
            // A sequence without a length (a test's one sequence) is as long as its positions say.
            const int64_t whole_length = sequence_length(pos, s.n_tokens);
            // Tasks are (token, head) pairs of the whole step; each reads its own sequence's
            // region, the same keys in the same order as when that sequence runs alone.
            const int64_t n_tasks = s.n_tokens * shape.n_head;
            const auto run_tasks = [&](int64_t t0, int64_t t1) {
              float* thread_scores = scores + par.thread_index() * scratch_floats;
              for (int64_t task = t0; task < t1;) {
                const StepSequence& seq = s.sequence_of(task / shape.n_head);
                const int64_t end = std::min(t1, seq.end * shape.n_head);
                attention_heads(k, shape, scoring, q, pos, seq.length > 0 ? seq.length : whole_length,
                                sequence_cache(cache, seq), task, end, n_ctx, thread_scores, out);
                task = end;
              }
            };
            // Shares of `unit` tasks, at least `min_units` of them. A prompt: single tasks, whole
            // blocks of queries a share. A decode step (one token a sequence) with at least two
            // KV-head groups a thread (a server step of several sequences): whole groups, so that
            // a group's query heads are one tile reading its keys once (shares cut inside a group
            // made tiles of one or two heads that read the same keys again). Fewer groups (one
            // sequence; Gemma 3 1B has one KV head): single heads, so every thread takes part.
            const bool prompt = s.n_tokens > s.n_sequences;
            const int64_t group = shape.n_head / shape.n_kv_head;
            const int64_t unit = !prompt && s.n_tokens * shape.n_kv_head >= 2 * par.concurrency() ? group : 1;
            const int64_t n_units = n_tasks / unit, min_units = prompt ? attention_tile_tasks(shape) : 1;
            parallel_rows(par, n_units, grain_for(par, n_units, min_units),
                          [&](int64_t u0, int64_t u1) { run_tasks(u0 * unit, u1 * unit); });
          }};
}

}  // namespace

const OpSchema& attention_op() {
  static const OpSchema op{
      "attention", OpKind::kAttention,
      "appends k, v to the cache at positions; grouped-query attention: "
      "softmax(cap(scale * q.k)) over the keys in the window (causal) or the whole sequence",
      attention_inputs(),
      {},
      attention_attr_list().specs(),
      {{"out", DType::kF32}},
      "q [hd * n_head, T], k, v [hd * n_head_kv, T], positions [T] -> [hd * n_head, T]",
      attention_shape, bind_attention, {"kv_cache", "cache", check_kv_state}};
  return op;
}

}  // namespace gguflow::ops
