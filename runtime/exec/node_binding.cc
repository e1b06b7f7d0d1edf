#include "runtime/exec/node_binding.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "ops/add.h"
#include "ops/embed.h"
#include "ops/kv_project.h"
#include "ops/matmul.h"
#include "ops/mul.h"
#include "ops/normalize.h"
#include "ops/pool.h"
#include "ops/rmsnorm.h"
#include "ops/rope.h"
#include "ops/silu_mul.h"
#include "runtime/core/error.h"
#include "runtime/exec/parallel_rows.h"

namespace gguflow::exec {
namespace {

using graph::Graph;
using graph::Node;

// Elements of one row of an activation: the product of its dims other than T.
int64_t row_length(const ops::Shape& s) {
  int64_t n = 1;
  for (int64_t d : s.dims)
    if (d != ops::kTokenDim) n *= d;
  return n;
}
bool has_token_dim(const ops::Shape& s) {
  return std::find(s.dims.begin(), s.dims.end(), ops::kTokenDim) != s.dims.end();
}
int64_t rows_in_step(const ops::Shape& s, int64_t n_tokens) {
  return has_token_dim(s) ? n_tokens : 1;
}

template <typename T>
T* at(const StepView& step, size_t offset) {
  return reinterpret_cast<T*>(step.arena + offset);
}

class Binder {
 public:
  Binder(const Graph& g, int index, const BindContext& ctx)
      : g_(g), node_(g.nodes[index]), ctx_(ctx), k_(*ctx.kernels) {}

  std::string where() const {
    return "node '" + node_.name + "' (" + node_.schema->name + ") at " + node_.where.to_string();
  }

  const graph::Tensor& input_tensor(const char* slot) const {
    const int t = node_.input(slot);
    GGUFLOW_CHECK(t >= 0);
    return g_.tensors[t];
  }
  int input_slot(const char* slot) const { return node_.schema->input_index(slot); }
  int64_t input_row(const char* slot) const { return row_length(input_tensor(slot).shape); }
  const graph::Tensor& output_tensor() const { return g_.tensors[node_.outputs[0]]; }
  // This node writes the graph's (first) output.
  bool produces_graph_output() const {
    return !g_.outputs.empty() && node_.outputs[0] == g_.outputs[0];
  }

  bool has_weight(const char* slot) const { return node_.weight(slot).has_value(); }

  ops::WeightView weight(const char* slot) const {
    const auto& b = node_.weight(slot);
    GGUFLOW_CHECK(b.has_value() && b->info);
    ops::WeightView w;
    const GgufFile& file = b->file ? *b->file : *g_.model_file;
    w.type = b->type;
    w.data = file.tensor_bytes(*b->info).data();
    w.file_mapped = file.is_file_mapping();
    w.row_bytes = b->info->row_bytes();
    w.n = static_cast<int64_t>(b->info->row_length());
    w.n_rows = static_cast<int64_t>(b->info->n_rows());
    return w;
  }

  // The weight a matmul multiplies, through the session's slot for it: row-major, or packed
  // for the plugin once the session packs (runtime/exec/packed_weights.h). Read at run time.
  const ops::WeightView* matmul_weight(const char* slot) const {
    const ops::WeightView w = weight(slot);
    try {
      ops::check_matmul_supported(k_, w, node_.weight(slot)->tensor);
    } catch (const Error& e) {
      throw error(where(), ": ", e.what());
    }
    return ctx_.packed->slot(w, /*matmul=*/true);
  }

  // A small weight (norm gain, bias, mean) as f32: the mapping itself when stored as F32,
  // else decoded once into session-owned memory.
  const float* f32_weight(const char* slot) const {
    if (!has_weight(slot)) return nullptr;
    const ops::WeightView w = weight(slot);
    if (w.type == GGML_TYPE_F32) return static_cast<const float*>(w.data);
    if (w.type >= GGML_TYPE_COUNT || k_.act_type[w.type] == GGML_TYPE_COUNT)
      throw error(where(), ": weight ", node_.weight(slot)->tensor, " has type ",
                  ops::type_name(w.type), ", which kernel plugin ", k_.target_name,
                  " cannot decode");
    auto& out = ctx_.widened->emplace_back(static_cast<size_t>(w.n * w.n_rows));
    for (int64_t r = 0; r < w.n_rows; ++r) k_.dequantize_row(w.type, w.row(r), out.data() + r * w.n, w.n);
    return out.data();
  }

