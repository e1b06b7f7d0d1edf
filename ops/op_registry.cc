// The op table and each op's shape function. Shapes are ne0 first; see op_registry.h for the
// one-line contract of every op.
#include "ops/op_registry.h"

#include <algorithm>
#include <array>

namespace gguflow::ops {

namespace {

std::string shape_of(const ShapeQuery& q, bool weight, size_t i) {
  const auto& names = weight ? q.weight_names : q.input_names;
  const Shape* s = weight ? q.weights[i] : q.inputs[i];
  return std::string(weight ? "weight '" : "input '") + names[i] + "' " + s->to_string();
}

// Every activation is [features, rows]: rank 2.
std::string need_rank(const ShapeQuery& q, bool weight, size_t i, size_t rank) {
  const Shape* s = weight ? q.weights[i] : q.inputs[i];
  if (s->rank() == rank) return "";
  return "expected " + std::string(weight ? "weight" : "input") + " of rank " + std::to_string(rank) +
         ", found " + shape_of(q, weight, i);
}

#define GGUFLOW_SHAPE_TRY(expr)            \
  do {                                     \
    if (std::string e = (expr); !e.empty()) \
      return e;                            \
  } while (0)

std::string embed_shape(const ShapeQuery& q, std::vector<Shape>* out) {
  GGUFLOW_SHAPE_TRY(need_rank(q, false, 0, 1));
  GGUFLOW_SHAPE_TRY(need_rank(q, true, 0, 2));
  out->push_back(Shape{{q.weights[0]->dims[0], q.inputs[0]->dims[0]}});
  return "";
}

std::string rmsnorm_shape(const ShapeQuery& q, std::vector<Shape>* out) {
  GGUFLOW_SHAPE_TRY(need_rank(q, false, 0, 2));
  GGUFLOW_SHAPE_TRY(need_rank(q, true, 0, 1));
  if (q.inputs[0]->dims[0] != q.weights[0]->dims[0])
    return "expected the weight's length to equal the input's ne0, found " + shape_of(q, false, 0) +
           " and " + shape_of(q, true, 0);
  out->push_back(*q.inputs[0]);
  return "";
}

std::string matmul_shape(const ShapeQuery& q, std::vector<Shape>* out) {
  GGUFLOW_SHAPE_TRY(need_rank(q, false, 0, 2));
  GGUFLOW_SHAPE_TRY(need_rank(q, true, 0, 2));
  const Shape& x = *q.inputs[0];
  const Shape& w = *q.weights[0];
  if (x[0] != w[0])
    return "inner dimension mismatch: expected the input's ne0 to equal the weight's ne0 (" +
           std::to_string(w[0]) + "), found " + shape_of(q, false, 0) + " and " + shape_of(q, true, 0);
  if (q.weights[1]) {
    const Shape& b = *q.weights[1];
    if (b.rank() != 1 || b[0] != w[1])
      return "expected bias of shape [" + std::to_string(w[1]) + "] (the weight's ne1), found " +
             shape_of(q, true, 1);
  }
  out->push_back(Shape{{w[1], x[1]}});
  return "";
}

std::string rope_shape(const ShapeQuery& q, std::vector<Shape>* out) {
  GGUFLOW_SHAPE_TRY(need_rank(q, false, 0, 2));
  GGUFLOW_SHAPE_TRY(need_rank(q, false, 1, 1));
  const int64_t head_dim = q.attrs->get_int("head_dim");
  const int64_t n_rot = q.attrs->get_int("n_rot");
  const Shape& x = *q.inputs[0];
  if (head_dim <= 0 || x[0] % head_dim != 0)
    return "expected head_dim (" + std::to_string(head_dim) + ") to divide the input's ne0, found " +
           shape_of(q, false, 0);
  if (n_rot <= 0 || n_rot > head_dim || n_rot % 2 != 0)
    return "expected n_rot to be even and in 2.." + std::to_string(head_dim) + " (head_dim), found " +
           std::to_string(n_rot);
  if ((*q.inputs[1])[0] != x[1])
    return "expected one position per input row, found " + shape_of(q, false, 0) + " and " +
           shape_of(q, false, 1);
  out->push_back(x);
  return "";
}

std::string attention_shape(const ShapeQuery& q, std::vector<Shape>* out) {
  for (size_t i = 0; i < 3; ++i) GGUFLOW_SHAPE_TRY(need_rank(q, false, i, 2));
  GGUFLOW_SHAPE_TRY(need_rank(q, false, 3, 1));
  const int64_t n_head = q.attrs->get_int("n_head");
  const int64_t n_head_kv = q.attrs->get_int("n_head_kv");
  if (n_head <= 0 || n_head_kv <= 0 || n_head % n_head_kv != 0)
    return "expected n_head_kv (" + std::to_string(n_head_kv) + ") to divide n_head (" +
           std::to_string(n_head) + "), both positive";
  const Shape& qs = *q.inputs[0];
  if (qs[0] % n_head != 0)
    return "expected n_head (" + std::to_string(n_head) + ") to divide the query's ne0, found " +
           shape_of(q, false, 0);
  const int64_t head_dim = qs[0] / n_head;
  for (size_t i = 1; i <= 2; ++i) {
    const Shape& s = *q.inputs[i];
    if (s[0] != head_dim * n_head_kv || s[1] != qs[1])
      return "expected [" + std::to_string(head_dim * n_head_kv) +
             ", rows of q] (n_head_kv * head_dim) for keys and values, found " + shape_of(q, false, 0) +
             " and " + shape_of(q, false, i);
  }
  if ((*q.inputs[3])[0] != qs[1])
    return "expected one position per query row, found " + shape_of(q, false, 0) + " and " +
           shape_of(q, false, 3);
  out->push_back(qs);
  return "";
}

std::string same_shape_binary(const ShapeQuery& q, std::vector<Shape>* out) {
  GGUFLOW_SHAPE_TRY(need_rank(q, false, 0, 2));
  if (*q.inputs[0] != *q.inputs[1])
    return "expected equal shapes, found " + shape_of(q, false, 0) + " and " + shape_of(q, false, 1);
  out->push_back(*q.inputs[0]);
  return "";
}

std::string ffn_shape(const ShapeQuery& q, std::vector<Shape>* out) {
  GGUFLOW_SHAPE_TRY(need_rank(q, false, 0, 2));
  for (size_t i = 0; i < 3; ++i) GGUFLOW_SHAPE_TRY(need_rank(q, true, i, 2));
  const Shape& x = *q.inputs[0];
  const Shape &g = *q.weights[0], &u = *q.weights[1], &d = *q.weights[2];
  if (g[0] != x[0] || u != g || d[0] != g[1] || d[1] != x[0])
    return "expected gate and up [" + std::to_string(x[0]) + ", n_ff] and down [n_ff, " +
           std::to_string(x[0]) + "] for " + shape_of(q, false, 0) + ", found " + shape_of(q, true, 0) +
           ", " + shape_of(q, true, 1) + " and " + shape_of(q, true, 2);
  out->push_back(x);
  return "";
}

std::string pool_shape(const ShapeQuery& q, std::vector<Shape>* out) {
  GGUFLOW_SHAPE_TRY(need_rank(q, false, 0, 2));
  const Shape& x = *q.inputs[0];
  out->push_back(q.attrs->get_string("mode") == "none" ? x : Shape{{x[0], 1}});
  return "";
}

std::string unary_shape(const ShapeQuery& q, std::vector<Shape>* out) {
  GGUFLOW_SHAPE_TRY(need_rank(q, false, 0, 2));
  out->push_back(*q.inputs[0]);
  return "";
}

// Attention's checks, then each basis [kv_row, r] with 1 <= r <= kv_row and each mean [kv_row].
std::string kv_project_shape(const ShapeQuery& q, std::vector<Shape>* out) {
  GGUFLOW_SHAPE_TRY(attention_shape(q, out));
  const int64_t kv_row = (*q.inputs[1])[0];
  for (size_t w = 0; w < 4; ++w) {
    const bool is_basis = w % 2 == 0;
    GGUFLOW_SHAPE_TRY(need_rank(q, true, w, is_basis ? 2 : 1));
    const Shape& s = *q.weights[w];
    if (s[0] != kv_row || (is_basis && (s[1] < 1 || s[1] > kv_row)))
      return "expected " + std::string(is_basis ? "a basis [" : "a mean [") + std::to_string(kv_row) +
             (is_basis ? ", r] with 1 <= r <= " + std::to_string(kv_row) : std::string()) +
             "] (kv_row = the keys' ne0), found " + shape_of(q, true, w);
  }
  return "";
}

#undef GGUFLOW_SHAPE_TRY

constexpr DType F = DType::kF32;
constexpr DType I = DType::kI32;

std::vector<OpSchema> make_table() {
  std::vector<OpSchema> t;
  t.push_back({OpId::kEmbed, "embed", OpKind::kEmbed, "rows of the embedding table for token ids",
               {{"tokens", false, I, "token ids [T]"}},
               {{"weight", false, "embedding table [n_embd, n_vocab], any GGML type"}},
               {},
               {{"out", F}}, nullptr, embed_shape});
  t.push_back({OpId::kRmsNorm, "rmsnorm", OpKind::kNorm, "x / sqrt(mean(x^2) + eps) * weight, per row",
               {{"x", false, F, "[n, T]"}},
               {{"weight", false, "gain [n]"}},
               {{"eps", AttrType::kFloat, true, AttrValue{0.0}, {}, "added to the mean square"}},
               {{"out", F}}, nullptr, rmsnorm_shape});
  t.push_back({OpId::kMatmul, "matmul", OpKind::kMatmul,
               "y[r] = dot(weight row r, x) (+ bias[r]); the weight stays quantized",
               {{"x", false, F, "[k, T]"}},
               {{"weight", false, "[k, n], any GGML type"}, {"bias", true, "[n] (qwen2 Q/K/V)"}},
               {},
               {{"out", F}}, nullptr, matmul_shape});
  t.push_back({OpId::kRope, "rope", OpKind::kPosition,
               "rotary position embedding per head; normal pairs (2i, 2i+1), neox pairs (i, i+n_rot/2)",
               {{"x", false, F, "[head_dim * heads, T]"}, {"positions", false, I, "[T]"}},
               {},
               {{"head_dim", AttrType::kInt, true, AttrValue{int64_t{0}}, {}, "values per head"},
                {"n_rot", AttrType::kInt, true, AttrValue{int64_t{0}}, {}, "rotated values per head"},
                {"base", AttrType::kFloat, false, AttrValue{10000.0}, {}, "frequency base"},
                {"mode", AttrType::kEnum, false, AttrValue{std::string("normal")}, {"normal", "neox"},
                 "pairing: normal (llama) or neox (qwen2)"}},
               {{"out", F}}, nullptr, rope_shape});
  t.push_back({OpId::kAttention, "attention", OpKind::kAttention,
               "appends k, v to the cache at positions; causal grouped-query attention, scale "
               "1/sqrt(head_dim)",
               {{"q", false, F, "[head_dim * n_head, T]"},
                {"k", false, F, "[head_dim * n_head_kv, T]"},
                {"v", false, F, "[head_dim * n_head_kv, T]"},
                {"positions", false, I, "[T]"}},
               {},
               {{"n_head", AttrType::kInt, true, AttrValue{int64_t{0}}, {}, "query heads"},
                {"n_head_kv", AttrType::kInt, true, AttrValue{int64_t{0}}, {}, "key/value heads"},
                {"cache", AttrType::kString, true, AttrValue{std::string()}, {},
                 "name of a declared kv_cache state"}},
               {{"out", F}}, "kv_cache", attention_shape});
  t.push_back({OpId::kSiluMul, "silu_mul", OpKind::kActivation, "silu(gate) * up, elementwise",
               {{"gate", false, F, "[n, T]"}, {"up", false, F, "[n, T]"}},
               {}, {}, {{"out", F}}, nullptr, same_shape_binary});
  t.push_back({OpId::kFfn, "ffn", OpKind::kMatmul, "SwiGLU feed-forward: down(silu(gate x) * up x)",
               {{"x", false, F, "[n_embd, T]"}},
               {{"gate", false, "[n_embd, n_ff]"}, {"up", false, "[n_embd, n_ff]"},
                {"down", false, "[n_ff, n_embd]"}},
               {}, {{"out", F}}, nullptr, ffn_shape});
  t.push_back({OpId::kAdd, "add", OpKind::kElementwise, "a + b, elementwise",
               {{"a", false, F, "[n, T]"}, {"b", false, F, "[n, T]"}},
               {}, {}, {{"out", F}}, nullptr, same_shape_binary});
  t.push_back({OpId::kMul, "mul", OpKind::kElementwise, "a * b, elementwise",
               {{"a", false, F, "[n, T]"}, {"b", false, F, "[n, T]"}},
               {}, {}, {{"out", F}}, nullptr, same_shape_binary});
  t.push_back({OpId::kPool, "pool", OpKind::kPool, "one vector from all token rows",
               {{"x", false, F, "[n, T]"}},
               {},
               {{"mode", AttrType::kEnum, false, AttrValue{std::string("mean")},
                 {"mean", "sum", "last", "first", "cls", "none"},
                 "mean, sum, last, first/cls (row 0) or none (all rows)"}},
               {{"out", F}}, nullptr, pool_shape});
  t.push_back({OpId::kNormalize, "normalize", OpKind::kPool, "scales each row to unit norm",
               {{"x", false, F, "[n, R]"}},
               {},
               {{"mode", AttrType::kEnum, false, AttrValue{std::string("l2")}, {"l2", "none"},
                 "l2 or none"}},
               {{"out", F}}, nullptr, unary_shape});
  t.push_back({OpId::kKvProject, "kv_project", OpKind::kAttention,
               "attention over a low-rank KV cache: appends c = basis^T (x - mean) of k and v, "
               "scores (basis^T q).c + q.mean, read-out basis (sum a c) + mean",
               {{"q", false, F, "[head_dim * n_head, T]"},
                {"k", false, F, "[head_dim * n_head_kv, T]"},
                {"v", false, F, "[head_dim * n_head_kv, T]"},
                {"positions", false, I, "[T]"}},
               {{"k_basis", false, "[kv_row, r_K]: r_K basis vectors for the keys (F32)"},
                {"k_mean", false, "[kv_row]: mean of the keys (F32)"},
                {"v_basis", false, "[kv_row, r_V]: r_V basis vectors for the values (F32)"},
                {"v_mean", false, "[kv_row]: mean of the values (F32)"}},
               {{"n_head", AttrType::kInt, true, AttrValue{int64_t{0}}, {}, "query heads"},
                {"n_head_kv", AttrType::kInt, true, AttrValue{int64_t{0}}, {}, "key/value heads"},
                {"cache", AttrType::kString, true, AttrValue{std::string()}, {},
                 "name of a declared kv_cache state (holds r_K + r_V floats per token)"}},
               {{"out", F}}, "kv_cache", kv_project_shape});
  return t;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::span<const OpSchema> all_ops() {
  static const std::vector<OpSchema> table = [] {
    auto t = make_table();
    // The table is indexed by OpId: entry i must be op i.
    if (t.size() != static_cast<size_t>(OpId::kCount)) std::abort();
    for (size_t i = 0; i < t.size(); ++i)
      if (static_cast<size_t>(t[i].id) != i) std::abort();
    return t;
  }();
  return table;
}

const OpSchema& op_schema(OpId id) { return all_ops()[static_cast<size_t>(id)]; }

const OpSchema* find_op(std::string_view name) {
  for (const auto& op : all_ops())
    if (name == op.name) return &op;
  return nullptr;
}

std::string closest_name(std::string_view word, std::span<const std::string> candidates) {
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (const auto& c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_distance) best_distance = d, best = c;
  }
  // A plausible misspelling: at most a third of the word changed (and at least one edit allowed).
  if (best_distance > std::max<size_t>(1, (word.size() + 2) / 3)) return "";
  return best;
}

}  // namespace gguflow::ops