  BoundNode bind();

 private:
  BoundNode embed();
  BoundNode rmsnorm();
  BoundNode matmul();
  BoundNode rope();
  BoundNode attention();
  BoundNode silu_mul();
  BoundNode ffn();
  BoundNode binary(bool is_add);
  BoundNode pool();
  BoundNode normalize();
  BoundNode kv_project();

  const Graph& g_;
  const Node& node_;
  const BindContext& ctx_;
  const GguflowKernels& k_;
};

// Rows a thread's share should be a multiple of: a packed weight's group (any split gives the
// same results; whole groups are the fast case).
int64_t row_unit(const ops::WeightView& w) { return w.pack_rows ? w.pack_rows : 1; }

// y[a][rows] = W act[a] (+ bias) with the output rows split across threads.
void run_matmul_rows(const GguflowKernels& k, const ops::WeightView& w, const void* act,
                     int64_t n_act, const float* bias, float* y) {
  parallel_row_units(w.n_rows, row_unit(w), w.row_bytes, n_act, [&](int64_t r0, int64_t r1) {
    ops::matmul_rows(k, w, act, n_act, r0, r1, bias, y, w.n_rows);
  });
}

// Encodes n_act rows of x for w's activation format, rows split across threads in prefill.
void run_quantize(const GguflowKernels& k, const ops::WeightView& w, const float* x,
                  int64_t n_act, std::byte* act) {
  const size_t stride = ops::activation_row_bytes(k, w);
  parallel_rows(n_act, 4, [&](int64_t a0, int64_t a1) {
    ops::quantize_activations(k, w, x + a0 * w.n, a1 - a0, act + a0 * stride);
  });
}

BoundNode Binder::embed() {
  const ops::WeightView row_major = weight("weight");
  try {
    ops::check_embed_supported(k_, row_major, node_.weight("weight")->tensor);
  } catch (const Error& e) {
    throw error(where(), ": ", e.what());
  }
  // Through the session's slot: packed once decode starts if a matmul also uses the table.
  const ops::WeightView* table = ctx_.packed->slot(row_major, /*matmul=*/false);
  const auto& k = k_;
  return {{}, [&k, table](const StepView& s, const NodeIo& io) {
            const std::span<const int32_t> tokens(at<const int32_t>(s, io.inputs[0]),
                                                  static_cast<size_t>(s.n_tokens));
            ops::embed(k, *table, tokens, at<float>(s, io.outputs[0]));
          }};
}

BoundNode Binder::rmsnorm() {
  const float* w = f32_weight("weight");
  const float eps = static_cast<float>(node_.attrs.get_float("eps"));
  const int64_t n = input_row("x");
  const auto& k = k_;
  return {{}, [&k, w, eps, n](const StepView& s, const NodeIo& io) {
            ops::rmsnorm(k, at<float>(s, io.inputs[0]), w, at<float>(s, io.outputs[0]),
                         s.n_tokens, n, eps);
          }};
}

BoundNode Binder::matmul() {
  const ops::WeightView* slot = matmul_weight("weight");
  const ops::WeightView& w = *slot;
  const float* bias = f32_weight("bias");
  const size_t act_bytes = ops::activation_row_bytes(k_, w);
  const bool per_token = has_token_dim(input_tensor("x").shape);
  // The lm-head of a prompt whose caller wants only the last logits: one row instead of T
  // (for Qwen2.5-0.5B the lm-head is ~28 % of a token's multiply-adds).
  const bool last_row_capable = per_token && produces_graph_output();
  const auto& k = k_;
  BoundNode b;
  b.scratch_bytes = {act_bytes * static_cast<size_t>(ctx_.max_tokens)};
  b.writes_last_output_only = last_row_capable;
  b.run = [&k, slot, bias, per_token, last_row_capable](const StepView& s, const NodeIo& io) {
            const ops::WeightView& w = *slot;
            int64_t n_act = per_token ? s.n_tokens : 1;
            const float* x = at<const float>(s, io.inputs[0]);
            if (last_row_capable && s.last_output_only) {
              x += (n_act - 1) * w.n;
              n_act = 1;
            }
            std::byte* act = at<std::byte>(s, io.scratch[0]);
            run_quantize(k, w, x, n_act, act);
            run_matmul_rows(k, w, act, n_act, bias, at<float>(s, io.outputs[0]));
          };
  return b;
}

BoundNode Binder::rope() {
  const int64_t head_dim = node_.attrs.get_int("head_dim");
  const int64_t n_rot = node_.attrs.get_int("n_rot");
  const float base = static_cast<float>(node_.attrs.get_float("base"));
  const auto pairing = node_.attrs.get_string("mode") == "neox" ? ops::RopePairing::kNeox
                                                                 : ops::RopePairing::kNormal;
  const int64_t row = input_row("x");
  const int64_t n_heads = row / head_dim;
  const auto& k = k_;
  return {{sizeof(float) * static_cast<size_t>(n_rot * ctx_.max_tokens)},
          [&k, head_dim, n_rot, base, pairing, row, n_heads](const StepView& s, const NodeIo& io) {
            const int32_t* pos = at<const int32_t>(s, io.inputs[1]);
            float* cos_sin = at<float>(s, io.scratch[0]);
            float* y = at<float>(s, io.outputs[0]);
            ops::rope_cos_sin(pos, s.n_tokens, n_rot, base, cos_sin);
            std::memcpy(y, at<const float>(s, io.inputs[0]), sizeof(float) * row * s.n_tokens);
            ops::rope(k, y, s.n_tokens, n_heads, head_dim, n_rot, cos_sin, pairing);
          }};
}

BoundNode Binder::attention() {
  GGUFLOW_CHECK(node_.state >= 0);
  const graph::State& state = g_.states[node_.state];
  ops::AttentionShape shape;
  shape.n_head = node_.attrs.get_int("n_head");
  shape.n_kv_head = node_.attrs.get_int("n_head_kv");
  shape.head_dim = input_row("q") / shape.n_head;
  if (state.n_head_kv != shape.n_kv_head || state.head_dim != shape.head_dim)
    throw error(where(), ": cache '", state.name, "' holds ", state.n_head_kv, " heads of ",
                state.head_dim, " values, the node needs ", shape.n_kv_head, " heads of ",
                shape.head_dim);
  const ops::KvCacheView cache = (*ctx_.caches)[node_.state];
  const int64_t n_ctx = ctx_.n_ctx;
  const auto& k = k_;
  return {{sizeof(float) * static_cast<size_t>(n_ctx * ctx_.max_threads)},
          [&k, shape, cache, n_ctx](const StepView& s, const NodeIo& io) {
            const int32_t* pos = at<const int32_t>(s, io.inputs[3]);
            ops::kv_cache_store(shape, at<const float>(s, io.inputs[1]),
                                at<const float>(s, io.inputs[2]), pos, s.n_tokens, cache);
            const float* q = at<const float>(s, io.inputs[0]);
            float* out = at<float>(s, io.outputs[0]);
            float* scores = at<float>(s, io.scratch[0]);
            parallel_rows(s.n_tokens * shape.n_head, 1, [&](int64_t t0, int64_t t1) {
              const int slot = std::max(0, tbb::this_task_arena::current_thread_index());
              ops::attention_heads(k, shape, q, pos, cache, t0, t1, scores + slot * n_ctx, out);
            });
          }};
}

BoundNode Binder::silu_mul() {
  const int64_t row = input_row("gate");
  const auto& k = k_;
  return {{}, [&k, row](const StepView& s, const NodeIo& io) {
            ops::silu_mul(k, at<const float>(s, io.inputs[0]), at<const float>(s, io.inputs[1]),
                          at<float>(s, io.outputs[0]), row * s.n_tokens);
          }};
}

BoundNode Binder::binary(bool is_add) {
  const auto& shape = input_tensor("a").shape;
  const int64_t row = row_length(shape);
  const bool per_token = has_token_dim(shape);
  const auto& k = k_;
  return {{}, [&k, row, per_token, is_add](const StepView& s, const NodeIo& io) {
            const int64_t n = row * (per_token ? s.n_tokens : 1);
            const float* a = at<const float>(s, io.inputs[0]);
            const float* b = at<const float>(s, io.inputs[1]);
            float* y = at<float>(s, io.outputs[0]);
            if (is_add) ops::add(k, a, b, y, n);
            else ops::mul(k, a, b, y, n);
          }};
}

// down(silu(gate x) * up x). Gate and up rows form one parallel range, so the two matmuls run
// concurrently; then the gate, the encoding of the hidden state and the down matmul.
BoundNode Binder::ffn() {
  const ops::WeightView *gate_slot = matmul_weight("gate"), *up_slot = matmul_weight("up"),
                        *down_slot = matmul_weight("down");
  const ops::WeightView &gate = *gate_slot, &up = *up_slot, &down = *down_slot;
  const bool shared_act = k_.act_type[gate.type] == k_.act_type[up.type];
  const size_t t_max = static_cast<size_t>(ctx_.max_tokens);
  const size_t n_ff = static_cast<size_t>(gate.n_rows);
  const auto& k = k_;
  BoundNode b;
  b.scratch_bytes = {ops::activation_row_bytes(k_, gate) * t_max,               // x for gate
                     shared_act ? 64 : ops::activation_row_bytes(k_, up) * t_max,  // x for up
                     sizeof(float) * n_ff * t_max,                                // gate out
                     sizeof(float) * n_ff * t_max,                                // up out
                     ops::activation_row_bytes(k_, down) * t_max};                // hidden
  b.run = [&k, gate_slot, up_slot, down_slot, shared_act, n_ff](const StepView& s,
                                                                const NodeIo& io) {
    const ops::WeightView &gate = *gate_slot, &up = *up_slot, &down = *down_slot;
    const int64_t T = s.n_tokens;
    const float* x = at<const float>(s, io.inputs[0]);
    std::byte* act_gate = at<std::byte>(s, io.scratch[0]);
    std::byte* act_up = shared_act ? act_gate : at<std::byte>(s, io.scratch[1]);
    float* g = at<float>(s, io.scratch[2]);
    float* u = at<float>(s, io.scratch[3]);
    std::byte* act_h = at<std::byte>(s, io.scratch[4]);
    run_quantize(k, gate, x, T, act_gate);
    if (!shared_act) run_quantize(k, up, x, T, act_up);
    const int64_t rows = static_cast<int64_t>(n_ff);
    // Gate and up have the same rows; a unit of either's group keeps both splits whole.
    const int64_t unit = rows % std::max(row_unit(gate), row_unit(up)) == 0
                             ? std::max(row_unit(gate), row_unit(up)) : 1;
    parallel_row_units(2 * rows, unit, std::max(gate.row_bytes, up.row_bytes), T, [&](int64_t r0, int64_t r1) {
      if (r0 < rows)
        ops::matmul_rows(k, gate, act_gate, T, r0, std::min(r1, rows), nullptr, g, rows);
      if (r1 > rows)
        ops::matmul_rows(k, up, act_up, T, std::max(r0, rows) - rows, r1 - rows, nullptr, u, rows);
    });
    ops::silu_mul(k, g, u, g, rows * T);
    run_quantize(k, down, g, T, act_h);
    run_matmul_rows(k, down, act_h, T, nullptr, at<float>(s, io.outputs[0]));
  };
  return b;
}

BoundNode Binder::pool() {
  const auto mode = ops::parse_pool_mode(node_.attrs.get_string("mode"));
  const int64_t n = input_row("x");
  const auto& k = k_;
  return {{}, [&k, mode, n](const StepView& s, const NodeIo& io) {
            ops::pool(k, mode, at<const float>(s, io.inputs[0]), s.n_tokens, n,
                      at<float>(s, io.outputs[0]));
          }};
}

BoundNode Binder::normalize() {
  const auto mode = ops::parse_normalize_mode(node_.attrs.get_string("mode"));
  const auto& shape = input_tensor("x").shape;
  const int64_t n = shape.dims.empty() ? 1 : (shape.dims[0] == ops::kTokenDim ? 1 : shape.dims[0]);
  const int64_t per_row = row_length(shape) / n;  // rows not counting T (e.g. [n, 1])
  const auto& k = k_;
  return {{}, [&k, mode, n, per_row, shape](const StepView& s, const NodeIo& io) {
            ops::normalize(k, mode, at<const float>(s, io.inputs[0]), at<float>(s, io.outputs[0]),
                           rows_in_step(shape, s.n_tokens) * per_row, n);
          }};
}

// Attention over a low-rank cache (ops/kv_project.h). The bases are F32 weights (a --kv-proj
// side file); the state's cache was allocated with their ranks as widths (kv_cache_layout.h).
BoundNode Binder::kv_project() {
  GGUFLOW_CHECK(node_.state >= 0);
  ops::AttentionShape shape;
  shape.n_head = node_.attrs.get_int("n_head");
  shape.n_kv_head = node_.attrs.get_int("n_head_kv");
  shape.head_dim = input_row("q") / shape.n_head;
  for (const char* slot : {"k_basis", "k_mean", "v_basis", "v_mean"})
    if (weight(slot).type != GGML_TYPE_F32)
      throw error(where(), ": weight ", node_.weight(slot)->tensor, " has type ",
                  ops::type_name(weight(slot).type), ": expected F32 (as gguflow kv calibrate writes)");
  const int64_t k_rank = weight("k_basis").n_rows, v_rank = weight("v_basis").n_rows;
  const auto kb = std::make_shared<const ops::LowRankBasis>(
      ops::make_low_rank_basis(f32_weight("k_basis"), f32_weight("k_mean"), k_rank, shape));
  const auto vb = std::make_shared<const ops::LowRankBasis>(
      ops::make_low_rank_basis(f32_weight("v_basis"), f32_weight("v_mean"), v_rank, shape));
  const ops::KvCacheView cache = (*ctx_.caches)[node_.state];
  const int64_t per_thread = ops::kv_project_scratch_floats(*kb, *vb, ctx_.n_ctx);
  const auto& k = k_;
  return {{sizeof(float) * static_cast<size_t>(per_thread * ctx_.max_threads),
           sizeof(float) * static_cast<size_t>(shape.kv_row())},
          [&k, shape, kb, vb, cache, per_thread](const StepView& s, const NodeIo& io) {
            const int32_t* pos = at<const int32_t>(s, io.inputs[3]);
            ops::kv_project_store(shape, *kb, *vb, at<const float>(s, io.inputs[1]),
                                  at<const float>(s, io.inputs[2]), pos, s.n_tokens, cache,
                                  at<float>(s, io.scratch[1]));
            const float* q = at<const float>(s, io.inputs[0]);
            float* out = at<float>(s, io.outputs[0]);
            float* scratch = at<float>(s, io.scratch[0]);
            parallel_rows(s.n_tokens * shape.n_head, 1, [&](int64_t t0, int64_t t1) {
              const int slot = std::max(0, tbb::this_task_arena::current_thread_index());
              ops::kv_project_heads(k, shape, *kb, *vb, q, pos, cache, t0, t1,
                                    scratch + slot * per_thread, out);
            });
          }};
}

BoundNode Binder::bind() {
  switch (node_.op) {
    case ops::OpId::kEmbed: return embed();
    case ops::OpId::kRmsNorm: return rmsnorm();
    case ops::OpId::kMatmul: return matmul();
    case ops::OpId::kRope: return rope();
    case ops::OpId::kAttention: return attention();
    case ops::OpId::kSiluMul: return silu_mul();
    case ops::OpId::kFfn: return ffn();
    case ops::OpId::kAdd: return binary(true);
    case ops::OpId::kMul: return binary(false);
    case ops::OpId::kPool: return pool();
    case ops::OpId::kNormalize: return normalize();
    case ops::OpId::kKvProject: return kv_project();
    case ops::OpId::kCount: break;
  }
  throw error(where(), ": the executor has no implementation of this op");
}

}  // namespace

BoundNode bind_node(const graph::Graph& g, int node_index, const BindContext& ctx) {
  return Binder(g, node_index, ctx).bind();
}

}  // namespace gguflow::exec
